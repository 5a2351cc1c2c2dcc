/**
 * Regression: a seller's 2xx `application/json` answer whose body starts with a UTF-8 byte
 * order mark (EF BB BF) was refused `upstream_not_mcp`.
 *
 * Failure: the JSON stage's structure scan (src/mcp/json-scan.ts) takes RFC 8259 as
 * `JSON.parse` does, with no BOM, so a BOM-prefixed JSON-RPC response, valid otherwise, became
 * the gateway's `upstream_not_mcp` tool error. RFC 8259 §8.1: senders MUST NOT add a BOM, but
 * "implementations that parse JSON texts MAY ignore the presence of a byte order mark rather
 * than treating it as an error"; hosts' parsers (`JSON.parse`, Python's `json.loads`) fail on
 * one, so passing it on would be no better.
 *
 * Now: a BOM at the very start of the body (after Content-Encoding is decoded, even cut over
 * chunks) is ignored and dropped: the host gets a JSON text without it, the seller's bytes
 * minus the BOM when nothing is rewritten, and the rewrite (dedupe, lift) works as on the same
 * answer without a BOM. The BOM's bytes count toward the byte bounds and counts as they arrive.
 * A BOM anywhere else (a second one, one after whitespace), or a body that is only a BOM, is
 * still `upstream_not_mcp`.
 *
 * Input: a raw seller on 127.0.0.1 answering a tools/call (by tool name) with 200
 * `application/json` and the bytes below. Expectation: the exact bytes the host gets (raw
 * HTTP client), the exchange line's outcome and counts, and the MCP SDK client's result.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { connectClient } from '../helpers/client.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const JSON_TYPE = { 'content-type': 'application/json' };

const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });
/** A result whose text is a copy of structuredContent: deduped to a summary (dedupe_text: summary). */
const STRUCTURED = { a: 2, pad: 'p'.repeat(300) };
const COPY_TEXT = JSON.stringify(STRUCTURED);
const dedupeResult = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: COPY_TEXT }], structuredContent: STRUCTURED });
const DEDUPED = (id: number): string =>
  toolResponse(id, { content: [{ type: 'text', text: `Result in structuredContent (${Buffer.byteLength(COPY_TEXT)} bytes): a, pad.` }], structuredContent: STRUCTURED });
/** A legacy text-only result holding JSON object text: lifted into structuredContent. */
const liftResult = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: '{"products":[{"id":"p1"}]}' }] });
/** A top-level key written with an escape: the stage's parse path (not the scan's). */
const escapedKey = (id: number): string => `{"jsonrpc":"2.0","\\u0069d":${id},"result":{"content":[{"type":"text","text":"ok"}]}}`;

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bom', version: '1.0.0' } };

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Tool name -> how the seller answers the call with that id. */
const ANSWERS: Record<string, (res: ServerResponse, id: number) => void | Promise<void>> = {
  plain: (res, id) => void res.writeHead(200, JSON_TYPE).end(Buffer.concat([BOM, Buffer.from(result(id))])),
  gzip: (res, id) => void res.writeHead(200, { ...JSON_TYPE, 'content-encoding': 'gzip' }).end(gzipSync(Buffer.concat([BOM, Buffer.from(result(id))]))),
  // Chunked, the BOM cut over three chunks.
  split: async (res, id) => {
    res.writeHead(200, JSON_TYPE);
    res.write(BOM.subarray(0, 1));
    await pause(30);
    res.write(BOM.subarray(1, 2));
    await pause(30);
    res.end(Buffer.concat([BOM.subarray(2), Buffer.from(result(id))]));
  },
  dedupe: (res, id) => void res.writeHead(200, JSON_TYPE).end(Buffer.concat([BOM, Buffer.from(dedupeResult(id))])),
  lift: (res, id) => void res.writeHead(200, JSON_TYPE).end(Buffer.concat([BOM, Buffer.from(liftResult(id))])),
  lift_control: (res, id) => void res.writeHead(200, JSON_TYPE).end(liftResult(id)),
  escaped: (res, id) => void res.writeHead(200, JSON_TYPE).end(Buffer.concat([BOM, Buffer.from(escapedKey(id))])),
  two_boms: (res, id) => void res.writeHead(200, JSON_TYPE).end(Buffer.concat([BOM, BOM, Buffer.from(result(id))])),
  space_then_bom: (res, id) => void res.writeHead(200, JSON_TYPE).end(Buffer.concat([Buffer.from(' '), BOM, Buffer.from(result(id))])),
  bom_only: (res) => void res.writeHead(200, JSON_TYPE).end(BOM),
  // 70 open brackets: over the default max_json_depth (64) at the 65th.
  deep: (res) => void res.writeHead(200, JSON_TYPE).end(Buffer.concat([BOM, Buffer.from('['.repeat(70))])),
  // Chunked, one write: the BOM counts toward the raw byte bound as it arrives.
  chunked: (res, id) => {
    res.writeHead(200, JSON_TYPE);
    res.end(Buffer.concat([BOM, Buffer.from(result(id))]));
  },
};

