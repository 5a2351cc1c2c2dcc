/**
 * Regression: during a graceful shutdown, requests on connections opened before it got
 * Fastify's own 503, not a JSON-RPC error.
 *
 * Reported failure (a new user's trial, F2): after SIGTERM, a request on an idle keep-alive
 * connection, one half sent when the signal came and one pipelined behind a busy request each
 * got `HTTP/1.1 503 Service Unavailable` with Fastify's body
 * `{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}` (an MCP
 * client cannot read it as a JSON-RPC error), Fastify's log line "request aborted - refusing
 * to accept new requests as server is closing", no `refused` line and no count in
 * `adcp_gateway_refusals_total`; `/readyz` on the main listener got that body too, never the
 * documented `{"status":"not_ready","reason":"draining"}`. Cause: Fastify's
 * `return503OnClosing` (src/app.ts); now off, and the routes refuse such requests
 * themselves (src/routing/draining.ts): HTTP 503, `Connection: close`, a JSON-RPC error for
 * the request's id (-32027, reason `draining`: docs/errors.md), one `refused` line and one
 * count each, the seller not contacted.
 *
 * Input: a gateway (ops endpoints on its main listener) before a real seller that holds one
 * request (id 10) until the test lets it go. Before the shutdown: a keep-alive connection that
 * was served once and is idle, one that sent nothing, one that sent 40 bytes of a request
 * head, one whose request (id 10) waits at the seller, and two kept for `/readyz` and
 * `/healthz`. Then the app's shutdown path as src/cli.ts runs it on SIGTERM
 * (`setReady(false)`, `app.close()`), and a request on each (id 10's connection pipelines
 * id 14 behind it; then the seller answers id 10, with `Connection: close`, so id 14 is not
 * processed). Expectation: the exact answers below; the close then completes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { openRawConnection as connect, parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { beginShutdown, drainingAnswer, startHoldingSeller, withoutDate } from '../helpers/draining.js';

/** An ops endpoint's exact answer while draining (Fastify's own framing of a JSON object), `date` left out. */
function opsAnswer(status: string, body: string): string {
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nx-content-type-options: nosniff\r\ncache-control: no-store\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const RESULT = { content: [{ type: 'text', text: 'slow but complete' }] };

async function refusalCount(gw: ObservedGateway, reason: string): Promise<number> {
  return refusalCountIn(await gw.app.gateway.metrics.render(), reason);
}

describe('requests on connections opened before a graceful shutdown', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: RawSeller;
  let gw: ObservedGateway;
  /** What each connection received, to its close. */
  const got = new Map<string, string>();
  let refusalsBefore = 0;
  let linesBefore = 0;

  before(async () => {
    const holding = await startHoldingSeller(10, RESULT);
    seller = holding.seller;
    const { held: slowAtSeller, release: releaseSlow } = holding;
    gw = await startObservedGateway(agentsYaml({ s: seller.url }));
    const port = Number(new URL(gw.baseUrl).port);

    const idle = await connect(port);
    idle.socket.write(toolCallRequest(1));
    await withTimeout(idle.heads(1), 5_000, 'the idle connection served once');
    const fresh = await connect(port);
    const half = await connect(port);
    const request13 = toolCallRequest(13);
    half.socket.write(request13.slice(0, 40));
    const busy = await connect(port);
    busy.socket.write(toolCallRequest(10));
    await withTimeout(slowAtSeller, 5_000, 'id 10 at the seller');
    const ready = await connect(port);
    ready.socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await withTimeout(ready.heads(1), 5_000, 'the first /readyz');
    assert.match(ready.text(), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ready"\}$/);
    const health = await connect(port);
    // Give the server time to see every connection and the half head (the trial waited 0.3 s).
    await new Promise((r) => setTimeout(r, 100));
    refusalsBefore = await refusalCount(gw, 'draining');
    linesBefore = gw.lines.length;

    // The shutdown as src/cli.ts starts it on SIGTERM: not ready, then the close.
    const { closed } = await beginShutdown(gw);

    idle.socket.write(toolCallRequest(11));
    fresh.socket.write('GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n');
    half.socket.write(request13.slice(40));
    ready.socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    health.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    busy.socket.write(toolCallRequest(14));
    const early = ['idle', 'fresh', 'half', 'ready', 'health'] as const;
    const earlyConns = [idle, fresh, half, ready, health];
    const answered = await withTimeout(Promise.all(earlyConns.map((c) => c.closed)), 5_000, 'the answers on the idle, fresh, half, ready and health connections');
    early.forEach((name, k) => got.set(name, answered[k]!));
    releaseSlow();
    got.set('busy', await withTimeout(busy.closed, 5_000, 'the answers on the busy connection'));
    await withTimeout(closed, 5_000, 'the close');
  });

  after(async () => {
    await gw?.close().catch(() => {});
    await seller?.close();
  });

  test('an idle keep-alive connection: 503 draining for its id, Connection: close (was Fastify\'s 503 body)', () => {
    const { responses, rest } = parseResponses(Buffer.from(got.get('idle')!, 'latin1'), 2);
    assert.equal(responses[0]!.status, 200, 'the request before the shutdown');
    const second = got.get('idle')!.slice(got.get('idle')!.indexOf('HTTP/1.1', 1));
    assert.equal(withoutDate(second), drainingAnswer(11));
    assert.equal(rest, '');
  });

  test('a connection that had sent nothing: a GET gets 503 draining, id null', () => {
    assert.equal(withoutDate(got.get('fresh')!), drainingAnswer(null));
  });

  test('a request half sent when the shutdown began: 503 draining for its id', () => {
    assert.equal(withoutDate(got.get('half')!), drainingAnswer(13));
  });

  // The busy one's answer is written while draining, so it says `Connection: close` and the
  // request pipelined behind it is not processed: the host sends it again (RFC 9112 §9.3.2;
  // a hostile operator's trial 51, finding 2: test/regressions/answer-during-drain-invites-reuse.test.ts).
  test('a request pipelined behind a busy one: the busy one is answered with Connection: close, the other not processed', () => {
    const text = got.get('busy')!;
    const { responses, rest } = parseResponses(Buffer.from(text, 'latin1'), 1);
    assert.equal(responses[0]!.status, 200);
    assert.equal(responses[0]!.headers.connection, 'close');
    assert.deepEqual(JSON.parse(responses[0]!.body), { jsonrpc: '2.0', id: 10, result: RESULT });
    assert.equal(rest, '');
  });

  test('each refusal: one refused line, one count; no Fastify line; the seller got none of them', async () => {
    const lines = gw.lines.slice(linesBefore);
    const refused = lines
      .filter((l: LogLine) => l.msg === 'refused')
      .map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method, outcome: l.outcome }))
      .sort((a, b) => String(a.http_method).localeCompare(String(b.http_method)));
    assert.deepEqual(refused, [
      { reason: 'draining', status: 503, agent: 's', http_method: 'GET', outcome: 'refused' },
      { reason: 'draining', status: 503, agent: 's', http_method: 'POST', outcome: 'refused' },
      { reason: 'draining', status: 503, agent: 's', http_method: 'POST', outcome: 'refused' },
    ]);
    assert.deepEqual(
      lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('refusing to accept new requests')),
      [],
    );
    assert.equal(await refusalCount(gw, 'draining'), refusalsBefore + 3);
    assert.deepEqual(
      seller.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { id: number }).id),
      [1, 10],
    );
  });

  test('/readyz on the main listener: 503 {"status":"not_ready","reason":"draining"}, Connection: close', () => {
    const text = got.get('ready')!;
    assert.equal(withoutDate(text.slice(text.indexOf('HTTP/1.1', 1))), opsAnswer('503 Service Unavailable', '{"status":"not_ready","reason":"draining"}'));
  });

  test('/healthz on the main listener: still 200 {"status":"ok"} (the process lives), Connection: close', () => {
    assert.equal(withoutDate(got.get('health')!), opsAnswer('200 OK', '{"status":"ok"}'));
  });
});
