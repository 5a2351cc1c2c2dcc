/**
 * Regression (a hostile new user's trial, F6): log redaction replaced each configured agent
 * header value (8 characters or more) as text across the whole serialized log line. A header
 * that is no secret but whose value also occurs in ordinary log text blanked that text in every
 * line (`user-agent: "adcp-buyer-gateway"` made every `service` `[redacted]`,
 * `x-adcp-features: 'tools/call'` every such `method`), and one holding JSON punctuation
 * (`x-client-meta: '"outcome":"ok"'`) took JSON syntax out of the exchange line, which then no
 * longer parsed (a log shipper drops it). Now redaction replaces secrets inside string values
 * only (observability/log-scrub.ts): names and JSON syntax are never touched, nor a value that
 * is wholly one of the gateway's own fixed texts (log-vocabulary.ts) or an agent name, nor
 * pino's `time`.
 *
 * Input: a real gateway (src/app.ts) with the gateway's logger (`createLogger`, level trace)
 * and a real seller; agents with the trial's headers, with headers equal to a field name, to
 * the gateway's fixed values (`exchange`, `unknown_agent`, `upstream_not_mcp`, `notification`,
 * today's date) and to the agent's own name, and with JSON syntax (`{"level":30,`,
 * `null,"duration_ms"`) and a real credential holding `"` and `\`; a tool call, a
 * notification, a refused request, and a call whose tool name (the host's) and answer's SSE
 * event name (the seller's) carry the credential; a line whose field holds the credential
 * JSON-encoded.
 * Expected: every line is valid JSON; the exchange and refusal lines are exact, their names,
 * `service`, `agent`, `method`, `msg`, `outcome`, `reason`, `rpc_kind` and `time` as the
 * gateway writes them; the credential is `[redacted]` inside the host's and the seller's
 * strings and in the JSON-encoded one, and no line holds it raw, JSON-escaped or escaped twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger, REDACTED } from '../../src/observability/logger.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { lineSink } from '../helpers/capture-log.js';
import { EXCHANGE_LINE_FIELDS } from '../helpers/exchange-line-fields.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
/** A real secret: the credential of an Authorization header, with JSON's `"` and `\` in it. */
const CREDENTIAL = 'tok"en\\secret-123';
const TODAY = new Date().toISOString().slice(0, 10);

let seller: RawSeller;
let app: FastifyInstance;
let base: string;
const { lines, sink } = lineSink();
const logger = createLogger('trace', { destination: sink });

