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
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
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
  test('a stream of exactly max_response_bytes passes; its events arrive', async () => {
    const progress = (n: number) => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
    let head = '';
    for (let i = 0; Buffer.byteLength(head) < LIMIT - 1500; i++) head += progress(i);
    const last = resultEvent(3, 1000, 'r');
    const pad = LIMIT - Buffer.byteLength(head) - Buffer.byteLength(last);
    const stream = head + ':' + 'k'.repeat(pad - 2) + '\n' + last;
    assert.equal(Buffer.byteLength(stream), LIMIT);
    answer = (res) => {
      sseHead(res);
      res.end(stream);
    };
    const r = await call(3);
    const msgs = sseMessages(r.text());
    assert.equal((msgs.at(-1) as { id: number }).id, 3);
    assert.equal((msgs.at(-1) as { result: { isError?: boolean } }).result.isError, undefined);
  });

  test('one byte past fails with sse_cumulative at the limit point, events before it delivered', async () => {
    const small = (n: number) => `id: p${n}\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
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
    for (let used = 0, i = 0; used + Buffer.byteLength(small(i)) <= LIMIT; used += Buffer.byteLength(small(i)), i++) fits++;
    assert.equal(msgs.length, fits + 1);
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
