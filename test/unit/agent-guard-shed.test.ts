// Load shedding by the agent guard, without sockets (src/admission/agent-guard.ts, module doc;
// issue 5, "Memory under attack"): an answer that must wait for buffer room while its call
// kind backs off is shed instead of held.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { AgentGuard, type GuardSettings } from '../../src/admission/agent-guard.js';

const K = 'tools/call get_products';
/** 100-byte cap; one breach starts a 60 s backoff. */
const ONE: GuardSettings = { max_buffered_response_bytes: 100, backoff_after_breaches: 1, backoff_base_ms: 60_000, backoff_max_ms: 60_000 };

const settled = async <T>(p: Promise<T>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};
/** One breach of K: the kind backs off for 60 s. */
function breach(guard: AgentGuard): void {
  const a = guard.admit('s', K, ONE, 5_000);
  assert.ok(!('admitted' in a));
  guard.finish(a, 'breach');
  assert.equal(guard.isBackingOff('s', K), true);
}

describe('agent guard: load shedding', () => {
  it('a waiting answer is shed when its kind starts backing off: shedRetryAfterS set, its bytes released, its wait ended', async () => {
    const guard = new AgentGuard();
    const oldest = guard.lease('s', ONE, K);
    oldest.add(80);
    const waiting = guard.lease('s', ONE, K);
    waiting.add(40);
    assert.equal(waiting.mustWait, true);
    const ready = waiting.ready();
    assert.equal(await settled(ready), false);
    assert.equal(waiting.shedRetryAfterS, undefined);

    breach(guard);
    assert.equal(waiting.shedRetryAfterS, 60);
    assert.equal(await settled(ready), true);
    assert.equal(guard.heldBytes('s'), 80);
    // Once shed (released), never again; the oldest was not shed.
    assert.equal(waiting.shedNow(), false);
    assert.equal(oldest.shedRetryAfterS, undefined);
    assert.equal(oldest.mustWait, false);
  });

  it('an answer that must wait while its kind already backs off is shed at once instead of waiting', async () => {
    const guard = new AgentGuard();
    const oldest = guard.lease('s', ONE);
    oldest.add(150);
    breach(guard);
    const late = guard.lease('s', ONE, K);
    late.add(10);
    assert.equal(await settled(late.ready()), true);
    assert.equal(late.shedRetryAfterS, 60);
    assert.equal(guard.heldBytes('s'), 150);
    assert.equal(guard.bufferWaits('s'), 0, 'shed, not counted as a wait');
  });

  it('never shed: the oldest answer, an answer within the cap, another kind, a lease without a kind (a probe)', async () => {
    const guard = new AgentGuard();
    breach(guard);
    const oldest = guard.lease('s', ONE, K);
    oldest.add(60);
    const within = guard.lease('s', ONE, K);
    within.add(30);
    assert.equal(await settled(oldest.ready()), true);
    assert.equal(await settled(within.ready()), true);

    const other = guard.lease('s', ONE, 'tools/call list_creative_formats');
    other.add(30); // 120 > 100: must wait
    const probe = guard.lease('s', ONE);
    probe.add(30);
    const otherReady = other.ready();
    const probeReady = probe.ready();
    assert.equal(await settled(otherReady), false);
    assert.equal(await settled(probeReady), false);

    // They read on once room is released, as before; nobody was shed.
    oldest.release();
    within.release();
    assert.equal(await settled(otherReady), true);
    assert.equal(await settled(probeReady), true);
    assert.deepEqual([oldest, within, other, probe].map((l) => l.shedRetryAfterS), [undefined, undefined, undefined, undefined]);
  });

  it('a body that has ended still waits (its decoders may hold a bomb), and is woken by its release; an aborted one does not wait', async () => {
    const guard = new AgentGuard();
    const oldest = guard.lease('s', ONE);
    oldest.add(100);
    const ended = guard.lease('s', ONE);
    ended.add(10);
    const endedBody = Object.assign(new EventEmitter(), { destroyed: true, readableEnded: true });
    const ready = ended.ready(endedBody);
    assert.equal(await settled(ready), false);
    ended.release(); // its exchange ended (exchange.ts openBufferLease: released when the host's answer closes)
    assert.equal(await settled(ready), true);

    const aborted = guard.lease('s', ONE);
    aborted.add(10);
    const abortedBody = Object.assign(new EventEmitter(), { destroyed: true, readableEnded: false });
    assert.equal(await settled(aborted.ready(abortedBody)), true);
  });
});
