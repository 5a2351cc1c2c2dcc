/**
 * Regression (hostile trial 52, its leftover, Low): events the SSE stage dispatches and drops
 * (a JSON-RPC response where none may pass, `get_stream_response`,
 * `notification_stream_response`; data naming no kind of message, `message_without_kind`, such
 * as `data: {}`; on a stream without a total a breach too, such as `json_depth`) were parsed,
 * read as JSON and judged, ~0.9-2.3 µs each (bench/sse-loop.ts, 10,000 events, 16-64 KiB
 * chunks, min of 30 streams: `--case empty` 10 bytes, ~90-180 ns per byte; `--case deep --rpc
 * get` 138 bytes, ~15 ns per byte; forwarded one-line events ~1-2 ns per byte), and counted
 * only their own bytes: a request's stream took ~400,000 `data: {}` per call at 4 MiB and
 * answered `ok`, the standalone GET stream ~845,000 per undelivered allowance (~1.2 s).
 *
 * Now (src/response/sse-ignored-lines.ts SSE_DROPPED_EVENT_CHARGE_BYTES; sse-stage.ts
 * `refused`) each counts 1,024 bytes more, at its dispatch, as a line the parser ignores does
 * (sse-unknown-field-lines-cost-uncharged.test.ts): against `max_response_bytes` on a stream
 * answering a POST (`sse_cumulative`), against the undelivered limit on the standalone GET
 * stream (`sse_undelivered`); but for a connection's first dropped `{}` (an MCP SDK server's
 * priming event, replayed on a resume).
 *
 * Input, part 1: a raw seller (node:http, 127.0.0.1) behind the real gateway (every agent at
 * max_response_bytes 4 MiB), read by fetch:
 * - `droppost` (tools/call): 10,000 events `data: {}` (10 bytes), then the result;
 * - `dropget` (GET): 20,000 events `data: {}` (`get_stream_response` there), then a notification;
 * - `deepget` (GET): 20,000 events of 65 nested arrays (138 bytes, `json_depth`), then a notification;
 * - `primingpost` (tools/call, control): one `data: {}`, then a result of exactly the rest of
 *   max_response_bytes.
 * Expected (exact counts, no timings):
 * - `droppost`: the first `{}` counts 10, each later one 1,034: the 4,057th charged one takes
 *   the count to 10 + 4,057 x 1,034 = 4,194,948 > 4,194,304: only the error event,
 *   `sse_cumulative`, observed_bytes 4,194,948, 4,058 dropped (before: the result, `ok`);
 * - `dropget`: the undelivered limit 8,454,144 (4 MiB + 4 MiB + 65,536) is passed by the
 *   charge of the 8,178th (10 + 8,177 x 1,034 > 8,454,144): nothing reaches the host, a plain
 *   end, `resumable_end`, `sse_undelivered`, 8,178 dropped (before: the notification, `ok`);
 * - `deepget`: 1,162 each, the 7,276th's charge passes it: the same end, 7,276 dropped;
 * - `primingpost`: the result exactly, `ok` (the priming event is not charged).
 *
 * Part 2, the SSE stage alone (test/unit/sse-stage-kit.ts), each stream whole and cut at
 * every byte (in a pad of `x:` lines, every 16th: test/helpers/stream-cuts.ts), LF and CR LF: the
 * same end, the charge coming once per dropped event wherever the seller's bytes are cut:
 * - GET stream (max_response_bytes 100: limit 65,736): a notification; `{}` (free), three
 *   responses and a kindless `{"a":1}` after it (each charged), a second `{}` (charged); `x:`
 *   lines; a notification that ends exactly at the limit (delivered, `ok`) or one byte past it
 *   (not: `resumable_end`, `sse_undelivered`); all six dropped `get_stream_response` (data
 *   naming no method is judged a response there);
 * - tools/call: `{}` (free), a notification, three kindless events (charged), the result:
 *   max_response_bytes the count through the result (delivered, `ok`), or one byte short of
 *   the count through the last kindless event's charge (`sse_cumulative`, observed_bytes that
 *   count exactly);
 * - GET stream, one `: keepalive` (12 bytes, forgiving 768) after each 900-byte response
 *   (908 + 1,024 counted): 1,177 more per pair (the comment's blank line included), so at the
 *   limit 92,012 the 78th response's charge passes it (77 x 1,177 + 908 + 1,024 = 92,561):
 *   77 comments, then the plain end, whatever the chunk size (before: all 400, `ok`;
 *   get-stream-undelivered-bytes-unbounded.test.ts's control now sends 33-byte heartbeats).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { toolResponseOfSize } from '../support/raw-seller.js';
import { expectedErrorFrame } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { AFTER_NOTE as NOTE, doneResult, useAgentPathStack } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { padCounting } from '../helpers/charged-pad.js';
import { cutPoints } from '../helpers/stream-cuts.js';
import { cut, runSseStage, TOOL_CALL, type StageRun } from '../unit/sse-stage-kit.js';
import type { RpcPeek } from '../../src/exchange.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { SSE_DROPPED_EVENT_CHARGE_BYTES as CHARGE } from '../../src/response/sse-ignored-lines.js';

const MAX_RESPONSE = 4 * 1024 * 1024;
/** sse-undelivered.ts: max_response_bytes + max_sse_event_bytes (equal here) + 65,536. */
const UNDELIVERED_LIMIT = 2 * MAX_RESPONSE + SSE_PENDING_SLACK_BYTES;
const EMPTY = 'data: {}\n\n';
/** 65 nested arrays: over the default max_json_depth 64 (`json_depth`). */
const DEEP = `data: ${'['.repeat(65)}${']'.repeat(65)}\n\n`;
/** A result event of `bytes` bytes (its `data: `, LF and blank line included). */
const resultEvent = (id: number, bytes: number): string => `data: ${toolResponseOfSize(id, bytes - 8)}\n\n`;

