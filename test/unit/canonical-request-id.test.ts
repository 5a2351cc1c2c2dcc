/**
 * One canonical id for a request (src/response/json-value-at.ts canonicalRequestId), used by
 * both the registry of requests in flight (a cancellation's matching: requestIdMatcher) and the
 * cancellations remembered for resumes (their keys: src/routing/cancelled-requests.ts). A
 * review checked by hand that the two agreed on 25 x 25 id pairs; here the same pairs, each way
 * of asking, against an independent reference (test/helpers/written-request-ids.ts
 * sameIdValue: strings by their value, numbers by their exact decimal value with BigInt).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalRequestId, canonicalWrittenId, requestIdMatcher } from '../../src/response/json-value-at.js';
import { CancelledRequests } from '../../src/routing/cancelled-requests.js';
import { hostRpc, sameIdValue } from '../helpers/written-request-ids.js';

/** 25 ids as a host writes them: spellings of one value, -0, 1e-400, 2^53 + 1, escapes, a lone surrogate. */
const IDS = [
  '7', '7.0', '7e0', '70e-1', '7E+0', '"7"', '"\\u0037"', '-0', '0', '0.0', '1e-400', '10e-401', '0e5',
  '9007199254740993', '9007199254740992', '9.007199254740993e15', '1E+0', '1', '1.0',
  '"a\\"b"', '"a\\u0022b"', '"\\ud800"', '"\\ufffd"', '12345678901234567890', '-1',
];
const SELLER = 'http://127.0.0.1:9/mcp';
const written = (text: string): { bytes: Buffer; range: [number, number] } => ({ bytes: Buffer.from(`{"requestId":${text}}`), range: [13, 13 + Buffer.byteLength(text)] });

test('25 x 25 ids: the registry matches a cancellation exactly when the memory keys it alike, and both when the ids are one value', () => {
  assert.equal(IDS.length, 25);
  const disagreements: string[] = [];
  let same = 0;
  for (const cancelled of IDS) {
    const w = written(cancelled);
    const matches = requestIdMatcher(w.bytes, w.range);
    const memory = new CancelledRequests(60_000);
    memory.rememberWritten(SELLER, 'a', w);
    for (const requested of IDS) {
      const rpc = hostRpc(requested, 'tools/call');
      const expected = sameIdValue(cancelled, requested);
      if (expected) same++;
      const answers = [matches(rpc), canonicalWrittenId(w.bytes, w.range) === canonicalRequestId(rpc), memory.has(SELLER, 'a', rpc)];
      if (answers.some((a) => a !== expected)) disagreements.push(`${cancelled} / ${requested}: reference ${expected}, registry/canonical/memory ${answers.join('/')}`);
    }
  }
  assert.deepEqual(disagreements, []);
  // Pairs of one value: 7 (5 spellings), 0 (4), 1 (3), "7", 1e-400, 2^53 + 1, "a\"b" (2 each), 5 alone.
  assert.equal(same, 5 * 5 + 4 * 4 + 3 * 3 + 4 * (2 * 2) + 5);
});

test('a canonical id: s and the string, n and the exact value; none for null; a number with idText computed once per request object', () => {
  assert.deepEqual(
    ['"a\\u0062"', '"\\ud800"', '1.0', '1E+0', '-0', '1e-400', '9007199254740993'].map((t) => canonicalRequestId(hostRpc(t, 'tools/call'))),
    ['sab', 's\ud800', 'n1e0', 'n1e0', 'n0', 'n1e-400', 'n9007199254740993e0'],
  );
  assert.equal(canonicalRequestId({ id: null, idText: undefined }), undefined);
  const rpc = hostRpc('7.000', 'tools/call');
  assert.equal(canonicalRequestId(rpc), canonicalRequestId(rpc));
  assert.equal(canonicalRequestId(rpc), 'n7e0');
});
