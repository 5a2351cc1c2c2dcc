/**
 * Bounded JSON responses: every limit's three cases (exactly at the limit passes, one byte
 * past fails with the right code and reason, a lying Content-Length fails), through the real
 * gateway against a real HTTP seller on 127.0.0.1.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponseOfSize } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

const LIMIT = 4096;
/** What the seller does for the next request: set per test. */
let answer: (res: import('node:http').ServerResponse) => void = () => {};

const stack = useSellerAndGateway(() => startRawSeller((_req, res) => answer(res)), (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`));

const call = (id: number) => rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'list_products'), { 'mcp-protocol-version': '2025-06-18' });

function adcpError(body: unknown): Record<string, unknown> {
  const r = (body as { result: { isError: boolean; structuredContent: { adcp_error: Record<string, unknown> } } }).result;
  assert.equal(r.isError, true);
  return r.structuredContent.adcp_error;
}

describe('JSON body byte limit', () => {
  test('a body of exactly max_response_bytes passes byte for byte', async () => {
    const body = toolResponseOfSize(1, LIMIT);
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': LIMIT }).end(body);
    const r = await call(1);
    assert.equal(r.status, 200);
    assert.equal(r.text(), body);
  });

  test('one byte past with Content-Length is refused before the body is read (content_length)', async () => {
    const body = toolResponseOfSize(2, LIMIT + 1);
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': LIMIT + 1 }).end(body);
    const r = await call(2);
    assert.equal(r.status, 200);
    const msg = r.json() as { id: number };
    assert.equal(msg.id, 2);
    const err = adcpError(msg);
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal(err.recovery, 'correctable');
    assert.equal(err.source, 'sdk');
    assert.deepEqual(err.details, { reason: 'content_length', limit_bytes: LIMIT, observed_bytes: LIMIT + 1 });
  });

  test('one byte past without Content-Length (chunked) fails as bytes arrive (raw_bytes)', async () => {
    const body = toolResponseOfSize(3, LIMIT + 1);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(body.slice(0, 1000));
      res.end(body.slice(1000));
    };
    const r = await call(3);
    const err = adcpError(r.json());
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal((err.details as Record<string, unknown>).reason, 'raw_bytes');
    assert.equal((err.details as Record<string, unknown>).limit_bytes, LIMIT);
    assert.equal((err.details as Record<string, unknown>).observed_bytes, LIMIT + 1);
  });

  test('a lying Content-Length over the limit (small body) is refused on the header alone', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10_000_000 });
      res.write(toolResponseOfSize(4, 200));
      setTimeout(() => res.destroy(), 50);
    };
    const r = await call(4);
    const err = adcpError(r.json());
    assert.deepEqual(err.details, { reason: 'content_length', limit_bytes: LIMIT, observed_bytes: 10_000_000 });
  });

  test('a lying Content-Length under the limit, followed by more bytes, never yields a truncated message', async () => {
    const body = toolResponseOfSize(5, LIMIT * 2);
    answer = (res) => {
      // Claims 100 bytes, then writes the whole oversized body on the socket.
      res.socket!.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n${body}`);
      res.socket!.end();
    };
    const r = await call(5);
    assert.equal(r.status, 200);
    const err = (r.json() as { result: { structuredContent: { adcp_error: { code: string; details: { reason: string } } } } }).result.structuredContent.adcp_error;
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.equal(err.details.reason, 'upstream_not_mcp');
  });
});

describe('JSON structure bounds', () => {
  test('depth exactly at max_json_depth passes; one deeper fails with json_depth', async () => {
    const nested = (d: number) => '['.repeat(d) + ']'.repeat(d);
    // result.content is depth 3 (message object, result object, content array); 61 more arrays inside make 64.
    const at = `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"ok"}],"x":${nested(62)}}}`;
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(at);
    let r = await call(6);
    assert.equal(r.text(), at);

    const over = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}],"x":${nested(63)}}}`;
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(over);
    r = await call(7);
    const err = adcpError(r.json());
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    const d = err.details as Record<string, unknown>;
    assert.equal(d.reason, 'json_depth');
    assert.equal(d.limit_depth, 64);
    assert.equal(d.observed_depth, 65);
  });
});
