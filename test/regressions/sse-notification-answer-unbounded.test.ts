/**
 * Reported failure (a new user's trial): the cumulative SSE bound (`max_response_bytes` across
 * the whole stream -> `sse_cumulative`) applied only to a stream answering a JSON-RPC request
 * or batch. A seller answering a POSTed notification (`notifications/initialized`), a POSTed
 * JSON-RPC response (`{"jsonrpc":"2.0","id":99,"result":{}}`) or a DELETE with an SSE stream
 * had it forwarded with no total bound: with the limit at 1,000,000 bytes the host received
 * 271,567,770 bytes (outcome ok) from 200,000 events of ~1 KB. The same events answering a
 * batch of notifications were cut at the limit.
 * Now (src/exchange.ts hasCumulativeBound; src/response/pipeline.ts) every SSE stream but the
 * standalone GET stream and long-lived streams has the bound; a stream that answers no request
 * id ends with one final `message` event holding the JSON-RPC error for id null (the body a
 * notification gets as HTTP 502 before anything is sent: docs/errors.md); an SSE answer to a
 * DELETE is `upstream_not_mcp` (MCP: DELETE ends the session, no stream answers it).
 *
 * Input (raw seller on 127.0.0.1, agent max_response_bytes 100000): SSE events of exactly
 * EVENT_BYTES (1000) bytes each in the form MCP servers write (`event: message`, one `data: `
 * line, no id), 300 of them (300,000 bytes), in answer to each of the three.
 * Expected: notification and response: HTTP 200, the host's body is exactly the first 100
 * events (100 * 1000 = the limit: exactly `limit` bytes pass) then the error event:
 * RESPONSE_TOO_LARGE `sse_cumulative`, id null, limit_bytes 100000, observed_bytes over the
 * limit and at most through the end of event 101 (the stage never counts past the end of the
 * block that crossed it); the exchange line says local_error / sse_cumulative. Under the
 * limit (50 events) the stream passes whole, outcome ok. DELETE: HTTP 502 with the
 * `upstream_not_mcp` JSON-RPC error, id null, none of the events. A notification's stream
 * with ids gets resume tokens carrying its count, and a Last-Event-ID resume of it goes on
 * from that count (cut at what is left of the limit).
 * The standalone GET stream keeps no total bound: test/unit/sse-token-charge.test.ts ("the
 * standalone GET stream: tokens are not counted") and test/integration/observations.test.ts
 * (subscriptions/listen).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorFrame, expectedErrorJson } from '../support/hostile-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { captureLog, type LogEntry } from '../helpers/capture-log.js';
import { rawPost, sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';

const LIMIT = 100_000;
const EVENT_BYTES = 1000;
const SECRET = 'sse-notification-answer-unbounded-secret-0123';
const HEADERS = { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 's-1' };
const NOTIFICATION = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const RESPONSE = '{"jsonrpc":"2.0","id":99,"result":{}}';
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });

/** Event `n` of the seller's stream: exactly EVENT_BYTES bytes, with `id: <idPrefix><n>` first when `idPrefix` is given. */
function event(n: number, idPrefix?: string): string {
  const idLine = idPrefix === undefined ? '' : `id: ${idPrefix}${n}\n`;
  const head = `${idLine}event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","n":${String(n).padStart(6, '0')},"data":"`;
  const tail = '"}}\n\n';
  return head + 'x'.repeat(EVENT_BYTES - head.length - tail.length) + tail;
}
const events = (from: number, count: number, idPrefix?: string): string => Array.from({ length: count }, (_, i) => event(from + i, idPrefix)).join('');

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const log = captureLog('info');
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: info\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`, { logger: log.logger }),
);

/** The seller answers every request with `body` as an SSE stream (one write: bounded, 300 KB at most). */
function streamEvery(body: string): void {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(body);
  };
}

/** The exchange line of the `nth` exchange logged from now on. */
function nextExchangeLine(): Promise<LogEntry> {
  const seen = log.entries.filter((e) => e.msg === 'exchange').length;
  return log.waitFor('exchange', seen + 1);
}

/** Checks `text` is the first LIMIT / EVENT_BYTES events then the sse_cumulative error for id null; returns observed_bytes. */
function assertCutAtLimit(text: string, forwarded: string): number {
  assert.ok(text.startsWith(forwarded), 'the events within the limit, as the seller sent them');
  const m = /"observed_bytes":(\d+)/.exec(text.slice(forwarded.length));
  assert.ok(m, `an error event after the events: ${text.slice(forwarded.length, forwarded.length + 300)}`);
  const observed = Number(m[1]);
  // Over the limit, and never counted past the end of the block that crossed it (event 101).
  assert.ok(observed > LIMIT && observed <= LIMIT + EVENT_BYTES, `observed_bytes ${observed}`);
  const frame = expectedErrorFrame({ id: null, method: '', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: observed });
  assert.equal(text, forwarded + frame);
  return observed;
}

describe('an SSE stream answering no request has the cumulative bound', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [what, body] of [
    ['a POSTed notification', NOTIFICATION],
    ['a POSTed JSON-RPC response', RESPONSE],
  ] as const) {
    test(`${what}: the host gets the events up to the limit, then the sse_cumulative error for id null`, async () => {
      streamEvery(events(1, 300));
      const line = nextExchangeLine();
      const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), body, HEADERS), undefined, 'the POST');
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      // Was: all 300,000 bytes, outcome ok.
      const forwarded = events(1, LIMIT / EVENT_BYTES);
      assertCutAtLimit(r.text(), forwarded);
      const l = await line;
      assert.equal(l.outcome, 'local_error');
      assert.equal(l.reason, 'sse_cumulative');
      assert.equal(l.bytes_to_host, r.bytes);
    });

    test(`${what}: a stream under the limit passes whole`, async () => {
      const whole = events(1, 50);
      streamEvery(whole);
      const line = nextExchangeLine();
      const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), body, HEADERS), undefined, 'the POST');
      assert.equal(r.status, 200);
      assert.equal(r.text(), whole);
      const l = await line;
      assert.equal(l.outcome, 'ok');
      assert.equal(l.reason, null);
    });
  }

  test('a notification stream with ids: its tokens carry the count, and a Last-Event-ID resume goes on from it', async () => {
    const first = events(1, 40, 'e');
    streamEvery(first);
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), NOTIFICATION, HEADERS), undefined, 'the POST');
    assert.equal(r.status, 200);
    const tokens = sseIds(r.text());
    assert.equal(tokens.length, 40);
    const last = codec.verify(tokens.at(-1)!, 's', stack.gateway.sellerUrl('s'), [], HEADERS['mcp-session-id']);
    assert.ok(last.ok);
    // Each token adds its length over the seller id's (`e40`): the count is what the host got.
    assert.equal(last.state.usedBytes, r.bytes - (tokens.at(-1)!.length - 'e40'.length));
    assert.equal(r.bytes, first.length + tokens.reduce((sum, t, i) => sum + t.length - `e${i + 1}`.length, 0));

    // The resume: the seller replays from e41 on, far past what is left of the limit.
    let resumedWith: string | string[] | undefined;
    answer = (req, res) => {
      resumedWith = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(events(41, 200));
    };
    const line = nextExchangeLine();
    const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': tokens.at(-1)!, ...HEADERS } }));
    const text = await withTimeout(res.text(), undefined, 'the resumed stream');
    assert.equal(res.status, 200);
    assert.equal(resumedWith, 'e40');
    const resumedTokens = sseIds(text);
    // Cut where the count, carried over, reaches the limit: never 200 more events.
    assert.ok(resumedTokens.length < 100, `${resumedTokens.length} events after the resume`);
    const used = codec.verify(resumedTokens.at(-1) ?? tokens.at(-1)!, 's', stack.gateway.sellerUrl('s'), [], HEADERS['mcp-session-id']);
    assert.ok(used.ok && used.state.usedBytes <= LIMIT);
    assert.match(text, /"sse_cumulative"/);
    assert.ok(text.endsWith('\n\n'));
    const l = await line;
    assert.equal(l.outcome, 'local_error');
    assert.equal(l.reason, 'sse_cumulative');
    // The host got at most the limit over both exchanges, plus the one error event.
    const errorAt = text.lastIndexOf('event: message\ndata: {"jsonrpc":"2.0","id":null');
    assert.ok(errorAt >= 0);
    assert.ok(r.bytes + errorAt <= LIMIT, `${r.bytes + errorAt} bytes of events in all`);
  });

  test('a DELETE answered with SSE: upstream_not_mcp, HTTP 502, none of the events', async () => {
    streamEvery(events(1, 300));
    const line = nextExchangeLine();
    const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { method: 'DELETE', headers: HEADERS }));
    const text = await withTimeout(res.text(), undefined, 'the DELETE answer');
    assert.equal(res.status, 502);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(text, expectedErrorJson({ id: null, method: '', reason: 'upstream_not_mcp', limitBytes: LIMIT, observedBytes: 0, upstreamStatus: 200 }));
    const l = await line;
    assert.equal(l.outcome, 'local_error');
    assert.equal(l.reason, 'upstream_not_mcp');
  });
});