before(async () => {
  seller = await startRawSeller((req, res) => {
    const message = JSON.parse(req.body.toString('utf8')) as { id?: number };
    if (message.id === undefined) return void res.writeHead(202).end();
    if (req.url === '/named') {
      // The answer in an SSE event the seller named (the exchange line's `answer_event`).
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(`event: ev ${CREDENTIAL}\ndata: ${toolResponse(message.id, { content: [] })}\n\n`);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(message.id, { content: [] }));
  });
  const origin = new URL(seller.url).origin;
  const yaml = [
    'log_level: trace',
    'agents:',
    '  trial:',
    `    url: ${origin}/json`,
    '    headers:',
    '      user-agent: "adcp-buyer-gateway"',
    "      x-adcp-features: 'tools/call'",
    `      x-client-meta: '"outcome":"ok"'`,
    '  fixed-values:',
    `    url: ${origin}/json`,
    '    headers:',
    "      x-agent: 'fixed-values'",
    "      x-field: 'bytes_from_seller'",
    "      x-msg: 'exchange'",
    "      x-refusal: 'unknown_agent'",
    "      x-reason: 'upstream_not_mcp'",
    "      x-kind: 'notification'",
    `      x-date: '${TODAY}'`,
    '  punct:',
    `    url: ${origin}/named`,
    '    headers:',
    `      authorization: 'Bearer ${CREDENTIAL}'`,
    `      x-open: '{"level":30,'`,
    `      x-tail: 'null,"duration_ms"'`,
    '',
  ].join('\n');
  app = await buildApp(parseConfig(yaml, { env: {}, source: 'test.yaml' }), { logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  let left = 4;
  const ended = withTimeout(new Promise<void>((resolve) => app.gateway.onExchangeEnd(() => void (--left === 0 && resolve()))), 10_000, 'exchanges');
  assert.equal((await rawPost(`${base}/agents/trial/mcp`, toolCall(1, 'get_products'))).status, 200);
  assert.equal((await rawPost(`${base}/agents/fixed-values/mcp`, toolCall(2, 'get_products'))).status, 200);
  assert.equal((await rawPost(`${base}/agents/fixed-values/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  assert.equal((await rawPost(`${base}/agents/nope/mcp`, toolCall(3, 'get_products'))).status, 404);
  await rawPost(`${base}/agents/punct/mcp`, toolCall(4, `find ${CREDENTIAL} now`));
  await ended;
  logger.info({ note: JSON.stringify({ auth: `Bearer ${CREDENTIAL}` }) }, 'a field holding the credential JSON-encoded');
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
});
after(async () => {
  await withTimeout(app.close(), 5_000, 'close');
  await seller.close();
});

/** Every line written, as text. */
function textLines(): string[] {
  return lines.join('').split('\n').filter((l) => l !== '');
}

/** The lines parsed; a line that does not parse fails the test, naming it. */
function parsed(): Array<Record<string, unknown>> {
  return textLines().map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return assert.fail(`not JSON: ${l}`);
    }
  });
}

/** A line without its `time` and `duration_ms` (checked apart). */
function stable(line: Record<string, unknown> | undefined): Record<string, unknown> {
  assert.ok(line, 'logged');
  const { time, duration_ms: duration, ...rest } = line;
  assert.match(String(time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  if (duration !== undefined) assert.equal(typeof duration, 'number');
  return rest;
}

const exchangeOf = (agent: string, rpcKind = 'request'): Record<string, unknown> | undefined =>
  parsed().find((l) => l.msg === 'exchange' && l.agent === agent && l.rpc_kind === rpcKind);

const FIXED = { level: 30, service: 'adcp-buyer-gateway', http_method: 'POST', status: 200, upstream_status: 200, reason: null };

describe('log redaction never corrupts a line', () => {
  test('every line the gateway wrote is valid JSON', OPTIONS, () => {
    const all = textLines();
    assert.ok(all.length >= 6, `${all.length} lines`);
    assert.deepEqual(all.filter((l) => { try { JSON.parse(l); return false; } catch { return true; } }), []);
  });

  test("the trial's headers (`adcp-buyer-gateway`, `tools/call`, `\"outcome\":\"ok\"`): the exchange line exact", OPTIONS, () => {
    const bytes = Buffer.byteLength(toolResponse(1, { content: [] }));
    assert.deepEqual(stable(exchangeOf('trial')), {
      ...FIXED, agent: 'trial', method: 'tools/call', rpc_kind: 'request', tool: 'get_products', rpc_id: 1,
      bytes_from_seller: bytes, bytes_decoded: bytes, bytes_to_host: bytes, bytes_saved: 0, outcome: 'ok', msg: 'exchange',
    });
  });

  test('header values equal to the agent name, a field name, a msg, a reason, a kind, the date: names and fixed values unchanged', OPTIONS, () => {
    const call = exchangeOf('fixed-values');
    assert.deepEqual(Object.keys(call ?? {}), ['level', 'time', 'service', ...EXCHANGE_LINE_FIELDS, 'msg']);
    assert.equal(stable(call).agent, 'fixed-values');
    const notification = stable(exchangeOf('fixed-values', 'notification'));
    assert.deepEqual([notification.method, notification.rpc_kind, notification.status, notification.msg], ['notifications/initialized', 'notification', 202, 'exchange']);
    const refused = stable(parsed().find((l) => l.msg === 'refused'));
    assert.deepEqual(refused, { level: 30, service: 'adcp-buyer-gateway', agent: 'nope', http_method: 'POST', status: 404, outcome: 'refused', reason: 'unknown_agent', msg: 'refused' });
  });

  test("a credential with `\"` and `\\`: replaced inside the host's tool name, the seller's event name and a JSON-encoded field", OPTIONS, () => {
    const punct = stable(exchangeOf('punct'));
    assert.deepEqual([punct.tool, punct.answer_event, punct.reason, punct.outcome], [`find ${REDACTED} now`, `ev ${REDACTED}`, 'upstream_not_mcp', 'local_error']);
    assert.equal(parsed().find((l) => l.msg === 'a field holding the credential JSON-encoded')?.note, `{"auth":"${REDACTED}"}`);
  });

  test('no line holds the credential, raw, JSON-escaped or escaped twice, nor a configured value inside a string', OPTIONS, () => {
    const once = JSON.stringify(CREDENTIAL).slice(1, -1);
    const twice = JSON.stringify(once).slice(1, -1);
    for (const form of [CREDENTIAL, once, twice]) assert.deepEqual(textLines().filter((l) => l.includes(form)), [], form);
    const strings: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') strings.push(v);
      else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) walk(x);
    };
    parsed().forEach(walk);
    for (const value of ['{"level":30,', 'null,"duration_ms"', '"outcome":"ok"']) assert.deepEqual(strings.filter((s) => s.includes(value)), [], value);
  });
});
