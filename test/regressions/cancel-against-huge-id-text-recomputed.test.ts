/**
 * A review (High): routing/in-flight-requests.ts cancel read the cancellation's id once
 * (json-value-at.ts requestIdMatcher), but canonicalized (json-numbers.ts exactDecimal) the id
 * of each request in flight that the host wrote long (`idText`, e.g. `0.000…01` with millions
 * of zeros) again at every cancellation: one 1-digit `notifications/cancelled` against one such
 * request cost 126-171 ms, K parked requests stalled every cancellation ~K x 130 ms.
 *
 * Asserted without timing, by the seam json-value-at.ts idTextCanonicalizationCount: 5
 * cancellations against one request in flight with a long `idText` canonicalize it once, and
 * still match exactly (its value, written another way) or not (another value).
 *
 * And (a review, Low): the cancellation memory (routing/cancelled-requests.ts) canonicalized
 * the same request's `idText` again (mcp/json-numbers.ts exactDecimal) at the new request's
 * open (`forget`), at its cancelled end (`rememberRequest`, `renewRequest`) and at each resume
 * (`has`): one function now gives both the registry and the memory a request's canonical id
 * (json-value-at.ts canonicalRequestId), once per request. A 2,000-digit `idText` (one a
 * resume token can carry, so the memory keeps it) is canonicalized once across all of them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idTextCanonicalizationCount } from '../../src/response/json-value-at.js';
import { InFlightRequests } from '../../src/routing/in-flight-requests.js';
import { CancelledRequests } from '../../src/routing/cancelled-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';
import { acceptedCancel, exchangeOf, SELLER, slotOf } from '../helpers/in-flight-exchanges.js';
import { hostRpc } from '../helpers/written-request-ids.js';

const ZEROS = '0'.repeat(100_000);
const written = (text: string): WrittenRequestId => ({ bytes: Buffer.from(text), range: [0, text.length] });

test('5 cancellations against one request in flight with a 100,000-digit idText: 1 canonicalization, not 5; exact answers', () => {
  const r = new InFlightRequests();
  const rpc = hostRpc(`0.${ZEROS}1`, 'tools/call'); // reads as 0; its exact value 1e-100001
  assert.equal(rpc.id, 0);
  assert.equal(rpc.idText, `0.${ZEROS}1`);
  const x = exchangeOf('s', rpc, 'a');
  slotOf(r.open(x));
  const before = idTextCanonicalizationCount();
  for (const other of ['1', '0', '7', '1e-5']) assert.equal(acceptedCancel(r, SELLER, 'a', written(other)), 0, other);
  assert.equal(x.cancelled, false);
  assert.equal(acceptedCancel(r, SELLER, 'a', written("10e-100002")), 1, 'its value written another way');
  assert.equal(x.cancelled, true);
  assert.equal(idTextCanonicalizationCount() - before, 1);
});

test('a 2,000-digit idText through the registry and the cancellation memory (open, 3 cancellations, end, resumes): 1 canonicalization', () => {
  const long = `0.${'0'.repeat(2_000)}1`;
  const r = new InFlightRequests();
  const memory = new CancelledRequests(60_000);
  const rpc = hostRpc(long, 'tools/call');
  assert.equal(rpc.idText, long);
  const before = idTextCanonicalizationCount();
  // The handler at the POST's open: registered, and a cancellation remembered for its id forgotten.
  memory.rememberWritten(SELLER, 'a', written('1e-2001'));
  const x = exchangeOf('s', rpc, 'a');
  slotOf(r.open(x));
  memory.forget(SELLER, 'a', rpc);
  assert.equal(memory.size, 0, 'the earlier cancellation of its value is forgotten');
  assert.equal(acceptedCancel(r, SELLER, 'a', written('7')), 0);
  assert.equal(acceptedCancel(r, SELLER, 'a', written('10e-2002')), 1);
  assert.equal(acceptedCancel(r, SELLER, 'a', written(long)), 1);
  // Its end: remembered; a resume's end renews it; resumes (the token's request, here the same object) asked.
  memory.rememberRequest(SELLER, 'a', rpc);
  memory.renewRequest(SELLER, 'a', rpc);
  assert.equal(memory.has(SELLER, 'a', rpc), true);
  assert.equal(idTextCanonicalizationCount() - before, 1);
  // Another request object (a resume's token writes the id its own way): its own, once.
  assert.equal(memory.has(SELLER, 'a', hostRpc('1e-2001', 'tools/call')), true, 'its value written another way');
  assert.equal(idTextCanonicalizationCount() - before, 2);
});