const stack = useSellerAndGateway(
  () =>
    startRawSeller(async (req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string } };
      if (msg.id === undefined) return void res.writeHead(202).end();
      // The SDK client's initialize is answered with a BOM too.
      if (msg.method === 'initialize') return void res.writeHead(200, JSON_TYPE).end(Buffer.concat([BOM, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: INIT_RESULT }))]));
      const answer = ANSWERS[msg.params?.name ?? ''];
      if (answer === undefined) return void res.writeHead(500).end();
      await answer(res, msg.id);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const post = (id: number, tool: string, headers: Record<string, string> = {}) =>
  withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, tool), { ...HEADERS, ...headers }), undefined, 'the POST');

describe('a JSON answer starting with a UTF-8 BOM', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends the BOM', async () => {
    const res = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify(toolCall(90, 'plain')) });
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), Buffer.concat([BOM, Buffer.from(result(90))]));
  });

  const unchanged: Array<[string, number, string, string]> = [
    ['plain', 1, result(1), 'with Content-Length'],
    ['gzip', 2, result(2), 'gzip-coded: the BOM is the decoded body\'s start'],
    ['split', 3, result(3), 'chunked, the BOM cut over three chunks'],
    ['escaped', 4, escapedKey(4), 'a key written with an escape (the parse path)'],
  ];
  for (const [tool, id, text, how] of unchanged) {
    test(`${tool} (${how}): the host gets 200 and the seller's bytes without the BOM (was upstream_not_mcp)`, async () => {
      const r = await post(id, tool);
      assert.deepEqual([r.status, r.headers.get('content-type')], [200, 'application/json']);
      assert.deepEqual(r.body, Buffer.from(text));
      assert.doesNotThrow(() => JSON.parse(r.text()));
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason, line.bytes_to_host], ['ok', null, Buffer.byteLength(text)]);
      // The BOM's bytes were read and counted as any other (decoded: gzip's output).
      assert.equal(line.bytes_decoded, Buffer.byteLength(text) + 3);
    });
  }

  test('dedupe: the text copy becomes the summary, no BOM in the rewritten answer (was upstream_not_mcp)', async () => {
    const r = await post(5, 'dedupe');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, Buffer.from(DEDUPED(5)));
    const line = await stack.gateway.exchangeLine('s', 5);
    assert.deepEqual([line.outcome, line.bytes_from_seller, line.bytes_to_host], ['rewritten', Buffer.byteLength(dedupeResult(5)) + 3, Buffer.byteLength(DEDUPED(5))]);
    // What the dedupe saved: the text's, not the BOM's.
    assert.equal(line.bytes_saved, Buffer.byteLength(dedupeResult(5)) - Buffer.byteLength(DEDUPED(5)));
  });

  test('lift: the answer is the same bytes as the same answer sent without a BOM (was upstream_not_mcp)', async () => {
    const control = await post(60, 'lift_control');
    const r = await post(6, 'lift');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, Buffer.from(control.text().replace('"id":60', '"id":6')));
    assert.deepEqual((r.json() as { result: { structuredContent: unknown } }).result.structuredContent, { products: [{ id: 'p1' }] });
    assert.equal(r.body[0], 0x7b);
    const line = await stack.gateway.exchangeLine('s', 6);
    assert.equal(line.outcome, 'rewritten');
  });

  const refused: Array<[string, number, number, string]> = [
    ['two_boms', 7, Buffer.byteLength(result(7)) + 6, 'a second BOM is a character, not JSON'],
    ['space_then_bom', 8, Buffer.byteLength(result(8)) + 4, 'a BOM after whitespace'],
    ['bom_only', 9, 3, 'a BOM and no JSON text'],
  ];
  for (const [tool, id, observed, why] of refused) {
    test(`${tool}: still upstream_not_mcp (${why}), observed_bytes counting the BOM`, async () => {
      const r = await post(id, tool);
      assert.equal(r.status, 200);
      assert.equal(r.text(), expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', observedBytes: observed, upstreamStatus: 200 }));
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], ['local_error', 'upstream_not_mcp']);
    });
  }

  test('the BOM counts toward the byte bound: a text that fits with the BOM passes, one byte more breaks raw_bytes', async () => {
    const fits = Buffer.byteLength(result(10)) + 3;
    const ok = await post(10, 'chunked', { 'x-max-response-bytes': String(fits) });
    assert.deepEqual([ok.status, ok.text()], [200, result(10)]);
    const limit = Buffer.byteLength(result(11)) + 2;
    const r = await post(11, 'chunked', { 'x-max-response-bytes': String(limit) });
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedErrorJson({ id: 11, method: 'tools/call', toolName: 'chunked', reason: 'raw_bytes', limitBytes: limit, observedBytes: limit + 1 }));
  });

  test('structure bounds apply after the BOM: json_depth, observed_bytes counting the BOM (3 + 65)', async () => {
    const r = await post(12, 'deep');
    assert.equal(r.status, 200);
    assert.equal(
      r.text(),
      expectedErrorJson({ id: 12, method: 'tools/call', toolName: 'deep', reason: 'json_depth', limit: 64, observed: 65, limitBytes: 4194304, observedBytes: 68 }),
    );
  });

  test('the MCP SDK client connects and reads the tool result (both answers BOM-prefixed)', async () => {
    const client = await connectClient(stack.gateway.agentUrl('s'), { protocolVersion: '2025-06-18' });
    try {
      const out = await withTimeout(client.callTool({ name: 'plain', arguments: {} }), undefined, 'the tool call');
      assert.deepEqual([out.isError, out.content], [undefined, [{ type: 'text', text: 'ok' }]]);
    } finally {
      await client.close();
    }
  });
});
