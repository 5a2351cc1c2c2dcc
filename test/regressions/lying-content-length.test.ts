/**
 * Regression: a seller whose Content-Length lies.
 *
 * Input (limit 4096 bytes, a 2000-byte tools/call result on the wire):
 * (a) Content-Length: 100, smaller than the body: the other 1900 bytes follow on the socket;
 * (b) Content-Length: 3000, larger than the body, then the connection closes;
 * (c) Content-Length: 10000000 (over the limit), larger than the body, then it closes.
 * Expectation: never a truncated or over-long message passed off as the answer. (a) The
 * gateway reads exactly the 100 announced bytes (HTTP framing; the rest is never read as
 * body), which are no JSON-RPC message: SERVICE_UNAVAILABLE `upstream_not_mcp`,
 * upstream_status 200, bytes_from_seller 100. (b) SERVICE_UNAVAILABLE `upstream_reset`
 * (the body ended short). (c) RESPONSE_TOO_LARGE `content_length`, observed_bytes 10000000,
 * decided on the header. Each time the host's body is exactly the minted message for the id.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4096;
const stack = useHostileStack((seller) => {
  const agent = (claim: number) => ({ url: seller.url('lying-length', { bytes: 2000, claim }), max_response_bytes: LIMIT });
  return { smaller: agent(100), larger: agent(3000), 'larger-over-limit': agent(10_000_000) };
});

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('lying Content-Length', { timeout: TEST_TIMEOUT_MS }, () => {
  test('smaller than the body: only the announced bytes are read, and they are no MCP message (upstream_not_mcp)', async () => {
    const r = await call('smaller', 1);
    const expected = expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'get_products', reason: 'upstream_not_mcp', upstreamStatus: 200 });
    assert.equal(r.status, 200);
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 709);
    const line = await stack.gateway.exchangeLine('smaller', 1);
    assert.equal(line.reason, 'upstream_not_mcp');
    assert.equal(line.bytes_from_seller, 100);
    assert.equal(line.bytes_to_host, r.bytes);
  });

  test('larger than the body, then the connection closes: upstream_reset', async () => {
    const r = await call('larger', 2);
    const expected = expectedErrorJson({ id: 2, method: 'tools/call', toolName: 'get_products', reason: 'upstream_reset' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    const line = await stack.gateway.exchangeLine('larger', 2);
    assert.equal(line.reason, 'upstream_reset');
    assert.equal(line.bytes_from_seller, 2000);
  });

  test('over the limit and larger than the body: content_length on the header alone', async () => {
    const r = await call('larger-over-limit', 3);
    const expected = expectedErrorJson({ id: 3, method: 'tools/call', toolName: 'get_products', reason: 'content_length', limitBytes: LIMIT, observedBytes: 10_000_000 });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    const line = await stack.gateway.exchangeLine('larger-over-limit', 3);
    assert.equal(line.reason, 'content_length');
    assert.equal(line.bytes_from_seller, 0);
  });
});
