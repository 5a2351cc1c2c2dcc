/**
 * Regression (high severity, silent data corruption): numbers that JavaScript doubles can't
 * hold exactly were changed whenever the gateway rewrote a result.
 *
 * Input (host on 2025-06-18, so results are normalized): tools/call results holding
 * (a) `"structuredContent":{"media_buy_id":9007199254740993}` plus the same JSON as text
 *     (dedupe) -> the host got `9007199254740992`, and the exact text became a summary;
 * (b) the JSON only in a text item (lift) -> the lifted structuredContent said `...992`;
 * (c) `0.1000000000000000055511151231257827` in both (dedupe) -> the host got `0.1`;
 * (d) text `12345678901234567890` next to structuredContent `12345678901234567000`: equal once
 *     both are doubles, so the more precise text was dropped as a "copy";
 * (e) structuredContent `9007199254740993` next to a text `9007199254740992` (a copy once
 *     parsed, and itself exact): deduping re-serialized structuredContent as `...992`;
 * (f) an exact copy, with `9007199254740993` elsewhere in the message (`result._meta`);
 * (g) cases (a) and (e) over SSE.
 * Expectation: none of these is rewritten: the host receives the seller's bytes unchanged
 * (the event byte for byte over SSE), the exchange outcome is `ok`, nothing is saved. A
 * control with numbers that round-trip (`9007199254740992`) is still deduped, on both paths,
 * so the gateway is normalizing for this host.
 *
 * (a)-(d) are decided by normalizeToolResult (the text holds the lossy number); (e), (f) and
 * (e) over SSE need the stages to pass the raw message to rewriteResponse
 * (src/response/json-stage.ts, src/response/sse-stage.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

/** What the seller answers to the next request (set by each test). */
let answer: (res: ServerResponse) => void = (res) => res.writeHead(500).end();

const stack = useSellerAndGateway(() => startRawSeller((_req, res) => answer(res)), (seller) =>

  startObservedGateway(['agents:', '  seller:', `    url: ${seller.url}`, ''].join('\n')),

);

/** A tools/call response written by hand: the exact bytes matter (JSON.stringify would already round the numbers). */
function response(id: number, result: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
}
/** A text content item whose text is `json` (escaped as a JSON string). */
const textItem = (json: string): string => `{"type":"text","text":${JSON.stringify(json)}}`;

const call = (id: number) => rawPost(stack.gateway.agentUrl('seller'), toolCall(id, 'create_media_buy'), { 'mcp-protocol-version': '2025-06-18' });

function answerJson(body: string): void {
  answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
}
function answerSse(data: string): void {
  answer = (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${data}\n\n`);
}

async function assertUntouched(id: number, sellerBody: string): Promise<void> {
  const r = await call(id);
  assert.equal(r.status, 200);
  assert.equal(r.text(), sellerBody, 'the host gets the seller bytes unchanged');
  const line = await stack.gateway.exchangeLine('seller', id);
  assert.equal(line.outcome, 'ok');
  assert.equal(line.bytes_saved, 0);
}

describe('numbers that do not survive doubles are never rewritten (JSON)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: a number that round-trips is still deduped', async () => {
    const payload = '{"media_buy_id":9007199254740992}';
    answerJson(response(1, `{"content":[${textItem(payload)}],"structuredContent":${payload}}`));
    const r = await call(1);
    assert.equal(r.status, 200);
    const summary = 'Result in structuredContent (33 bytes): media_buy_id.';
    assert.equal(r.text(), response(1, `{"content":[${textItem(summary)}],"structuredContent":${payload}}`));
    assert.equal((await stack.gateway.exchangeLine('seller', 1)).outcome, 'rewritten');
  });

  test('(a) dedupe: structuredContent and text 9007199254740993', async () => {
    const payload = '{"media_buy_id":9007199254740993}';
    const body = response(2, `{"content":[${textItem(payload)}],"structuredContent":${payload}}`);
    answerJson(body);
    await assertUntouched(2, body);
  });

  test('(b) lift: 9007199254740993 only in the text', async () => {
    const body = response(3, `{"content":[${textItem('{"media_buy_id":9007199254740993}')}]}`);
    answerJson(body);
    await assertUntouched(3, body);
  });

  test('(c) dedupe: 0.1000000000000000055511151231257827', async () => {
    const payload = '{"budget_share":0.1000000000000000055511151231257827}';
    const body = response(4, `{"content":[${textItem(payload)}],"structuredContent":${payload}}`);
    answerJson(body);
    await assertUntouched(4, body);
  });

  test('(d) a text more precise than structuredContent is not a copy', async () => {
    const body = response(5, `{"content":[${textItem('{"n":12345678901234567890}')}],"structuredContent":{"n":12345678901234567000}}`);
    answerJson(body);
    await assertUntouched(5, body);
  });

  test('(e) an exact-looking text copy of a structuredContent holding 9007199254740993', async () => {
    const body = response(6, `{"content":[${textItem('{"media_buy_id":9007199254740992}')}],"structuredContent":{"media_buy_id":9007199254740993}}`);
    answerJson(body);
    await assertUntouched(6, body);
  });

  test('(f) an exact copy, with 9007199254740993 in result._meta', async () => {
    const payload = '{"media_buy_id":"mb-1"}';
    const body = response(7, `{"content":[${textItem(payload)}],"structuredContent":${payload},"_meta":{"seller_trace":9007199254740993}}`);
    answerJson(body);
    await assertUntouched(7, body);
  });
});

describe('numbers that do not survive doubles are never rewritten (SSE)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: a number that round-trips is still deduped', async () => {
    const payload = '{"media_buy_id":9007199254740992}';
    answerSse(response(11, `{"content":[${textItem(payload)}],"structuredContent":${payload}}`));
    const r = await call(11);
    const summary = 'Result in structuredContent (33 bytes): media_buy_id.';
    assert.equal(r.text(), `event: message\ndata: ${response(11, `{"content":[${textItem(summary)}],"structuredContent":${payload}}`)}\n\n`);
    assert.equal((await stack.gateway.exchangeLine('seller', 11)).outcome, 'rewritten');
  });

  for (const [id, name, text, structured] of [
    [12, '(a) dedupe: structuredContent and text 9007199254740993', '{"media_buy_id":9007199254740993}', '{"media_buy_id":9007199254740993}'],
    [13, '(e) an exact-looking text copy of a structuredContent holding 9007199254740993', '{"media_buy_id":9007199254740992}', '{"media_buy_id":9007199254740993}'],
  ] as const) {
    test(`${name}: the event byte for byte`, async () => {
      const data = response(id, `{"content":[${textItem(text)}],"structuredContent":${structured}}`);
      answerSse(data);
      const r = await call(id);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      assert.equal(r.text(), `event: message\ndata: ${data}\n\n`);
      const line = await stack.gateway.exchangeLine('seller', id);
      assert.equal(line.outcome, 'ok');
      assert.equal(line.bytes_saved, 0);
    });
  }
});