/**
 * The number of events of `bytes` each, all charged but the first when `firstFree`, whose
 * count first passes `limit` (at the event's charge: its bytes fit before it).
 */
function passingEvent(limit: number, bytes: number, firstFree: boolean): number {
  const free = firstFree ? bytes : 0;
  // The k-th charged event passes it when free + k x (bytes + CHARGE) > limit.
  const k = Math.floor((limit - free) / (bytes + CHARGE)) + 1;
  assert.ok(free + (k - 1) * (bytes + CHARGE) + bytes <= limit, 'its bytes fit: the charge passes the limit');
  return k + (firstFree ? 1 : 0);
}

function serve(agent: string, isGet: boolean, body: Buffer, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (isGet) return void res.end((agent === 'deepget' ? DEEP : EMPTY).repeat(20_000) + NOTE);
  const id = (JSON.parse(body.toString('utf8')) as { id: number }).id;
  if (agent === 'droppost') return void res.end(EMPTY.repeat(10_000) + resultEvent(id, 200));
  res.end(EMPTY + resultEvent(id, MAX_RESPONSE - EMPTY.length));
}

const AGENTS = ['droppost', 'dropget', 'deepget', 'primingpost'] as const;
const stack = useAgentPathStack(AGENTS, { max_response_bytes: MAX_RESPONSE, accept_encoding: '[identity]' }, serve);

