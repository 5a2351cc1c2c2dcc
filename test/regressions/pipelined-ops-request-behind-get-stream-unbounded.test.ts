/**
 * Regression (a carried defect, "ops endpoints queued behind a GET stream do not bound it"):
 * an ops request (`GET /healthz`, `/readyz`, `/metrics` on the main listener) pipelined behind
 * a standalone GET stream (MCP Streamable HTTP: the GET that opens a stream for the server's
 * messages) on one HTTP/1.1 connection waited as long as the stream lived, with no bound: the
 * stream ends only when the host closes it, so the ops answer was never sent. An MCP answer
 * (a call's, a refusal) queued so already bounded the stream
 * (test/regressions/pipelined-call-behind-get-stream-unbounded.test.ts); an ops answer did not.
 *
 * Now an ops answer queued behind such a stream gives it the same bound: at its agent's
 * sse_deadline_ms from its start the stream ends plainly (outcome `resumable_end`, reason
 * `sse_deadline`; the host's client reconnects with its last event id), then the ops answer
 * goes out, and the connection stays open (src/ops/routes.ts through
 * src/errors/earlier-answers.ts boundAnswersAhead).
 *
 * Input: a real seller (MCP TypeScript SDK 1.x server, stateful, with its standalone GET
 * stream) -> gateway (agent `s`, sse_deadline_ms 500, ops on the main listener) -> raw host
 * (node:net) on 127.0.0.1, MCP 2025-06-18. The host initializes a session, opens the GET
 * stream on a raw connection and, in the same write, `GET /healthz`, `GET /readyz` or
 * `GET /metrics`; or `GET /healthz` once the seller's `notifications/tools/list_changed` has
 * come down the stream.
 * Expected: on the wire, the GET's 200 SSE answer (the notification in it, when sent), its
 * chunked end, then the ops answer (the exact `{"status":"ok"}` / `{"status":"ready"}` answer;
 * the Prometheus text for /metrics), nothing after; the connection still open (a second
 * `GET /healthz` on it is answered); the GET's exchange line says `resumable_end`,
 * `sse_deadline`, status 200.
 * Before the fix: the ops answer never came (the hang guard fired).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { startSdk1Seller, type Sdk1Seller } from '../support/sdk1/seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { assertStreamMessages, notificationReaches, openRawConnection, responsesWhenWhole, type MessageCopies, type Parsed } from '../helpers/http-wire.js';
import { rawSession, sseMessages } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SSE_DEADLINE_MS = 500;
const VERSION = '2025-06-18';
const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

const stack = useSellerAndGateway<Sdk1Seller, ObservedGateway>(startSdk1Seller, (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_deadline_ms: SSE_DEADLINE_MS } })));
const gw = (): ObservedGateway => stack.gateway;

/** `GET <path>` as raw HTTP/1.1 text. */
function opsRequest(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
}

/** A JSON ops answer as the wire parser reads it (Fastify's framing of an object), `date` and `keep-alive` left out. */
function jsonOpsAnswer(body: string): Parsed {
  return { status: 200, headers: { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'keep-alive' }, body };
}

/** `answer` without its `date` and `keep-alive` headers (they vary). */
function withoutVarying(answer: Parsed): Parsed {
  const { date: _date, 'keep-alive': _keepAlive, ...headers } = answer.headers;
  return { ...answer, headers };
}

/** A new session's standalone GET stream, as raw HTTP/1.1 text. */
async function getStreamRequest(): Promise<string> {
  const { sessionId } = await rawSession(gw().agentUrl('s'), VERSION);
  assert.ok(sessionId !== undefined, 'the seller gave a session id');
  return `GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-session-id: ${sessionId}\r\nmcp-protocol-version: ${VERSION}\r\n\r\n`;
}

/** The GET stream's `exchange` line written after `linesBefore`. */
function getStreamLine(linesBefore: number): Promise<LogLine> {
  return gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && l.http_method === 'GET' && gw().lines.indexOf(l) >= linesBefore, 10_000);
}

