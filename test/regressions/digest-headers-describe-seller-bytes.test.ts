/**
 * Regression: the seller's digest and validator headers reached the host over a body the
 * gateway had decoded or rewritten.
 *
 * Reported failure (a new user's hostile trial 12, M4): a gzip answer that the gateway decoded
 * and deduped reached the host with the seller's `Content-Digest` (`sha-256=:jl7B…:`, of the
 * gzip bytes) over a body whose own digest was `sha-256=:XNn9…:` (MISMATCH), and
 * `Repr-Digest`, `Content-MD5` and `ETag` passed unchanged too. Now they are dropped whenever
 * the host's bytes are not the seller's, as Content-Length and Content-Encoding already were
 * (src/response/headers.ts SELLER_BYTES_HEADERS: RFC 9530 §2, §3; RFC 3230; RFC 1864; RFC
 * 9110 §8.8.3), and kept, byte for byte, when the seller's bytes go out unchanged.
 *
 * Input: a raw node:http seller on 127.0.0.1 answering each tool with `Content-Digest`,
 * `Repr-Digest`, `Digest`, `Content-MD5` (each computed over the bytes it sends) and an `ETag`
 * (strong, or weak for one case), plus `Last-Modified` and `X-Seller-Trace` (controls, always
 * kept); the real gateway in front, the host on 2025-06-18 (dedupe and lift apply).
 * Expectation, per answer:
 * - gzip + dedupe: the deduped body, none of the five headers; the host's body is not what
 *   the seller's Content-Digest described;
 * - gzip, nothing rewritten (decoded only): the seller's JSON text, none of the five (the
 *   representation changed: RFC 9530 Appendix B, Repr-Digest of a coded answer is of its coded bytes);
 * - plain JSON left unchanged: the seller's bytes and all five headers exactly as sent, the
 *   Content-Digest matching the host's body;
 * - a lift (text-only legacy result): the lifted body, none of the five;
 * - a deduped answer with a weak ETag (`W/"…"`): none of the five, the weak tag dropped too;
 * - ill-formed UTF-8 repaired to U+FFFD: none of the five;
 * - SSE: none of the five (its head goes out before any event);
 * - a 404 passed through unchanged: all five kept; gzip-coded: none.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SELLER_BYTES_HEADERS = ['content-digest', 'repr-digest', 'digest', 'content-md5', 'etag'] as const;
const CONTROLS = { 'last-modified': 'Wed, 02 Dec 2026 10:00:00 GMT', 'x-seller-trace': 't-1' };

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('base64');
/** The five headers over `wire`, the bytes the seller sends (after any content coding). */
function describing(wire: Buffer, etag: string): Record<string, string> {
  return {
    'content-digest': `sha-256=:${sha256(wire)}:`,
    'repr-digest': `sha-256=:${sha256(wire)}:`,
    digest: `SHA-256=${sha256(wire)}`,
    'content-md5': createHash('md5').update(wire).digest('base64'),
    etag,
  };
}

const PAYLOAD = { products: [{ product_id: 'p1', name: 'Homepage takeover' }, { product_id: 'p2', name: 'Run of site' }], next_cursor: 'c2' };
const PAYLOAD_TEXT = JSON.stringify(PAYLOAD);
/** The summary the dedupe and the lift write for PAYLOAD (summary.ts format), written out here. */
const SUMMARY = 'Result in structuredContent (121 bytes): products[2], next_cursor.';
const message = (id: number, result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, result });
const text = (t: string): { type: 'text'; text: string } => ({ type: 'text', text: t });
/** A result whose text repeats structuredContent: deduped. */
const duplicated = (id: number): string => message(id, { content: [text(PAYLOAD_TEXT)], structuredContent: PAYLOAD });
const deduped = (id: number): string => message(id, { content: [text(SUMMARY)], structuredContent: PAYLOAD });
/** A result left as it is: a plain text, no structuredContent. */
const plain = (id: number): string => message(id, { content: [text('Found 2 products.')] });
const NOT_FOUND = '{"jsonrpc":"2.0","id":9,"error":{"code":-32001,"message":"Session not found"}}';

