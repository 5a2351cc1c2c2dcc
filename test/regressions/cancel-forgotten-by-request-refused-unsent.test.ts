/**
 * Regression (a review, Nit): "a request refused without being sent forgets a remembered
 * cancellation of its id". routing/handler.ts forgot the cancellation remembered for an id
 * (routing/cancelled-requests.ts forget: hostile trial 56, F3) as soon as a new POST with that
 * id was registered, before it could still be refused unsent (agent_backoff, pipeline_wait,
 * cancelled): a new call 77 that waited for its agent's backoff and was answered
 * `agent_backoff`, never sent, made the cancelled call 77's resume go to the seller again
 * (which had dropped it: trial 55 F1's made-up sse_idle) instead of 405.
 *
 * Now the cancellation is forgotten only when the new request is sent (`forward`): a request
 * never sent has no resume, and the cancelled call's resumes still get 405.
 *
 * Input (raw seller on 127.0.0.1): agent `b` (resume tokens on; max_response_bytes 1000,
 * backoff after one breach for 5 s; response_deadline_ms 1000): `create_media_buy` 77 gets one
 * event `id: e77` and is held until its cancellation reaches the seller; 49 breaks the bound;
 * a new 77 waits for the backoff and is answered agent_backoff at its deadline.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-refused-unsent';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };

let held: ServerResponse | undefined;

function answer(req: SeenRequest, res: ServerResponse): void {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: r77\ndata: ${toolResponse(77, { content: [{ type: 'text', text: 'resumed 77' }] })}\n\n`);
    return;
  }
  const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string };
  if (msg.method === 'tools/call' && msg.id === 77) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`id: e77\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 77, progress: 1 } })}\n\n`);
    held = res;
    return;
  }
  if (msg.method === 'tools/call') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(msg.id!, { content: [{ type: 'text', text: 'y'.repeat(5_000) }] }));
    return;
  }
  res.writeHead(202).end();
  if (msg.method === 'notifications/cancelled') held?.end();
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) =>
    startObservedGateway(
      agentsYaml(
        { b: { url: seller.url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 5000, backoff_max_ms: 5000, response_deadline_ms: 1000 } },
        RESUME_YAML,
      ),
    ),
);

describe('cancel-forgotten-by-request-refused-unsent', { timeout: TEST_TIMEOUT_MS }, () => {
  test('call 77 cancelled; a new 77 answered agent_backoff unsent: the cancelled call\'s resume still gets 405', async () => {
    const res = await fetch(stack.gateway.agentUrl('b'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HEADERS },
      body: JSON.stringify(toolCall(77, 'create_media_buy')),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let first = '';
    while (!first.includes('\n\n')) {
      const r = await withTimeout(reader.read(), 5_000, 'first event');
      assert.ok(!r.done, 'the stream ended before its first event');
      first += new TextDecoder().decode(r.value);
    }
    const [token] = sseIds(first);
    assert.ok(token !== undefined && token.startsWith('agw1.'), first);
    const cancel = await rawPost(stack.gateway.agentUrl('b'), '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77,"reason":"user"}}', HEADERS);
    assert.equal(cancel.status, 202);
    for (let r = await reader.read(); !r.done; r = await reader.read());

    // The breach: create_media_buy backs off for 5 s.
    assert.match((await rawPost(stack.gateway.agentUrl('b'), toolCall(49, 'create_media_buy'), HEADERS)).text(), /raw_bytes/);
    assert.equal((await stack.gateway.exchangeLine('b', 49)).reason, 'raw_bytes');
    // A new 77: it waits for the backoff, and at its deadline is answered unsent.
    const again = await withTimeout(rawPost(stack.gateway.agentUrl('b'), toolCall(77, 'create_media_buy'), HEADERS), 5_000, 'the new 77');
    assert.match(again.text(), /agent_backoff/);
    const calls = stack.seller.requests.map((r) => (r.method === 'GET' ? 'GET' : (JSON.parse(r.body.toString('utf8')) as { id?: number }).id ?? 'notification'));
    assert.deepEqual(calls, [77, 'notification', 49], 'the new 77 was not sent');

    // The cancelled call's resume: 405, not sent (the new 77, never sent, forgot nothing).
    const resumed = await fetch(stack.gateway.agentUrl('b'), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } });
    assert.deepEqual([resumed.status, resumed.headers.get('allow'), await resumed.text()], [405, 'POST, GET, DELETE', '']);
    assert.equal(stack.seller.requests.filter((r) => r.method === 'GET').length, 0);
  });
});
