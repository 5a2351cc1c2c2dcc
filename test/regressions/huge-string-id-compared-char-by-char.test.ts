/**
 * Hostile trial 58, F5: three concurrent `tools/call` with 4.1 MB string request ids took 5.6 s
 * against 2.1 s with 4.1 MB arguments. A profile found ~90 ms more gateway CPU per call: the
 * peek searched the id for a backslash byte by byte (text-members.ts jsonString), and the
 * seller's echoed id was compared with the request's character by character
 * (response/json-value-at.ts jsonValueIs, ~21 ms).
 *
 * Now the backslash search is the native `indexOf`, and the peek keeps the bytes of a string
 * id of 1 KiB or more as the host wrote them (RpcPeek.idWritten), so a seller's echo is
 * compared as bytes in one native compare; an echo written otherwise (an escape) is compared
 * as before, and so still matches when it is the same string.
 *
 * Asserted without timing: json-value-at.ts idByteCompareCount (ids found equal by their
 * bytes), directly and through the gateway; equal ids, escaped or not, still match, unequal
 * ones do not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idByteCompareCount, isRequestId, requestIdMatcher } from '../../src/response/json-value-at.js';
import { peekJsonRpc } from '../../src/request/peek.js';
import type { RpcPeek } from '../../src/exchange.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const LONG = 'a'.repeat(50_000);
/** Arguments long enough that the peek reads every body here by its scan (request/peek.ts PEEK_SCAN_MIN_BYTES). */
const PAD = 'p'.repeat(2000);
/** A message whose `id` member is written as `idJson` (its JSON text), and the range of that value. */
const withId = (idJson: string): { bytes: Buffer; range: [number, number] } => {
  const head = '{"jsonrpc":"2.0","id":';
  const bytes = Buffer.from(`${head}${idJson},"result":{}}`);
  return { bytes, range: [head.length, head.length + Buffer.byteLength(idJson)] };
};
const peekOf = (idJson: string): RpcPeek => {
  const result = peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0","id":${idJson},"method":"tools/call","params":{"name":"t","arguments":{"pad":"${PAD}"}}}`));
  assert.ok(result.ok);
  return result.peek;
};

test('the peek keeps a long string id as written; not a short one, nor a number', () => {
  assert.equal(peekOf(JSON.stringify(LONG)).idWritten?.toString('latin1'), LONG);
  assert.equal(peekOf('"\\u0061bc' + 'x'.repeat(2000) + '"').idWritten?.toString('latin1'), '\\u0061bc' + 'x'.repeat(2000));
  assert.equal(peekOf('"short"').idWritten, undefined);
  assert.equal(peekOf('7').idWritten, undefined);
});

test("a seller's echo of a long string id is compared as bytes; escaped and unequal ids as before", () => {
  const plain = peekOf(JSON.stringify(LONG));
  const escapedRequest = peekOf(`"\\u0061${LONG.slice(1)}"`);
  const cases: [string, RpcPeek, string, boolean, number][] = [
    ['echo as written', plain, JSON.stringify(LONG), true, 1],
    ['echo escaped', plain, `"\\u0061${LONG.slice(1)}"`, true, 0],
    ['unequal, same length', plain, JSON.stringify(`${LONG.slice(1)}b`), false, 0],
    ['unequal, longer', plain, JSON.stringify(`${LONG}a`), false, 0],
    ['a number', plain, '5', false, 0],
    ['escaped request, plain echo', escapedRequest, JSON.stringify(LONG), true, 0],
    ['escaped request, echoed as written', escapedRequest, `"\\u0061${LONG.slice(1)}"`, true, 1],
  ];
  for (const [name, rpc, echo, same, byteCompares] of cases) {
    const { bytes, range } = withId(echo);
    let before = idByteCompareCount();
    assert.equal(isRequestId(bytes, range, rpc), same, name);
    assert.equal(idByteCompareCount() - before, byteCompares, `${name}: byte compares`);
    before = idByteCompareCount();
    assert.equal(requestIdMatcher(bytes, range)(rpc), same, `${name}: matcher`);
    assert.equal(idByteCompareCount() - before, byteCompares, `${name}: matcher's byte compares`);
  }
});

const stack = useSellerAndGateway<RawSeller, RunningGateway>(
  () =>
    startRawSeller((req, res) => {
      const { id } = JSON.parse(req.body.toString('utf8')) as { id: string };
      res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, { content: [{ type: 'text', text: 'ok' }] }));
    }),
  (seller) => startGateway(agentsYaml({ s: seller.url }, ['log_level: silent'])),
);

test('through the gateway: the answer to a call with a 50,000-character id is matched by its bytes', { timeout: TEST_TIMEOUT_MS }, async () => {
  const before = idByteCompareCount();
  const res = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(LONG, 'get_products')), undefined, 'the call');
  assert.equal(res.status, 200);
  assert.deepEqual(res.json(), { jsonrpc: '2.0', id: LONG, result: { content: [{ type: 'text', text: 'ok' }] } });
  assert.ok(idByteCompareCount() - before >= 1, 'the echoed id compared as bytes');
});
