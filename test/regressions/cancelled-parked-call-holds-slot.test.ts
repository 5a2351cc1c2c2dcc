/**
 * Regression (review of trial 59 F2's fix, Low): `StreamHostWaits.hostCancelled` reaches only a
 * stream that is open. A call whose stream ended resumable (`resumable_end`) with the host's
 * answers outstanding had its ids parked for a resume (HostAnswerWaits.park); when the host then
 * cancelled the call (`notifications/cancelled`, accepted by the seller with a 2xx) before any
 * resume, nothing told the registry: the ids stayed parked to the call's `sse_deadline_ms`,
 * holding one of the session's `MAX_PARKED_CALLS_PER_SESSION` (16) parked slots and of the
 * `MAX_PARKED_CALLS` (1,024) in all, and keeping `anyAwaitedIn` true (every chunk of the
 * session's streams holding "notifications/cancelled" parsed event by event). A cancelled call
 * is never resumed (its resume gets 405: routing/cancelled-requests.ts), so 16 of them left a
 * live call's stream nothing to park, and its resume ran its idle clock while the human decided.
 *
 * Input: the real HostAnswerWaits registry (routing/host-answer-waits.ts), driven as
 * response/sse-stage.ts and routing/handler.ts drive it: a call's stream with a seller's request
 * (`await`) ending resumable (`close` with the call), then the accepted cancellation
 * (`callCancelled`, with the `requestId` as the host wrote it); and the real CancelledRequests
 * (`settle`'s answer decides, in the handler, whether the parked ids go).
 * Expectation: the cancelled call's parked ids are dropped (nothing parked, nothing awaited in
 * the session); only that call's (another call of the session, the same id in another session or
 * at another seller stay parked); after 16 calls cancelled once parked, a live call still parks
 * and its resume waits; a cancellation superseded by a new request with its id (which may have
 * parked ids of its own) or refused drops nothing.
 * Before the fix: 4 of 4 failed (`callCancelled` did not exist: a TypeError in the first three;
 * `settle` answered undefined). The second and fourth guard the fix's limits.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostAnswerWaits, sessionKeyOf, MAX_PARKED_CALLS_PER_SESSION } from '../../src/routing/host-answer-waits.js';
import { clock } from '../helpers/recording-idle-clock.js';
import { CancelledRequests } from '../../src/routing/cancelled-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';
import type { RpcPeek } from '../../src/exchange.js';
import { canonicalRequestId } from '../../src/response/json-value-at.js';

const SELLER = 'http://127.0.0.1:9/mcp';
const SESSION = 'session-1';
const KEY = sessionKeyOf(SELLER, SESSION);


/** A `requestId` as a host's `notifications/cancelled` writes it (mcp/cancelled-id.ts): the JSON text `text`. */
function written(text: string): WrittenRequestId {
  const bytes = Buffer.from(`{"requestId":${text}}`);
  return { bytes, range: [13, 13 + Buffer.byteLength(text)] };
}

/** The canonical id of the host's request with JSON-RPC id `id` (as sse-stage.ts names a call's parked ids). */
const callOf = (id: number | string): string => canonicalRequestId({ id, idText: typeof id === 'number' ? String(id) : undefined })!;

/** Call `call` (its canonical id) of `seller`/`session`: its stream carries the seller's request `asked` and ends resumable, parked for a minute. */
function parkCall(waits: HostAnswerWaits, call: string, asked: string, seller = SELLER, session = SESSION): void {
  const stream = waits.openStream(seller, session, clock(), 30_000);
  stream.await(asked);
  stream.close({ call, expiresAt: Date.now() + 60_000, startedAt: 1 });
}

// The registry's new entry point; absent before the fix (then each test using it fails with a TypeError).
const callCancelled = (waits: HostAnswerWaits, id: WrittenRequestId, seller = SELLER, session = SESSION): void =>
  (waits as unknown as { callCancelled(s: string, t: string, i: WrittenRequestId): void }).callCancelled(seller, session, id);

describe('cancelled-parked-call-holds-slot', () => {
  test("the seller's acceptance of the host's cancellation drops the call's parked ids: nothing parked or awaited in the session", () => {
    const waits = new HostAnswerWaits();
    parkCall(waits, callOf(7), 'n100');
    assert.deepEqual({ parked: waits.parkedCount, awaited: waits.anyAwaitedIn(KEY) }, { parked: 1, awaited: true });
    // The host wrote `7.0`: the same call as `7` (canonical ids).
    callCancelled(waits, written('7.0'));
    assert.deepEqual({ parked: waits.parkedCount, awaited: waits.anyAwaitedIn(KEY) }, { parked: 0, awaited: false });
  });

  test("only that call's parked ids go: another call of the session, the same id in another session or at another seller stay", () => {
    const waits = new HostAnswerWaits();
    parkCall(waits, callOf('call-a'), 'n100');
    parkCall(waits, callOf('call-b'), 'n101');
    parkCall(waits, callOf('call-a'), 'n102', SELLER, 'session-2');
    parkCall(waits, callOf('call-a'), 'n103', 'http://127.0.0.1:10/mcp');
    parkCall(waits, callOf(7), 'n104');
    callCancelled(waits, written('"call-a"'));
    // A string id is not a number: "7" names no call 7.
    callCancelled(waits, written('"7"'));
    const resumed = waits.openStream(SELLER, SESSION, clock(), 30_000, callOf('call-b'), 1);
    assert.deepEqual({ parked: waits.parkedCount, other: waits.anyAwaitedIn(sessionKeyOf(SELLER, 'session-2')), b: resumed.anyAwaited() }, { parked: 3, other: true, b: true });
    resumed.close();
  });

  test(`after ${MAX_PARKED_CALLS_PER_SESSION} calls cancelled once parked, a live call still parks its id and its resume waits for it`, () => {
    const waits = new HostAnswerWaits();
    for (let i = 0; i < MAX_PARKED_CALLS_PER_SESSION; i++) {
      parkCall(waits, callOf(i), `n${100 + i}`);
      callCancelled(waits, written(String(i)));
    }
    parkCall(waits, callOf(50), 'n500');
    const c = clock();
    const resumed = waits.openStream(SELLER, SESSION, c, 30_000, callOf(50), 1);
    assert.deepEqual({ parked: waits.parkedCount, clock: c.calls, awaited: resumed.anyAwaited() }, { parked: 0, clock: 'p', awaited: true });
    resumed.close();
  });

  test('settle says whether the accepted cancellation still names its call: not once refused, nor once a new request with its id was sent', () => {
    const cancellations = new CancelledRequests(60_000);
    const request = (id: number): Pick<RpcPeek, 'kind' | 'id' | 'idText'> => ({ kind: 'request', id, idText: String(id) });
    const accepted = cancellations.awaitSeller(SELLER, SESSION, written('7'));
    const refused = cancellations.awaitSeller(SELLER, SESSION, written('8'));
    const superseded = cancellations.awaitSeller(SELLER, SESSION, written('9'));
    // A new call 9 is sent before the seller answers the cancellation: its stream, not the cancelled call's, may have parked ids.
    cancellations.forget(SELLER, SESSION, request(9));
    assert.deepEqual(
      [cancellations.settle(accepted, true), cancellations.settle(refused, false), cancellations.settle(superseded, true), cancellations.settle(accepted, true)],
      [true, false, false, false],
    );
  });
});
