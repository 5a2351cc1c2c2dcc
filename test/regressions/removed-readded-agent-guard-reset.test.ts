/**
 * Regression (hostile trial 36, F1 and F3): a reload that removed an agent made the agent
 * guard forget its state once it looked idle, and a reload that added it back started it
 * anew: its backoff (`backoff_after_breaches`) was gone, so a seller whose answers kept
 * breaking bounds got the next oversized call at once, ~2 s into a 20 s backoff (F3); and a
 * stream between events, holding a buffer lease on the old state, no longer counted against
 * the re-added agent's `max_buffered_response_bytes` (F1: a 200 KB answer went through beside
 * 60,000 held bytes under a 65,536-byte cap). That forgetting came with the fix of hostile
 * trial 34, F2 (the series of removed agents); the guard now keeps an agent's state across
 * its removal (its gauges are read for configured agents only: app.ts).
 *
 * Input: agent `a` (max_response_bytes 1000, backoff_after_breaches 1, backoff 20 s,
 * response_deadline_ms 500) before a raw seller answering 5,000 bytes; a call that breaks the
 * bound; then the config replaced without `a` and again with it, as two reloads do.
 * Expected: the next call is refused `agent_backoff` without reaching the seller, before and
 * after the two reloads.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller, toolResponseOfSize } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const A = (url: string) => ({ url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 20000, backoff_max_ms: 20000, response_deadline_ms: 500 });

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponseOfSize(1, 5000))),
  (seller) => startObservedGateway(agentsYaml({ a: A(seller.url), other: seller.url })),
);

/** The `details.reason` of the call's minted error. */
const reasonOf = async (id: number): Promise<string | undefined> => {
  const text = (await rawPost(stack.gateway.agentUrl('a'), toolCall(id, 'big'))).text();
  return /"reason":"([a-z_]+)"/.exec(text)?.[1];
};

describe('removed-readded-agent-guard-reset', { timeout: TEST_TIMEOUT_MS }, () => {
  test("an agent removed and added back keeps its backoff: the next call still gets agent_backoff, the seller untouched", async () => {
    assert.equal(await reasonOf(1), 'raw_bytes');
    const seen = stack.seller.requests.length;
    assert.equal(await reasonOf(2), 'agent_backoff');
    assert.equal(stack.seller.requests.length, seen);

    const control = stack.gateway.app.gateway;
    control.setConfig(parseConfig(agentsYaml({ other: stack.seller.url }), { env: {} }));
    control.setConfig(parseConfig(agentsYaml({ a: A(stack.seller.url), other: stack.seller.url }), { env: {} }));

    assert.equal(await reasonOf(3), 'agent_backoff');
    assert.equal(stack.seller.requests.length, seen, 'the seller got nothing during the backoff');
  });
});
