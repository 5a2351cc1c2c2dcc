/**
 * Review of hostile trial 57 F3's fix (sse_idle paused while the seller waits for its host):
 * every non-final event holding `"id"` anywhere, delivered on a stream of a session, was scanned
 * a second time to tell whether it is a server request (response/server-request-id.ts: a full
 * scanJson, and a copy of string data), after the judge had scanned it already (8.7 ms more per
 * 1.05 MB notification with nested `"id"` keys). Now the judge's scan is read.
 *
 * Input (raw seller on 127.0.0.1, session `s-1`): a `tools/call`'s SSE stream with a
 * notification whose params hold 200 objects with an `"id"` each, then an elicitation request
 * (id 5), then the call's response. Expected: the host gets the three events as sent; the
 * server-request check scanned nothing itself (serverRequestScanCount unchanged).
 *
 * Hot-path review of the fix: a forward verdict the judge reached past a parse or a failed scan
 * (lenient JSON with `NaN`, an array) carried no scan, and the check scanned the data again; a
 * seller's `notifications/cancelled` was scanned whole twice (scanJson, then a scan for
 * `params`). Input, on a second call's stream: a request written method first (`"method"`
 * leads: the judge proves it no response and does not scan it, its data a string), a lenient
 * request (`"v":NaN`), an array holding a request, the cancellation of the first request, the
 * response. Expected: the three events and the cancellation go out as sent; the check scanned
 * once in all (the string request, which nothing scanned before it: 3 before the fix); the
 * cancellation's top level was scanned once (sellerCancelledScanCount).
 *
 * Re-read review of 7767818, M3: given the judge's scan, the cancellation's top level was still
 * scanned again (json-scan.ts scanTopObject) to find `params`, and its keys judged again.
 * Input: a fourth ask written `id` before `method` (id 9; the judge scans it), and its
 * cancellation, whose reason holds `error` (the judge scans it), after the first one's. Expected now: the check scans the top
 * level of the text cancellation only (sellerCancelledScanCount +1: 2 before), each `params`
 * once (mcp/cancelled-id.ts cancelledIdScanCount +2); and, told without
 * the seams, a cancellation with its judge's scan is answered from that scan even under
 * structure bounds a scan of its own would break (a second scan would refuse it: undefined).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { sellerCancelledIdOf, sellerCancelledScanCount, serverRequestScanCount } from '../../src/response/server-request-id.js';
import { cancelledIdScanCount } from '../../src/mcp/cancelled-id.js';
import { scanJson } from '../../src/mcp/json-scan.js';

const HEADERS = { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 's-1' };
const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: Array.from({ length: 200 }, (_, i) => ({ id: i })) } });
const ASK = '{"jsonrpc":"2.0","id":5,"method":"roots/list"}';
const DONE = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}';
const BODY = [NOTE, ASK, DONE].map((d) => `event: message\ndata: ${d}\n\n`).join('');
const STRING_ASK = '{"method":"roots/list","jsonrpc":"2.0","id":6}';
const LENIENT_ASK = '{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{"v":NaN}}';
const ARRAY_ASK = '[{"jsonrpc":"2.0","id":8,"method":"roots/list"}]';
/** Written `jsonrpc` first: the judge scans it (and the check reads that scan). */
const SCANNED_ASK = '{"jsonrpc":"2.0","id":9,"method":"roots/list"}';
const CANCEL = '{"method":"notifications/cancelled","params":{"requestId":6,"reason":"timeout"},"jsonrpc":"2.0"}';
/** Its reason holds `erro`: the judge scans it (sse-response-sniff.ts mayBeResponse), and the check finds its `params` in that scan. */
const SCANNED_CANCEL = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"client error"}}';
const DONE_2 = '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}';
const ASKS_2 = [STRING_ASK, LENIENT_ASK, ARRAY_ASK, SCANNED_ASK].map((d) => `event: message\ndata: ${d}\n\n`).join('');
/** Written once the asks are out (a chunk of its own: a chunk is planned as a whole, sse-chunk-taker.ts `readAll`). */
const CANCEL_2 = [CANCEL, SCANNED_CANCEL, DONE_2].map((d) => `event: message\ndata: ${d}\n\n`).join('');
const BODY_2 = ASKS_2 + CANCEL_2;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (!req.body.includes('"id":2')) return void res.end(BODY);
      res.write(ASKS_2);
      setTimeout(() => res.end(CANCEL_2), 50).unref();
    }),
  (seller) => startGateway(`agents:\n  s:\n    url: ${seller.url}\n`),
);

describe('server-request-check-rescans-events', { timeout: TEST_TIMEOUT_MS }, () => {
  test("a delivered event's server-request check reads the judge's scan, not a scan of its own", async () => {
    const before = serverRequestScanCount();
    const res = await rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: {} } }, HEADERS);
    assert.equal(res.status, 200);
    assert.equal(res.body.toString('utf8'), BODY);
    assert.equal(serverRequestScanCount() - before, 0);
  });

  test("a lenient or array forward is not scanned again, a string request once, a scanned cancellation's top level never", async () => {
    const before = serverRequestScanCount();
    const cancelBefore = sellerCancelledScanCount();
    const paramsBefore = cancelledIdScanCount();
    const res = await rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 't', arguments: {} } }, HEADERS);
    assert.equal(res.status, 200);
    assert.equal(res.body.toString('utf8'), BODY_2);
    assert.equal(serverRequestScanCount() - before, 1);
    // The text cancellation (nothing scanned it before) once; the scanned one's top level not at all.
    assert.equal(sellerCancelledScanCount() - cancelBefore, 1);
    assert.equal(cancelledIdScanCount() - paramsBefore, 2);
  });

  test("a cancellation given its judge's scan is read from that scan, not scanned again under the bounds", () => {
    const data = Buffer.from(CANCEL);
    const scan = scanJson(data, { maxDepth: 64, maxNodes: 100 });
    assert.ok(scan.ok);
    // Two nodes, depth 1: a scan of the data's own under these bounds fails (json_nodes).
    const tight = { maxDepth: 1, maxNodes: 2 };
    assert.equal(scanJson(data, tight).ok, false);
    const before = sellerCancelledScanCount();
    assert.equal(sellerCancelledIdOf(data, tight, scan), 'n6e0');
    assert.equal(sellerCancelledScanCount() - before, 0);
    assert.equal(sellerCancelledIdOf(CANCEL, tight), undefined, 'text data has no judge scan: scanned, and refused');
  });
});
