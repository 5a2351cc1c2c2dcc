/**
 * Regression (not an error): a seller's 404 for an expired session.
 *
 * Input: a host with session `hostile-old` sends a tools/call; the seller answers
 * `404 application/json` `{"jsonrpc":"2.0","id":<id>,"error":{"code":-32001,"message":"Session not found"}}`.
 * Expectation: passed through as it is, status 404 and the body byte for byte (the MCP
 * client re-initializes on a 404: ARCHITECTURE §3), not turned into a minted error; then
 * `initialize` through the gateway gets a new session id from the seller.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ gone: seller.url('expired-session') }));

describe('expired session 404', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the 404 passes through byte for byte, and the host can re-initialize', async () => {
    const r = await rawPost(stack.gateway.agentUrl('gone'), toolCall(9, 'get_products'), { 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 'hostile-old' });
    const body = '{"jsonrpc":"2.0","id":9,"error":{"code":-32001,"message":"Session not found"}}';
    assert.equal(r.status, 404);
    assert.equal(r.text(), body);
    assert.equal(r.bytes, 78);
    assert.equal(stack.seller.requestsFor('expired-session').at(-1)?.headers['mcp-session-id'], 'hostile-old');
    const line = await stack.gateway.exchangeLine('gone', 9);
    assert.equal(line.outcome, 'ok');
    assert.equal(line.reason, null);
    assert.equal(line.status, 404);

    const init = await rawPost(stack.gateway.agentUrl('gone'), {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'host', version: '1' } },
    });
    assert.equal(init.status, 200);
    assert.match(init.headers.get('mcp-session-id') ?? '', /^hostile-\d+$/);
  });
});
