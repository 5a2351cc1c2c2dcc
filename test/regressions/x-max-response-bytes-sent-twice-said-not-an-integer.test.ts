/**
 * Regression (review 36, F6, Nit): `X-Max-Response-Bytes` sent twice was refused with the wrong
 * message. `parseMaxResponseBytesHeader` (src/config/resolve.ts) says "must be sent at most
 * once" for a repeated header, but only for an array, which Node never gives for this header:
 * it joins repeated field lines into one value, `"5, 5"`, and the host was told
 * `X-Max-Response-Bytes must be a single decimal integer >= 1 (bytes)`. Now a value holding a
 * comma (two field lines joined, by Node or a proxy in front, or a list: RFC 9110 §5.3) is
 * "sent at most once", as the docstring says and as MCP-Protocol-Version's and
 * Mcp-Session-Id's repeats are told.
 *
 * Input: a gateway (its seller never contacted); tools/call id 7 through node:http with the
 * header as two field lines, and as one field holding a comma; the parser on Node's join.
 * Expected: 400 and exactly the JSON-RPC error below for id 7; a single malformed value keeps
 * its own message.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { parseMaxResponseBytesHeader } from '../../src/config/resolve.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const CALL = JSON.stringify(toolCall(7, 'get_products'));
const ONCE = 'X-Max-Response-Bytes must be sent at most once';
const INTEGER = 'X-Max-Response-Bytes must be a single decimal integer >= 1 (bytes)';
const refusal = (message: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: -32600, message: `Invalid X-Max-Response-Bytes header: ${message}`, data: { reason: 'invalid_request' } } });

/** POSTs the call with `value` as X-Max-Response-Bytes (an array: one field line each). */
function post(url: string, value: string | string[]): Promise<{ status: number; text: string }> {
  const headers: http.OutgoingHttpHeaders = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': Buffer.byteLength(CALL),
    'x-max-response-bytes': value,
  };
  return withTimeout(
    new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.end(CALL);
    }),
  );
}

describe('x-max-response-bytes-sent-twice-said-not-an-integer', { timeout: TEST_TIMEOUT_MS }, () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startGateway('agents:\n  s:\n    url: http://127.0.0.1:9/mcp\n');
  });
  after(async () => {
    await gateway.close();
  });

  test('two field lines, and one holding a comma: "sent at most once" (was: "a single decimal integer")', async () => {
    for (const value of [['5', '5'], ['5', '6'], '5, 5', '5,6']) {
      assert.deepEqual(await post(gateway.agentUrl('s'), value), { status: 400, text: refusal(ONCE) }, JSON.stringify(value));
    }
  });

  test("the parser, on Node's join", () => {
    assert.deepEqual(parseMaxResponseBytesHeader('5, 5'), { ok: false, message: ONCE });
    assert.deepEqual(parseMaxResponseBytesHeader(['5', '5']), { ok: false, message: ONCE });
  });

  test('control: a single malformed value keeps its message', async () => {
    assert.deepEqual(await post(gateway.agentUrl('s'), '5 5'), { status: 400, text: refusal(INTEGER) });
    assert.deepEqual(parseMaxResponseBytesHeader('-5'), { ok: false, message: INTEGER });
  });
});
