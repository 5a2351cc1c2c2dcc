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
