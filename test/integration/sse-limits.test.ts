/**
 * Bounded SSE responses: per-event and cumulative bounds, exactly at the limit and one byte
 * past; events forwarded as they arrive; ending after the response; a drop after an event id
 * ends plainly (the client resumes) and before any id is SERVICE_UNAVAILABLE.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseIds, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

const LIMIT = 8192;
const EVENT_LIMIT = 2048;
let answer: (res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway(() => startRawSeller((_req, res) => answer(res)), (seller) =>
  startGateway(
    `log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n    max_sse_event_bytes: ${EVENT_LIMIT}\n`,
  ),
);

const call = (id: number) => rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'list_products'), { 'mcp-protocol-version': '2025-06-18' });
const sseHead = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
/** A `message` event whose data is a tools/call response exactly `dataBytes` long. */
function resultEvent(id: number, dataBytes: number, eventId?: string): string {
  const base = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: '' }] } });
  const data = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'y'.repeat(dataBytes - base.length) }] } });
  assert.equal(Buffer.byteLength(data), dataBytes);
  return `${eventId ? `id: ${eventId}\n` : ''}event: message\ndata: ${data}\n\n`;
}
const errorOf = (msgs: unknown[]) =>
  (msgs.at(-1) as { id: number; result: { isError: boolean; structuredContent: { adcp_error: { code: string; details: Record<string, unknown> } } } });

