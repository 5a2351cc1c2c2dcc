/**
 * A review of the cancellation's length pre-check (test/regressions/cancel-huge-number-id-canonicalized.test.ts):
 * a seller's response id went through response/json-value-at.ts isRequestId, which for any
 * number that is not a small integer copied it out of the body (`latin1`) and canonicalized it
 * (json-numbers.ts sameJsonNumber -> exactDecimal) to compare it with the request's id. A
 * seller answering a `tools/call` id `1` with a 4 MB id `1e<nines>` (or 4M nines) had it copied
 * and canonicalized at every check (the JSON stage, the SSE stage, the rewrites), 40-120 ms of
 * the event loop each (4M nines: 40-60 ms, `1e` and 4M nines: 90-120 ms), to learn that it is not `1`.
 *
 * Now isRequestId measures the id in place first (json-numbers.ts exactDecimalLengthRange, as
 * requestIdMatcher does for a cancellation): an id whose canonical text cannot have the length
 * of the request's is not the same number, and nothing is copied. Matches are unchanged
 * (test/unit/json-numbers-differential.test.ts: requestIdMatcher against isRequestId;
 * test/regressions/response-id-compared-as-double.test.ts).
 *
 * Asserted without timing (test/helpers/long-number-work.ts): no copy of a number text over 64
 * characters while such ids are compared, directly and through the gateway (a raw seller
 * answering with a 100,000-character id: `upstream_not_mcp` for the request's id); a long id
 * that may be the request's is still copied and compared exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { isRequestId } from '../../src/response/json-value-at.js';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { countLongNumberWork } from '../helpers/long-number-work.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const N = 100_000;
const NINES = '9'.repeat(N);
const ZEROS = '0'.repeat(N);
/** A seller's response with `id` written as `idText`, and the id's range in it. */
const responseOf = (idText: string): { bytes: Buffer; range: readonly [number, number] } => ({
  bytes: Buffer.from(`{"jsonrpc":"2.0","id":${idText},"result":{}}`, 'latin1'),
  range: [22, 22 + idText.length],
});

/** Response ids of ~100,000 characters: none is a request's `1` (nor `1.0` as written, nor any double). */
const LONG_IDS = [`1e${NINES}`, NINES, `1.${ZEROS}1`, `1e-${NINES}`, `-0.${ZEROS}1e${NINES}`, `1${ZEROS}`];

test('a response id of 100,000 characters against a request id 1 (and 1.0 as written): not the same, and never copied', async () => {
  const work = await countLongNumberWork(() =>
    LONG_IDS.flatMap((idText) => {
      const r = responseOf(idText);
      return [isRequestId(r.bytes, r.range, { id: 1, idText: undefined }), isRequestId(r.bytes, r.range, { id: 1, idText: '1.0' })];
    }),
  );
  assert.deepEqual(work.result, LONG_IDS.flatMap(() => [false, false]));
  assert.deepEqual({ reads: work.reads, copies: work.copies }, { reads: 0, copies: 0 });
});

test('a long response id that may be the request id is still compared exactly: 1e-7 written two ways matches, 1e-8 does not', async () => {
  const rpc = { id: 1e-7, idText: `1e-${ZEROS}7` };
  const work = await countLongNumberWork(() => [`1e-${ZEROS}8`, `10e-0${ZEROS}8`, `1e-${ZEROS}7`].map((idText) => {
    const r = responseOf(idText);
    return isRequestId(r.bytes, r.range, rpc);
  }));
  assert.deepEqual(work.result, [false, true, true]);
  // Canonical texts of one length: each id is copied once and compared, but for the one written
  // as the request's own text, which is compared in place first (nothing copied).
  assert.equal(work.copies, 2);
});

test('short ids are compared as before: 1.0 and 1e0 are 1, 9007199254740992 is not 9007199254740993', () => {
  const same = (written: string, id: number, idText?: string): boolean => {
    const r = responseOf(written);
    return isRequestId(r.bytes, r.range, { id, idText });
  };
  assert.deepEqual(
    [same('1.0', 1), same('1e0', 1), same('10E-1', 1), same('2', 1), same('9007199254740992', 9007199254740992, '9007199254740993'), same('9007199254740993', 9007199254740992, '9007199254740993')],
    [true, true, true, false, false, true],
  );
});

const HUGE_ID = `1e${NINES}`;
function answer(_req: SeenRequest, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${HUGE_ID},"result":{"content":[{"type":"text","text":"the answer"}]}}`);
}
const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ huge: seller.url })),
);

test('through the gateway: a seller answering id 1 with a 100,000-character id gets upstream_not_mcp for id 1, the id never copied', { timeout: TEST_TIMEOUT_MS }, async () => {
  const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{}}}';
  const work = await countLongNumberWork(() => rawPost(stack.gateway.agentUrl('huge'), body, { 'mcp-protocol-version': '2025-11-25' }));
  assert.equal(work.result.status, 200);
  assert.equal(work.result.text(), expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'get_products', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
  assert.deepEqual({ reads: work.reads, copies: work.copies }, { reads: 0, copies: 0 });
});
