/**
 * Regression: a seller's SSE `retry:` field reached the host unchanged.
 *
 * Reported failure (a reviewer): a seller's `retry: 1` made the host reconnect every
 * millisecond. `retry:` sets the reconnection time of the host's EventSource / MCP SDK client
 * (WHATWG HTML §9.2.6; the MCP SDK client waits it before each `Last-Event-ID` resume), so a
 * hostile seller with `retry: 0` or `retry: 1` turned every closed stream into a reconnect
 * loop against the gateway and the seller, and `retry: 86400000` left a host waiting a day for
 * its answer. A value of more digits than a double holds exactly went out as `retry: 1e+23`,
 * which no client reads.
 *
 * Now (src/response/sse-encode.ts clampSseRetryMs) a forwarded `retry:` is clamped to
 * [SSE_RETRY_MIN_MS, SSE_RETRY_MAX_MS] = [500, 300000] ms, and the bytes the clamped frame
 * adds over the seller's are charged to the request's cumulative bound (sse-encoding-charge.ts
 * charge), resume token counts included.
 *
 * Input: a raw seller answers each tools/call over SSE with `retry: <v>` on its own block, then
 * the result (`event: message`, one `data: ` line).
 * Expectation, exact bytes:
 * - v = 1, 0, 00001 -> `retry: 500`; 86400000 and 99999999999999999999999 -> `retry: 300000`;
 *   the result event unchanged; outcome ok.
 * - control: 500, 2500 and 300000 pass unchanged.
 * - the priming shape (`id: p-0`, `retry: 1`, empty data): `retry: 500` on its own block, then
 *   the id as a resume token whose count is the block as the host gets it (with the seller's
 *   id in place of the token): the clamped frame's growth is counted.
 * - the cumulative bound counts the clamped frame: `max_response_bytes` (X-Max-Response-Bytes)
 *   at the host's exact bytes passes whole; one byte less ends with `sse_cumulative` after the
 *   `retry:` frame, observed_bytes the host's bytes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { finalSseError, rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';

const SECRET = 'sse-retry-field-passes-through-secret-0123456789';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url }, ['resume:', `  secret: ${SECRET}`])),
);
const gw = (): ObservedGateway => stack.gateway;

const resultFrame = (id: number): string => `event: message\ndata: ${toolResponse(id, { content: [{ type: 'text', text: 'done' }] })}\n\n`;

async function call(rpcId: number, body: string, headers: Record<string, string> = {}): Promise<{ text: string; bytes: number }> {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(body);
  };
  const r = await withTimeout(rawPost(gw().agentUrl('s'), toolCall(rpcId, 'get_products'), { ...HEADERS, ...headers }), undefined, 'the POST');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  return { text: r.text(), bytes: r.bytes };
}

describe("a seller's SSE retry: is clamped", { timeout: TEST_TIMEOUT_MS }, () => {
  const cases: Array<[string, number]> = [
    ['1', 500],
    ['0', 500],
    ['00001', 500],
    ['86400000', 300_000],
    ['99999999999999999999999', 300_000],
    // Control: within the bounds, unchanged.
    ['500', 500],
    ['2500', 2500],
    ['300000', 300_000],
  ];
  let rpcId = 100;
  for (const [sent, forwarded] of cases) {
    const id = rpcId++;
    test(`retry: ${sent} reaches the host as retry: ${forwarded}`, async () => {
      const r = await call(id, `retry: ${sent}\n\n` + resultFrame(id));
      assert.equal(r.text, `retry: ${forwarded}\n\n` + resultFrame(id));
      const line = await gw().exchangeLine('s', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
    });
  }

  test('the priming event: retry: 1 on its own block as retry: 500, the token counts the growth', async () => {
    const id = 200;
    const priming = 'id: p-0\nretry: 1\ndata: \n\n';
    const r = await call(id, priming + resultFrame(id));
    const [token] = sseIds(r.text);
    assert.ok(token !== undefined);
    assert.equal(r.text, `retry: 500\n\nid: ${token}\ndata: \n\n` + resultFrame(id));
    const state = codec.verify(token, 's', gw().sellerUrl('s'));
    assert.ok(state.ok);
    // The block as the host gets it, the seller's id in place of the token: 3 bytes over the seller's 25.
    assert.equal(state.state.usedBytes, Buffer.byteLength('retry: 500\n\nid: p-0\ndata: \n\n'));
    assert.equal(state.state.usedBytes, Buffer.byteLength(priming) + 3);
  });

  test('the cumulative bound counts the clamped frame: at the host bytes it passes, one byte less it does not', async () => {
    const id = 300;
    const body = 'retry: 1\n\n' + resultFrame(id);
    const expected = 'retry: 500\n\n' + resultFrame(id);
    const hostBytes = Buffer.byteLength(expected);
    assert.equal(hostBytes, Buffer.byteLength(body) + 2);
    const whole = await call(id, body, { 'x-max-response-bytes': String(hostBytes) });
    assert.equal(whole.text, expected);

    const short = await call(id + 1, body.replace(`"id":${id}`, `"id":${id + 1}`), { 'x-max-response-bytes': String(hostBytes - 1) });
    const { forwarded, err } = finalSseError(short.text, id + 1, hostBytes - 1);
    assert.equal(forwarded, 'retry: 500\n\n');
    assert.equal(err.details.observed_bytes, hostBytes);
    const line = await gw().exchangeLine('s', id + 1);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'sse_cumulative' });
  });
});