describe('SSE per-event bound', () => {
  test('an event of exactly max_sse_event_bytes passes unchanged', async () => {
    const ev = resultEvent(1, EVENT_LIMIT, 'e1');
    answer = (res) => {
      sseHead(res);
      res.end(ev);
    };
    const r = await call(1);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    assert.equal(r.headers.get('cache-control'), 'no-cache, no-transform');
    // Byte for byte, except the seller's event id, which goes out as a gateway resume token.
    const [idLine, ...rest] = r.text().split('\n');
    assert.match(idLine!, /^id: agw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    assert.equal(rest.join('\n'), ev.slice(ev.indexOf('\n') + 1));
  });

  test('one byte past fails with sse_event for the request id', async () => {
    answer = (res) => {
      sseHead(res);
      res.end(resultEvent(2, EVENT_LIMIT + 1, 'e1'));
    };
    const r = await call(2);
    const msgs = sseMessages(r.text());
    assert.equal(msgs.length, 1);
    const m = errorOf(msgs);
    assert.equal(m.id, 2);
    assert.equal(m.result.isError, true);
    assert.equal(m.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    assert.deepEqual(m.result.structuredContent.adcp_error.details, { reason: 'sse_event', limit_bytes: EVENT_LIMIT, observed_bytes: EVENT_LIMIT + 1 });
  });
});

describe('SSE cumulative bound', () => {
  const progress = (n: number) => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
  /**
   * Progress events, a comment as padding, then the result (with `eventId`, if any): exactly
   * `total` bytes. The comment is written as the gateway writes it (`: ` and its text), so
   * the host's stream is as long as the seller's (a `:k...` comment goes out one byte longer,
   * and that byte counts: test/regressions/sse-reencoding-past-limit.test.ts).
   */
  function streamOf(id: number, total: number, eventId?: string): string {
    let head = '';
    for (let i = 0; Buffer.byteLength(head) < LIMIT - 1500; i++) head += progress(i);
    const last = resultEvent(id, 1000, eventId);
    const pad = total - Buffer.byteLength(head) - Buffer.byteLength(last);
    const stream = head + ': ' + 'k'.repeat(pad - 3) + '\n' + last;
    assert.equal(Buffer.byteLength(stream), total);
    return stream;
  }

  test('a stream of exactly max_response_bytes passes; its events arrive', async () => {
    // No event id: the seller's bytes are the whole count (a token's length would add to it: below).
    const stream = streamOf(3, LIMIT);
    answer = (res) => {
      sseHead(res);
      res.end(stream);
    };
    const r = await call(3);
    const msgs = sseMessages(r.text());
    assert.equal((msgs.at(-1) as { id: number }).id, 3);
    assert.equal((msgs.at(-1) as { result: { isError?: boolean } }).result.isError, undefined);
  });

  test('a resume token counts what it adds to the host\'s stream: exactly at the limit with it passes, one byte past fails', async () => {
    // The result carries `id: r`: its token (~230-310 characters) replaces `r` for the host.
    // Seller bytes exactly at the limit: the token takes the stream past it, so the result is
    // not delivered, and observed_bytes tells what the token added.
    const send = (stream: string) => (answer = (res) => {
      sseHead(res);
      res.end(stream);
    });
    send(streamOf(30, LIMIT, 'r'));
    const over = await call(30);
    const overMsgs = sseMessages(over.text());
    assert.deepEqual(sseIds(over.text()), []);
    const e = errorOf(overMsgs);
    assert.equal(e.id, 30);
    assert.equal(e.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    assert.equal(e.result.structuredContent.adcp_error.details.limit_bytes, LIMIT);
    const added = (e.result.structuredContent.adcp_error.details.observed_bytes as number) - LIMIT;
    assert.ok(added > 200 && added < 400, `a token adds ${added} bytes`);
    assert.ok(!overMsgs.some((m) => (m as { id?: number }).id === 30 && !(m as { result: { isError?: boolean } }).result.isError), 'the result is not delivered');

    // The seller's bytes `added` short of the limit: with its token, exactly the limit. Passes.
    send(streamOf(31, LIMIT - added, 'r'));
    const at = await call(31);
    const atMsgs = sseMessages(at.text());
    assert.equal((atMsgs.at(-1) as { id: number }).id, 31);
    assert.equal((atMsgs.at(-1) as { result: { isError?: boolean } }).result.isError, undefined);
    const [token] = sseIds(at.text());
    assert.equal(token!.length - 'r'.length, added, 'the same token length: the count has as many digits');

    // One byte more: one byte past.
    send(streamOf(32, LIMIT - added + 1, 'r'));
    const past = errorOf(sseMessages((await call(32)).text()));
    assert.equal(past.id, 32);
    assert.deepEqual(past.result.structuredContent.adcp_error.details, { reason: 'sse_cumulative', limit_bytes: LIMIT, observed_bytes: LIMIT + 1 });
  });

  test('one byte past fails with sse_cumulative at the limit point, events before it delivered', async () => {
    // No event ids: the count is the seller's bytes (with ids: the next test).
    const small = (n: number) => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
    let stream = '';
    for (let i = 0; Buffer.byteLength(stream) < LIMIT + 1; i++) stream += small(i);
    answer = (res) => {
      sseHead(res);
      res.write(stream);
      // Never sends the response: the gateway must end the stream itself.
    };
    const r = await call(4);
    const msgs = sseMessages(r.text());
    const m = errorOf(msgs);
    assert.equal(m.id, 4);
    assert.equal(m.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    assert.equal(m.result.structuredContent.adcp_error.details.limit_bytes, LIMIT);
    // Every complete event that fit within LIMIT bytes was forwarded before the error.
    let fits = 0;
    let fitBytes = 0;
    for (let i = 0; fitBytes + Buffer.byteLength(small(i)) <= LIMIT; fitBytes += Buffer.byteLength(small(i)), i++) fits++;
    assert.equal(msgs.length, fits + 1);
    assert.equal(r.text().slice(0, fitBytes), stream.slice(0, fitBytes), 'those events as the seller sent them');
  });

  test('events with ids: each token counts what it adds; the event whose token crosses the limit is not delivered', async () => {
    const small = (n: number) => `id: p${n}\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
    let stream = '';
    for (let i = 0; Buffer.byteLength(stream) < LIMIT + 1; i++) stream += small(i);
    answer = (res) => {
      sseHead(res);
      res.write(stream);
    };
    const r = await call(9);
    const msgs = sseMessages(r.text());
    const tokens = sseIds(r.text());
    assert.equal(msgs.length, tokens.length + 1);
    // A token's payload (src/resume/token.ts: agw1.<base64url JSON>.<signature>) and its length for another payload.
    const payload = (t: string) => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const tokenLength = (p: Record<string, unknown>) => 'agw1.'.length + Buffer.from(JSON.stringify(p)).toString('base64url').length + 1 + 43;
    // Each delivered token's count: the seller's bytes through its event and what the earlier tokens added.
    let offset = 0;
    let added = 0;
    for (let i = 0; i < tokens.length; i++) {
      offset += Buffer.byteLength(small(i));
      assert.equal(payload(tokens[i]!).b, offset + added, `token ${i}`);
      assert.equal(tokenLength(payload(tokens[i]!)), tokens[i]!.length);
      added += tokens[i]!.length - `p${i}`.length;
      assert.ok(offset + added <= LIMIT);
    }
    // The next event: its bytes cross the limit (observed: the count through them), or its token
    // does (observed: with the token; the event is not delivered).
    const k = tokens.length;
    const count = offset + Buffer.byteLength(small(k)) + added;
    const nextAdded = tokenLength({ ...payload(tokens[k - 1]!), u: `p${k}`, b: Math.min(count, LIMIT) }) - `p${k}`.length;
    const e = errorOf(msgs);
    assert.equal(e.id, 9);
    assert.equal(e.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    assert.equal(e.result.structuredContent.adcp_error.details.observed_bytes, count > LIMIT ? count : count + nextAdded);
    assert.ok(count + nextAdded > LIMIT);
  });
});

describe('SSE stream endings', () => {
  test('the host stream ends once the response passed, even if the seller keeps it open', async () => {
    answer = (res) => {
      sseHead(res);
      res.write(resultEvent(5, 300, 'a1'));
      res.write(': keepalive\n\n'); // and never ends
    };
    const r = await call(5);
    const msgs = sseMessages(r.text());
    assert.equal(msgs.length, 1);
    assert.equal((msgs[0] as { id: number }).id, 5);
  });

  test('a drop after an event id, before the response, ends plainly (client resumes)', async () => {
    answer = (res) => {
      sseHead(res);
      res.write('id: prime-1\ndata: \n\n');
      setTimeout(() => res.destroy(), 20);
    };
    const r = await call(6);
    assert.equal(r.status, 200);
    assert.match(r.text(), /^id: agw1\.[A-Za-z0-9_.-]+\ndata: \n\n$/);
  });

  test('a drop before any event id is SERVICE_UNAVAILABLE upstream_reset', async () => {
    answer = (res) => {
      sseHead(res);
      res.write(': hello\n\n');
      setTimeout(() => res.destroy(), 20);
    };
    const r = await call(7);
    const m = errorOf(sseMessages(r.text()));
    assert.equal(m.id, 7);
    assert.equal(m.result.structuredContent.adcp_error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'upstream_reset');
  });

  test('odd casing and parameters in Content-Type are still SSE (bounded as SSE)', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'Text/Event-Stream; charset=utf-8' });
      res.end(resultEvent(8, EVENT_LIMIT + 1, 'z'));
    };
    const r = await call(8);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const m = errorOf(sseMessages(r.text()));
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'sse_event');
  });
});
