/**
 * Regression (review of hostile trial 59 F2's fix, Nit): once the host cancelled a call
 * (`StreamHostWaits.hostCancelled`: its `notifications/cancelled` accepted by the seller), the
 * call's stream waited for nothing, but kept its own requests' ids. They still counted as
 * awaited in the session (`anyAwaitedIn`: every chunk of the session's streams parsed for
 * them), and at a resumable end they were parked for a resume of the call that the host never
 * makes (a cancelled call's resume gets 405), taking one of the session's
 * `MAX_PARKED_CALLS_PER_SESSION` (16) parked slots, and of the `MAX_PARKED_CALLS` (1,024) in
 * all: 16 cancelled calls ending resumable left a live call's stream nothing to park, so its
 * resume ran its idle clock while the host's human still decided.
 *
 * Input: the real HostAnswerWaits registry (routing/host-answer-waits.ts), driven as
 * response/sse-stage.ts drives it: streams opened with an idle clock, a seller's request
 * (`await`), the host's cancel (`hostCancelled`), a resumable end (`close` with the call).
 * Expectation: a cancelled call's ids are not awaited in the session and nothing is parked at
 * its end; a request the stream carries after the cancel is not awaited either; after 16
 * cancelled calls end resumable, a live call's stream still parks its id and its resume waits
 * for it (its clock paused). Before the fix: 3 of 3 failed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostAnswerWaits, sessionKeyOf, MAX_PARKED_CALLS_PER_SESSION } from '../../src/routing/host-answer-waits.js';
import { clock } from '../helpers/recording-idle-clock.js';

const SELLER = 'http://127.0.0.1:9/mcp';
const SESSION = 'session-1';
const KEY = sessionKeyOf(SELLER, SESSION);


/** A resumable end as sse-stage.ts closes a request's stream: parked for `call` for a minute. */
const parkFor = (call: string): { call: string; expiresAt: number; startedAt: number } => ({ call, expiresAt: Date.now() + 60_000, startedAt: 1 });

describe('cancelled-call-ids-parked-on-resumable-end', () => {
  test("a cancelled call's own ids are no longer awaited in the session, and nothing is parked at its resumable end", () => {
    const waits = new HostAnswerWaits();
    const stream = waits.openStream(SELLER, SESSION, clock(), 30_000);
    stream.await('n1');
    assert.equal(waits.anyAwaitedIn(KEY), true);
    stream.hostCancelled();
    assert.deepEqual({ awaited: waits.anyAwaitedIn(KEY), own: stream.anyAwaited() }, { awaited: false, own: false });
    stream.close(parkFor('n9'));
    assert.equal(waits.parkedCount, 0);
  });

  test('a request the stream carries after its call was cancelled is not awaited', () => {
    const waits = new HostAnswerWaits();
    const c = clock();
    const stream = waits.openStream(SELLER, SESSION, c, 30_000);
    stream.hostCancelled();
    stream.await('n2');
    assert.deepEqual({ awaited: waits.anyAwaitedIn(KEY), clock: c.calls }, { awaited: false, clock: '' });
    stream.close(parkFor('n9'));
    assert.equal(waits.parkedCount, 0);
  });

  test(`after ${MAX_PARKED_CALLS_PER_SESSION} cancelled calls end resumable, a live call still parks its id and its resume waits for it`, () => {
    const waits = new HostAnswerWaits();
    for (let i = 0; i < MAX_PARKED_CALLS_PER_SESSION; i++) {
      const cancelled = waits.openStream(SELLER, SESSION, clock(), 30_000);
      cancelled.await(`n${100 + i}`);
      cancelled.hostCancelled();
      cancelled.close(parkFor(`n${i}`));
    }
    const live = waits.openStream(SELLER, SESSION, clock(), 30_000);
    live.await('n500');
    live.close(parkFor('n50'));
    const c = clock();
    const resumed = waits.openStream(SELLER, SESSION, c, 30_000, 'n50', 1);
    assert.deepEqual({ parked: waits.parkedCount, clock: c.calls, awaited: resumed.anyAwaited() }, { parked: 0, clock: 'p', awaited: true });
    resumed.close();
  });
});
