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
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idTextCanonicalizationCount } from '../../src/response/json-value-at.js';
import { InFlightRequests } from '../../src/routing/in-flight-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';
import { exchangeOf, SELLER, slotOf } from '../helpers/in-flight-exchanges.js';
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
  for (const other of ['1', '0', '7', '1e-5']) assert.equal(r.cancel(SELLER, 'a', written(other)), 0, other);
  assert.equal(x.cancelled, false);
  assert.equal(r.cancel(SELLER, 'a', written("10e-100002")), 1, 'its value written another way');
  assert.equal(x.cancelled, true);
  assert.equal(idTextCanonicalizationCount() - before, 1);
});
