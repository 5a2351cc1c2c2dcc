/**
 * Reported failure (carried from a review of request/peek.ts): a host request over the
 * agent's `max_json_depth` or `max_json_nodes` was refused with `"id": null`, though its id
 * was plain to read. JSON-RPC 2.0 §5 allows null only "if there was an error in detecting
 * the id", and a host that matches answers to requests by id (every JSON-RPC client that
 * reads the error body) could not tell which request was refused.
 *
 * Now the refusal carries the request's id, read by the structure scan without bounds (no
 * JavaScript value made, linear in a body already within `max_request_bytes`). A body that is
 * not JSON, or whose id is not a valid JSON-RPC id, still gets id null.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startDemoSeller } from '../../examples/seller.js';
import { connectClient } from '../helpers/client.js';
import { demoGatewayYaml, startGateway } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { STEP_TIMEOUT_MS, TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** `[[[ ... ]]]`, `depth` arrays deep. */
const nested = (depth: number): unknown => (depth === 0 ? [] : [nested(depth - 1)]);

describe('a host request over a JSON structure bound is refused for its own id', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) => startGateway(demoGatewayYaml(seller, { defaults: { max_json_depth: 16, max_json_nodes: 200 } })));

  test('an MCP SDK client whose callTool arguments are 20 deep: the refusal it throws names max_json_depth and its request id 1', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connectClient(stack.gateway.agentUrl('demo'));
    stack.closeAfter(client);
    const call = client.callTool({ name: 'get_products', arguments: { brief: nested(20) } }, undefined, { timeout: STEP_TIMEOUT_MS });
    const err = await withTimeout(
      call.then(
        () => assert.fail('the call resolved'),
        (e: unknown) => e,
      ),
    );
    // The SDK's Streamable HTTP transport throws on the 400 with the body as its text; its
    // first tools/call after initialize has id 1.
    assert.ok(err instanceof Error, String(err));
    assert.equal(
      err.message,
      'Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: the request body is over max_json_depth (16).","data":{"reason":"invalid_request"}}}',
    );
  });

  for (const [label, body, id] of [
    ['a string id, over max_json_nodes', JSON.stringify({ jsonrpc: '2.0', id: 'req-7', method: 'tools/call', params: { name: 'x', arguments: { a: Array.from({ length: 300 }, (_, i) => i) } } }), 'req-7'],
    ['a number id after the deep member', `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":${JSON.stringify(nested(40))}},"id":42}`, 42],
    ['an object id (not a JSON-RPC id): null', `{"jsonrpc":"2.0","id":{"a":1},"method":"ping","params":${JSON.stringify(nested(40))}}`, null],
    ['not JSON after the depth: null', `{"jsonrpc":"2.0","id":5,"method":"ping","params":${'['.repeat(40)}`, null],
  ] as const) {
    test(`raw POST, ${label}: 400, -32600, id ${JSON.stringify(id)}`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('demo'), body, { 'mcp-protocol-version': '2025-11-25' }));
      assert.equal(res.status, 400);
      const answer = res.json() as { id: unknown; error: { code: number; message: string; data: { reason: string } } };
      assert.equal(answer.id, id);
      assert.equal(answer.error.code, -32600);
      assert.match(answer.error.message, /^Invalid Request: the request body is over max_json_(depth \(16\)|nodes \(200\))\.$/);
    });
  }
});
