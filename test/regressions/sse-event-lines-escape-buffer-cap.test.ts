/**
 * Regression (a hostile new user's trial 10, F3): an agent's `max_buffered_response_bytes`
 * did not count an SSE event still being assembled from complete `data:` lines. The parser
 * joins them until the event's blank line, up to `max_sse_event_bytes` + 64 KiB per stream,
 * and only the incomplete line was counted: 30 concurrent calls, each answered with one
 * never-ending event of 3 MB of 1000-byte `data:` lines, held ~130 MB under a 1 MiB cap, and
 * `adcp_gateway_agent_buffered_response_bytes` stayed near 0. The same bytes as ONE endless
 * line (the control) were counted and held back, as docs/configuration.md documents ("an SSE
 * stream's incomplete line"; at most the cap + the oldest response + one chunk per other
 * response in flight).
 *
 * Input: seller (node:http) -> gateway (max_buffered_response_bytes 64 KiB) -> host (fetch),
 * on 127.0.0.1. CALLS concurrent `tools/call`s per agent; the seller answers each with an SSE
 * stream whose first event is a `notifications/message` of EVENT_BYTES, written at once and
 * not ended (no blank line), and holds the stream open until the test releases it:
 * - agent `lines`: the event's JSON one array element per `data:` line (1000-byte lines);
 * - agent `line` (control): the same JSON on one `data:` line.
 * Then the test releases the sellers: each writes the event's last line and its blank line
 * (the event is dispatched; the stream stays open), then, released again, the response and the
 * end. Agent `multi`: a normal stream of many multi-line events, cut mid-event by the writes,
 * under a 4 KiB cap.
 * Expectation:
 * 1. (`lines` as `line`) while the events are open, the gauge from /metrics reaches
 *    EVENT_BYTES (the oldest stream's event, which always reads on) and stays within the
 *    documented bound; the other streams wait (`adcp_gateway_agent_buffer_waits_total`).
 *    Once the events are dispatched the gauge is 0, streams still open; every call then gets
 *    the seller's bytes exactly (its event, its response) and the gauge stays 0.
 * 2. (`multi`) every call gets the seller's bytes exactly, and the gauge is 0 after.
 * Before the fix, (1) failed for `lines` only: the gauge never went over 305 bytes (the
 * incomplete lines) while the streams held ~260 KB each. Waits here are hang guards, never
 * timings; no memory is measured (the gauge is what the gateway counts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const CAP = 64 * 1024;
const MULTI_CAP = 4096;
const CALLS = 3;
/** One chunk the gateway reads (a socket read) at most: docs/configuration.md, max_buffered_response_bytes. */
const CHUNK = 64 * 1024;
/** 1000-byte `data:` lines of the endless event (its first line aside). */
const LINE_ITEMS = 262;
const ITEM = `"${'x'.repeat(990)}",`; // with `data: ` and its LF: 1000 bytes

const EVENT_HEAD = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"report","data":[';
const EVENT_TAIL = '"end"]}}';

/** The open event as written at first: one line per array element (`lines`), or one line (`line`). */
function openEvent(oneLine: boolean): string {
  if (oneLine) return `data: ${EVENT_HEAD}${ITEM.repeat(LINE_ITEMS)}`;
  return `data: ${EVENT_HEAD}\n${`data: ${ITEM}\n`.repeat(LINE_ITEMS)}`;
}
/** Bytes of the open event as one line (as lines: a `data: ` and an LF more per line); the gateway holds at least these once it has read it all. */
const EVENT_BYTES = Buffer.byteLength(openEvent(true));
/** ... and at most these (the event as lines). */
const EVENT_MAX_BYTES = Buffer.byteLength(openEvent(false));

/** The rest of the event: its last line and blank line. */
function closeEvent(oneLine: boolean): string {
  return oneLine ? `${EVENT_TAIL}\n\n` : `data: ${EVENT_TAIL}\n\n`;
}
const responseEvent = (id: number): string => `data: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"done ${id}"}]}}\n\n`;

/** A multi-line event of `multi`: a progress notification pretty-printed, one `data:` line per line. */
function multiEvent(k: number): string {
  const message = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { step: k, notes: Array.from({ length: 12 }, (_, i) => `note ${k}.${i} ${'n'.repeat(60)}`) } } };
  return `${JSON.stringify(message, null, 2)
    .split('\n')
    .map((l) => `data: ${l}\n`)
    .join('')}\n`;
}
const MULTI_EVENTS = 40;

/** What each seller wrote per request id (the host must get exactly these bytes). */
const written = new Map<string, string>();
/** Releases for the streams held open: [close the event, send the response]. */
const held: Array<{ agent: string; step: () => void }> = [];

