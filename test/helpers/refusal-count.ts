/**
 * The gateway's refusal count for one reason (`adcp_gateway_refusals_total{agent,reason}`, all agents), read
 * from its Prometheus text exposition: what the regression tests of refusals check moved by
 * exactly one per refused request.
 */
import assert from 'node:assert/strict';
import type { ObservedGateway } from '../support/hostile-seller.js';
import { withTimeout } from './timeout.js';

/**
 * The counter's value for `reason` in a `/metrics` text, summed over its `agent` label values
 * (a configured agent, `_unknown`, `_none`); 0 when no series has it (never incremented).
 */
export function refusalCountIn(metricsText: string, reason: string): number {
  let sum = 0;
  for (const line of metricsText.split('\n')) {
    const m = /^adcp_gateway_refusals_total\{(.*)\} (\S+)$/.exec(line);
    if (m !== null && m[1]!.split(',').includes(`reason="${reason}"`)) sum += Number(m[2]);
  }
  return sum;
}

/** The counter's value for `reason` as the gateway at `baseUrl` serves it on `/metrics`. */
export async function refusalCount(baseUrl: string, reason: string): Promise<number> {
  return refusalCountIn(await (await fetch(`${baseUrl}/metrics`)).text(), reason);
}

/** The fields of a `refused` log line the refusal regressions compare. */
export interface RefusedLine {
  readonly reason: unknown;
  readonly status: unknown;
  readonly agent: unknown;
  readonly http_method: unknown;
}

/**
 * Runs `send` (one request the gateway must refuse for `reason`) and returns its answer and the
 * `refused` lines it wrote, after checking that the refusal was counted exactly once and that
 * the seller got nothing.
 */
export async function refusedOnce<A>(
  stack: { readonly seller: { readonly requests: readonly unknown[] }; readonly gateway: ObservedGateway },
  reason: string,
  send: () => Promise<A>,
): Promise<{ answer: A; refused: RefusedLine[] }> {
  const { seller, gateway } = stack;
  const seen = seller.requests.length;
  const linesBefore = gateway.lines.length;
  const countBefore = await refusalCount(gateway.baseUrl, reason);
  const answer = await withTimeout(send());
  await gateway.waitForLine((l) => l.msg === 'refused' && gateway.lines.indexOf(l) >= linesBefore);
  const refused = gateway.lines
    .slice(linesBefore)
    .filter((l) => l.msg === 'refused')
    .map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method }));
  assert.equal(await refusalCount(gateway.baseUrl, reason), countBefore + 1, `one ${reason} counted`);
  assert.equal(seller.requests.length, seen, 'the seller got nothing');
  return { answer, refused };
}
