/**
 * Starts the real gateway (`buildApp` from src/app.ts) on 127.0.0.1, port 0, from a YAML
 * string (parsed by the real config loader) or a ready `GatewayConfig`.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/types.js';
import { withTimeout } from './timeout.js';

export interface RunningGateway {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** `http://127.0.0.1:<port>/agents/<name>/mcp` */
  agentUrl(name: string): string;
  /** The agent's configured seller `url` at start-up: the url its resume tokens are signed for (src/resume/token.ts). */
  sellerUrl(name: string): URL;
  readonly app: FastifyInstance;
  readonly config: GatewayConfig;
  /** Closes the gateway, cutting any connection still open (an SSE GET stream a test forgot). */
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  /** Environment the YAML's `${VAR}` references resolve against (default: empty). */
  env?: NodeJS.ProcessEnv;
  /** Where the gateway logs (default: nowhere). */
  logger?: Logger | false;
}

export async function startGateway(configOrYaml: string | GatewayConfig, { env = {}, logger = false }: StartGatewayOptions = {}): Promise<RunningGateway> {
  const config = typeof configOrYaml === 'string' ? parseConfig(configOrYaml, { env, source: 'test.yaml' }) : configOrYaml;
  const app = await buildApp(config, { logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    agentUrl: (name) => `${baseUrl}/agents/${encodeURIComponent(name)}/mcp`,
    sellerUrl(name) {
      const agent = config.agents.get(name);
      if (agent === undefined) throw new Error(`no agent ${name} in the gateway's config`);
      return agent.url;
    },
    app,
    config,
    close() {
      closing ??= (async () => {
        const closed = app.close();
        app.server.closeAllConnections();
        await withTimeout(closed, 5_000, 'gateway close');
      })();
      return closing;
    },
  };
}

export interface SellerUrls {
  readonly url: string;
  readonly sseUrl: string;
}

/**
 * The YAML most e2e tests use: agent `demo` -> the seller's JSON endpoint, `demo-sse` -> its SSE
 * endpoint. `defaults` and `agentExtra` are spliced in as YAML text (already indented by the caller).
 */
export function demoGatewayYaml(seller: SellerUrls, opts: { defaults?: Record<string, string | number>; agents?: string } = {}): string {
  const defaults = Object.entries(opts.defaults ?? {})
    .map(([k, v]) => `  ${k}: ${v}\n`)
    .join('');
  return [
    'log_level: silent',
    ...(defaults ? ['defaults:', defaults.trimEnd()] : []),
    'agents:',
    '  demo:',
    `    url: ${seller.url}`,
    '  demo-sse:',
    `    url: ${seller.sseUrl}`,
    ...(opts.agents ? [opts.agents.trimEnd()] : []),
    '',
  ].join('\n');
}

/** One agent of a gateway YAML: its URL, or its URL and per-agent settings. */
export type AgentYaml = string | ({ url: string } & Record<string, string | number>);

/**
 * Gateway YAML text: the `head` lines (top-level settings, as YAML lines), then `agents:` with
 * one entry per name: `url` first, then the agent's settings in the order given.
 */
export function agentsYaml(agents: Record<string, AgentYaml>, head: readonly string[] = []): string {
  const lines = [...head, 'agents:'];
  for (const [name, agent] of Object.entries(agents)) {
    const { url, ...settings } = typeof agent === 'string' ? { url: agent } : agent;
    lines.push(`  ${name}:`, `    url: ${url}`, ...Object.entries(settings).map(([key, value]) => `    ${key}: ${value}`));
  }
  return [...lines, ''].join('\n');
}
