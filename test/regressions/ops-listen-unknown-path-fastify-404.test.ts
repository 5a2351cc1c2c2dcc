/**
 * Reported failure (a hostile new user's trial 19, L1): the `ops_listen` port answered an
 * unknown path, and a wrong method on `/healthz`, `/readyz` or `/metrics`, with Fastify's own
 * 404 body (`{"message":"Route GET:/nope not found","error":"Not Found","statusCode":404}`),
 * no `refused` line, not counted in `adcp_gateway_refusals_total`; the main port answers an
 * unknown path with the gateway's `not_found` refusal, a line and a count (docs/errors.md,
 * README "Logs"). And a wrong method on an ops path got 404 on either port, where a wrong
 * method on an MCP endpoint gets 405 with `Allow`.
 *
 * Now (src/routing/unrouted.ts, app.ts `answerAsGateway`: one code for both listeners): on a
 * path the listener serves, another method is 405 `method_not_allowed` with `Allow`
 * (`GET, HEAD` on the ops paths); any other path 404 `not_found`, the message saying what the
 * listener serves; each refusal with its `refused` line (`agent` null on the ops port: it
 * serves no agent) and its count.
 *
 * Input: a gateway on 127.0.0.1 with `ops_listen` (port 0), and one without; raw node:http
 * requests. Expectation: the exact status, `Allow`, body, `refused` line and count below.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { listenAll } from '../../src/ops/listen.js';
import { captureLog, type CapturedLog } from '../helpers/capture-log.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const AGENTS = 'agents:\n  s:\n    url: http://127.0.0.1:9/mcp\n';

interface Answer {
  status: number;
  allow: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** One request on its own connection. */
function request(method: string, url: string): Promise<Answer> {
  return withTimeout(
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(url, { method, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, allow: res.headers.allow, contentType: res.headers['content-type'], body }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    }),
    undefined,
    `${method} ${url}`,
  );
}

function refusal(reason: string, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason } } });
}

const OPS_SERVES = 'this port serves /healthz, /readyz and /metrics';

/** Sends `method path` to `base` and checks the answer, its one `refused` line and its one count (read from `metricsBase`). */
async function refusedOnce(log: CapturedLog, base: string, metricsBase: string, method: string, path: string, expected: Answer & { reason: string; agent: string | null }): Promise<void> {
  const countBefore = refusalCountIn((await request('GET', `${metricsBase}/metrics`)).body, expected.reason);
  const linesBefore = log.entries.length;
  const answer = await request(method, base + path);
  assert.deepEqual(answer, { status: expected.status, allow: expected.allow, contentType: expected.contentType, body: expected.body }, `${method} ${path}`);
  const lines = log.entries.slice(linesBefore).filter((e) => e.msg === 'refused');
  assert.deepEqual(
    lines.map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method, outcome: l.outcome })),
    [{ reason: expected.reason, status: expected.status, agent: expected.agent, http_method: method, outcome: 'refused' }],
    `${method} ${path}: one refused line`,
  );
  assert.equal(refusalCountIn((await request('GET', `${metricsBase}/metrics`)).body, expected.reason), countBefore + 1, `${method} ${path}: counted once`);
}

const JSON_TYPE = 'application/json';

describe('ops_listen: unknown paths and wrong methods refused as on the main port', { timeout: TEST_TIMEOUT_MS }, () => {
  let app: FastifyInstance;
  let ops: string;
  let main: string;
  const log = captureLog('info');
  before(async () => {
    const config = parseConfig(`log_level: info\nlisten: { host: 127.0.0.1, port: 0 }\nops_listen: { port: 0 }\n${AGENTS}`, { env: {} });
    app = await buildApp(config, { logger: log.logger });
    const addresses = await listenAll(app, config);
    main = addresses.address;
    ops = addresses.opsAddress!;
  });
  after(async () => {
    await app.close();
  });

  test('GET /nope: 404 not_found, the gateway shape (was Fastify\'s "Route GET:/nope not found", no line, no count)', async () => {
    const body = refusal('not_found', `No route for GET /nope: ${OPS_SERVES}.`);
    await refusedOnce(log, ops, ops, 'GET', '/nope', { status: 404, allow: undefined, contentType: JSON_TYPE, body, reason: 'not_found', agent: null });
  });

  test('POST /agents/s/mcp on the ops port: 404 not_found, agent null (it serves no agent)', async () => {
    const body = refusal('not_found', `No route for POST /agents/s/mcp: ${OPS_SERVES}.`);
    await refusedOnce(log, ops, ops, 'POST', '/agents/s/mcp', { status: 404, allow: undefined, contentType: JSON_TYPE, body, reason: 'not_found', agent: null });
  });

  test('POST /healthz, DELETE /readyz, TRACE /metrics: 405 method_not_allowed, Allow: GET, HEAD', async () => {
    for (const [method, path] of [
      ['POST', '/healthz'],
      ['DELETE', '/readyz'],
      ['TRACE', '/metrics'],
    ] as const) {
      const body = refusal('method_not_allowed', `Method not allowed: ${path} accepts GET, HEAD.`);
      await refusedOnce(log, ops, ops, method, path, { status: 405, allow: 'GET, HEAD', contentType: JSON_TYPE, body, reason: 'method_not_allowed', agent: null });
    }
  });

  test('controls: GET and HEAD on the ops paths still answer; the main port still answers /healthz 404', async () => {
    assert.equal((await request('GET', `${ops}/healthz`)).body, '{"status":"ok"}');
    assert.equal((await request('HEAD', `${ops}/readyz`)).status, 200);
    const body = refusal('not_found', 'No route for GET /healthz: MCP endpoints are /agents/<agent>/mcp.');
    await refusedOnce(log, main, ops, 'GET', '/healthz', { status: 404, allow: undefined, contentType: JSON_TYPE, body, reason: 'not_found', agent: null });
  });
});

describe('main port without ops_listen: a wrong method on an ops path is 405, as on an MCP endpoint', { timeout: TEST_TIMEOUT_MS }, () => {
  let app: FastifyInstance;
  let main: string;
  const log = captureLog('info');
  before(async () => {
    const config = parseConfig(`log_level: info\nlisten: { host: 127.0.0.1, port: 0 }\n${AGENTS}`, { env: {} });
    app = await buildApp(config, { logger: log.logger });
    main = (await listenAll(app, config)).address;
  });
  after(async () => {
    await app.close();
  });

  test('POST /healthz: 405 method_not_allowed, Allow: GET, HEAD (was 404 not_found)', async () => {
    const body = refusal('method_not_allowed', 'Method not allowed: /healthz accepts GET, HEAD.');
    await refusedOnce(log, main, main, 'POST', '/healthz', { status: 405, allow: 'GET, HEAD', contentType: JSON_TYPE, body, reason: 'method_not_allowed', agent: null });
  });

  test('controls: GET /nope 404 not_found; PUT on an MCP endpoint 405 with its Allow', async () => {
    await refusedOnce(log, main, main, 'GET', '/nope', {
      status: 404,
      allow: undefined,
      contentType: JSON_TYPE,
      body: refusal('not_found', 'No route for GET /nope: MCP endpoints are /agents/<agent>/mcp.'),
      reason: 'not_found',
      agent: null,
    });
    await refusedOnce(log, main, main, 'PUT', '/agents/s/mcp', {
      status: 405,
      allow: 'POST, GET, DELETE',
      contentType: JSON_TYPE,
      body: refusal('method_not_allowed', 'Method not allowed: MCP endpoints accept POST, GET, DELETE.'),
      reason: 'method_not_allowed',
      agent: 's',
    });
  });
});
