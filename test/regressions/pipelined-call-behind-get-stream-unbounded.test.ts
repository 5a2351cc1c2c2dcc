/**
 * Regression (Defect B of a hostile review): a VALID request pipelined behind a standalone GET
 * stream (MCP Streamable HTTP: the GET that opens a stream for the server's messages) was
 * forwarded, and its answer then waited behind the stream for as long as the stream lived,
 * with no bound: the stream ends only when the host closes it, so the answer was never sent,
 * and its exchange, its buffered bytes and any backoff turn stayed held. The fix for a
 * refusal pipelined so (test/regressions/pipelined-bad-request-behind-get-stream-unbounded.test.ts)
 * gave the stream its agent's sse_deadline_ms once a refusal waits behind it; an answer did
 * not.
 *
 * Now any answer queued behind such a stream gives it the same bound: at its agent's
 * sse_deadline_ms from its start the stream ends plainly (outcome `resumable_end`, reason
 * `sse_deadline`; the host's client reconnects with its last event id), then the queued answer
 * goes out, and the connection stays open (src/errors/earlier-answers.ts boundAnswersAhead).
 *
 * Input: a real seller (MCP TypeScript SDK 1.x server, stateful, with its standalone GET
 * stream) -> gateway (agent `s`, sse_deadline_ms 500) -> raw host (node:net) on 127.0.0.1,
 * MCP 2025-06-18. The host initializes a session, opens the GET stream on a raw connection,
 * and on that connection: a `tools/call` of `get_media_buy` (id 7) in the same write as the
 * GET; or the same call once the seller's `notifications/tools/list_changed` has come down
 * the stream; or, in the same write, a call to an agent the gateway does not know (refused
 * 404 `unknown_agent` by the handler).
 * Expected: on the wire, the GET's 200 SSE answer (the notification in it, when sent), its
 * chunked end, then the call's answer (200, the seller's result for id 7; or the exact 404),
 * the connection still open; the GET's exchange line says `resumable_end`, `sse_deadline`,
 * status 200; the call's says `ok`, status 200.
 * Before the fix: the call's answer never came (the hang guard fired).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { startSdk1Seller, type Sdk1Seller } from '../support/sdk1/seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { assertStreamMessages, notificationReaches, openRawConnection, responsesWhenWhole, type MessageCopies, type Parsed } from '../helpers/http-wire.js';
import { rawSession, sseMessages, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SSE_DEADLINE_MS = 500;
const VERSION = '2025-06-18';
const CALL_ID = 7;
const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
const RESULT = {
  jsonrpc: '2.0',
  id: CALL_ID,
  result: { content: [{ type: 'text', text: 'Media buy mb_1 is active.' }], structuredContent: { media_buy_id: 'mb_1', status: 'active' } },
};

/** The exact 404 `unknown_agent` refusal of a call to agent `nobody` (id 7). */
const UNKNOWN_AGENT_BODY = JSON.stringify({ jsonrpc: '2.0', id: CALL_ID, error: { code: -32600, message: 'Unknown agent "nobody": no such agent in the gateway config.', data: { reason: 'unknown_agent', agent: 'nobody' } } });

const stack = useSellerAndGateway<Sdk1Seller, ObservedGateway>(startSdk1Seller, (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_deadline_ms: SSE_DEADLINE_MS } })));
const gw = (): ObservedGateway => stack.gateway;

/** A new session, and its standalone GET stream and a `get_media_buy` call to `agent` as raw HTTP/1.1 text. */
async function sessionRequests(agent = 's'): Promise<{ get: string; call: string }> {
  const { sessionId } = await rawSession(gw().agentUrl('s'), VERSION);
  assert.ok(sessionId !== undefined, 'the seller gave a session id');
  const session = `mcp-session-id: ${sessionId}\r\nmcp-protocol-version: ${VERSION}\r\n`;
  const body = JSON.stringify(toolCall(CALL_ID, 'get_media_buy', { media_buy_id: 'mb_1' }));
  return {
    get: `GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\n${session}\r\n`,
    call:
      `POST /agents/${agent}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n${session}` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  };
}

/** The `exchange` line of a request with `http_method` written after `linesBefore`. */
function exchangeLine(linesBefore: number, httpMethod: string): Promise<LogLine> {
  return gw().waitForLine((l) => l.msg === 'exchange' && l.http_method === httpMethod && gw().lines.indexOf(l) >= linesBefore, 10_000);
}