describe('events the SSE stage drops count 1,024 bytes more each (real gateway)', () => {
  test('tools/call: 10,000 data: {} events end with sse_cumulative at the 4,057th charge, nothing but the error forwarded', { timeout: TEST_TIMEOUT_MS }, async () => {
    const dropped = passingEvent(MAX_RESPONSE, EMPTY.length, true);
    assert.equal(dropped, 4058);
    const observed = EMPTY.length + (dropped - 1) * (EMPTY.length + CHARGE);
    assert.equal(observed, 4_194_948);
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('droppost'), toolCall(5, 'get_products')), 10_000, 'the droppost call');
    assert.equal(res.status, 200);
    assert.equal(res.text(), expectedErrorFrame({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'sse_cumulative', limitBytes: MAX_RESPONSE, observedBytes: observed }));
    const line = await stack.gateway.exchangeLine('droppost', 5);
    assert.deepEqual([line.reason, line.events_dropped], ['sse_cumulative', { message_without_kind: dropped }]);
  });

  for (const [agent, event, reason, count] of [
    ['dropget', EMPTY, 'get_stream_response', 8178],
    ['deepget', DEEP, 'json_depth', 7276],
  ] as const) {
    test(`standalone GET: 20,000 dropped events (${reason}) end the stream plainly at the undelivered limit after ${count}, the notification after them not reached`, { timeout: TEST_TIMEOUT_MS }, async () => {
      assert.equal(passingEvent(UNDELIVERED_LIMIT, event.length, event === EMPTY), count);
      const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream' } });
      assert.equal(res.status, 200);
      assert.equal(await withTimeout(res.text(), 10_000, `the ${agent} stream`), '');
      const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent);
      assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['resumable_end', 'sse_undelivered', { [reason]: count }]);
    });
  }

  test('tools/call: an SDK priming event (data: {}) then a result filling max_response_bytes exactly: the result, ok (the priming event is not charged)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('primingpost'), toolCall(6, 'get_products')), 10_000, 'the primingpost call');
    assert.equal(res.status, 200);
    assert.equal(res.text(), resultEvent(6, MAX_RESPONSE - EMPTY.length));
    assert.equal((await stack.gateway.exchangeLine('primingpost', 6)).outcome, 'ok');
  });
});

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
const response = (id: number): string => `data: {"jsonrpc":"2.0","id":${id},"result":{}}\n\n`;
const brief = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason, drops: run.drops });
const lines = (text: string, eol: string): Buffer => Buffer.from(text.replaceAll('\n', eol));

/** Runs `stream` whole and cut once at every point (but inside `pad`): the briefs that differ from `want`. */
async function differing(stream: Buffer, pad: [number, number] | undefined, want: string, rpc: RpcPeek, yaml: string[]): Promise<string[]> {
  const differ: string[] = [];
  for (const at of [[], ...cutPoints(stream.length, pad === undefined ? [] : [pad], 16).map((p) => [p])]) {
    const got = brief(await runSseStage(cut(stream, at), { rpc, agentYaml: yaml }));
    if (got !== want) differ.push(`${at.length === 0 ? 'whole' : at[0]}: ${got.slice(-160)}`);
  }
  return differ;
}

