/**
 * Load shedding by the agent guard over real sockets (src/admission/agent-guard.ts; issue 5,
 * "Memory under attack": 50 concurrent 100 MiB answers each read up to the byte limit, so
 * the gateway held and then dropped 200 MiB of buffers). An answer that waits for room under
 * its agent's `max_buffered_response_bytes` while its call kind backs off is shed
 * (`agent_backoff_shed`, with `retry_after`) instead of being read on; the agent's oldest
 * answer, and answers of other kinds, are never shed. No timing is asserted: the seller holds
 * its answers until the test releases them, and the test waits on the guard's own state.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import type { Exchange } from '../../src/exchange.js';
import { toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { until, useRawSellerAndGateway } from '../helpers/raw-stack.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** The first part of every held answer: 40 KiB of a result, over half the 64 KiB cap. */
const HEAD_BYTES = 40 * 1024;
/** Answers the seller holds after their first part, by JSON-RPC id, until the test releases them. */
const held = new Map<number, () => void>();
const sent = new Map<number, string>();

const parsed = (req: SeenRequest): { id: number; params: { name: string; arguments: { mode?: string } } } =>
  JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string; arguments: { mode?: string } } };

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const { id, params } = parsed(req);
  if (params.arguments.mode === 'gzip') {
    // A gzip bomb whose whole compressed body (a few KiB) arrives at once: 1 MiB of zeros and more.
    res.removeHeader('content-type');
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(zlib.gzipSync(Buffer.alloc(2 * 1024 * 1024, 0x20)));
    return;
  }
  if (params.arguments.mode === 'ssehold') {
    // An SSE answer: a progress event, then 40 KiB of a data line that never ends.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
    res.write(`data: ${'s'.repeat(HEAD_BYTES)}`);
    await new Promise<void>((r) => held.set(id, r));
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  if (params.arguments.mode === 'deep') {
    // Breaks the depth bound in its first bytes: a breach at once.
    res.end('['.repeat(200));
    return;
  }
  // A clean result whose first 40 KiB arrive at once, the rest once released.
  const body = toolResponse(id, { content: [{ type: 'text', text: 'h'.repeat(2 * HEAD_BYTES) }] });
  sent.set(id, body);
  res.write(body.slice(0, HEAD_BYTES));
  await new Promise<void>((r) => held.set(id, r));
  res.end(body.slice(HEAD_BYTES));
}

const stack = useRawSellerAndGateway(answer, (seller) => [
  `  shed: { url: ${seller.url}, max_buffered_response_bytes: 65536, backoff_after_breaches: 1, backoff_base_ms: 600000, backoff_max_ms: 600000, accept_encoding: [identity], dedupe_text: off }`,
  `  shedsse: { url: ${seller.url}, max_buffered_response_bytes: 65536, backoff_after_breaches: 1, backoff_base_ms: 600000, backoff_max_ms: 600000, accept_encoding: [identity], dedupe_text: off }`,
  `  capgz: { url: ${seller.url}, max_response_bytes: 1048576, max_buffered_response_bytes: 65536, backoff_after_breaches: 0, accept_encoding: [gzip], dedupe_text: off }`,
  `  shedgz: { url: ${seller.url}, max_response_bytes: 1048576, max_buffered_response_bytes: 65536, backoff_after_breaches: 1, backoff_base_ms: 600000, backoff_max_ms: 600000, accept_encoding: [gzip], dedupe_text: off }`,
]);

const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const call = (id: number, tool: string, mode = 'hold', agent = 'shed') => rawPost(stack.gateway.agentUrl(agent), toolCall(id, tool, { mode }), HEADERS);
const guard = () => stack.gateway.app.gateway.guard;