/** Checks the GET's answer: 200 SSE, chunked, `messages` in it (parseResponses read its end). */
function assertStream(stream: Parsed, messages: unknown[] | MessageCopies): void {
  assert.deepEqual({ status: stream.status, type: stream.headers['content-type'], chunked: stream.headers['transfer-encoding'] }, { status: 200, type: 'text/event-stream', chunked: 'chunked' });
  assertStreamMessages(sseMessages(stream.body), messages);
}

/** Checks the call's answer: 200, the seller's result for id 7 (as JSON or in one SSE event). */
function assertCallAnswer(answer: Parsed): void {
  assert.equal(answer.status, 200);
  const messages = answer.headers['content-type'] === 'text/event-stream' ? sseMessages(answer.body) : [JSON.parse(answer.body) as unknown];
  assert.deepEqual(messages, [RESULT]);
}

async function assertLines(linesBefore: number, call: { outcome: string; reason: string | null; status: number } | undefined): Promise<void> {
  const get = await exchangeLine(linesBefore, 'GET');
  assert.deepEqual({ outcome: get.outcome, reason: get.reason, status: get.status, rpc_kind: get.rpc_kind }, { outcome: 'resumable_end', reason: 'sse_deadline', status: 200, rpc_kind: 'none' });
  if (call === undefined) return;
  const line = await exchangeLine(linesBefore, 'POST');
  assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status, rpc_id: line.rpc_id }, { ...call, rpc_id: CALL_ID });
}

describe('a call pipelined behind a standalone GET stream', () => {
  test('in the same write as the GET: the stream ends at its sse_deadline_ms (resumable_end), then the call is answered; the connection stays open', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { get, call } = await sessionRequests();
    const linesBefore = gw().lines.length;
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    try {
      conn.socket.write(get + call);
      const { responses, rest } = await withTimeout(responsesWhenWhole(conn, 2), 10_000, "the call's answer (it waited behind the GET stream)");
      assertStream(responses[0]!, []);
      assertCallAnswer(responses[1]!);
      assert.equal(rest, '');
      assert.equal(conn.socket.readyState, 'open', 'the connection stays open');
      await assertLines(linesBefore, { outcome: 'ok', reason: null, status: 200 });
    } finally {
      conn.socket.destroy();
    }
  });

  test('sent once the stream carries a notification: the same', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { get, call } = await sessionRequests();
    const linesBefore = gw().lines.length;
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    try {
      conn.socket.write(get);
      await withTimeout(conn.heads(1), 5_000, 'the GET stream head');
      const sent = await notificationReaches(conn, () => stack.seller.notifyToolListChanged());
      conn.socket.write(call);
      const { responses, rest } = await withTimeout(responsesWhenWhole(conn, 2), 10_000, "the call's answer (it waited behind the GET stream)");
      assertStream(responses[0]!, { each: LIST_CHANGED, atMost: sent });
      assertCallAnswer(responses[1]!);
      assert.equal(rest, '');
      await assertLines(linesBefore, { outcome: 'ok', reason: null, status: 200 });
    } finally {
      conn.socket.destroy();
    }
  });

  test('a call the handler refuses (unknown agent), in the same write: the stream ends at its sse_deadline_ms, then the exact 404', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { get, call } = await sessionRequests('nobody');
    const linesBefore = gw().lines.length;
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    try {
      conn.socket.write(get + call);
      const { responses, rest } = await withTimeout(responsesWhenWhole(conn, 2), 10_000, 'the refusal (it waited behind the GET stream)');
      assertStream(responses[0]!, []);
      assert.deepEqual({ status: responses[1]!.status, body: responses[1]!.body }, { status: 404, body: UNKNOWN_AGENT_BODY });
      assert.equal(rest, '');
      await assertLines(linesBefore, undefined);
      const refused = await gw().waitForLine((l) => l.msg === 'refused' && gw().lines.indexOf(l) >= linesBefore);
      assert.deepEqual({ reason: refused.reason, status: refused.status, agent: refused.agent }, { reason: 'unknown_agent', status: 404, agent: 'nobody' });
    } finally {
      conn.socket.destroy();
    }
  });
});
