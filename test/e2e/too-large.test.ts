/**
 * A ~5 MB get_media_buy_delivery report, past the 4 MiB default: the host's callTool RESOLVES
 * with an isError tool result carrying a RESPONSE_TOO_LARGE adcp_error, over JSON and over SSE.
 * No throw, no hang, no truncated body.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoSeller } from '../../examples/seller.js';
import { SDK_ID } from '../../src/version.js';
import { connectClient } from '../helpers/client.js';
import { demoGatewayYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const FOUR_MIB = 4_194_304;

interface AdcpError {
  code: string;
  message: string;
  recovery: string;
  source: string;
  sdk_id: string;
  details: { limit_bytes: number; observed_bytes: number; reason: string };
}

/** The shape every RESPONSE_TOO_LARGE tool result must have (ARCHITECTURE §3). */
function assertTooLarge(result: CallToolResult): AdcpError {
  assert.equal(result.isError, true);
  const err = (result.structuredContent as { adcp_error: AdcpError }).adcp_error;
  assert.equal(err.code, 'RESPONSE_TOO_LARGE');
  // A read whose request can be narrowed (rows, fields, a cursor).
  assert.equal(err.recovery, 'correctable');
  assert.equal(err.source, 'sdk');
  assert.equal(err.sdk_id, SDK_ID);
  assert.equal(err.details.limit_bytes, FOUR_MIB);
  assert.ok(err.details.observed_bytes > FOUR_MIB, `observed ${err.details.observed_bytes}`);
  assert.ok(Buffer.byteLength(err.message) < 256);
  assert.ok(Buffer.byteLength(JSON.stringify(err.details)) < 500);
  // content[0]: the error JSON; content[1]: one sentence for the model.
  assert.equal(result.content.length, 2);
  assert.equal(result.content[0]?.type, 'text');
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), { adcp_error: err });
  assert.equal(result.content[1]?.type, 'text');
  const sentence = (result.content[1] as { text: string }).text;
  assert.ok(sentence.length > 0 && !sentence.trimStart().startsWith('{'), `a sentence, not JSON: ${sentence}`);
  return err;
}

describe('response too large', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) => startGateway(demoGatewayYaml(seller)));

  test('JSON: rejected on the Content-Length pre-check, callTool resolves with the error', { timeout: TEST_TIMEOUT_MS }, async () => {
    // What the seller sends for the same call (the SDK client's first tools/call has id 1).
    const direct = await withTimeout(rawPost(stack.seller.url, toolCall(1, 'get_media_buy_delivery'), { 'mcp-protocol-version': '2025-11-25' }));
    assert.equal(direct.status, 200);
    assert.ok(direct.bytes > FOUR_MIB);
    assert.equal(Number(direct.headers.get('content-length')), direct.bytes);

    const client = await connectClient(stack.gateway.agentUrl('demo'));
    stack.closeAfter(client);
    const result = (await withTimeout(client.callTool({ name: 'get_media_buy_delivery', arguments: {} }))) as CallToolResult;
    const err = assertTooLarge(result);
    // The SDK's JSON answer declares its length, so the header pre-check fires before any body
    // byte is counted, and what it observed is exactly the declared length.
    assert.equal(err.details.reason, 'content_length');
    assert.equal(err.details.observed_bytes, direct.bytes);
  });

  test('JSON: a narrowed request (rows: 100) passes', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connectClient(stack.gateway.agentUrl('demo'));
    stack.closeAfter(client);
    const result = (await withTimeout(client.callTool({ name: 'get_media_buy_delivery', arguments: { rows: 100 } }))) as CallToolResult;
    assert.equal(result.isError, undefined);
    const sc = result.structuredContent as { media_buy_deliveries: Array<{ by_geo: unknown[] }> };
    assert.equal(sc.media_buy_deliveries[0]?.by_geo.length, 100);
  });

  test('SSE: the cumulative stream budget fires, callTool resolves with the error', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connectClient(stack.gateway.agentUrl('demo-sse'));
    stack.closeAfter(client);
    const result = (await withTimeout(client.callTool({ name: 'get_media_buy_delivery', arguments: {} }))) as CallToolResult;
    const err = assertTooLarge(result);
    // The result is one ~5 MB SSE event. Two bounds apply: the stream's cumulative bytes
    // (max_response_bytes, every byte counts, framing included) and the event's data bytes
    // (max_sse_event_bytes, default: the same 4 MiB). Cumulative counts the `event: message`
    // and `data: ` framing that precedes the data, so it is always ahead of the event count
    // and crosses 4 MiB first.
    assert.equal(err.details.reason, 'sse_cumulative');
  });
});