describe('the charge comes once per dropped event, wherever the seller bytes are cut (SSE stage alone)', () => {
  const GET_MAX = 100;
  const GET_LIMIT = 2 * GET_MAX + SSE_PENDING_SLACK_BYTES;
  const DROPS = ['{}', 'r1', 'r2', '{"a":1}', 'r3', '{}'];
  const dropEvent = (d: string): string => (d.startsWith('r') ? response(Number(d.slice(1))) : `data: ${d}\n\n`);

  for (const eol of ['\n', '\r\n']) {
    for (const over of [0, 1]) {
      test(`GET stream (${eol === '\n' ? 'LF' : 'CR LF'}): dropped events and a pad bring the count ${over === 0 ? 'to the limit exactly: the notification after them goes out' : 'one byte past the limit: the stream ends before the notification'}`, async () => {
        const head = Buffer.concat([lines(note(1), eol), ...DROPS.map((d) => lines(dropEvent(d), eol))]);
        const tail = lines(note(2), eol);
        // Counted after note 1's frame: the drops' bytes (note 1's blank line's LF with CR LF,
        // counted after its frame), each but the first `{}` charged; then the pad; then note 2
        // through its blank line's CR (its frame; its last LF after it).
        const counted = head.length - lines(note(1), eol).length + (eol.length - 1) + (DROPS.length - 1) * CHARGE;
        const pad = Buffer.from(padCounting(GET_LIMIT - counted - (tail.length - (eol.length - 1)) + over, eol));
        const stream = Buffer.concat([head, pad, tail]);
        // On the GET stream data naming no method is judged as a response (sse-message.ts standaloneVerdict).
        const drops = DROPS.map(() => 'get_stream_response');
        const want =
          over === 0
            ? JSON.stringify({ body: note(1) + note(2), outcome: 'ok', reason: 'get_stream_response', drops })
            : JSON.stringify({ body: note(1), outcome: 'resumable_end', reason: 'sse_undelivered', drops });
        const differ = await differing(stream, [head.length, head.length + pad.length], want, GET_STREAM, [`max_response_bytes: ${GET_MAX}`]);
        assert.deepEqual(differ.slice(0, 4), [], `${differ.length} runs (whole, cut at each point) differ`);
      });
    }

    for (const fits of [true, false]) {
      test(`tools/call (${eol === '\n' ? 'LF' : 'CR LF'}): ${fits ? 'max_response_bytes the count through the result: it goes out' : 'one byte short of the last dropped event\'s charge: sse_cumulative, observed_bytes that count'}`, async () => {
        const result = doneResult(1);
        const kindless = ['{"a":1}', '{"b":2}', '{"c":3}'];
        const before = lines(EMPTY + note(1) + kindless.map((k) => `data: ${k}\n\n`).join(''), eol);
        const stream = Buffer.concat([before, lines(result, eol)]);
        const throughLastCharge = before.length + kindless.length * CHARGE;
        const max = fits ? throughLastCharge + lines(result, eol).length : throughLastCharge - 1;
        const drops = kindless.length + 1;
        const run = await runSseStage([stream], { agentYaml: [`max_response_bytes: ${max}`] });
        if (fits) assert.deepEqual([run.body, run.exchange.outcome], [note(1) + result, 'ok']);
        else {
          assert.equal(run.exchange.reason, 'sse_cumulative');
          assert.match(run.body, new RegExp(`"limit_bytes":${max},"observed_bytes":${throughLastCharge}\\}`));
          assert.ok(run.body.startsWith(note(1)) && !run.body.includes('"done"'), run.body.slice(0, 200));
        }
        assert.equal(run.drops.length, drops);
        const differ = await differing(stream, undefined, brief(run), TOOL_CALL, [`max_response_bytes: ${max}`]);
        assert.deepEqual(differ.slice(0, 4), [], `${differ.length} runs (whole, cut at each point) differ`);
      });
    }
  }

  test('GET stream: one 12-byte `: keepalive` after each dropped 900-byte response no longer keeps it going: 77 comments, then the plain end', async () => {
    const base = '{"jsonrpc":"2.0","id":100001,"result":{"pad":""}}';
    const dropped = (k: number): string => `data: {"jsonrpc":"2.0","id":${100_000 + k},"result":{"pad":"${'p'.repeat(900 - base.length)}"}}\n\n`;
    const KEEPALIVE = ': keepalive\n';
    // get-stream-undelivered-bytes-unbounded.test.ts's control: the limit 92,012.
    const max = 13_238;
    const limit = 2 * max + SSE_PENDING_SLACK_BYTES;
    assert.equal(limit, 92_012);
    // Per pair: the response (908) and its charge, the comment (12) less its frame's 768, its blank line (1).
    const perPair = dropped(1).length + CHARGE + KEEPALIVE.length - 64 * KEEPALIVE.length + 1;
    assert.equal(perPair, 1177);
    // The response after `k` pairs passes the limit at its charge when k x 1,177 + 908 + 1,024 > the limit.
    const KEEPALIVES = Math.floor((limit - dropped(1).length - CHARGE) / perPair) + 1;
    assert.equal(KEEPALIVES, 77);
    const stream = Buffer.from(note(1) + Array.from({ length: 400 }, (_, k) => `${dropped(k + 1)}${KEEPALIVE}\n`).join(''));
    const want = JSON.stringify({ body: note(1) + KEEPALIVE.repeat(KEEPALIVES), outcome: 'resumable_end', reason: 'sse_undelivered', drops: Array(KEEPALIVES + 1).fill('get_stream_response') });
    for (const size of [stream.length, 65_536, 16_384, 1000, 97]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < stream.length; at += size) chunks.push(stream.subarray(at, at + size));
      assert.equal(brief(await runSseStage(chunks, { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${max}`] })), want, `chunks of ${size}`);
    }
  });
});
