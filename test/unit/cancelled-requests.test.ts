/**
 * The cancellations remembered for resumes (src/routing/cancelled-requests.ts; hostile trial 55,
 * F1: test/regressions/cancelled-call-resumed-gets-sse-idle.test.ts): which resume a
 * cancellation names (seller url, session, id as a cancellation matches it), for how long
 * (`resume.ttl_ms` from the last time it was remembered), and how many (oldest dropped first).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcPeek } from '../../src/exchange.js';
import { CancelledRequests, CANCELLED_REQUESTS_REMEMBERED } from '../../src/routing/cancelled-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';

const written = (text: string): WrittenRequestId => ({ bytes: Buffer.from(`{"requestId":${text}}`), range: [13, 13 + Buffer.byteLength(text)] });
const request = (id: string | number, idText?: string): Pick<RpcPeek, 'kind' | 'id' | 'idText'> => ({ kind: 'request', id, idText });
const SELLER = 'http://127.0.0.1:9/mcp';

test('a cancellation names a resume of its seller url, session and id, ids compared as a cancellation matches them', () => {
  const c = new CancelledRequests(60_000);
  assert.equal(c.has(SELLER, 'a', request(7)), false);
  c.rememberWritten(SELLER, 'a', written('7.0'));
  c.rememberWritten(SELLER, 'a', written('"a\\u0062"'));
  c.rememberWritten(SELLER, 'a', written('9007199254740993'));
  c.rememberWritten(SELLER, 'a', written('"\\ud800"'));
  assert.deepEqual(
    [request(7), request('ab'), request(9007199254740992, '9007199254740993'), request('\ud800')].map((r) => c.has(SELLER, 'a', r)),
    [true, true, true, true],
  );
  assert.deepEqual(
    [
      c.has(SELLER, 'b', request(7)), // another session
      c.has('http://127.0.0.1:9/other', 'a', request(7)), // another seller
      c.has(SELLER, 'a', request('7')), // a string is not a number
      c.has(SELLER, 'a', request(9007199254740992)), // not the number written
      c.has(SELLER, 'a', request('\ufffd')), // a lone surrogate is not U+FFFD
      c.has(SELLER, 'a', { kind: 'batch', id: null, idText: undefined }),
    ],
    [false, false, false, false, false, false],
  );
  // Remembered from a request's own id: 1e-400 is what the host wrote, not 0.
  c.rememberRequest(SELLER, 'a', request(0, '1e-400'));
  assert.deepEqual([c.has(SELLER, 'a', request(0, '1e-400')), c.has(SELLER, 'a', request(0))], [true, false]);
});

test('kept resume.ttl_ms from the last time it was remembered; then forgotten', () => {
  let now = 1_000_000;
  const c = new CancelledRequests(1_000, 100, () => now);
  c.rememberWritten(SELLER, 'a', written('1'));
  now += 800;
  c.rememberRequest(SELLER, 'a', request(1)); // its exchange ended: a new lifetime
  now += 800;
  assert.equal(c.has(SELLER, 'a', request(1)), true);
  now += 201;
  assert.equal(c.has(SELLER, 'a', request(1)), false);
  assert.equal(c.size, 0, 'an expired entry is dropped when asked');
  // Expired entries go from the front as new ones come.
  c.rememberWritten(SELLER, 'a', written('2'));
  now += 1_001;
  c.rememberWritten(SELLER, 'a', written('3'));
  assert.equal(c.size, 1);
});

test(`at most ${CANCELLED_REQUESTS_REMEMBERED} by default; past the cap the oldest goes first`, () => {
  const c = new CancelledRequests(60_000, 3);
  for (const id of ['1', '2', '3']) c.rememberWritten(SELLER, 'a', written(id));
  c.rememberWritten(SELLER, 'a', written('1')); // remembered again: now the newest
  c.rememberWritten(SELLER, 'a', written('4'));
  assert.deepEqual(
    [1, 2, 3, 4].map((id) => c.has(SELLER, 'a', request(id))),
    [true, false, true, true],
  );
  assert.equal(c.size, 3);
  // Long session ids and string ids take no more room: a key is a digest.
  const big = new CancelledRequests(60_000, 2);
  big.rememberWritten(SELLER, 's'.repeat(16_000), written(JSON.stringify('x'.repeat(2_000))));
  assert.equal(big.has(SELLER, 's'.repeat(16_000), request('x'.repeat(2_000))), true);
});

test("a cancelled resume ending after a newer call reused its id: renewed only while remembered, the newer call's resumes not refused (review of trial 56, F3)", () => {
  let now = 1_000;
  const c = new CancelledRequests(60_000, CANCELLED_REQUESTS_REMEMBERED, () => now);
  // A's resume (a GET) is cancelled: remembered when the cancellation comes.
  c.rememberWritten(SELLER, 'a', written('5'));
  // B, a new POST with id 5, opens: the cancellation forgotten (routing/handler.ts).
  c.forget(SELLER, 'a', request(5));
  now += 10;
  // A's resume ends (handler.ts end): renewed only while remembered.
  c.renewRequest(SELLER, 'a', request(5));
  assert.equal(c.has(SELLER, 'a', request(5)), false, "B's resumes go to the seller");
  assert.equal(c.size, 0);
  // Without a newer call: renewed, a new lifetime from the resume's end.
  c.rememberWritten(SELLER, 'a', written('6'));
  now += 50_000;
  c.renewRequest(SELLER, 'a', request(6, '6.0'));
  now += 50_000;
  assert.equal(c.has(SELLER, 'a', request(6)), true);
  c.renewRequest(SELLER, 'b', request(6)); // nothing remembered in b: nothing added
  assert.equal(c.has(SELLER, 'b', request(6)), false);
});

test('a cancellation awaiting the seller: remembered at its 2xx unless a new request with its id was sent meanwhile; dropped when settled, at most the cap (review of the cancel-accept fix, Medium 1)', () => {
  const c = new CancelledRequests(60_000, 2);
  // Accepted with nothing sent meanwhile: remembered.
  const plain = c.awaitSeller(SELLER, 'a', written('1'));
  assert.equal(c.awaitedSize, 1);
  c.settle(plain, true);
  c.settle(plain, false); // once
  assert.deepEqual([c.has(SELLER, 'a', request(1)), c.awaitedSize], [true, 0]);
  // A new request 5 sent (forget) before the 2xx: the id names it now, nothing remembered.
  const superseded = c.awaitSeller(SELLER, 'a', written('5.0'));
  c.forget(SELLER, 'a', request(5));
  c.settle(superseded, true);
  assert.deepEqual([c.has(SELLER, 'a', request(5)), c.awaitedSize], [false, 0]);
  // A second cancellation of 6, come after the new request, names it: remembered; the first not.
  const before = c.awaitSeller(SELLER, 'a', written('6'));
  c.forget(SELLER, 'a', request(6));
  const after = c.awaitSeller(SELLER, 'a', written('6'));
  assert.equal(c.awaitedSize, 1, 'one key');
  c.settle(before, true);
  assert.equal(c.has(SELLER, 'a', request(6)), false);
  c.settle(after, true);
  assert.deepEqual([c.has(SELLER, 'a', request(6)), c.awaitedSize], [true, 0]);
  // Another session's or seller's request forgets nothing awaited here; a refusal remembers nothing.
  const other = c.awaitSeller(SELLER, 'a', written('7'));
  c.forget(SELLER, 'b', request(7));
  c.forget('http://127.0.0.1:9/other', 'a', request(7));
  c.settle(other, true);
  assert.equal(c.has(SELLER, 'a', request(7)), true);
  const refused = c.awaitSeller(SELLER, 'a', written('8'));
  c.settle(refused, false);
  assert.deepEqual([c.has(SELLER, 'a', request(8)), c.awaitedSize], [false, 0]);
  // Past the cap the oldest awaited is pushed out: its 2xx remembers nothing, and a new note of its key starts afresh.
  const pushed = c.awaitSeller(SELLER, 'a', written('9'));
  const kept = [c.awaitSeller(SELLER, 'a', written('10')), c.awaitSeller(SELLER, 'a', written('11'))];
  assert.equal(c.awaitedSize, 2);
  const again = c.awaitSeller(SELLER, 'a', written('9'));
  c.settle(pushed, true);
  assert.deepEqual([c.has(SELLER, 'a', request(9)), c.awaitedSize], [false, 2], 'pushed out: nothing remembered, the newer note of 9 kept');
  c.settle(again, true);
  assert.equal(c.has(SELLER, 'a', request(9)), true);
  for (const k of kept) c.settle(k, false);
  assert.equal(c.awaitedSize, 0);
  // An id no token could carry: nothing noted.
  assert.equal(c.awaitSeller(SELLER, 'a', written(JSON.stringify('x'.repeat(5_000)))), undefined);
});