interface Answer {
  status: number;
  type: string;
  wire: Buffer;
  coded?: boolean;
  etag?: string;
}
function answer(tool: string, id: number): Answer {
  const json = (body: string, extra: Partial<Answer> = {}): Answer => ({ status: 200, type: 'application/json', wire: Buffer.from(body), ...extra });
  const gzip = (a: Answer): Answer => ({ ...a, wire: zlib.gzipSync(a.wire), coded: true });
  switch (tool) {
    case 'gzip_dedupe':
      return gzip(json(duplicated(id)));
    case 'gzip_plain':
      return gzip(json(plain(id)));
    case 'plain':
      return json(plain(id));
    case 'lift':
      return json(message(id, { content: [text(PAYLOAD_TEXT)] }));
    case 'weak_etag_dedupe':
      return json(duplicated(id), { etag: 'W/"v1"' });
    case 'bad_utf8': {
      // 0xFF, never valid in UTF-8, in place of the `o` of "Found".
      const wire = Buffer.from(plain(id));
      wire[wire.indexOf('Found') + 1] = 0xff;
      return { status: 200, type: 'application/json', wire };
    }
    case 'sse':
      return { status: 200, type: 'text/event-stream', wire: Buffer.from(`event: message\ndata: ${plain(id)}\n\n`) };
    case 'own_404':
      return { status: 404, type: 'application/json', wire: Buffer.from(NOT_FOUND) };
    default:
      return gzip({ status: 404, type: 'application/json', wire: Buffer.from(NOT_FOUND) });
  }
}
/** The headers the seller sent with `a`. */
function sentHeaders(a: Answer): Record<string, string> {
  return { 'content-type': a.type, ...(a.coded ? { 'content-encoding': 'gzip' } : {}), ...describing(a.wire, a.etag ?? '"v1"'), ...CONTROLS };
}

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
      const a = answer(msg.params.name, msg.id);
      res.writeHead(a.status, sentHeaders(a)).end(a.wire);
    }),
  (seller) => startGateway(agentsYaml({ s: seller.url })),
);

const post = (tool: string, id: number): Promise<RawResponse> =>
  withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' }), undefined, `the POST of ${tool}`);

function assertDropped(r: RawResponse): void {
  assert.deepEqual(
    SELLER_BYTES_HEADERS.filter((name) => r.headers.has(name)),
    [],
    'Content-Digest, Repr-Digest, Digest, Content-MD5 and ETag never describe bytes the host did not get',
  );
  assertControls(r);
}
function assertKeptExactly(r: RawResponse, a: Answer): void {
  const sent = sentHeaders(a);
  assert.deepEqual(
    SELLER_BYTES_HEADERS.map((name) => [name, r.headers.get(name)]),
    SELLER_BYTES_HEADERS.map((name) => [name, sent[name]]),
  );
  assert.equal(r.headers.get('content-digest'), `sha-256=:${sha256(r.body)}:`, "the seller's Content-Digest is the host's body's");
  assertControls(r);
}
function assertControls(r: RawResponse): void {
  assert.deepEqual([r.headers.get('last-modified'), r.headers.get('x-seller-trace')], [CONTROLS['last-modified'], CONTROLS['x-seller-trace']]);
}

describe("the seller's digests and ETag reach the host only with the seller's bytes", { timeout: TEST_TIMEOUT_MS }, () => {
  test('gzip + dedupe (the report): dropped; the host body is the deduped JSON, not what they described', async () => {
    const r = await post('gzip_dedupe', 1);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-encoding'), null);
    assert.equal(r.text(), deduped(1));
    assert.notEqual(`sha-256=:${sha256(r.body)}:`, sentHeaders(answer('gzip_dedupe', 1))['content-digest']);
    assertDropped(r);
  });

  test('gzip, nothing rewritten (decoded only): dropped, Repr-Digest included', async () => {
    const r = await post('gzip_plain', 2);
    assert.equal(r.status, 200);
    assert.equal(r.text(), plain(2));
    assertDropped(r);
  });

  test("plain JSON passed unchanged: the seller's bytes, all five kept byte for byte", async () => {
    const r = await post('plain', 3);
    assert.equal(r.status, 200);
    assert.equal(r.text(), plain(3));
    assertKeptExactly(r, answer('plain', 3));
  });

  test('a lift (legacy text-only result): dropped', async () => {
    const r = await post('lift', 4);
    assert.equal(r.status, 200);
    assert.equal(r.text(), message(4, { content: [text(SUMMARY)], structuredContent: PAYLOAD }));
    assertDropped(r);
  });

  test('a dedupe under a weak ETag: dropped, the weak tag too', async () => {
    const r = await post('weak_etag_dedupe', 5);
    assert.equal(r.status, 200);
    assert.equal(r.text(), deduped(5));
    assertDropped(r);
  });

  test('ill-formed UTF-8 repaired to U+FFFD: dropped', async () => {
    const r = await post('bad_utf8', 6);
    assert.equal(r.status, 200);
    assert.equal(r.text(), plain(6).replace('Found', 'F\uFFFDund'));
    assertDropped(r);
  });

  test('SSE (re-encoded by the gateway, head sent before any event): dropped', async () => {
    const r = await post('sse', 7);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    assert.equal(r.text(), `event: message\ndata: ${plain(7)}\n\n`);
    assertDropped(r);
  });

  test("a 404 passed through: kept byte for byte; the same 404 gzip-coded: dropped", async () => {
    const own = await post('own_404', 8);
    assert.equal(own.status, 404);
    assert.equal(own.text(), NOT_FOUND);
    assertKeptExactly(own, answer('own_404', 8));
    const coded = await post('gzip_404', 9);
    assert.equal(coded.status, 404);
    assert.equal(coded.text(), NOT_FOUND);
    assertDropped(coded);
  });
});
