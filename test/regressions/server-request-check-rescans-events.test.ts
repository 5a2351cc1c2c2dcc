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
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { serverRequestScanCount } from '../../src/response/server-request-id.js';

const HEADERS = { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 's-1' };
const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: Array.from({ length: 200 }, (_, i) => ({ id: i })) } });
const ASK = '{"jsonrpc":"2.0","id":5,"method":"roots/list"}';
const DONE = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}';
const BODY = [NOTE, ASK, DONE].map((d) => `event: message\ndata: ${d}\n\n`).join('');

const stack = useSellerAndGateway(
  () =>
    startRawSeller((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(BODY);
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
});
