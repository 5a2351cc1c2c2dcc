/**
 * Reported failure (a read-only review, M1): a lift over SSE took the host's answer far over
 * `max_response_bytes`. Each LF of a seller's text costs 2 bytes in its JSON string (`\n`);
 * the lift wrote the text's JSON bytes as written into `structuredContent`, a raw LF each,
 * and the SSE encoder starts a new `data: ` line at each LF (6 bytes more). The room check
 * (rewrite-room.ts eventRewriteOverBound) compared only the data's lengths and the stream's
 * count grew only by them (sse-stage.ts: "a rewrite never adds a line break" was false). With
 * the tool's `max_response_bytes: 300000` and the text `{"status":"completed","a":1` +
 * 100,000 LF + `}`: over SSE the host received 700,209 bytes (exchange line: bytes_from_seller
 * 200,130, bytes_to_host 700,209, bytes_saved 99,921), over JSON 100,186. The docs promise a
 * rewrite never takes the host's answer over its limit (docs/configuration.md).
 *
 * Now the lift writes each raw CR and LF of the text as a space (JSON whitespace: the same
 * value), so a rewrite adds no line break, and the room check charges what the rewritten
 * data's framing adds over the seller's all the same. A lift that would not fit is skipped,
 * the seller's answer sent, `text_not_lifted: "max_response_bytes"` (the control below).
 *
 * Input: a real SDK seller (McpServer + StreamableHTTPServerTransport, over SSE and over
 * JSON), the real gateway with per-tool limits, a real SDK client on MCP 2025-06-18 and raw
 * POSTs through it over 127.0.0.1. Expectation: the host's bytes within the limit, the exact
 * bytes and exchange-line counts, the same lifted message over JSON.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { connectClient, type HttpExchange } from '../helpers/client.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { startSdkTextToolSeller } from '../helpers/sdk-text-tool-seller.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const LIMIT = 300_000;
/** The review's text: 100,000 LF inside the object. */
const NEWLINES_TEXT = '{"status":"completed","a":1' + '\n'.repeat(100_000) + '}';
/** Control: three LF, a lift that grows the answer (its summary is longer than the LFs save). */
const SMALL_TEXT = '{"status":"completed",\n"a":1,\n"b":[1,2]\n}';
const TIGHT_ID = 31;

/** What the SDK seller writes for a text-only result (as test/regressions/sse-lift-with-cr-loses-answer.test.ts checks). */
const sellerMessage = (id: number, text: string): string => `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]},"jsonrpc":"2.0","id":${id}}`;
const summary = (text: string, keys: string): string => `Result in structuredContent (${Buffer.byteLength(text)} bytes): status=completed; ${keys}.`;
const lifted = (id: number, text: string, keys: string): string =>
  `{"result":{"content":[{"type":"text","text":${JSON.stringify(summary(text, keys))}}],"structuredContent":${text.replace(/[\r\n]/g, ' ')}},"jsonrpc":"2.0","id":${id}}`;
const frame = (message: string): string => `event: message\ndata: ${message}\n\n`;
const bytes = (s: string): number => Buffer.byteLength(s);

/** `actual` is `expected`; on failure the message says where they first differ (not 100,000 lines of diff). */
function assertSameText(actual: string, expected: string, label: string): void {
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  const near = (s: string): string => JSON.stringify(s.slice(Math.max(0, at - 20), at + 20));
  assert.ok(actual === expected, `${label}: ${actual.length} vs ${expected.length} characters, first difference at ${at}: ${near(actual)} vs ${near(expected)}`);
}

/** The control's limit: exactly the seller's answer over SSE, so the lift (longer) does not fit. */
const TIGHT_LIMIT = bytes(frame(sellerMessage(TIGHT_ID, SMALL_TEXT)));
const TOOLS = `\n    tools:\n      newlines: { max_response_bytes: ${LIMIT} }\n      small: { max_response_bytes: ${TIGHT_LIMIT} }`;

const stack = useSellerAndGateway(
  () => startSdkTextToolSeller({ newlines: NEWLINES_TEXT, small: SMALL_TEXT }),
  (seller) => startObservedGateway(agentsYaml({ sse: seller.url(false) + TOOLS, json: seller.url(true) + TOOLS })),
);

const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };

describe("a lifted text's line breaks do not take an SSE answer over max_response_bytes", { timeout: TEST_TIMEOUT_MS }, () => {
  test('raw: 100,000 LF lifted over SSE, the host gets one data line within the limit; the exchange line counts it', async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('sse'), toolCall(7, 'newlines'), PROTOCOL));
    assert.equal(r.status, 200);
    const expected = frame(lifted(7, NEWLINES_TEXT, 'a'));
    assert.ok(r.bytes <= LIMIT, `${r.bytes} bytes to the host, limit ${LIMIT}`);
    assert.equal(r.bytes, bytes(expected));
    assertSameText(r.text(), expected, 'SSE');
    const line = await stack.gateway.exchangeLine('sse', 7);
    const fromSeller = bytes(frame(sellerMessage(7, NEWLINES_TEXT)));
    assert.deepEqual(
      [line.outcome, line.reason, line.text_not_lifted, line.bytes_from_seller, line.bytes_to_host, line.bytes_saved],
      ['rewritten', null, undefined, fromSeller, r.bytes, bytes(sellerMessage(7, NEWLINES_TEXT)) - bytes(lifted(7, NEWLINES_TEXT, 'a'))],
    );
  });

  test('the same lifted message over JSON and over SSE', async () => {
    const json = await withTimeout(rawPost(stack.gateway.agentUrl('json'), toolCall(8, 'newlines'), PROTOCOL));
    const sse = await withTimeout(rawPost(stack.gateway.agentUrl('sse'), toolCall(8, 'newlines'), PROTOCOL));
    assertSameText(json.text(), lifted(8, NEWLINES_TEXT, 'a'), 'JSON');
    assertSameText(sse.text(), frame(json.text()), 'SSE');
  });

  test('the SDK client over SSE: structuredContent is the text\'s JSON, the bytes it read within the limit', async () => {
    const read: Promise<number>[] = [];
    const onExchange = (e: HttpExchange): void => {
      if (e.toolName === 'newlines') read.push(e.bodyBytes);
    };
    const client = await connectClient(stack.gateway.agentUrl('sse'), { protocolVersion: '2025-06-18', onExchange });
    try {
      const got = await withTimeout(client.callTool({ name: 'newlines', arguments: {} }, undefined, { timeout: 3_000 }), 5_000, 'newlines');
      assert.deepEqual(got.structuredContent, { status: 'completed', a: 1 });
      assert.equal(read.length, 1);
      const n = await withTimeout(read[0]!);
      assert.ok(n <= LIMIT, `${n} bytes read, limit ${LIMIT}`);
    } finally {
      await client.close();
    }
  });

  test("control: a lift that would not fit is skipped, the seller's answer sent, text_not_lifted max_response_bytes", async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('sse'), toolCall(TIGHT_ID, 'small'), PROTOCOL));
    assert.equal(r.text(), frame(sellerMessage(TIGHT_ID, SMALL_TEXT)));
    assert.equal(r.bytes, TIGHT_LIMIT);
    const line = await stack.gateway.exchangeLine('sse', TIGHT_ID);
    assert.deepEqual([line.outcome, line.reason, line.text_not_lifted, line.bytes_to_host], ['ok', null, 'max_response_bytes', TIGHT_LIMIT]);
  });
});
