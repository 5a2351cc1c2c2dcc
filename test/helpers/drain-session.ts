/**
 * The set-up of the drain regressions with a configured resume secret
 * (restart-with-secret-loses-answered-sse-call, resume-during-drain-refused-draining): the
 * gateway as its own process in front of the drain sellers (test/support/sdk1/drain-sellers.ts:
 * agent `sse`, agent `json`), one real MCP SDK client on each agent, the `sse` client's HTTP
 * attempts recorded, and the slow `json_call` in flight (it keeps the process draining after
 * the stop signal until the test releases it).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGatewayProcess, type GatewayProcess } from './process.js';
import { withTimeout } from './timeout.js';
import { watchingFetch, type Attempt, type DrainSellers } from '../support/sdk1/drain-sellers.js';

export interface DrainSession {
  readonly gw: GatewayProcess;
  /** The `sse` client's HTTP attempts (watchingFetch). */
  readonly seen: Attempt[];
  /** The client on agent `sse`. */
  readonly sseClient: Client;
  /** The `json_call` started on agent `json` (never rejects unhandled; await it). */
  readonly jsonCall: Promise<unknown>;
  /** The `sse` client's resumes, 503s and refused connections: `[method, resumed, status]`. */
  resumesAndRefusals(): [string, boolean, number | 'failed'][];
  /** Closes both clients and kills the gateway (in `finally`). */
  close(): Promise<void>;
}

/** Starts the session (module doc) with the config file in `dir`, resume secret `secret`, and the clients' call timeout `callTimeoutMs`. */
export async function openDrainSession(sellers: DrainSellers, dir: string, secret: string, callTimeoutMs: number): Promise<DrainSession> {
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nresume:\n  secret: ${secret}\nagents:\n  sse: { url: ${sellers.sseUrl} }\n  json: { url: ${sellers.jsonUrl} }\n`);
  const gw = await startGatewayProcess(file);
  const seen: Attempt[] = [];
  const sseClient = new Client({ name: 'drain-host', version: '1.0.0' });
  const jsonClient = new Client({ name: 'drain-host', version: '1.0.0' });
  const close = async (): Promise<void> => {
    await sseClient.close().catch(() => {});
    await jsonClient.close().catch(() => {});
    gw.kill();
  };
  try {
    await withTimeout(sseClient.connect(new StreamableHTTPClientTransport(new URL(`${gw.address}/agents/sse/mcp`), { fetch: watchingFetch(seen) })), 10_000, 'connect sse');
    await withTimeout(jsonClient.connect(new StreamableHTTPClientTransport(new URL(`${gw.address}/agents/json/mcp`))), 10_000, 'connect json');
  } catch (err) {
    await close();
    throw err;
  }
  const jsonCall = jsonClient.callTool({ name: 'json_call', arguments: {} }, undefined, { timeout: callTimeoutMs });
  jsonCall.catch(() => {}); // awaited by the test; a failing run ends before
  return {
    gw,
    seen,
    sseClient,
    jsonCall,
    resumesAndRefusals: () => seen.filter((a) => a.lastEventId !== null || a.status === 503 || a.status === 'failed').map((a) => [a.method, a.lastEventId !== null, a.status]),
    close,
  };
}
