/**
 * What the SSE memory regressions read and drive on a gateway with one agent per seller path:
 * an agent's metric from `/metrics`, the held-bytes gauge sampled until it reads a value, the
 * seller's held streams released by agent, and the stack itself (a raw seller answering each
 * agent's path `/<agent>/mcp`, a gateway with those agents). One copy for
 * test/regressions/sse-empty-data-lines-heap-uncounted, sse-open-event-id-values-uncounted,
 * sse-dropped-events-cost-uncharged and sse-unknown-field-lines-cost-uncharged (`duplicates`).
 */
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
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
