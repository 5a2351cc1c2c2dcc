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
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

/** What the seller answers to the next request (set by each test). */
let answer: (res: ServerResponse) => void = (res) => res.writeHead(500).end();

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => answer(res)),
  (seller) => startObservedGateway(agentsYaml({ seller: seller.url })),
);

/** A tools/call response written by hand: the exact bytes matter (JSON.stringify would already round the numbers). */
function response(id: number, result: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
}
/** A text content item whose text is `json` (escaped as a JSON string). */
const textItem = (json: string): string => `{"type":"text","text":${JSON.stringify(json)}}`;

const call = (id: number) => rawPost(stack.gateway.agentUrl('seller'), toolCall(id, 'create_media_buy'), { 'mcp-protocol-version': '2025-06-18' });

/** A result whose text item is `text` and whose structuredContent is `structured`. */
const withCopy = (text: string, structured = text): string => `{"content":[${textItem(text)}],"structuredContent":${structured}}`;

/** How the seller sends a message, and the bytes the host gets for it when passed through unchanged. */
const PATHS = {
  JSON: { contentType: 'application/json', frame: (message: string) => message },
  SSE: { contentType: 'text/event-stream', frame: (message: string) => `event: message\ndata: ${message}\n\n` },
} as const;

/** [JSON id, name, result, also over SSE (id + 10)] */
const UNTOUCHED: ReadonlyArray<readonly [number, string, string, boolean]> = [
  [2, '(a) dedupe: structuredContent and text 9007199254740993', withCopy('{"media_buy_id":9007199254740993}'), true],
  [3, '(b) lift: 9007199254740993 only in the text', `{"content":[${textItem('{"media_buy_id":9007199254740993}')}]}`, false],
  [4, '(c) dedupe: 0.1000000000000000055511151231257827', withCopy('{"budget_share":0.1000000000000000055511151231257827}'), false],
  [5, '(d) a text more precise than structuredContent is not a copy', withCopy('{"n":12345678901234567890}', '{"n":12345678901234567000}'), false],
  [
    6,
    '(e) an exact-looking text copy of a structuredContent holding 9007199254740993',
    withCopy('{"media_buy_id":9007199254740992}', '{"media_buy_id":9007199254740993}'),
    true,
  ],
  [
    7,
    '(f) an exact copy, with 9007199254740993 in result._meta',
    `{"content":[${textItem('{"media_buy_id":"mb-1"}')}],"structuredContent":{"media_buy_id":"mb-1"},"_meta":{"seller_trace":9007199254740993}}`,
    false,
  ],
];

for (const [kind, { contentType, frame }] of Object.entries(PATHS)) {
  const sse = kind === 'SSE';
  const idOf = (id: number): number => (sse ? id + 10 : id);
  const answerWith = (message: string): void => {
    answer = (res) => res.writeHead(200, { 'content-type': contentType }).end(frame(message));
  };

  describe(`numbers that do not survive doubles are never rewritten (${kind})`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('control: a number that round-trips is still deduped', async () => {
      const id = idOf(1);
      // With a message long enough that the summary is shorter than the copy (a shorter copy is kept as written).
      const payload = '{"media_buy_id":9007199254740992,"message":"Media buy created; delivery starts on the flight date."}';
      answerWith(response(id, withCopy(payload)));
      const r = await call(id);
      assert.equal(r.status, 200);
      const summary = `Result in structuredContent (${Buffer.byteLength(payload)} bytes): media_buy_id, message.`;
      assert.equal(r.text(), frame(response(id, withCopy(summary, payload))));
      assert.equal((await stack.gateway.exchangeLine('seller', id)).outcome, 'rewritten');
    });

    for (const [jsonId, name, result, overSse] of UNTOUCHED) {
      if (sse && !overSse) continue;
      test(sse ? `${name}: the event byte for byte` : name, async () => {
        const id = idOf(jsonId);
        const sellerBody = frame(response(id, result));
        answerWith(response(id, result));
        const r = await call(id);
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('content-type'), contentType);
        assert.equal(r.text(), sellerBody, 'the host gets the seller bytes unchanged');
        const line = await stack.gateway.exchangeLine('seller', id);
        assert.equal(line.outcome, 'ok');
        assert.equal(line.bytes_saved, 0);
      });
    }
  });
}

describe('a request id that a double cannot carry comes back exactly in minted answers', { timeout: TEST_TIMEOUT_MS }, () => {
  // Reported failure: the host's id 9007199254740993 was answered as 9007199254740992 in the
  // gateway's own errors (it reads the request with JSON.parse), so the host never matched them.
  const BIG = '9007199254740993';
  const post = (body: string, headers: Record<string, string> = {}) =>
    rawPost(stack.gateway.agentUrl('seller'), body, { 'mcp-protocol-version': '2025-06-18', ...headers });
  const callBody = `{"jsonrpc":"2.0","id":${BIG},"method":"tools/call","params":{"name":"create_media_buy","arguments":{}}}`;

  test('a local error (the seller answers 503): the tool error result carries the id as sent', async () => {
    answer = (res) => res.writeHead(503).end();
    const r = await post(callBody);
    assert.equal(r.status, 200);
    assert.ok(r.text().startsWith(`{"jsonrpc":"2.0","id":${BIG},"result":`), r.text().slice(0, 80));
  });

  test('a local error as the final SSE event carries the id as sent', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(': only a comment\n\n');
    };
    const r = await post(callBody);
    assert.match(r.text(), new RegExp(`^data: \\{"jsonrpc":"2\\.0","id":${BIG},"result":`, 'm'));
  });

  test('a refusal (a bad X-Max-Response-Bytes) carries the id as sent, an id written 1e3 too', async () => {
    const r = await post(callBody, { 'x-max-response-bytes': 'lots' });
    assert.equal(r.status, 400);
    assert.ok(r.text().startsWith(`{"jsonrpc":"2.0","id":${BIG},"error":`), r.text().slice(0, 80));
    // As written, not as JSON.stringify writes 1000 (a hostile new-user trial 13, L2:
    // test/regressions/minted-error-rewrites-host-id.test.ts).
    const exact = await post(callBody.replace(BIG, '1e3'), { 'x-max-response-bytes': 'lots' });
    assert.ok(exact.text().startsWith('{"jsonrpc":"2.0","id":1e3,"error":'), exact.text().slice(0, 80));
  });

  test('an invalid request with a big id (jsonrpc "1.0") is refused with the id as sent', async () => {
    const r = await post(callBody.replace('"2.0"', '"1.0"'));
    assert.equal(r.status, 400);
    assert.ok(r.text().startsWith(`{"jsonrpc":"2.0","id":${BIG},"error":`), r.text().slice(0, 80));
  });
});
