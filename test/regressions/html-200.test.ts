/**
 * Regression: a seller answers an MCP request with an HTML page and status 200 (a login
 * page, a captive portal, a misrouted proxy).
 *
 * Input: a tools/call and a tools/list answered `200 text/html; charset=utf-8` with a login
 * form.
 * Expectation: SERVICE_UNAVAILABLE `upstream_not_mcp`, details { upstream_status: 200 },
 * recovery `transient`, for the request id: the tools/call as a tool error result (709
 * bytes), the tools/list as a JSON-RPC error -32027 carrying data.adcp_error. No byte of the
 * page reaches the host.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ html: seller.url('html-200') }));

describe('HTML error page with 200', { timeout: TEST_TIMEOUT_MS }, () => {
  test('tools/call: upstream_not_mcp as a tool error result', async () => {
    const r = await rawPost(stack.gateway.agentUrl('html'), toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type')?.split(';')[0], 'application/json');
    const expected = expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'get_products', reason: 'upstream_not_mcp', upstreamStatus: 200 });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 709);
    assert.ok(!r.text().includes('log in'));
    const line = await stack.gateway.exchangeLine('html', 1);
    assert.equal(line.reason, 'upstream_not_mcp');
    assert.equal(line.upstream_status, 200);
  });

  test('tools/list: upstream_not_mcp as JSON-RPC error -32027', async () => {
    const r = await rawPost(stack.gateway.agentUrl('html'), { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    const expected = expectedErrorJson({ id: 'l', method: 'tools/list', reason: 'upstream_not_mcp', upstreamStatus: 200 });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    const m = r.json() as { id: string; error: { code: number; data: { adcp_error: { code: string; recovery: string } } } };
    assert.equal(m.id, 'l');
    assert.equal(m.error.code, -32027);
    assert.equal(m.error.data.adcp_error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(m.error.data.adcp_error.recovery, 'transient');
  });
});