/** Checks the GET's answer: 200 SSE, chunked, `messages` in it (parseResponses read its end). */
function assertStream(stream: Parsed, messages: unknown[] | MessageCopies): void {
  assert.deepEqual({ status: stream.status, type: stream.headers['content-type'], chunked: stream.headers['transfer-encoding'] }, { status: 200, type: 'text/event-stream', chunked: 'chunked' });
  assertStreamMessages(sseMessages(stream.body), messages);
}

/**
 * Writes the GET stream and `GET <path>` on one connection (in one write, or the ops request
 * once `notified` the stream carries a notification), then checks the stream, ended at its
 * deadline, then `check` on the ops answer, nothing after; then that the connection still
 * answers a `GET /healthz`.
 */
async function streamThenOps(path: string, check: (answer: Parsed) => void, notified = false): Promise<void> {
  const get = await getStreamRequest();
  const linesBefore = gw().lines.length;
  const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
  let sent = 0;
  try {
    if (notified) {
      conn.socket.write(get);
      await withTimeout(conn.heads(1), 5_000, 'the GET stream head');
      sent = await notificationReaches(conn, () => stack.seller.notifyToolListChanged());
      conn.socket.write(opsRequest(path));
    } else {
      conn.socket.write(get + opsRequest(path));
    }
    const two = await withTimeout(responsesWhenWhole(conn, 2), 10_000, `the ${path} answer (it waited behind the GET stream)`);
    assertStream(two.responses[0]!, notified ? { each: LIST_CHANGED, atMost: sent } : []);
    check(two.responses[1]!);
    assert.equal(two.rest, '', `nothing after the ${path} answer`);
    const line = await getStreamLine(linesBefore);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status, rpc_kind: line.rpc_kind }, { outcome: 'resumable_end', reason: 'sse_deadline', status: 200, rpc_kind: 'none' });

    conn.socket.write(opsRequest('/healthz'));
    const three = await withTimeout(responsesWhenWhole(conn, 3), 5_000, 'the second /healthz answer on the same connection');
    assert.deepEqual(withoutVarying(three.responses[2]!), jsonOpsAnswer('{"status":"ok"}'));
    assert.equal(three.rest, '');
  } finally {
    conn.socket.destroy();
  }
}

describe('an ops request pipelined behind a standalone GET stream', () => {
  test('GET /healthz in the same write as the GET: the stream ends at its sse_deadline_ms (resumable_end), then the exact 200 {"status":"ok"}; the connection stays open', { timeout: TEST_TIMEOUT_MS }, async () => {
    await streamThenOps('/healthz', (answer) => assert.deepEqual(withoutVarying(answer), jsonOpsAnswer('{"status":"ok"}')));
  });

  test('GET /readyz in the same write: the same, then the exact 200 {"status":"ready"}', { timeout: TEST_TIMEOUT_MS }, async () => {
    await streamThenOps('/readyz', (answer) => assert.deepEqual(withoutVarying(answer), jsonOpsAnswer('{"status":"ready"}')));
  });

  test('GET /metrics in the same write: the same, then the 200 Prometheus text', { timeout: TEST_TIMEOUT_MS }, async () => {
    await streamThenOps('/metrics', (answer) => {
      assert.deepEqual(
        { status: answer.status, type: answer.headers['content-type'], cache: answer.headers['cache-control'], length: answer.headers['content-length'] },
        { status: 200, type: 'text/plain; version=0.0.4; charset=utf-8', cache: 'no-store', length: String(Buffer.byteLength(answer.body)) },
      );
      assert.match(answer.body, /^# HELP adcp_gateway_/m);
    });
  });

  test('GET /healthz sent once the stream carries a notification: the same', { timeout: TEST_TIMEOUT_MS }, async () => {
    await streamThenOps('/healthz', (answer) => assert.deepEqual(withoutVarying(answer), jsonOpsAnswer('{"status":"ok"}')), true);
  });
});
