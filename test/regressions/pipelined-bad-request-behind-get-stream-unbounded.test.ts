/**
 * Regression (a hostile trial, Finding 9): a malformed request pipelined behind a standalone
 * GET stream (MCP Streamable HTTP: the GET that opens a stream for the server's messages)
 * had its 400 `malformed_http` wait as long as that stream lived, with no bound: the stream
 * ends only when the host closes it, so the refusal was never sent and the connection stayed
 * open (behind a POST's stream the wait was already bounded by its sse_deadline_ms).
 *
 * Now a stream with no deadline of its own that holds a refusal behind it gets its agent's
 * sse_deadline_ms from its start: at it the stream ends plainly (outcome `resumable_end`,
 * reason `sse_deadline`, as sse_idle_timeout_ms ends it; the host's client reconnects with its
 * last event id), then the refusal goes out and the connection closes
 * (src/errors/earlier-answers.ts).
 *
 * Input: a real seller (MCP TypeScript SDK 1.x server, stateful, with its standalone GET
 * stream) -> gateway (agent `s`, sse_deadline_ms 500) -> raw host (node:net) on 127.0.0.1,
 * MCP 2025-06-18. The host initializes a session, opens the GET stream on a raw connection,
 * and writes `GARBAGE / HTTP/1.1` on that connection: once the seller's
 * `notifications/tools/list_changed` has come down the stream, or in the same write as the
 * GET (the refusal then waits before the stream has started).
 * Expected: on the wire, the GET's 200 SSE answer (the notification in it, when sent), its
 * chunked end, then the exact 400 `malformed_http` (id null, `connection: close`), nothing
 * after, the connection closed; the GET's exchange line says `resumable_end`, `sse_deadline`,
 * status 200; one `refused` line `malformed_http`. Control: a GET stream with nothing behind it
 * still has no deadline: it outlives sse_deadline_ms, and a notification sent after that
 * reaches the host.
 * Before the fix: the connection stayed open with the refusal unsent (the hang guard fired).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { startSdk1Seller, type Sdk1Seller } from '../support/sdk1/seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { assertStreamMessages, notificationReaches, openRawConnection, parseResponses, type MessageCopies } from '../helpers/http-wire.js';
import { rawSession, sseMessages } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SSE_DEADLINE_MS = 500;
const VERSION = '2025-06-18';
const GARBAGE = 'GARBAGE / HTTP/1.1\r\n\r\n';
const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

/** The exact 400 `malformed_http` refusal (errors/client-error.ts). */
const REFUSAL_BODY = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad request: the HTTP request is malformed.', data: { reason: 'malformed_http' } } });
const REFUSAL = { status: 400, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-length': String(Buffer.byteLength(REFUSAL_BODY)), connection: 'close' }, body: REFUSAL_BODY };

const stack = useSellerAndGateway<Sdk1Seller, ObservedGateway>(startSdk1Seller, (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_deadline_ms: SSE_DEADLINE_MS } })));
const gw = (): ObservedGateway => stack.gateway;

/** A new session's standalone GET stream, as raw HTTP/1.1 text. */
async function getStreamRequest(): Promise<{ sessionId: string; text: string }> {
  const { sessionId } = await rawSession(gw().agentUrl('s'), VERSION);
  assert.ok(sessionId !== undefined, 'the seller gave a session id');
  const text = `GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-session-id: ${sessionId}\r\nmcp-protocol-version: ${VERSION}\r\n\r\n`;
  return { sessionId, text };
}

/** The `exchange` line of the GET stream of session `sessionId` is the one with `http_method` GET written after `linesBefore`. */
function getStreamLine(linesBefore: number): Promise<LogLine> {
  return gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && l.http_method === 'GET' && gw().lines.indexOf(l) >= linesBefore, 10_000);
}

/** The `refused` lines for a parser rejection (agent null) written after `linesBefore`. */
function parserRefusals(linesBefore: number): Array<Record<string, unknown>> {
  return gw()
    .lines.slice(linesBefore)
    .filter((l) => l.msg === 'refused' && l.http_error !== undefined)
    .map((l) => ({ reason: l.reason, status: l.status, http_error: l.http_error, agent: l.agent }));
}

/** Checks the wire: the GET's SSE answer with `messages` in it (assertStreamMessages), ended, then the 400, nothing after. */
function assertStreamThenRefusal(wire: string, messages: unknown[] | MessageCopies): void {
  const { responses, rest } = parseResponses(Buffer.from(wire, 'latin1'), 2);
  const stream = responses[0]!;
  assert.deepEqual({ status: stream.status, type: stream.headers['content-type'], chunked: stream.headers['transfer-encoding'] }, { status: 200, type: 'text/event-stream', chunked: 'chunked' });
  assertStreamMessages(sseMessages(stream.body), messages);
  assert.deepEqual(responses[1], REFUSAL);
  assert.equal(rest, '', 'nothing after the 400');
}

describe('a malformed request pipelined behind a standalone GET stream', () => {
  test('sent once the stream carries a notification: the stream ends at its sse_deadline_ms (resumable_end), then the 400, then the close', { timeout: TEST_TIMEOUT_MS }, async () => {
    const linesBefore = gw().lines.length;
    const { text } = await getStreamRequest();
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    conn.socket.write(text);
    await withTimeout(conn.heads(1), 5_000, 'the GET stream head');
    const sent = await notificationReaches(conn, () => stack.seller.notifyToolListChanged());
    conn.socket.write(GARBAGE);
    const wire = await withTimeout(conn.closed, 10_000, 'the close of the connection (the refusal waited behind the GET stream)').finally(() => conn.socket.destroy());

    assertStreamThenRefusal(wire, { each: LIST_CHANGED, atMost: sent });
    const line = await getStreamLine(linesBefore);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status, rpc_kind: line.rpc_kind }, { outcome: 'resumable_end', reason: 'sse_deadline', status: 200, rpc_kind: 'none' });
    assert.deepEqual(parserRefusals(linesBefore), [{ reason: 'malformed_http', status: 400, http_error: 'HPE_INVALID_METHOD', agent: null }]);
  });

  test('in the same write as the GET (the refusal waits before the stream starts): the same, the stream bounded from its start', { timeout: TEST_TIMEOUT_MS }, async () => {
    const linesBefore = gw().lines.length;
    const { text } = await getStreamRequest();
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    conn.socket.write(text + GARBAGE);
    const wire = await withTimeout(conn.closed, 10_000, 'the close of the connection (the refusal waited behind the GET stream)').finally(() => conn.socket.destroy());

    assertStreamThenRefusal(wire, []);
    const line = await getStreamLine(linesBefore);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'resumable_end', reason: 'sse_deadline', status: 200 });
    assert.deepEqual(parserRefusals(linesBefore), [{ reason: 'malformed_http', status: 400, http_error: 'HPE_INVALID_METHOD', agent: null }]);
  });

  test('control: a GET stream with nothing behind it has no deadline: a notification sent after sse_deadline_ms reaches the host', { timeout: TEST_TIMEOUT_MS }, async () => {
    const linesBefore = gw().lines.length;
    const { text } = await getStreamRequest();
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    conn.socket.write(text);
    await withTimeout(conn.heads(1), 5_000, 'the GET stream head');
    await new Promise((r) => setTimeout(r, 2 * SSE_DEADLINE_MS));
    await notificationReaches(conn, () => stack.seller.notifyToolListChanged());
    conn.socket.destroy();
    const line = await getStreamLine(linesBefore);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'ok', reason: null, status: 200 });
  });
});
