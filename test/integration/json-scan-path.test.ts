/**
 * The JSON stage decides from its streamed scan (src/mcp/json-scan.ts) when a body goes out
 * as the seller's bytes without `JSON.parse` (issue 5), and falls back to the parse path
 * whenever the scan cannot be sure. Each case: what the seller sends, what the host gets
 * (exact bytes). Real gateway, raw seller on 127.0.0.1.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

let body: string | Buffer = '';
const stack = useSellerAndGateway(
  () => startRawSeller((_req: SeenRequest, res: ServerResponse) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body)),
  (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n  small:\n    url: ${seller.url}\n    max_response_bytes: 1000\n`),
);

const call = (id: number, agent = 's') => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
type Err = { code: string; details: Record<string, unknown> };
const toolErr = (m: unknown) => (m as { result: { structuredContent: { adcp_error: Err } } }).result.structuredContent.adcp_error;

describe('JSON stage: scan-decided fast path and its fallbacks', () => {
  test('nothing to rewrite: the seller bytes, whitespace and key order intact', async () => {
    body = '{ "id" : 1 ,"jsonrpc":"2.0", "result":{"content":[{"type":"text","text":"Found 2 products."}],"structuredContent":{"n": 1.50}} }';
    const r = await call(1);
    assert.equal(r.text(), body);
  });

  test('an escaped top-level key is read by the parse path: "\\u0069d" is the id', async () => {
    body = '{"jsonrpc":"2.0","\\u0069d":2,"result":{"content":[{"type":"text","text":"ok"}]}}';
    assert.equal((await call(2)).text(), body);
    // ...and a later escaped id that differs makes it an answer to another request.
    body = '{"jsonrpc":"2.0","id":3,"\\u0069d":99,"result":{"content":[]}}';
    assert.equal(toolErr((await call(3)).json()).details.reason, 'upstream_not_mcp');
  });

  test('not JSON-RPC 2.0, or no result/error for the id: upstream_not_mcp', async () => {
    for (const [id, b] of [
      [4, '{"jsonrpc":"1.0","id":4,"result":{}}'],
      [5, '{"jsonrpc":"2.0","id":5}'],
      [6, '{"id":6,"result":{}}'],
      [7, '{"jsonrpc":"2.0","id":"7","result":{}}'],
    ] as const) {
      body = b;
      assert.equal(toolErr((await call(id)).json()).details.reason, 'upstream_not_mcp', b);
    }
  });

  test('invalid JSON after a valid prefix: upstream_not_mcp with the whole body observed', async () => {
    body = '{"jsonrpc":"2.0","id":8,"result":{"content":[]}}}';
    const e = toolErr((await call(8)).json());
    assert.deepEqual(e.details, { reason: 'upstream_not_mcp', upstream_status: 200 });
  });

  test('a text that is the exact JSON of structuredContent is deduped (no parse); a reformatted copy too (parse)', async () => {
    // Long enough that its summary is shorter than each copy (a shorter copy is kept as written).
    const sc = { products: [{ id: 'p1', price: 12.5, name: 'Premium sports CTV, prime time' }], total: 1 };
    body = JSON.stringify({ jsonrpc: '2.0', id: 9, result: { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc } });
    const exact = (await call(9)).json() as { result: { content: { text: string }[]; structuredContent: unknown } };
    assert.deepEqual(exact.result.structuredContent, sc);
    assert.notEqual(exact.result.content[0]!.text, JSON.stringify(sc));
    body = JSON.stringify({ jsonrpc: '2.0', id: 10, result: { content: [{ type: 'text', text: JSON.stringify(sc, null, 2) }], structuredContent: sc } });
    const pretty = (await call(10)).json() as { result: { content: { text: string }[] } };
    assert.equal(exact.result.content[0]!.text, `Result in structuredContent (${JSON.stringify(sc).length} bytes): products[1], total.`);
    assert.equal(pretty.result.content[0]!.text, `Result in structuredContent (${JSON.stringify(sc, null, 2).length} bytes): products[1], total.`);
  });

  test('a result with two structuredContent members is no answer: upstream_not_mcp, the text never deduped', async () => {
    // Longer than a summary, so that a copy would be replaced. Before repeated names were refused
    // (test/regressions/response-with-repeated-id-member-accepted.test.ts), the text, a copy of the
    // first (replaced) structuredContent, was kept: the last member wins, as in JSON.parse.
    const note = 'A note long enough that a copy of this object is longer than its summary.';
    const first = `{"a":1,"note":"${note}"}`;
    body = `{"jsonrpc":"2.0","id":11,"result":{"structuredContent":${first},"content":[{"type":"text","text":${JSON.stringify(first)}}],"structuredContent":{"a":2,"note":"${note}"}}}`;
    assert.equal(toolErr((await call(11)).json()).details.reason, 'upstream_not_mcp');
  });

  test('an exact copy whose decoded text outgrows the limit is not a copy (found in review: invalid UTF-8 decodes to 3-byte U+FFFD)', async () => {
    // Input: max_response_bytes 1000; structuredContent {"a":"<0xFF x400>"} and a text of the
    // same bytes (914-byte body). The text decodes to ~1,212 bytes, over the text bound, so
    // it is never treated as a copy: the seller's bytes go out (as before the fast check).
    // Their well-formed copy (U+FFFD for each 0xFF: 2,514 bytes) would be over the limit, so
    // the seller's bytes go out as they are (json-stage.ts wellFormedUtf8).
    const ff = Buffer.alloc(400, 0xff);
    body = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":12,"result":{"structuredContent":{"a":"'),
      ff,
      Buffer.from('"},"content":[{"type":"text","text":"{\\"a\\":\\"'),
      ff,
      Buffer.from('\\"}"}]}}'),
    ]);
    const r = await call(12, 'small');
    assert.equal(Buffer.compare(r.body, body as Buffer), 0);
  });
});
