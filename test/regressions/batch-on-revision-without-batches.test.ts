/**
 * Regression (a new user's trial): "Batches on revisions that have none". A JSON-RPC batch
 * sent with `MCP-Protocol-Version: 2025-06-18` was accepted and forwarded, although MCP
 * removed batching in 2025-06-18 (changelog: "Remove support for JSON-RPC batching") and
 * docs/errors.md said later revisions have no batches.
 *
 * Input: a valid batch (a tools/call and a notification) with MCP-Protocol-Version 2025-06-18,
 * 2025-11-25 and 2026-07-28.
 * Expected: HTTP 400, a JSON-RPC error body (-32600, id null) naming the host's revision, byte
 * for byte; the seller never contacted. Controls: the same batch without the header (a server
 * then assumes 2025-03-26: MCP Streamable HTTP, "Protocol Version Header"), with 2025-03-26,
 * and with a header that is no revision date (counted as older than every revision, as
 * src/mcp/revision.ts reads it everywhere: the seller judges it) is forwarded as written; a
 * single message with 2025-06-18 is forwarded.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{}}}';
const BATCH = `[${CALL},{"jsonrpc":"2.0","method":"notifications/initialized"}]`;
const ANSWER = JSON.stringify([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } }]);

describe('batch-on-revision-without-batches', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const body = req.body.toString('utf8');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body.startsWith('[') ? ANSWER : JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } }));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  for (const version of ['2025-06-18', '2025-11-25', '2026-07-28']) {
    test(`MCP-Protocol-Version ${version}: 400 invalid_request naming the revision, the seller not contacted`, async () => {
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), BATCH, { 'mcp-protocol-version': version });
      assert.equal(r.status, 400);
      assert.equal(
        r.text(),
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: `Invalid Request: MCP ${version} has no JSON-RPC batches (removed in 2025-06-18): send each message in its own request.`,
            data: { reason: 'invalid_request' },
          },
        }),
      );
      assert.equal(stack.seller.requests.length, seen, 'the seller was contacted');
    });
  }

  for (const [label, headers] of [
    ['no MCP-Protocol-Version (2025-03-26)', {}],
    ['MCP-Protocol-Version 2025-03-26', { 'mcp-protocol-version': '2025-03-26' }],
    ['an MCP-Protocol-Version that is no revision date', { 'mcp-protocol-version': 'draft' }],
  ] as const) {
    test(`control, ${label}: the batch is forwarded as written`, async () => {
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), BATCH, headers);
      assert.equal(r.status, 200);
      assert.equal(r.text(), ANSWER);
      assert.equal(stack.seller.requests.length, seen + 1);
      assert.equal(stack.seller.requests.at(-1)!.body.toString('utf8'), BATCH);
    });
  }

  test('control, a single message with MCP-Protocol-Version 2025-06-18 is forwarded', async () => {
    const seen = stack.seller.requests.length;
    const r = await rawPost(stack.gateway.agentUrl('s'), CALL, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.equal(stack.seller.requests.length, seen + 1);
  });
});
