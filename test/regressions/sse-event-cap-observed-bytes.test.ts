/**
 * Regression (carried from an earlier review): an SSE event whose line never ends is cut at
 * the line cap (max_sse_event_bytes + 65,536 bytes: the gateway does not wait for the line to
 * end), and its `sse_event` error said `observed_bytes` = that cap + 1 whatever had been read:
 * the count stopped at the cap. docs/errors.md says `observed_bytes` is the count when the
 * bound broke. Now it is the bytes of that line the gateway had read when it stopped (through
 * the end of the chunk that crossed, the `data: ` field name included): more than the cap,
 * and exactly what the exchange line's `bytes_from_seller` says was read, less the bytes
 * before the line.
 *
 * Input (raw seller on 127.0.0.1; max_response_bytes 4 MiB, max_sse_event_bytes 2048): a
 * tools/call answered over SSE by a progress event, then `event: message\n`, then one `data:`
 * line of 300,000 bytes with no line break, in 16 KiB writes, then silence.
 * Expected: the progress event, then the final `sse_event` event for the request id:
 * limit_bytes 2048, observed_bytes = bytes_from_seller - (progress event + 15) and over
 * 2048 + 65,536 (was exactly 2048 + 65,536 + 1).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller } from '../support/raw-seller.js';
import { expectedErrorFrame, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';

const EVENT_LIMIT = 2048;
const PROGRESS = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}\n\n';
const LINE_START = 'event: message\n';
const PIECE = Buffer.alloc(16 * 1024, 0x78);

function endlessLine(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(PROGRESS + LINE_START + 'data: ');
  for (let written = 6; written < 300_000; written += PIECE.length) res.write(PIECE);
}

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => endlessLine(res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: 4 * 1024 * 1024, max_sse_event_bytes: EVENT_LIMIT } })),
);

describe('an SSE line cut at the event cap', { timeout: TEST_TIMEOUT_MS }, () => {
  test('observed_bytes is the line bytes read, not the cap + 1', async () => {
    const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(3, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    const line = await stack.gateway.exchangeLine('s', 3);
    assert.equal(line.reason, 'sse_event');
    const observed = (line.bytes_from_seller as number) - PROGRESS.length - LINE_START.length;
    assert.ok(observed > EVENT_LIMIT + SSE_PENDING_SLACK_BYTES, `${observed} line bytes read`);
    const frame = expectedErrorFrame({ id: 3, method: 'tools/call', toolName: 'get_products', reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: observed });
    assert.equal(r.text(), PROGRESS + frame);
  });
});