describe('agent guard: load shedding', () => {
  test('answers waiting for buffer room when their kind starts backing off are shed (agent_backoff_shed, retry_after); the oldest and other kinds complete', { timeout: TEST_TIMEOUT_MS }, async () => {
    // 1: the oldest holder (40 KiB held, reads on whatever the cap).
    const oldest = call(1, 'get_products');
    await until('the oldest holds its first part', () => guard().heldBytes('shed') >= HEAD_BYTES);
    // 2 and 3: over the 64 KiB cap after their first part, so they wait; 3 is another tool.
    const waiting = call(2, 'get_products');
    const otherKind = call(3, 'list_creative_formats');
    await until('two answers wait for room', () => guard().bufferWaits('shed') === 2);
    assert.equal(held.size, 3);

    // 4: a depth breach of get_products starts its backoff (backoff_after_breaches: 1).
    const breach = await call(4, 'get_products', 'deep');
    assert.match(breach.text(), /"reason":"json_depth"/);
    assert.equal(guard().isBackingOff('shed', 'tools/call get_products'), true);

    // The waiting get_products answer is shed at once, before the seller finishes it.
    const shed = await withTimeout(waiting, 5_000, 'the shed answer (without shedding it waits for the seller, which holds it)');
    assert.equal(shed.status, 200);
    assert.equal(
      shed.text(),
      expectedErrorJson({ id: 2, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff_shed', retryAfterS: 600 }),
    );

    // The oldest answer of the same kind, and the other kind's answer, complete byte for byte.
    for (const release of held.values()) release();
    const [first, third] = await withTimeout(Promise.all([oldest, otherKind]));
    assert.equal(first.text(), sent.get(1));
    assert.equal(third.text(), sent.get(3));
    assert.equal(guard().heldBytes('shed'), 0);
  });

  test('a shed gzip answer stops decoding: its decoders do not inflate what they hold up to the byte limit', { timeout: TEST_TIMEOUT_MS }, async () => {
    const decoded = new Map<unknown, number>();
    stack.gateway.app.gateway.onExchangeEnd((exchange: Exchange) => {
      if (exchange.agent.name === 'shedgz') decoded.set(exchange.rpc.id, exchange.bytesDecoded);
    });
    const oldest = call(11, 'get_products', 'hold', 'shedgz');
    await until('the oldest holds its first part', () => guard().heldBytes('shedgz') >= HEAD_BYTES);
    const bomb = call(12, 'get_products', 'gzip', 'shedgz');
    await until('the bomb waits for room', () => guard().bufferWaits('shedgz') === 1);
    assert.match((await call(13, 'get_products', 'deep', 'shedgz')).text(), /"reason":"json_depth"/);
    const shed = await withTimeout(bomb);
    assert.equal(
      shed.text(),
      expectedErrorJson({ id: 12, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff_shed', retryAfterS: 600 }),
    );
    held.get(11)!();
    assert.equal((await withTimeout(oldest)).text(), sent.get(11));
    await until('both exchanges ended', () => decoded.has(11) && decoded.has(12));
    // Shed after 2-3 decoder chunks (16 KiB each) over the 64 KiB cap; never the 1 MiB limit.
    const n = decoded.get(12)!;
    assert.ok(n > 0 && n <= 4 * 16 * 1024, `decoded bytes of the shed answer: ${n}`);
  });
});

describe('agent guard: load shedding an SSE answer', () => {
  test('an SSE answer waiting for room (its incomplete line held) is shed: the events so far, then the error as its last event', { timeout: TEST_TIMEOUT_MS }, async () => {
    const oldest = call(31, 'get_products', 'hold', 'shedsse');
    await until('the oldest holds its first part', () => guard().heldBytes('shedsse') >= HEAD_BYTES);
    const stream = call(32, 'get_products', 'ssehold', 'shedsse');
    await until('the stream waits for room', () => guard().bufferWaits('shedsse') === 1);
    assert.match((await call(33, 'get_products', 'deep', 'shedsse')).text(), /"reason":"json_depth"/);
    const r = await withTimeout(stream);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const events = sseMessages(r.text());
    assert.deepEqual(events[0], { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    assert.equal(
      JSON.stringify(events[1]),
      expectedErrorJson({ id: 32, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff_shed', retryAfterS: 600 }),
    );
    assert.equal(events.length, 2);
    held.get(31)!();
    held.get(32)!();
    assert.equal((await withTimeout(oldest)).text(), sent.get(31));
  });
});

describe('regression: a gzip bomb whose few KiB arrived whole bypassed max_buffered_response_bytes (issue 5 memory bench: 50 bombs decoded 4 MiB each at once)', () => {
  test('its decoded bytes wait for room like any other answer, then stop at the byte limit', { timeout: TEST_TIMEOUT_MS }, async () => {
    const oldest = call(21, 'get_products', 'hold', 'capgz');
    await until('the oldest holds its first part', () => guard().heldBytes('capgz') >= HEAD_BYTES);
    const bomb = call(22, 'get_products', 'gzip', 'capgz');
    // Before the fix it never waited (its body had ended, so the wait was skipped) and decoded to the limit.
    await until('the bomb waits for room', () => guard().bufferWaits('capgz') === 1);
    assert.ok(guard().heldBytes('capgz') <= HEAD_BYTES + 3 * 16 * 1024, `held ${guard().heldBytes('capgz')}`);
    held.get(21)!();
    assert.equal((await withTimeout(oldest)).text(), sent.get(21));
    assert.match((await withTimeout(bomb)).text(), /"reason":"decoded_bytes"/);
    assert.equal(guard().heldBytes('capgz'), 0);
  });
});
