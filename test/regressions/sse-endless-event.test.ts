/**
 * Regression: one SSE event that never ends (the bench's "100 MiB SSE event" attack).
 *
 * Input: a tools/call answered over SSE with one progress event, then `event: message`,
 * `data: {"jsonrpc":"2.0","id":<id>,"result":{... "text":"` and 64 KiB writes of `A`, never
 * a line break, up to 100 MiB (the seller honours backpressure and stops when the gateway
 * hangs up).
 * Expectation, the progress event first, byte for byte, then the final `message` event
 * RESPONSE_TOO_LARGE for the request id:
 * (a) default limits (4 MiB, the event bound equal to it): `sse_cumulative`, limit_bytes
 *     4194304;
 * (b) max_sse_event_bytes 1 MiB: `sse_event` at the line cap, limit_bytes 1048576,
 *     observed_bytes the bytes of the line read when it broke the cap (1048576 + 65536):
 *     over it, at most what the seller wrote (it was the cap + 1 whatever was read:
 *     test/regressions/sse-event-cap-observed-bytes.test.ts);
 * and the gateway reads about that bound, not the 100 MiB: the seller could write far less
 * than 100 MiB (socket buffers hold a few MiB at most).
 * Before: the pending line was kept as decoded text, one string per chunk in the parser's
 * buffer, on top of each raw chunk (JS heap +176 MiB for 50 such requests, peak RSS 1.35x the
 * legitimate load, bench/RESULTS.md); it is now held as the raw chunks it came in.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { drainOrClose } from '../../src/response/drain.js';

const MiB = 1024 * 1024;
const FILL = Buffer.alloc(64 * 1024, 0x41);
const PROGRESS = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}\n\n';
let written = 0;

async function endlessEvent(id: unknown, res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(PROGRESS);
  res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`);
  let closed = false;
  res.once('close', () => (closed = true));
  while (written < 100 * MiB && !closed) {
    written += FILL.length;
    // drainOrClose removes its listeners when the wait ends (left behind, they piled up: MaxListenersExceededWarning).
    if (!res.write(FILL)) await drainOrClose(res);
  }
  res.destroy();
}

const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => endlessEvent((JSON.parse(req.body.toString()) as { id: unknown }).id, res)),
  (seller) => startGateway(`log_level: silent\nagents:\n  dflt:\n    url: ${seller.url}\n  small:\n    url: ${seller.url}\n    max_sse_event_bytes: ${MiB}\n`),
);

type ErrorMessage = { id: number; result: { isError: boolean; structuredContent: { adcp_error: { code: string; details: Record<string, unknown> } } } };

describe('an SSE event that never ends', { timeout: TEST_TIMEOUT_MS }, () => {
  test('default limits: sse_cumulative at 4 MiB, the progress event delivered first', async () => {
    written = 0;
    const r = await rawPost(stack.gateway.agentUrl('dflt'), toolCall(21, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.ok(r.text().startsWith(PROGRESS));
    const msgs = sseMessages(r.text());
    assert.equal(msgs.length, 2);
    const m = msgs[1] as ErrorMessage;
    assert.equal(m.id, 21);
    assert.equal(m.result.isError, true);
    assert.equal(m.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    assert.equal(m.result.structuredContent.adcp_error.details.limit_bytes, 4 * MiB);
    assert.ok(written < 32 * MiB, `the seller wrote ${written} bytes`);
  });

  test('max_sse_event_bytes 1 MiB: sse_event at the line cap', async () => {
    written = 0;
    const r = await rawPost(stack.gateway.agentUrl('small'), toolCall(22, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.ok(r.text().startsWith(PROGRESS));
    const m = sseMessages(r.text())[1] as ErrorMessage;
    assert.equal(m.id, 22);
    const { observed_bytes: observed, ...details } = m.result.structuredContent.adcp_error.details;
    assert.deepEqual(details, { reason: 'sse_event', limit_bytes: MiB });
    const lineHead = `data: {"jsonrpc":"2.0","id":22,"result":{"content":[{"type":"text","text":"`;
    assert.ok(typeof observed === 'number' && observed > MiB + 65536 && observed <= lineHead.length + written, `observed_bytes ${String(observed)}`);
    assert.ok(written < 32 * MiB, `the seller wrote ${written} bytes`);
  });
});
