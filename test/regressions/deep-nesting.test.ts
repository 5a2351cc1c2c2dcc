/**
 * Regression: deeply nested JSON inside a message under the byte limit.
 *
 * Input (limits: the defaults, 4194304 bytes, depth 64): a tools/call answered with a JSON
 * message of ~4 MiB whose result is (a) `[` repeated to exactly 4194304 bytes, (b) `{"a":`
 * repeated to 4194303 bytes (whole repetitions under 4 MiB), and (c) `[` repeated to
 * 4194240 bytes as the data of one SSE event.
 * Expectation: the structure scan stops at depth 65 without ever calling JSON.parse (no
 * stack overflow, no crash): RESPONSE_TOO_LARGE `json_depth`, limit_depth 64,
 * observed_depth 65, limit_bytes 4194304, observed_bytes the message length, for the request
 * id; the host's body is exactly the minted message (as JSON, 1036 bytes for (a), or as the only
 * SSE event).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIB, expectedErrorFrame, expectedErrorJson, startHostileSeller, startObservedGateway, type HostileSeller, type ObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;
let seller: HostileSeller;
let gw: ObservedGateway;

before(async () => {
  seller = await startHostileSeller();
  gw = await startObservedGateway(
    [
      'agents:',
      '  arrays:',
      `    url: ${seller.url('deep-nesting', { shape: 'array' })}`,
      '  objects:',
      `    url: ${seller.url('deep-nesting', { shape: 'object' })}`,
      '  sse:',
      `    url: ${seller.url('deep-nesting', { shape: 'array', sse: 1, bytes: LIMIT - 64 })}`,
      '',
    ].join('\n'),
  );
});
after(async () => {
  await gw?.close();
  await seller?.close();
});

const call = (agent: string, id: number) => rawPost(gw.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
/** The seller's message length for `shape` (see the hostile seller's deep-nesting mode). */
function messageBytes(id: number, shape: string, bytes: number): number {
  const prefix = `{"jsonrpc":"2.0","id":${id},"result":`.length;
  return prefix + Math.floor((bytes - prefix) / shape.length) * shape.length;
}

describe('deep nesting', { timeout: TEST_TIMEOUT_MS }, () => {
  test('4 MiB of [ : json_depth at depth 65', async () => {
    const observedBytes = messageBytes(1, '[', LIMIT);
    assert.equal(observedBytes, 4194304);
    const r = await call('arrays', 1);
    const expected = expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'get_products', reason: 'json_depth', limit: 64, observed: 65, limitBytes: LIMIT, observedBytes });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 1036);
    const line = await gw.exchangeLine('arrays', 1);
    assert.equal(line.reason, 'json_depth');
    assert.equal(line.bytes_from_seller, observedBytes);
  });

  test('4 MiB of {"a": : json_depth at depth 65', async () => {
    const observedBytes = messageBytes(2, '{"a":', LIMIT);
    assert.equal(observedBytes, 4194303);
    const r = await call('objects', 2);
    const expected = expectedErrorJson({ id: 2, method: 'tools/call', toolName: 'get_products', reason: 'json_depth', limit: 64, observed: 65, limitBytes: LIMIT, observedBytes });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    const line = await gw.exchangeLine('objects', 2);
    assert.equal(line.reason, 'json_depth');
  });

  test('the same in one SSE event: json_depth as the only event', async () => {
    const observedBytes = messageBytes(3, '[', LIMIT - 64);
    const r = await call('sse', 3);
    // For an SSE event, limit_bytes is the per-event limit (here the response limit).
    const frame = expectedErrorFrame({ id: 3, method: 'tools/call', toolName: 'get_products', reason: 'json_depth', limit: 64, observed: 65, limitBytes: LIMIT, observedBytes });
    assert.equal(r.text(), frame);
    assert.equal(r.bytes, Buffer.byteLength(frame));
    const line = await gw.exchangeLine('sse', 3);
    assert.equal(line.reason, 'json_depth');
  });
});
