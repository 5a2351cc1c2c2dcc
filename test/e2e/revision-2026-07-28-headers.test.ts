/**
 * 2026-07-28 request metadata through the gateway (Streamable HTTP "Request Metadata"):
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` (from `x-mcp-header`, Base64
 * sentinel included) and the body's `_meta` envelope reach the seller exactly as the host sent
 * them. Asserted at the seller.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { gatewayYamlFor } from '../support/sdk1/revision-suite.js';
import { connectSdk2Host, MODERN, modernPost, envelope, type Sdk2Host } from '../support/sdk2/client.js';
import { sdk2Products, startSdk2Seller, TASKS_EXTENSION } from '../support/sdk2/seller.js';

const MIRRORED = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'accept', 'content-type'];

describe(`MCP ${MODERN} request headers and _meta reach the seller unchanged`, { timeout: TEST_TIMEOUT_MS * 2 }, () => {
  const stack = useSellerAndGateway(startSdk2Seller, (seller) => startGateway(gatewayYamlFor(seller.url)));
  let h: Sdk2Host;

  before(async () => {
    h = await connectSdk2Host(stack.gateway.agentUrl('seller'), { 'x-max-response-bytes': '1000000' });
    stack.closeAfter(h);
  });

  test('SDK 2.x tools/call: Mcp-Method, Mcp-Name, Mcp-Param-Region (Base64 sentinel) and the body, as sent', { timeout: TEST_TIMEOUT_MS }, async () => {
    // The client mirrors x-mcp-header parameters of tools it has listed.
    await withTimeout(h.client.listTools());
    const result = (await withTimeout(h.client.callTool({ name: 'list_products', arguments: { region: 'Zürich', brief: 'olv' } }))) as {
      structuredContent: unknown;
    };
    // The seller answered for that region.
    assert.deepEqual(result.structuredContent, sdk2Products('Zürich'));

    const sent = h.exchanges.filter((e) => e.requestHeaders['mcp-method'] === 'tools/call').at(-1)!;
    const got = stack.seller.requests.filter((r) => r.headers['mcp-method'] === 'tools/call').at(-1)!;
    assert.equal(sent.requestHeaders['mcp-param-region'], `=?base64?${Buffer.from('Zürich').toString('base64')}?=`);
    for (const name of [...MIRRORED, 'mcp-param-region']) assert.equal(got.headers[name], sent.requestHeaders[name], name);
    assert.equal(got.headers['mcp-protocol-version'], MODERN);
    assert.equal(got.headers['mcp-name'], 'list_products');
    // The body, `_meta` envelope included, byte for byte.
    assert.equal(got.body.toString('utf8'), sent.requestBody);
    const body = JSON.parse(got.body.toString('utf8')) as { params: { _meta: Record<string, unknown> } };
    assert.equal(body.params._meta['io.modelcontextprotocol/protocolVersion'], MODERN);
    assert.ok(body.params._meta['io.modelcontextprotocol/clientCapabilities'] !== undefined);
    // The gateway's own header stays with the gateway.
    assert.equal(sent.requestHeaders['x-max-response-bytes'], '1000000');
    assert.equal(got.headers['x-max-response-bytes'], undefined);
  });

  test('raw: every Mcp-Param-* (any case, plain and Base64) and Mcp-Name for tasks/get are forwarded unchanged', { timeout: TEST_TIMEOUT_MS }, async () => {
    const extra = {
      'Mcp-Param-Region': 'us-west1',
      'MCP-PARAM-Tenant-Id': 'acme-42',
      'mcp-param-greeting': '=?base64?SGVsbG8sIOS4lueVjA==?=',
    };
    const params = { name: 'list_products', arguments: { region: 'us-west1' }, _meta: envelope() };
    const res = await withTimeout(modernPost(stack.gateway.agentUrl('seller'), 11, 'tools/call', params, extra));
    assert.equal(res.status, 200);
    const got = stack.seller.requests.at(-1)!;
    assert.equal(got.headers['mcp-param-region'], 'us-west1');
    assert.equal(got.headers['mcp-param-tenant-id'], 'acme-42');
    assert.equal(got.headers['mcp-param-greeting'], '=?base64?SGVsbG8sIOS4lueVjA==?=');
    assert.equal(got.headers['mcp-method'], 'tools/call');
    assert.equal(got.headers['mcp-name'], 'list_products');
    assert.deepEqual(JSON.parse(got.body.toString()), { jsonrpc: '2.0', id: 11, method: 'tools/call', params });

    // The tasks extension routes on Mcp-Name = params.taskId.
    const task = await withTimeout(
      modernPost(stack.gateway.agentUrl('seller'), 12, 'tools/call', { name: 'build_report', arguments: {}, _meta: envelope({ [TASKS_EXTENSION]: {} }) }),
    );
    const taskId = (task.json() as { result: { taskId: string } }).result.taskId;
    const poll = await withTimeout(modernPost(stack.gateway.agentUrl('seller'), 13, 'tasks/get', { taskId, _meta: envelope({ [TASKS_EXTENSION]: {} }) }));
    assert.equal(poll.status, 200);
    const seen = stack.seller.requests.at(-1)!;
    assert.equal(seen.headers['mcp-method'], 'tasks/get');
    assert.equal(seen.headers['mcp-name'], taskId);
  });
});
