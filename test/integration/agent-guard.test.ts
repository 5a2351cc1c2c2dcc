/**
 * The agent guard over real sockets (src/admission/agent-guard.ts; issue 5, "Fairness" and
 * "Memory under attack"): a seller that keeps breaking bounds is backed off without touching
 * other agents or other tools, and a tiny buffered-bytes cap makes responses wait yet still
 * lets every one complete in full. No timing is asserted: the seller holds its answers until
 * the test releases them, and the test waits on the guard's own state.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { withTimeout } from '../helpers/timeout.js';

/** How the `/bad` seller answers: over the agent's 1024-byte limit, or a small clean result. */
let badIsHealthy = false;
/** Requests the `/bad` seller holds until the test releases them. */
const held: Array<() => void> = [];
let inFlight = 0;
let maxInFlight = 0;
const CHUNKY_BYTES = 64 * 1024;

const idOf = (req: SeenRequest): number => (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
const toolOf = (req: SeenRequest): string => (JSON.parse(req.body.toString('utf8')) as { params: { name: string } }).params.name;

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const id = idOf(req);
  const json = { 'content-type': 'application/json' };
  if (req.url.startsWith('/bad')) {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise<void>((r) => held.push(r));
    inFlight--;
    if (toolOf(req) === 'stream_report' && badIsHealthy) {
      // A healthy SSE answer: a progress notification, then (once released again) the result.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
      await new Promise<void>((r) => held.push(r));
      res.end(`data: ${toolResponse(id, { content: [{ type: 'text', text: 'report' }] })}\n\n`);
      return;
    }
    const text = badIsHealthy ? 'ok' : 'x'.repeat(4096);
    res.writeHead(200, json).end(toolResponse(id, { content: [{ type: 'text', text }] }));
    return;
  }
  if (req.url.startsWith('/ssechunky')) {
    // One SSE event whose 64 KiB data line arrives 4 KiB at a time.
    const frame = `data: ${toolResponse(id, { content: [{ type: 'text', text: 'z'.repeat(CHUNKY_BYTES) }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < frame.length; i += 4096) {
      res.write(frame.slice(i, i + 4096));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
    return;
  }
  if (req.url.startsWith('/chunky')) {
    // A 64 KiB result written 4 KiB at a time, yielding between writes.
    const body = toolResponse(id, { content: [{ type: 'text', text: 'y'.repeat(CHUNKY_BYTES) }] });
    res.writeHead(200, json);
    for (let i = 0; i < body.length; i += 4096) {
      res.write(body.slice(i, i + 4096));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
    return;
  }
  res.writeHead(200, json).end(toolResponse(id, { content: [{ type: 'text', text: 'good' }] }));
}

const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) => {
    const base = seller.url.replace(/\/mcp$/, '');
    const bad = `url: ${base}/bad/mcp, max_response_bytes: 1024`;
    return startGateway(
      [
        'log_level: silent',
        'agents:',
        `  bad: { ${bad}, backoff_after_breaches: 2, backoff_base_ms: 1, backoff_max_ms: 1 }`,
        `  slow: { ${bad}, backoff_after_breaches: 1, backoff_base_ms: 600000, backoff_max_ms: 600000, response_deadline_ms: 200 }`,
        `  lowered: { ${bad}, backoff_after_breaches: 1, backoff_base_ms: 600000, backoff_max_ms: 600000 }`,
        `  streams: { ${bad}, backoff_after_breaches: 1, backoff_base_ms: 1, backoff_max_ms: 1 }`,
        `  good: { url: ${base}/good/mcp }`,
        `  chunky: { url: ${base}/chunky/mcp, max_buffered_response_bytes: 1024, accept_encoding: [identity] }`,
        `  ssechunky: { url: ${base}/ssechunky/mcp, max_buffered_response_bytes: 1024, accept_encoding: [identity], dedupe_text: off }`,
        '',
      ].join('\n'),
    );
  },
);

type ToolErr = { result: { structuredContent: { adcp_error: { code: string; details: { reason: string } } } } };
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const call = (agent: string, id: number, tool = 'get_products', headers: Record<string, string> = {}) =>
  rawPost(stack.gateway.agentUrl(agent), toolCall(id, tool), { ...HEADERS, ...headers });
const reasonOf = (text: string): string => (JSON.parse(text) as ToolErr).result.structuredContent.adcp_error.details.reason;
const guard = () => stack.gateway.app.gateway.guard;

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), `timed out waiting until ${what}`);
}
/** Releases every request the `/bad` seller holds, as they arrive, until `done` settles. */
async function releasing<T>(done: Promise<T>): Promise<T> {
  let over = false;
  void done.finally(() => (over = true));
  while (!over) {
    for (const r of held.splice(0)) r();
    await new Promise((r) => setTimeout(r, 2));
  }
  return done;
}
const seen = (): number => stack.seller.requests.length;

describe('agent guard', () => {
  test('a seller that keeps breaking bounds is backed off: one probe, the requests that waited for it answered agent_backoff unsent; other agents and tools go on; a clean answer ends it', async () => {
    badIsHealthy = false;
    assert.equal(reasonOf((await releasing(call('bad', 1))).text()), 'raw_bytes');
    assert.equal(reasonOf((await releasing(call('bad', 2))).text()), 'raw_bytes'); // the 2nd breach starts the backoff
    assert.equal(guard().isBackingOff('bad', 'tools/call get_products'), true);

    const before = seen();
    const probe = call('bad', 4);
    await until('the probe reaches the seller', () => held.length === 1);
    const waiting = [call('bad', 5), call('bad', 6)];
    await until('two requests wait for the probe', () => guard().waiting('bad', 'tools/call get_products') === 2);
    // Meanwhile another agent, and another tool of this agent, are not held back.
    assert.match((await call('good', 3)).text(), /"text":"good"/);
    const otherTool = call('bad', 7, 'list_creative_formats');
    await until('the other tool reaches the seller', () => held.length === 2);
    assert.equal(inFlight, 2);
    for (const r of held.splice(0)) r();
    assert.equal(reasonOf((await otherTool).text()), 'raw_bytes');
    assert.equal(reasonOf((await probe).text()), 'raw_bytes');
    const texts = (await Promise.all(waiting)).map((r) => r.text());
    // retry_after: the next probe may go 1 ms after the breach, rounded up to whole seconds.
    assert.equal(texts[0], expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff', retryAfterS: 1 }));
    assert.equal(texts[1], expectedErrorJson({ id: 6, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff', retryAfterS: 1 }));
    assert.equal(seen(), before + 3, 'the probe, the good call and the other tool; never the two that waited');

    // The next probe answers cleanly: the backoff ends and concurrent requests overlap again.
    badIsHealthy = true;
    assert.match((await releasing(call('bad', 8))).text(), /"text":"ok"/);
    assert.equal(guard().isBackingOff('bad', 'tools/call get_products'), false);
    maxInFlight = 0;
    const three = Promise.all([call('bad', 9), call('bad', 10), call('bad', 11)]);
    await until('three requests are at the seller at once', () => held.length === 3);
    await releasing(three);
    assert.equal(maxInFlight, 3);
  });

  test('a request that waits longer than response_deadline_ms for its turn is answered agent_backoff, never sent', async () => {
    badIsHealthy = false;
    assert.equal(reasonOf((await releasing(call('slow', 12))).text()), 'raw_bytes'); // starts a 10-minute backoff
    const before = seen();
    const r = await call('slow', 13);
    assert.equal(r.status, 200);
    const retryAfterS = (JSON.parse(r.text()) as { result: { structuredContent: { adcp_error: { retry_after: number } } } }).result.structuredContent.adcp_error.retry_after;
    assert.ok(retryAfterS > 590 && retryAfterS <= 600, `retry_after ${retryAfterS}: the rest of the 10-minute backoff`);
    assert.equal(r.text(), expectedErrorJson({ id: 13, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff', retryAfterS }));
    assert.match(r.text(), /did not send this request/);
    assert.doesNotMatch(r.text(), /may have completed/, 'the request was never sent, so nothing can have run');
    assert.equal(seen(), before, 'the seller never saw it');
  });

  test('a host that leaves while waiting gives its place up: the next request is the probe', async () => {
    badIsHealthy = false;
    await releasing(call('streams', 14)); // breach: backing off (1 ms)
    const probe = call('streams', 15);
    await until('the probe reaches the seller', () => held.length === 1);
    const leaving = new AbortController();
    const left = fetch(stack.gateway.agentUrl('streams'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HEADERS },
      body: JSON.stringify(toolCall(16, 'get_products')),
      signal: leaving.signal,
    }).catch(() => 'aborted');
    await until('it waits', () => guard().waiting('streams', 'tools/call get_products') === 1);
    leaving.abort();
    assert.equal(await left, 'aborted');
    await until('its place is given up', () => guard().waiting('streams', 'tools/call get_products') === 0);
    badIsHealthy = true;
    for (const r of held.splice(0)) r();
    assert.match((await probe).text(), /"text":"ok"/);
    assert.match((await releasing(call('streams', 17))).text(), /"text":"ok"/);
  });

  test('a probe answered with a long healthy SSE stream frees the queue when the stream starts', async () => {
    const kind = 'tools/call stream_report';
    badIsHealthy = false;
    assert.equal(reasonOf((await releasing(call('streams', 40, 'stream_report'))).text()), 'raw_bytes');
    assert.equal(guard().isBackingOff('streams', kind), true);
    badIsHealthy = true;
    const probe = call('streams', 41, 'stream_report');
    await until('the probe reaches the seller', () => held.length === 1);
    held.shift()!(); // its stream starts (a progress event), then the seller holds the result
    await until('the probe stream is open', () => held.length === 1 && stack.gateway.app.gateway.openStreams === 1);
    const queued = [call('streams', 42, 'stream_report'), call('streams', 43, 'stream_report')];
    // The next one reaches the seller while the probe's stream is still open (it would wait
    // for the whole stream otherwise); it is the next probe, so the last one waits for it.
    await until('the next request reaches the seller', () => held.length === 2);
    assert.equal(guard().waiting('streams', kind), 1);
    const all = await releasing(Promise.all([probe, ...queued]));
    for (const [i, r] of all.entries()) {
      const msgs = sseMessages(r.text()) as Array<{ id?: number; result?: { content: Array<{ text: string }> } }>;
      assert.equal(msgs.at(-1)?.id, 41 + i);
      assert.equal(msgs.at(-1)?.result?.content[0]?.text, 'report');
    }
    assert.equal(guard().isBackingOff('streams', kind), false, 'the clean streams ended the backoff');
  });

  test('a byte bound the host lowered itself (X-Max-Response-Bytes) is not a breach of the seller', async () => {
    badIsHealthy = true;
    const r = await releasing(call('lowered', 30, 'get_products', { 'x-max-response-bytes': '20' }));
    assert.equal(reasonOf(r.text()), 'raw_bytes');
    assert.equal(guard().isBackingOff('lowered', 'tools/call get_products'), false, 'backoff_after_breaches is 1 here');
    maxInFlight = 0;
    const after = Promise.all([call('lowered', 31), call('lowered', 32), call('lowered', 33)]);
    await until('all three are at the seller at once', () => held.length === 3);
    for (const a of await releasing(after)) assert.match(a.text(), /"text":"ok"/);
  });

  test('a buffered-bytes cap far below one response: responses wait for it, and 6 concurrent 64 KiB responses all complete, byte for byte', async () => {
    const waitsBefore = guard().bufferWaits('chunky');
    const results = await Promise.all([20, 21, 22, 23, 24, 25].map((id) => call('chunky', id)));
    for (const [i, r] of results.entries()) {
      assert.equal(r.status, 200);
      assert.equal(r.text(), toolResponse(20 + i, { content: [{ type: 'text', text: 'y'.repeat(CHUNKY_BYTES) }] }));
    }
    const waits = guard().bufferWaits('chunky');
    assert.ok(waits > waitsBefore, 'responses waited for the cap');
    assert.equal(guard().heldBytes('chunky'), 0, 'nothing is held once they are done');
    // The same state on /metrics.
    const metrics = await (await fetch(`${stack.gateway.baseUrl}/metrics`)).text();
    assert.match(metrics, new RegExp(`^adcp_gateway_agent_buffer_waits_total\\{agent="chunky"\\} ${waits}$`, 'm'));
    assert.match(metrics, /^adcp_gateway_agent_buffered_response_bytes\{agent="chunky"\} 0$/m);
    assert.match(metrics, /^adcp_gateway_agent_calls_backing_off\{agent="slow"\} 1$/m, 'the slow agent still backs off (10-minute backoff)');
    assert.match(metrics, /^adcp_gateway_agent_calls_backing_off\{agent="good"\} 0$/m);
  });
});


describe('agent guard: SSE', () => {
  test('the incomplete line of an SSE stream counts against the cap: concurrent streams wait for it and all complete, byte for byte', async () => {
    const waitsBefore = guard().bufferWaits('ssechunky');
    const results = await Promise.all([50, 51, 52, 53].map((id) => call('ssechunky', id)));
    for (const [i, r] of results.entries()) {
      const msgs = sseMessages(r.text());
      assert.deepEqual(msgs, [JSON.parse(toolResponse(50 + i, { content: [{ type: 'text', text: 'z'.repeat(CHUNKY_BYTES) }] }))]);
    }
    assert.ok(guard().bufferWaits('ssechunky') > waitsBefore, 'streams waited for the cap');
    assert.equal(guard().heldBytes('ssechunky'), 0);
  });
});

describe('agent guard at shutdown', () => {
  test('requests waiting out a backoff are answered agent_backoff when the gateway closes, never sent (found by a new user: they hung through the grace)', async () => {
    const seller = await startRawSeller((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(idOf(req), { content: [{ type: 'text', text: 'x'.repeat(4096) }] }));
    });
    const gw = await startGateway(
      `log_level: silent\nagents:\n  s: { url: ${seller.url}, max_response_bytes: 1024, backoff_after_breaches: 1, backoff_base_ms: 600000, backoff_max_ms: 600000 }\n`,
    );
    try {
      const post = (id: number) => rawPost(gw.agentUrl('s'), toolCall(id, 'get_products'), HEADERS);
      assert.equal(reasonOf((await post(1)).text()), 'raw_bytes');
      const waiting = post(2);
      await until('it waits', () => gw.app.gateway.guard.waiting('s', 'tools/call get_products') === 1);
      const closed = gw.app.close(); // as the SIGTERM handler does (src/main.ts)
      const r = await waiting;
      assert.equal(reasonOf(r.text()), 'agent_backoff');
      assert.equal(seller.requests.length, 1, 'never sent');
      // Its keep-alive connection is closed once answered, so close() ends now, not after the
      // 72 s keepAliveTimeout (it took 70 s in CI before buildApp closed such connections).
      await withTimeout(closed, 5_000, 'close with an answered keep-alive connection');
    } finally {
      await gw.close();
      await seller.close();
    }
  });
});
