/**
 * Regression (a hostile trial, Finding 6): during a graceful shutdown, requests a host
 * pipelined (in one write, on one connection) behind a request the gateway refused 503
 * `draining` were each logged `refused` and counted in `adcp_gateway_refusals_total`, but the
 * host received only the first 503: it carries `Connection: close`, and Node's HTTP server
 * closes the connection once that answer is written, never writing the answers queued behind
 * it. The logs and the metric claimed answers that were never sent.
 *
 * Now a `draining` refusal is logged and counted once Node has written it (its response's
 * 'finish'); one that never leaves its queue is neither (src/routing/draining.ts). The host
 * gets what it got before: the first answer, then the close (RFC 9112 §9.6: after a response
 * with `close` the server processes no further request; §9.3.2: the host retries those).
 *
 * Input: a gateway (ops endpoints on its main listener) before a real seller that holds one
 * request (id 10) until the test lets it go. Before the shutdown: a keep-alive connection
 * served once and idle, one whose request (id 10) waits at the seller, one served `/readyz`
 * once. Then the shutdown as src/cli.ts runs it on SIGTERM, and in one write each: on the idle
 * connection POSTs 21, 22 and a GET; on the busy one POSTs 14 and 15 (then the seller answers
 * 10); on the ops one `GET /readyz` and POST 31.
 * Expected: on the wire, the first answer only (503 for 21; 200 for 10, with `Connection:
 * close` as it is written while draining; the /readyz 503), then the close; one `refused`
 * line (21), one count; the seller got none of them. Before the fix: six `refused` lines and six counts for the same wire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { openRawConnection, parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { beginShutdown, drainingAnswer, startHoldingSeller, withoutDate } from '../helpers/draining.js';

const RESULT = { content: [{ type: 'text', text: 'answered before the shutdown' }] };
const READYZ = 'GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
const GET_STREAM = 'GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n';
const DRAINING_READYZ_BODY = '{"status":"not_ready","reason":"draining"}';

describe('requests pipelined behind a draining refusal', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: RawSeller;
  let gw: ObservedGateway;
  /** What each connection received after the shutdown began, to its close. */
  const got = new Map<string, string>();
  let refusalsBefore = 0;
  let linesBefore = 0;

  const refusals = async (): Promise<number> => refusalCountIn(await gw.app.gateway.metrics.render(), 'draining');

  before(async () => {
    const holding = await startHoldingSeller(10, RESULT);
    seller = holding.seller;
    const { held: slowAtSeller, release: releaseSlow } = holding;
    gw = await startObservedGateway(agentsYaml({ s: seller.url }));
    const port = Number(new URL(gw.baseUrl).port);

    const idle = await openRawConnection(port);
    idle.socket.write(toolCallRequest(1));
    await withTimeout(idle.heads(1), 5_000, 'the idle connection served once');
    const ops = await openRawConnection(port);
    ops.socket.write(READYZ);
    await withTimeout(ops.heads(1), 5_000, 'the first /readyz');
    const busy = await openRawConnection(port);
    busy.socket.write(toolCallRequest(10));
    await withTimeout(slowAtSeller, 5_000, 'id 10 at the seller');
    const idleBefore = idle.text().length;
    const opsBefore = ops.text().length;
    refusalsBefore = await refusals();
    linesBefore = gw.lines.length;

    const { closed } = await beginShutdown(gw);
    idle.socket.write(toolCallRequest(21) + toolCallRequest(22) + GET_STREAM);
    busy.socket.write(toolCallRequest(14) + toolCallRequest(15));
    ops.socket.write(READYZ + toolCallRequest(31));
    const [idleText, opsText] = await withTimeout(Promise.all([idle.closed, ops.closed]), 5_000, 'the close of the idle and ops connections');
    got.set('idle', idleText.slice(idleBefore));
    got.set('ops', opsText.slice(opsBefore));
    releaseSlow();
    got.set('busy', await withTimeout(busy.closed, 5_000, 'the close of the busy connection'));
    await withTimeout(closed, 5_000, 'the close');
  });

  after(async () => {
    await gw?.close().catch(() => {});
    await seller?.close();
  });

  test('the idle connection: the 503 for the first request (21), then the close; nothing for 22 or the GET', () => {
    assert.equal(withoutDate(got.get('idle')!), drainingAnswer(21));
  });

  // The answer to 10 is written while draining: `Connection: close` (a hostile operator's trial
  // 51, finding 2: test/regressions/answer-during-drain-invites-reuse.test.ts), so 14 and 15 are not processed.
  test('the busy connection: the answer to 10 (Connection: close), then the close; nothing for 14 or 15', () => {
    const text = got.get('busy')!;
    const { responses, rest } = parseResponses(Buffer.from(text, 'latin1'), 1);
    assert.deepEqual(
      { status: responses[0]!.status, connection: responses[0]!.headers.connection, body: JSON.parse(responses[0]!.body) as unknown },
      { status: 200, connection: 'close', body: { jsonrpc: '2.0', id: 10, result: RESULT } },
    );
    assert.equal(rest, '');
  });

  test('the ops connection: /readyz answers 503 draining (Connection: close), then the close; nothing for 31', () => {
    const { responses, rest } = parseResponses(Buffer.from(got.get('ops')!, 'latin1'), 1);
    assert.deepEqual({ status: responses[0]!.status, connection: responses[0]!.headers.connection, body: responses[0]!.body }, { status: 503, connection: 'close', body: DRAINING_READYZ_BODY });
    assert.equal(rest, '');
  });

  test('one refused line per 503 on the wire (21): none for 22, the GET, 14, 15 or 31', () => {
    const refused = gw.lines
      .slice(linesBefore)
      .filter((l) => l.msg === 'refused')
      .map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method }));
    assert.deepEqual(refused, [{ reason: 'draining', status: 503, agent: 's', http_method: 'POST' }]);
  });

  test('one count per 503 on the wire: one; the seller got none of the requests', async () => {
    assert.equal(await refusals(), refusalsBefore + 1);
    assert.deepEqual(
      seller.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { id: number }).id),
      [1, 10],
    );
  });
});
