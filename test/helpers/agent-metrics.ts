/**
 * What the SSE memory regressions read and drive on a gateway with one agent per seller path:
 * an agent's metric from `/metrics`, the held-bytes gauge sampled until it reads a value, the
 * seller's held streams released by agent, and the stack itself (a raw seller answering each
 * agent's path `/<agent>/mcp`, a gateway with those agents), and that stack serving one open
 * event block per agent, held until released or ended at once (useHeldEventStack). One copy for
 * test/regressions/sse-empty-data-lines-heap-uncounted, sse-open-event-id-values-uncounted,
 * sse-dropped-events-cost-uncharged and sse-unknown-field-lines-cost-uncharged (`duplicates`).
 */
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from './gateway.js';
import { useSellerAndGateway, type SellerAndGateway } from './stack.js';
import type { ServerResponse } from 'node:http';

/** The value of `name`'s line for `agent` (and containing `label`, e.g. `reason="x"`) on `baseUrl`'s /metrics; 0 when there is none. */
export async function agentMetric(baseUrl: string, name: string, agent: string, label = ''): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`agent="${agent}"`) && l.includes(label));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** `adcp_gateway_agent_buffered_response_bytes` for `agent`. */
export const bufferedGauge = (baseUrl: string, agent: string): Promise<number> => agentMetric(baseUrl, 'adcp_gateway_agent_buffered_response_bytes', agent);

/**
 * Samples `agent`'s held-bytes gauge until it reads `want` (hang guard: 400 samples, 5 ms
 * apart); with `atMost`, every sample must be at most `want`.
 */
export async function gaugeReaches(baseUrl: string, agent: string, want: number, atMost = false): Promise<void> {
  const seen: number[] = [];
  for (let i = 0; i < 400; i++) {
    const v = await bufferedGauge(baseUrl, agent);
    seen.push(v);
    if (atMost) assert.ok(v <= want, `${agent}: the gauge ${v} over ${want}`);
    if (v === want) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`${agent}: the gauge never read ${want} (max seen ${Math.max(...seen)}, last ${seen.at(-1)})`);
}

/** Waits until the seller holds `agent`'s stream in `held` (hang guard: 2000 x 5 ms), then releases it. */
export async function releaseHeld(held: Map<string, () => void>, agent: string): Promise<void> {
  for (let i = 0; i < 2000 && !held.has(agent); i++) await new Promise((r) => setTimeout(r, 5));
  const step = held.get(agent);
  assert.ok(step, `${agent}: the seller holds the stream`);
  held.delete(agent);
  step();
}

/** Opens the standalone GET stream of `url` (asserts 200). */
export async function openGetStream(url: string): Promise<Response> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  return res;
}

/** Answers one request to `/<agent>/mcp`: the agent, whether it is a GET, its body. */
export type AgentPathServe = (agent: string, isGet: boolean, body: Buffer, res: ServerResponse, req: SeenRequest) => void | Promise<void>;

/**
 * A raw seller answering each agent's path `/<agent>/mcp` with `serve`, and an observed gateway
 * with `agents`, each with `limits` (setting -> YAML value, e.g. `{ max_response_bytes: 1000 }`).
 */
export function useAgentPathStack(agents: readonly string[], limits: Record<string, string | number>, serve: AgentPathServe): SellerAndGateway<RawSeller, ObservedGateway> {
  return useSellerAndGateway(
    () => startRawSeller((req, res) => serve(req.url.split('/')[1]!, req.method === 'GET', req.body, res, req)),
    (seller) => {
      const base = seller.url.replace(/\/mcp$/, '');
      return startObservedGateway(agentsYaml(Object.fromEntries(agents.map((a) => [a, { url: `${base}/${a}/mcp`, ...limits }]))));
    },
  );
}

/** The notification event the seller ends a standalone GET stream with. */
export const AFTER_NOTE = 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}\n\n';

/** The result event the seller ends call `id`'s stream with (a text `done`). */
export const doneResult = (id: number): string => `data: ${toolResponse(id, { content: [{ type: 'text', text: 'done' }] })}\n\n`;

/** What an agent's stream sends before its block's blank line, and whether it is held there. */
export interface OpenBlock {
  /** The block's lines (no blank line ends them). */
  readonly lines: string;
  /** Held: `lines` written, then the stream waits for `release(agent)`; else all in one write. */
  readonly held: boolean;
}

/** {@link useAgentPathStack}'s stack with what the tests read and drive on it, by agent. */
export interface HeldEventStack extends SellerAndGateway<RawSeller, ObservedGateway> {
  /** {@link agentMetric} on this gateway. */
  metric(name: string, agent: string, label?: string): Promise<number>;
  /** {@link bufferedGauge} on this gateway. */
  gauge(agent: string): Promise<number>;
  /** {@link gaugeReaches} on this gateway. */
  gaugeReaches(agent: string, want: number, atMost?: boolean): Promise<void>;
  /** Ends `agent`'s held block ({@link releaseHeld}). */
  release(agent: string): Promise<void>;
  /** Opens `agent`'s standalone GET stream ({@link openGetStream}). */
  getStream(agent: string): Promise<Response>;
}

/**
 * A stack ({@link useAgentPathStack}, `agents` with `limits`) whose seller answers every
 * request with one SSE stream (200, text/event-stream): `block(agent).lines`, then a blank
 * line and the tail, {@link AFTER_NOTE} for a GET or {@link doneResult} of the POSTed call's
 * id. A held block is written alone and the rest waits for `release(agent)`; any other goes
 * out in one write.
 */
export function useHeldEventStack(agents: readonly string[], limits: Record<string, string | number>, block: (agent: string) => OpenBlock): HeldEventStack {
  /** Releases for the held streams, by agent. */
  const held = new Map<string, () => void>();
  const stack = useAgentPathStack(agents, limits, async (agent, isGet, body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const tail = isGet ? AFTER_NOTE : doneResult((JSON.parse(body.toString('utf8')) as { id: number }).id);
    const { lines, held: hold } = block(agent);
    if (!hold) {
      res.end(lines + '\n' + tail);
      return;
    }
    res.write(lines);
    await new Promise<void>((release) => held.set(agent, release));
    res.end('\n' + tail);
  });
  return {
    get seller(): RawSeller {
      return stack.seller;
    },
    get gateway(): ObservedGateway {
      return stack.gateway;
    },
    closeAfter: (...closables) => stack.closeAfter(...closables),
    metric: (name, agent, label = '') => agentMetric(stack.gateway.baseUrl, name, agent, label),
    gauge: (agent) => bufferedGauge(stack.gateway.baseUrl, agent),
    gaugeReaches: (agent, want, atMost = false) => gaugeReaches(stack.gateway.baseUrl, agent, want, atMost),
    release: (agent) => releaseHeld(held, agent),
    getStream: (agent) => openGetStream(stack.gateway.agentUrl(agent)),
  };
}
