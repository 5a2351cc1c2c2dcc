/**
 * Regression: deeply nested JSON inside a message under the byte limit.
 *
 * Input (limits: the defaults, 4194304 bytes, depth 64): a tools/call answered with a JSON
 * message of ~4 MiB whose result is (a) `[` repeated to exactly 4194304 bytes, (b) `{"a":`
 * repeated to 4194303 bytes (whole repetitions under 4 MiB), and (c) `[` repeated to
 * 4194240 bytes as the data of one SSE event.
 * Expectation: the structure scan stops at depth 65 without ever calling JSON.parse (no
 * stack overflow, no crash): RESPONSE_TOO_LARGE `json_depth`, limit_depth 64,
 * observed_depth 65, limit_bytes 4194304, for the request id; the host's body is exactly the
 * minted message (as JSON, 1026 bytes for (a), or as the only SSE event). JSON bodies are
 * scanned as they arrive (issue 5): observed_bytes is the message's bytes through the bracket
 * at depth 65, and the gateway stops reading the seller there (bytes_from_seller well under
 * 4 MiB). In one SSE event, observed_bytes is the event's data length.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIB, expectedErrorFrame, expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;
const stack = useHostileStack((seller) => ({
  arrays: seller.url('deep-nesting', { shape: 'array' }),
  objects: seller.url('deep-nesting', { shape: 'object' }),
  sse: seller.url('deep-nesting', { shape: 'array', sse: 1, bytes: LIMIT - 64 }),
}));

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
/** Bytes of the seller's message through the opening bracket at depth 65 (the top-level object is depth 1). */
function bytesThroughDepth65(id: number, shape: string): number {
  return `{"jsonrpc":"2.0","id":${id},"result":`.length + 64 * shape.length - (shape.length - 1);
}

/** The seller's message length for `shape` (see the hostile seller's deep-nesting mode). */
function messageBytes(id: number, shape: string, bytes: number): number {
  const prefix = `{"jsonrpc":"2.0","id":${id},"result":`.length;
  return prefix + Math.floor((bytes - prefix) / shape.length) * shape.length;
}

describe('deep nesting', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const c of [
    { agent: 'arrays', id: 1, shape: '[', messageBytes: 4194304, observedBytes: 97, hostBytes: 1026 },
    { agent: 'objects', id: 2, shape: '{"a":', messageBytes: 4194303, observedBytes: 349, hostBytes: undefined },
  ]) {
    test(`4 MiB of ${c.shape} : json_depth at depth 65`, async () => {
      assert.equal(messageBytes(c.id, c.shape, LIMIT), c.messageBytes);
      assert.equal(bytesThroughDepth65(c.id, c.shape), c.observedBytes);
      const r = await call(c.agent, c.id);
      const expected = expectedErrorJson({ id: c.id, method: 'tools/call', toolName: 'get_products', reason: 'json_depth', limit: 64, observed: 65, limitBytes: LIMIT, observedBytes: c.observedBytes });
      assert.equal(r.text(), expected);
      assert.equal(r.bytes, Buffer.byteLength(expected));
      if (c.hostBytes !== undefined) assert.equal(r.bytes, c.hostBytes);
      const line = await stack.gateway.exchangeLine(c.agent, c.id);
      assert.equal(line.reason, 'json_depth');
      // Stopped at the chunk holding the breach, not after the whole 4 MiB.
      assert.ok((line.bytes_from_seller as number) >= c.observedBytes && (line.bytes_from_seller as number) < LIMIT / 2, String(line.bytes_from_seller));
    });
  }

  test('the same in one SSE event: json_depth as the only event', async () => {
    const observedBytes = messageBytes(3, '[', LIMIT - 64);
    const r = await call('sse', 3);
    // For an SSE event, limit_bytes is the per-event limit (here the response limit).
    const frame = expectedErrorFrame({ id: 3, method: 'tools/call', toolName: 'get_products', reason: 'json_depth', limit: 64, observed: 65, limitBytes: LIMIT, observedBytes });
    assert.equal(r.text(), frame);
    assert.equal(r.bytes, Buffer.byteLength(frame));
    const line = await stack.gateway.exchangeLine('sse', 3);
    assert.equal(line.reason, 'json_depth');
  });
});
