/**
 * Reported failure (a hostile trial 26, L4 a): a seller's `Content-Encoding: deflate` over
 * raw deflate (RFC 1951, no RFC 1950 zlib wrapper) was decoded and forwarded, while
 * docs/errors.md gave `upstream_encoding_invalid` for data "not in that coding" and said
 * nothing of raw deflate: the behaviour and the documentation disagreed.
 *
 * Decision: the behaviour stays (decode.ts isZlibHeader: a body without a valid zlib header
 * is inflated raw), as browsers (Chromium) and curl read `deflate`: servers send raw deflate
 * under that name, and refusing it would refuse answers every browser reads. Now documented:
 * the `upstream_encoding_invalid` row (src/errors/codes.ts, docs/errors.md) and README say
 * raw deflate is decoded and only data that is neither a zlib nor a raw deflate stream is
 * that error.
 *
 * Input: a raw seller on 127.0.0.1 answering a `tools/call` with its message under
 * `deflate` as raw deflate, as zlib-wrapped deflate (control) and as bytes that are neither.
 * Expectation: the seller's message byte for byte for both deflate forms, the gateway's
 * `upstream_encoding_invalid` for the third; the row and README say so.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { describe, test } from 'node:test';
import { REASONS } from '../../src/errors/codes.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { REPO } from '../helpers/repo.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const message = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: `done ${'x'.repeat(200)}` }] });

/** The body under `deflate` for each tool. */
const BODIES: Record<string, (id: number) => Buffer> = {
  raw: (id) => zlib.deflateRawSync(message(id)),
  zlib: (id) => zlib.deflateSync(message(id)),
  // A zlib header byte pair that fails its check, then an invalid raw block type (0b11).
  neither: () => Buffer.from([0x78, 0x00, 0xff, 0xff, 0xff, 0xff]),
};

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
      const body = BODIES[msg.params.name]!(msg.id);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'deflate', 'content-length': String(body.length) }).end(body);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

const RAW_DEFLATE = /raw deflate stream, RFC 1951: raw deflate is decoded, as browsers and curl do/;

describe('deflate over raw deflate is decoded, and documented so', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 0;
  for (const tool of ['raw', 'zlib']) {
    test(`deflate as ${tool} deflate: decoded, the seller's message byte for byte`, async () => {
      const rpcId = ++id;
      const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(rpcId, tool), HEADERS));
      assert.deepEqual([r.status, r.headers.get('content-encoding'), r.text()], [200, null, message(rpcId)]);
      const line = await stack.gateway.exchangeLine('s', rpcId);
      assert.deepEqual([line.outcome, line.reason], ['ok', null]);
    });
  }

  test('deflate over data that is neither: upstream_encoding_invalid', async () => {
    const rpcId = ++id;
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(rpcId, 'neither'), HEADERS));
    assert.equal(r.text(), expectedErrorJson({ id: rpcId, method: 'tools/call', toolName: 'neither', reason: 'upstream_encoding_invalid' }));
    const line = await stack.gateway.exchangeLine('s', rpcId);
    assert.deepEqual([line.outcome, line.reason], ['local_error', 'upstream_encoding_invalid']);
  });

  test('the upstream_encoding_invalid row (catalog and docs/errors.md) and README say raw deflate is decoded', () => {
    assert.match(REASONS.upstream_encoding_invalid.description, RAW_DEFLATE);
    const doc = readFileSync(join(REPO, 'docs/errors.md'), 'utf8');
    const row = doc.split('\n').find((line) => line.startsWith('| `upstream_encoding_invalid` |'));
    assert.ok(row, 'the row');
    assert.match(row, RAW_DEFLATE);
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    assert.match(readme, /a body without a zlib header \(RFC 1950\) is inflated as raw deflate \(RFC 1951\)/);
  });
});
