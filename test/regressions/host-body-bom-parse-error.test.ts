/**
 * Regression (a hostile new-user trial 14, L3): a host request body starting with a UTF-8 byte
 * order mark (EF BB BF: some .NET and PowerShell encoders write one by default) was refused
 * with a bare `Parse error: the request body is not valid JSON.` and id null, no hint that the
 * BOM was the cause, while a seller's answer starting with one is accepted and the BOM dropped
 * (src/mcp/utf8-bom.ts; RFC 8259 §8.1: a parser "MAY ignore the presence of a byte order mark").
 *
 * Input: a raw seller on 127.0.0.1 (records every request; answers a `tools/call` with `size`
 * bytes of text, each request of a batch so) behind the real gateway, agent `s` with
 * `tools: { small_tool: { max_response_bytes: 500 } }`; real POSTs of raw bytes, with a
 * Content-Length and chunked.
 * Expected: the leading BOM is ignored: the body is read and forwarded without it, so the
 * seller gets exactly the bytes after the BOM, its Content-Length theirs (3 less than the
 * host's, or the whole for a chunked body), the Content-Type as sent; the request's id and tool
 * name are read (small_tool's 500-byte limit applies, the error for id 1; an unknown agent's
 * refusal carries the id); a single request over 1 KiB (the scan reading) and a batch
 * (2025-03-26) alike. Still refused: a second BOM (`parse_error`, not valid JSON), and a body
 * that is only a BOM (`parse_error`, empty).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const withBom = (text: string): Buffer => Buffer.concat([BOM, Buffer.from(text)]);

/** The seller's answer to request `id`: `size` bytes of text. */
const sellerAnswer = (id: unknown, size: number): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(size) }] } });

const call = (id: number, name: string, size: number, extra = ''): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"size":${size}${extra}}}}`;

const parseError = (message: string): string => `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":${JSON.stringify(message)},"data":{"reason":"parse_error"}}}`;

interface Answer {
  status: number;
  text: string;
}

describe('host-body-bom-parse-error', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        type Call = { id: unknown; params?: { arguments?: { size?: number } } };
        const msg = JSON.parse(req.body.toString('utf8')) as Call | Call[];
        const answer = (m: Call): string => sellerAnswer(m.id, m.params?.arguments?.size ?? 0);
        res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(msg) ? `[${msg.map(answer).join(',')}]` : answer(msg));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, tools: '{ small_tool: { max_response_bytes: 500 } }' } })),
  );

  /** POSTs `parts` to agent `agent` (one part: with a Content-Length; several: chunked). */
  function post(parts: readonly Buffer[], agent = 's', protocolVersion = '2025-06-18'): Promise<Answer> {
    const url = new URL(stack.gateway.agentUrl(agent));
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': protocolVersion };
    if (parts.length === 1) headers['content-length'] = String(parts[0]!.length);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      for (const part of parts.slice(0, -1)) req.write(part);
      req.end(parts.at(-1));
    });
  }

  /** POSTs `parts` (their concatenation a BOM and then `text`): the seller gets `text` alone, with its Content-Length. */
  async function forwarded(parts: readonly Buffer[], text: string, protocolVersion?: string): Promise<Answer> {
    const seen = stack.seller.requests.length;
    const answer = await post(parts, 's', protocolVersion);
    assert.equal(stack.seller.requests.length, seen + 1, 'the seller was not contacted');
    const got = stack.seller.requests[seen]!;
    assert.equal(got.body.toString('latin1'), Buffer.from(text).toString('latin1'));
    assert.deepEqual({ length: got.headers['content-length'], chunked: got.headers['transfer-encoding'], type: got.headers['content-type'] }, { length: String(Buffer.byteLength(text)), chunked: undefined, type: 'application/json' });
    return answer;
  }

  test('a call with a BOM (Content-Length): forwarded without it, answered with the seller\'s bytes', async () => {
    const text = call(1, 'big_tool', 20);
    assert.deepEqual(await forwarded([withBom(text)], text), { status: 200, text: sellerAnswer(1, 20) });
  });

  test('a chunked call with a BOM, the BOM split across chunks: forwarded without it', async () => {
    const text = call(2, 'big_tool', 20);
    const body = withBom(text);
    assert.deepEqual(await forwarded([body.subarray(0, 2), body.subarray(2, 10), body.subarray(10)], text), { status: 200, text: sellerAnswer(2, 20) });
  });

  test("the request's tool is read: small_tool's 500-byte limit applies, the error for id 3", async () => {
    const text = call(3, 'small_tool', 2000);
    const r = await forwarded([withBom(text)], text);
    assert.equal(r.status, 200);
    const m = JSON.parse(r.text) as { id: unknown; result: { isError: boolean; structuredContent: { adcp_error: { code: string; details: unknown } } } };
    const error = m.result.structuredContent.adcp_error;
    assert.deepEqual(
      { id: m.id, isError: m.result.isError, code: error.code, details: error.details },
      { id: 3, isError: true, code: 'RESPONSE_TOO_LARGE', details: { reason: 'raw_bytes', limit_bytes: 500, observed_bytes: Buffer.byteLength(sellerAnswer(3, 2000)) } },
    );
  });

  test('over 1 KiB (the scan reading): forwarded without the BOM', async () => {
    const text = call(4, 'big_tool', 20, `,"pad":"${'p'.repeat(1500)}"`);
    assert.deepEqual(await forwarded([withBom(text)], text), { status: 200, text: sellerAnswer(4, 20) });
  });

  test('a batch (2025-03-26) with a BOM: forwarded without it', async () => {
    const text = `[${call(5, 'big_tool', 10)},${call(6, 'big_tool', 10)}]`;
    assert.deepEqual(await forwarded([withBom(text)], text, '2025-03-26'), { status: 200, text: `[${sellerAnswer(5, 10)},${sellerAnswer(6, 10)}]` });
  });

  test("an unknown agent's refusal carries the id of a body with a BOM", async () => {
    const r = await post([withBom(call(7, 'big_tool', 1))], 'nope');
    assert.deepEqual(r, {
      status: 404,
      text: '{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Unknown agent \\"nope\\": no such agent in the gateway config.","data":{"reason":"unknown_agent","agent":"nope"}}}',
    });
  });

  for (const [label, body, message] of [
    ['two BOMs', Buffer.concat([BOM, withBom(call(8, 'big_tool', 1))]), 'Parse error: the request body is not valid JSON.'],
    ['only a BOM', BOM, 'Parse error: the request body is empty.'],
  ] as const) {
    test(`${label}: refused parse_error, the seller not contacted`, async () => {
      const seen = stack.seller.requests.length;
      assert.deepEqual(await post([body]), { status: 400, text: parseError(message) });
      assert.equal(stack.seller.requests.length, seen);
    });
  }
});
