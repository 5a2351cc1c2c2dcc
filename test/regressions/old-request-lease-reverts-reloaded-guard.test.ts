/**
 * Regression (review 35, F2): a response to a request sent before a config reload put the
 * old guard settings back for the whole agent. `openBufferLease` (src/exchange.ts) opens the
 * lease with the exchange's own `agent.guard`, and `AgentGuard.state` took whatever settings
 * it was given as the agent's, so after a reload that raised `max_buffered_response_bytes`
 * (or set `backoff_after_breaches: 0`), the first response of an older request to start
 * reverted the agent to the old cap (or backoff) until its next new request: other answers
 * waited for room, or were shed `agent_backoff_shed`, under settings the operator had
 * changed. Now only a reload (`applySettings`) and a new request (`admit`, which carries the
 * config in force) set an agent's settings; a lease opened for an older exchange counts under
 * the settings in force (and an agent the guard first meets that way starts with the last
 * reload's settings for it, not the exchange's).
 *
 * Input: the guard as app.ts drives it, the leases opened as the body readers open them
 * (`openBufferLease` of an exchange carrying the old config's agent).
 * Expected: after each reload, the older exchange's lease leaves the reloaded settings in
 * force: exact `mustWait`, `isBackingOff` and `shedRetryAfterS` values below.
 * Before the fix: 5 of the 10 assertions failed, in all 3 tests: the second answer waited
 * under the old 1000-byte cap (`mustWait` true), the backoff was back on (`isBackingOff` true)
 * and the younger answer shed (`shedRetryAfterS` 60, released), and the agent first met
 * through the older lease had the old cap (node:test reports the first of each test).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentGuard, type GuardSettings } from '../../src/admission/agent-guard.js';
import { openBufferLease, type Exchange } from '../../src/exchange.js';

const K = 'tools/call get_products';
const OLD: GuardSettings = { max_buffered_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 60_000, backoff_max_ms: 60_000 };

/** The part of an exchange `openBufferLease` reads: one started under `settings` (its config's agent). */
const exchangeUnder = (guard: AgentGuard, agent: string, settings: GuardSettings, shedKind?: string): Exchange =>
  ({ guard, agent: { name: agent, guard: settings }, shedKind, bufferLease: undefined }) as unknown as Exchange;

/** What app.ts setConfig passes to `applySettings`: the reloaded config's agents. */
const reload = (guard: AgentGuard, agent: string, settings: GuardSettings): void => guard.applySettings(new Map([[agent, { guard: settings }]]));

describe('old-request-lease-reverts-reloaded-guard', () => {
  test('a raised max_buffered_response_bytes stays raised when an older request’s answer opens its lease', () => {
    const guard = new AgentGuard();
    const NEW = { ...OLD, max_buffered_response_bytes: 10_000_000 };
    guard.admit('a', K, OLD, 1_000); // a request sent before the reload
    reload(guard, 'a', NEW);
    const first = guard.lease('a', NEW);
    const second = guard.lease('a', NEW);
    first.add(5_000);
    second.add(10);
    assert.equal(second.mustWait, false, 'under the reloaded 10 MB cap');
    const old = openBufferLease(exchangeUnder(guard, 'a', OLD))!;
    assert.equal(second.mustWait, false, 'still under the reloaded cap once the older request’s answer starts');
    assert.equal(guard.heldBytes('a'), 5_010);
    for (const lease of [first, second, old]) lease.release();
  });

  test('backoff_after_breaches: 0 stays off: no backoff comes back, no answer is shed', () => {
    const guard = new AgentGuard();
    const admission = guard.admit('a', K, OLD, 1_000);
    assert.ok(!('admitted' in admission));
    guard.finish(admission, 'breach'); // a 60 s backoff under the old settings
    assert.equal(guard.isBackingOff('a', K), true);
    const NEW = { ...OLD, backoff_after_breaches: 0 };
    reload(guard, 'a', NEW);
    assert.equal(guard.isBackingOff('a', K), false);
    const younger = guard.lease('a', NEW, K); // an answer of a request sent after the reload
    const oldest = openBufferLease(exchangeUnder(guard, 'a', OLD, K))!;
    assert.equal(guard.isBackingOff('a', K), false, 'the older request’s lease does not turn the backoff back on');
    oldest.add(2_000); // the agent over its 1000-byte cap
    younger.add(10);
    void younger.ready(); // waits for room; under a backoff it would be shed at once
    assert.equal(younger.shedRetryAfterS, undefined, 'not shed agent_backoff_shed');
    assert.equal(younger.released, false);
    for (const lease of [oldest, younger]) lease.release();
  });

  test('an agent the guard first meets through an older request’s lease starts with the reloaded settings', () => {
    const guard = new AgentGuard();
    const NEW = { ...OLD, max_buffered_response_bytes: 10_000_000 };
    reload(guard, 'g', NEW); // no request of `g` yet: a GET stream sent before the reload
    const stream = openBufferLease(exchangeUnder(guard, 'g', OLD))!;
    const answer = openBufferLease(exchangeUnder(guard, 'g', OLD))!; // another request sent before it
    stream.add(5_000);
    answer.add(10);
    assert.equal(answer.mustWait, false, 'under the reloaded 10 MB cap');
    for (const lease of [stream, answer]) lease.release();
  });
});