const idOf = (req: SeenRequest): number => (JSON.parse(req.body.toString('utf8')) as { id: number }).id;

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const id = idOf(req);
  const agent = req.url.split('/')[1]!;
  const key = `${agent}:${id}`;
  const write = (s: string): void => {
    written.set(key, (written.get(key) ?? '') + s);
    res.write(s);
  };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (agent === 'multi') {
    let out = '';
    for (let k = 0; k < MULTI_EVENTS; k++) out += multiEvent(k);
    out += responseEvent(id);
    // Cut mid-event (every 700 bytes), a turn of the event loop between writes.
    for (let at = 0; at < out.length; at += 700) {
      write(out.slice(at, at + 700));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
    return;
  }
  const oneLine = agent === 'line';
  write(openEvent(oneLine));
  await new Promise<void>((step) => held.push({ agent, step }));
  write(closeEvent(oneLine));
  await new Promise<void>((step) => held.push({ agent, step }));
  write(responseEvent(id));
  res.end();
}

const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) => {
    const base = seller.url.replace(/\/mcp$/, '');
    const agent = (name: string, cap: number): string =>
      `  ${name}: { url: ${base}/${name}/mcp, max_buffered_response_bytes: ${cap}, dedupe_text: off, accept_encoding: [identity] }`;
    return startGateway(['log_level: silent', 'agents:', agent('lines', CAP), agent('line', CAP), agent('multi', MULTI_CAP), ''].join('\n'));
  },
);
const gw = (): RunningGateway => stack.gateway;

async function metric(name: string, agent: string): Promise<number> {
  const text = await (await fetch(`${gw().baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`agent="${agent}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
const gauge = (agent: string): Promise<number> => metric('adcp_gateway_agent_buffered_response_bytes', agent);

/**
 * Samples the gauge until `done(value)` (hang guard: at most 1000 samples, 5 ms apart);
 * every sample within `bound`. Returns the samples.
 */
async function sampleUntil(agent: string, what: string, done: (v: number) => boolean, bound: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const v = await gauge(agent);
    seen.push(v);
    assert.ok(v <= bound, `${agent}: the gauge ${v} over the documented bound ${bound}`);
    if (done(v)) return seen;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`${agent}: the gauge never ${what} (max seen ${Math.max(...seen)}, last ${seen.at(-1)})`);
}

/** Releases the next step of every held `agent` stream, once all CALLS of them wait for it. */
async function release(agent: string): Promise<void> {
  for (let i = 0; i < 2000 && held.filter((h) => h.agent === agent).length < CALLS; i++) await new Promise((r) => setTimeout(r, 5));
  const mine = held.filter((h) => h.agent === agent);
  assert.equal(mine.length, CALLS, `${agent}: every stream waits for the test`);
  for (const h of mine) held.splice(held.indexOf(h), 1);
  for (const h of mine) h.step();
}

async function endlessEventCase(agent: 'lines' | 'line', firstId: number): Promise<void> {
  const calls: Array<Promise<RawResponse>> = [];
  for (let i = 0; i < CALLS; i++) calls.push(rawPost(gw().agentUrl(agent), toolCall(firstId + i, 'get_report'), { 'mcp-protocol-version': '2025-11-25' }));
  // The cap, the oldest response (its open event, all written), one chunk per other response.
  const bound = CAP + EVENT_MAX_BYTES + (CALLS - 1) * CHUNK;
  await sampleUntil(agent, `counted the oldest stream's open event (${EVENT_BYTES} bytes)`, (v) => v >= EVENT_BYTES, bound);
  assert.ok((await metric('adcp_gateway_agent_buffer_waits_total', agent)) > 0, `${agent}: the other streams waited for the cap`);
  // The events end (dispatched), the streams stay open: nothing held.
  await release(agent);
  await sampleUntil(agent, 'went back to 0 once the events were dispatched', (v) => v === 0, bound);
  await release(agent);
  const answers = await withTimeout(Promise.all(calls), 10_000, `${agent} calls`);
  answers.forEach((res, i) => {
    assert.equal(res.status, 200);
    const id = firstId + i;
    assert.equal(res.text(), written.get(`${agent}:${id}`), `${agent} call ${id}: the seller's bytes, unchanged`);
    assert.ok(res.text().endsWith(responseEvent(id)));
  });
  assert.equal(await gauge(agent), 0);
}

describe('an SSE event made of many complete data: lines counts against max_buffered_response_bytes', () => {
  test('control: one endless data: line is counted (the oldest reads on, the others wait), then every call gets its answer', { timeout: TEST_TIMEOUT_MS }, async () => {
    await endlessEventCase('line', 100);
  });

  test('many complete data: lines: counted as the endless line is, released when the event is dispatched; every call gets its answer', { timeout: TEST_TIMEOUT_MS }, async () => {
    await endlessEventCase('lines', 200);
  });

  test('a normal stream of many multi-line events, cut mid-event, passes unchanged under a small cap', { timeout: TEST_TIMEOUT_MS }, async () => {
    const calls: Array<Promise<RawResponse>> = [];
    for (let i = 0; i < CALLS; i++) calls.push(rawPost(gw().agentUrl('multi'), toolCall(300 + i, 'get_report'), { 'mcp-protocol-version': '2025-11-25' }));
    const answers = await withTimeout(Promise.all(calls), 10_000, 'multi calls');
    answers.forEach((res, i) => {
      assert.equal(res.status, 200);
      assert.equal(res.text(), written.get(`multi:${300 + i}`), `multi call ${300 + i}: the seller's bytes, unchanged`);
    });
    assert.equal(await gauge('multi'), 0);
  });
});
