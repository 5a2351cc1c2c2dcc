/**
 * Secrets never reach a log: the host's Authorization, Cookie and Mcp-Session-Id, an agent
 * header from `${SELLER_TOKEN}`, the resume secret. Captures every line the real logger
 * writes (level trace) while real exchanges go through the gateway (an unreachable seller
 * included: its exchange line is its only line) and a real undici connection error logged
 * through it, and checks the exchange line's fields and byte counts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { configSecrets, createLogger, MIN_SCRUBBED_LENGTH, REDACTED, serializeError } from '../../src/observability/logger.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { lineSink } from '../helpers/capture-log.js';
import { EXCHANGE_LINE_FIELDS } from '../helpers/exchange-line-fields.js';

const HOST_AUTH = 'Bearer host-secret-4f1c9a';
const HOST_COOKIE = 'sid=cookie-secret-77e2b0';
const HOST_SESSION = 'session-secret-0d93c1';
const SELLER_TOKEN = 'seller-token-secret-a8b3e5';
const SELLER_KEY = 'seller-api-key-secret-51de02';
const RESUME_SECRET = 'resume-secret-for-the-log-test-9c2e4f77';
const SECRETS = [HOST_AUTH, 'host-secret-4f1c9a', HOST_COOKIE, 'cookie-secret-77e2b0', HOST_SESSION, SELLER_TOKEN, SELLER_KEY, RESUME_SECRET];

const EXCHANGE_FIELDS = EXCHANGE_LINE_FIELDS;

let seller: RawSeller;
let app: FastifyInstance;
let base: string;
const { lines, sink } = lineSink();
const data = { products: Array.from({ length: 10 }, (_, i) => ({ product_id: `p${i}` })) };
const sellerBody = toolResponse(1, { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data });

before(async () => {
  seller = await startRawSeller((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': HOST_SESSION, 'set-cookie': HOST_COOKIE });
    res.end(sellerBody);
  });
  const yaml = [
    'log_level: trace',
    'resume:',
    '  secret: ${RESUME_SECRET}',
    'agents:',
    '  s:',
    `    url: ${seller.url}`,
    '    headers: { authorization: "Bearer ${SELLER_TOKEN}", x-seller-key: "${SELLER_KEY}" }',
    '  plain:',
    `    url: ${seller.url}`,
    '  dead:',
    '    url: http://127.0.0.1:9/mcp',
    '    headers: { authorization: "Bearer ${SELLER_TOKEN}" }',
    '',
  ].join('\n');
  const config = parseConfig(yaml, { env: { SELLER_TOKEN, SELLER_KEY, RESUME_SECRET }, source: 'test.yaml' });
  const logger = createLogger('trace', { destination: sink });
  app = await buildApp(config, { logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  // A careless config dump and an error carrying request headers and options: what a future log call might do.
  logger.info({ config, agent: config.agents.get('s') }, 'config dump');
  const err = Object.assign(new Error('upstream failed', { cause: new Error('inner') }), {
    headers: { authorization: `Bearer ${SELLER_TOKEN}` },
    options: { headers: { 'x-seller-key': SELLER_KEY } },
  });
  logger.warn({ err }, 'error with request headers');
  logger.warn({ note: `value ${SELLER_KEY} somewhere` }, 'secret in free text');
  // A real connection error (socket fields and all), as a warning about a seller would carry it.
  const refused: unknown = await request('http://127.0.0.1:9/mcp', { headers: { authorization: `Bearer ${SELLER_TOKEN}` } }).then(
    () => assert.fail('port 9 answered'),
    (e: unknown) => e,
  );
  logger.warn({ err: refused }, 'a real connection error');
});
after(async () => {
  await withTimeout(app.close(), 5_000, 'close');
  await seller.close();
});

const HOST_HEADERS = { authorization: HOST_AUTH, cookie: HOST_COOKIE, 'mcp-session-id': HOST_SESSION, 'mcp-protocol-version': '2025-06-18' };

function exchangesEnded(n: number): Promise<void> {
  let left = n;
  return withTimeout(
    new Promise<void>((resolve) =>
      app.gateway.onExchangeEnd(() => {
        if (--left === 0) resolve();
      }),
    ),
    10_000,
    'exchanges',
  );
}

function logged(): Array<Record<string, unknown>> {
  return lines.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('log redaction', () => {
  let deduped: Awaited<ReturnType<typeof rawPost>>;

  before(async () => {
    const ended = exchangesEnded(3); // the refused resume never becomes an exchange
    deduped = await rawPost(`${base}/agents/s/mcp`, toolCall(1, 'list_products'), HOST_HEADERS);
    await rawPost(`${base}/agents/plain/mcp`, toolCall(2, 'list_products'), HOST_HEADERS);
    await rawPost(`${base}/agents/dead/mcp`, toolCall(3, 'list_products'), HOST_HEADERS);
    const bogus = await fetch(`${base}/agents/s/mcp`, { headers: { ...HOST_HEADERS, accept: 'text/event-stream', 'last-event-id': `v1.${RESUME_SECRET}` } });
    await bogus.text();
    await ended;
  });

  test('the exchanges ran with the secrets in play', () => {
    assert.equal(deduped.status, 200);
    const [toS, toPlain] = seller.requests;
    assert.equal(toS?.headers.authorization, `Bearer ${SELLER_TOKEN}`, 'config header replaced the host one');
    assert.equal(toS?.headers['x-seller-key'], SELLER_KEY);
    assert.equal(toPlain?.headers.authorization, HOST_AUTH, 'host header forwarded');
    assert.equal(toPlain?.headers.cookie, HOST_COOKIE);
    assert.equal(toPlain?.headers['mcp-session-id'], HOST_SESSION);
  });

  test('an unreachable seller writes its exchange line only (no reply-from "response errored" warning)', () => {
    const all = logged();
    assert.deepEqual(all.filter((l) => l.msg === 'response errored'), []);
    assert.deepEqual(all.filter((l) => l.agent === 'dead').map((l) => l.msg), ['exchange']);
  });

  test('a real connection error is logged with its allowlisted fields only', () => {
    const warn = logged().find((l) => l.msg === 'a real connection error');
    assert.ok(warn, 'logged');
    assert.deepEqual(Object.keys(warn.err as object).sort(), ['address', 'code', 'errno', 'message', 'port', 'stack', 'syscall', 'type']);
  });

  test('no secret appears anywhere in the captured log', () => {
    const text = lines.join('');
    assert.ok(text.length > 0);
    for (const secret of SECRETS) assert.equal(text.includes(secret), false, `found ${secret} in the log`);
  });

  test('logged objects keep their shape, with secrets replaced', () => {
    const all = logged();
    const dump = all.find((l) => l.msg === 'config dump') as { config: { resume: { secret: string } } };
    assert.equal(dump.config.resume.secret, REDACTED);
    const withHeaders = all.find((l) => l.msg === 'error with request headers') as { err: Record<string, unknown> };
    assert.deepEqual(Object.keys(withHeaders.err).sort(), ['cause', 'message', 'stack', 'type']);
    assert.equal((withHeaders.err.cause as { message: string }).message, 'inner');
    assert.equal((all.find((l) => l.msg === 'secret in free text') as { note: string }).note, `value ${REDACTED} somewhere`);
  });

  test('the exchange line has exactly its fields, with exact byte counts', () => {
    const exchanges = logged().filter((l) => l.msg === 'exchange');
    assert.equal(exchanges.length, 3, 'the refused resume is answered before an exchange exists');
    for (const line of exchanges) {
      assert.deepEqual(
        Object.keys(line).filter((k) => !['level', 'time', 'service', 'msg'].includes(k)),
        // The unreachable seller's line also names its transport failure (trial 50, finding 1).
        line.agent === 'dead' ? [...EXCHANGE_FIELDS, 'upstream_error'] : EXCHANGE_FIELDS,
      );
    }
    const [s, , dead] = exchanges;
    const { duration_ms, ...rest } = s as Record<string, unknown>;
    assert.equal(typeof duration_ms, 'number');
    assert.deepEqual(rest, {
      level: 30,
      time: rest.time,
      service: 'adcp-buyer-gateway',
      msg: 'exchange',
      agent: 's',
      http_method: 'POST',
      method: 'tools/call',
      rpc_kind: 'request',
      tool: 'list_products',
      rpc_id: 1,
      status: 200,
      upstream_status: 200,
      bytes_from_seller: Buffer.byteLength(sellerBody),
      bytes_decoded: Buffer.byteLength(sellerBody),
      bytes_to_host: deduped.bytes,
      bytes_saved: Buffer.byteLength(sellerBody) - deduped.bytes,
      outcome: 'rewritten',
      reason: null,
    });
    assert.ok(deduped.bytes < Buffer.byteLength(sellerBody));
    assert.equal(dead?.agent, 'dead');
    assert.equal(dead?.outcome, 'local_error');
    assert.equal(dead?.reason, 'upstream_unreachable');
    assert.equal(dead?.upstream_status, null);
    assert.equal(dead?.bytes_from_seller, 0);
    assert.equal(dead?.upstream_error, 'ECONNREFUSED');
  });
});

describe('logger helpers', () => {
  test('serializeError keeps an allowlist of fields, causes and aggregate errors', () => {
    const inner = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', port: 9, socket: { secret: 'x' } });
    const agg = new AggregateError([inner], 'all failed');
    const out = serializeError(Object.assign(new Error('outer', { cause: agg }), { headers: { authorization: 'x' }, body: 'y' })) as Record<string, unknown>;
    assert.deepEqual(Object.keys(out).sort(), ['cause', 'message', 'stack', 'type']);
    const cause = out.cause as Record<string, unknown>;
    assert.equal(cause.type, 'AggregateError');
    const [first] = cause.errors as Array<Record<string, unknown>>;
    assert.deepEqual({ ...first, stack: undefined }, { type: 'Error', message: 'connect ECONNREFUSED', stack: undefined, code: 'ECONNREFUSED', port: 9 });
    assert.deepEqual(serializeError('plain'), { type: 'string', message: 'plain' });
  });

  test('configSecrets: header values, the credential after a scheme, URL queries, the resume secret; short values left out', () => {
    const config = parseConfig(
      [
        'resume: { secret: "0123456789abcdef0123456789abcdef" }',
        'agents:',
        '  a:',
        '    url: "http://127.0.0.1:9/mcp?key=query-secret-1"',
        '    headers: { authorization: "Bearer tok\\"en-123", x-v: "2" }',
        '',
      ].join('\n'),
      { env: {} },
    );
    const secrets = configSecrets(config);
    for (const s of ['Bearer tok"en-123', 'Bearer tok\\"en-123', 'tok"en-123', 'key=query-secret-1', '0123456789abcdef0123456789abcdef']) {
      assert.ok(secrets.includes(s), s);
    }
    assert.ok(!secrets.includes('2'));
    assert.ok(secrets.every((s) => s.length >= MIN_SCRUBBED_LENGTH));
  });
});
