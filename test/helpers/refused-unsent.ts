/**
 * The check the request-refusal regressions share: a body POSTed to agent `agent` is refused
 * 400 `invalid_request` with exactly `expected` as its body, before the seller is contacted,
 * and the gateway writes one `refused` line for it; and its control, a body forwarded as written.
 */
import assert from 'node:assert/strict';
import { rawPost } from './raw.js';
import type { ObservedGateway } from '../support/hostile-seller.js';
import type { RawSeller } from '../support/raw-seller.js';

export async function assertRefusedUnsent(stack: { seller: RawSeller; gateway: ObservedGateway }, agent: string, body: string, expected: string): Promise<void> {
  const seen = stack.seller.requests.length;
  const lines = stack.gateway.lines.length;
  const r = await rawPost(stack.gateway.agentUrl(agent), body);
  assert.equal(r.status, 400);
  assert.equal(r.text(), expected);
  assert.equal(stack.seller.requests.length, seen, 'the seller was contacted');
  const refused = await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= lines);
  assert.deepEqual({ reason: refused.reason, status: refused.status }, { reason: 'invalid_request', status: 400 });
}

/**
 * POSTs `body` to agent `agent` as a host on `revision` (its `MCP-Protocol-Version`; null:
 * none sent, which MCP reads as 2025-03-26, the revision with batches) and checks that it
 * reached the seller as written (one request, the same bytes); returns the gateway's answer.
 */
export async function postForwardedAsWritten(
  stack: { seller: RawSeller; gateway: ObservedGateway },
  agent: string,
  body: string,
  revision: string | null = '2025-06-18',
): Promise<{ status: number; text: string }> {
  const seen = stack.seller.requests.length;
  const r = await rawPost(stack.gateway.agentUrl(agent), body, revision === null ? {} : { 'mcp-protocol-version': revision });
  assert.equal(stack.seller.requests.length, seen + 1);
  assert.equal(stack.seller.requests[seen]!.body.toString('utf8'), body);
  return { status: r.status, text: r.text() };
}
