/**
 * Hot-path review of the elicitation tracking (routing/host-answer-waits.ts `park`): a call's
 * stream that ends resumable with a request of the seller's outstanding parks its id for a
 * resume of that call, keyed by seller endpoint, session and the call's JSON-RPC id. A host may
 * use the same id for a later call (ids need only be unique among its requests in flight): a
 * resume of that later call (its own token, its own first start) inherited the earlier call's
 * parked wait, its idle clock paused for an elicitation it never carried. Now the parked ids
 * carry the stream's first start (`startedAt`, which a resume's token carries) and a resume
 * inherits them only when its start is the same.
 *
 * Input: call `7` (started at 1,000) parks the seller's request 5; a resume of call `7` started
 * at 2,000 (another call re-using the id), then one started at 1,000. Expected: the first
 * resume's clock is never paused and the parked id stays; the second's is paused (`p`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostAnswerWaits } from '../../src/routing/host-answer-waits.js';
import { clock } from '../helpers/recording-idle-clock.js';


test('reused-call-id-inherits-parked-wait: a resume of another call with the same id does not inherit the parked wait', () => {
  const waits = new HostAnswerWaits();
  const first = waits.openStream('seller', 'S', clock(), 60_000, undefined, 1_000);
  first.await('n5');
  first.close({ call: 'n7', expiresAt: Date.now() + 60_000, startedAt: 1_000 });
  assert.equal(waits.parkedCount, 1);

  const other = clock();
  const reused = waits.openStream('seller', 'S', other, 60_000, 'n7', 2_000);
  assert.equal(other.calls, '');
  assert.equal(waits.parkedCount, 1);
  reused.close();

  const own = clock();
  const resumed = waits.openStream('seller', 'S', own, 60_000, 'n7', 1_000);
  assert.equal(own.calls, 'p');
  assert.equal(waits.parkedCount, 0);
  resumed.close();
  assert.deepEqual([waits.sessions, waits.parkedCount], [0, 0]);
});
