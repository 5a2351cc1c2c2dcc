/**
 * Regression (hostile trial 35, leftover 1, real Chromium against the gateway): the ops
 * endpoints' answers carried `X-Content-Type-Options: nosniff` (hostile trial 33, F4), but the
 * 404 and 405 answers on the ops listener (an unknown path, a wrong method) did not, nor did
 * any other answer the gateway writes itself: its JSON-RPC refusals (`refuse`, the not-found
 * handler, the head refusals), the refusals written on the socket (Node's parser rejections,
 * CONNECT, the 417) and its minted local errors. Without it a browser may sniff such a body
 * and run it as a script (`<script src>` of a JSON body: Fetch blocks a nosniff response of a
 * non-script type). Now every such answer takes its header fields from one set
 * (errors/own-answer-headers.ts).
 *
 * Input: a gateway with `ops_listen` (the ops endpoints on their own port) and
 * `request_timeout_ms: 1000`, agent `s` at a closed port (127.0.0.1:9); raw HTTP/1.1 requests on
 * 127.0.0.1, each on its own connection, `Connection: close`.
 * Expected: each answer's head has `x-content-type-options: nosniff` (once), with its status;
 * the ops endpoints' own answers keep it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { listenAll } from '../../src/ops/listen.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const CONFIG = 'log_level: silent\nrequest_timeout_ms: 1000\nlisten: { host: 127.0.0.1, port: 0 }\nops_listen: { port: 0 }\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n';
const CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{}}}';

let app: FastifyInstance;
let mainPort: number;
let opsPort: number;

before(async () => {
  const config = parseConfig(CONFIG, { env: {} });
  app = await buildApp(config, { logger: false });
  const addresses = await listenAll(app, config);
  mainPort = Number(new URL(addresses.address).port);
  opsPort = Number(new URL(addresses.opsAddress!).port);
});

after(async () => {
  await app.close();
});

/** A request head (and body) for 127.0.0.1, `Connection: close`. */
function request(method: string, path: string, headers: Record<string, string> = {}, body = ''): string {
  const lines = Object.entries({ host: '127.0.0.1', connection: 'close', ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }).map(([n, v]) => `${n}: ${v}\r\n`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n${body}`;
}

/** The status line and the `x-content-type-options` values of the first answer to `text` on `port`. */
async function nosniffOf(port: number, text: string, waitMs = 3000): Promise<{ status: string; nosniff: string[] }> {
  const { text: answer } = await writeAndRead(port, text, [], waitMs);
  const lines = (answer.split('\r\n\r\n')[0] ?? '').split('\r\n');
  return { status: lines[0] ?? '', nosniff: lines.filter((l) => /^x-content-type-options:/i.test(l)).map((l) => l.slice(l.indexOf(':') + 1).trim()) };
}

const CASES: Array<[label: string, port: () => number, text: string, status: string]> = [
  ['ops listener: an unknown path, 404 not_found', () => opsPort, request('GET', '/nope'), 'HTTP/1.1 404 Not Found'],
  ['ops listener: DELETE /healthz, 405 method_not_allowed', () => opsPort, request('DELETE', '/healthz'), 'HTTP/1.1 405 Method Not Allowed'],
  ['ops listener: TRACE /metrics (a method Fastify does not route), 405', () => opsPort, request('TRACE', '/metrics'), 'HTTP/1.1 405 Method Not Allowed'],
  ['main listener: an unknown path (the not-found handler), 404 not_found', () => mainPort, request('GET', '/nope'), 'HTTP/1.1 404 Not Found'],
  ['main listener: PUT on an MCP endpoint, 405 method_not_allowed', () => mainPort, request('PUT', '/agents/s/mcp'), 'HTTP/1.1 405 Method Not Allowed'],
  ['main listener: an unknown agent, 404 unknown_agent', () => mainPort, request('POST', '/agents/zz/mcp', { 'content-type': 'application/json' }, CALL), 'HTTP/1.1 404 Not Found'],
  ['main listener: a bad Origin (a head refusal), 403 origin_not_allowed', () => mainPort, request('POST', '/agents/s/mcp', { 'content-type': 'application/json', origin: 'https://evil.example' }, CALL), 'HTTP/1.1 403 Forbidden'],
  ['main listener: a body that is no JSON, 400 parse_error', () => mainPort, request('POST', '/agents/s/mcp', { 'content-type': 'application/json' }, '{'), 'HTTP/1.1 400 Bad Request'],
  ['main listener: a malformed request line (written on the socket), 400 malformed_http', () => mainPort, 'GET / HTTP/1.1 x\r\n\r\n', 'HTTP/1.1 400 Bad Request'],
  ['main listener: a partial request (written on the socket after request_timeout_ms), 408 request_timeout', () => mainPort, 'POST /agents/s/mcp HTTP/1.1\r\n', 'HTTP/1.1 408 Request Timeout'],
  ['main listener: CONNECT (written on the socket), 404 not_found', () => mainPort, 'CONNECT 127.0.0.1:4100 HTTP/1.1\r\nHost: 127.0.0.1:4100\r\n\r\n', 'HTTP/1.1 404 Not Found'],
  ['main listener: Expect: something-else, 417 expectation_failed', () => mainPort, request('POST', '/agents/s/mcp', { 'content-type': 'application/json', expect: 'something-else' }, CALL), 'HTTP/1.1 417 Expectation Failed'],
  ['main listener: a call whose seller cannot be reached (a minted local error), 200', () => mainPort, request('POST', '/agents/s/mcp', { 'content-type': 'application/json' }, CALL), 'HTTP/1.1 200 OK'],
  ['main listener: a notification whose seller cannot be reached (a minted local error, id null), 502', () => mainPort, request('POST', '/agents/s/mcp', { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","method":"notifications/initialized"}'), 'HTTP/1.1 502 Bad Gateway'],
  ['control: ops listener GET /healthz keeps it', () => opsPort, request('GET', '/healthz'), 'HTTP/1.1 200 OK'],
];

describe('every answer the gateway writes itself carries X-Content-Type-Options: nosniff (was: the ops endpoints 200s only)', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [label, port, text, status] of CASES) {
    test(label, async () => {
      assert.deepEqual(await nosniffOf(port(), text), { status, nosniff: ['nosniff'] });
    });
  }
});
