/**
 * Regression (hostile trial 37, F1, Medium): on a stream without a cumulative total (the
 * standalone GET stream; a long-lived one), nothing bounded the decoded bytes that reached the
 * host as nothing. The skip allowance (hostile trial 32, L1) bounded one over-cap event, not
 * the connection: 50 events each past the per-event cap but ending within the allowance,
 * deflate-coded, made 404,439 bytes decode to 415,000,450 (1.6 s of CPU, 270 bytes to the
 * host); JSON-RPC responses dropped from the GET stream (`get_stream_response`), endless
 * unknown-field lines and id-only blocks did the same with nothing skipped.
 *
 * Now (response/sse-undelivered.ts, sse-chunk-taker.ts `take`): such a stream counts the decoded
 * bytes it takes since it last queued a frame for the host (an event, a comment, a `retry:`
 * line, a raw block, a pending id's token); the count at its limit, `max_response_bytes` plus
 * the per-event cap (`max_sse_event_bytes` + 65,536: the event being read counts too, test/
 * regressions/get-stream-event-at-cap-ends-stream.test.ts), the next byte ends the stream
 * plainly (outcome `resumable_end`, reason `sse_undelivered`): the bytes up to the limit point
 * are parsed, none after it. A frame sets the count back to 0. Below, "the limit" is that sum
 * (`agentLimits` sets max_response_bytes and max_sse_event_bytes for it).
 *
 * Input: a raw seller on 127.0.0.1 through the real gateway (a resume secret, so the host's
 * tokens can be read), a host reading with fetch. Each stream starts with one notification
 * (delivered: the count starts after it), then:
 * - over-cap: deflate-coded units of an id-only block `id: 00000K` and a 70,000-byte event
 *   (over max_sse_event_bytes 1,000 + the 65,536-byte line slack: skipped), 50 of them;
 *   the limit = 2 units + one id block (max_response_bytes 73,516);
 * - responses: units of an id-only block and a 900-byte JSON-RPC response (dropped,
 *   `get_stream_response`), 400 of them; the limit = 100 units + one id block, each dropped
 *   response counting SSE_DROPPED_EVENT_CHARGE_BYTES (1,024) more than its bytes (trial 52's
 *   leftover: src/response/sse-ignored-lines.ts), so 100 units' bytes and an id block are decoded;
 * - held responses: the same with 100,000-byte responses in the form MCP servers write
 *   (`event: message`, one `data:` line: held as bytes across chunks), 20 of them;
 *   the limit = 3 units + one id block (the responses charged as above);
 * - unknown fields: blocks of an `id:` line and four 204-byte `x:` lines (an id-only block
 *   with an unknown field), 1,000 of them; the limit = 100 blocks, each `x:` line counting
 *   SSE_IGNORED_LINE_CHARGE_BYTES (1,024) more than its bytes (hostile trial 52, F2:
 *   src/response/sse-ignored-lines.ts), so 100 blocks' bytes are decoded;
 * - id-only: 15,000 blocks `id: 0000KK`; the limit = 10,000 blocks;
 * - endless: `x:` lines of 1,000 bytes and no blank line, up to 8 MiB; max_response_bytes
 *   50,000 (the limit 165,536; with the lines' charges, 81 lines' bytes and up to a read).
 * Expected: each ends at the host after the notification with `id: <token>` and a blank line,
 * the token carrying the seller id of the last block that ends at the limit point (3, 101, 4,
 * 100, 10,000: one byte less and it would be the one before), none on the endless one;
 * exchange line `resumable_end`, `sse_undelivered`; the gateway decoded at most the limit,
 * the notification and one read past them.
 * Controls: 400 dropped responses each followed by a delivered notification (366 KB dropped
 * in all, 4x the limit) end as the seller ends them (`ok`), every notification delivered; so
 * do 400 dropped responses each followed by a 33-byte heartbeat comment (`: keepalive <time>`,
 * forgiving 2,112 bytes, the response's 908 and its charge 1,024 included; a 12-byte
 * `: keepalive` forgives 768, less than the charge alone, since trial 52's leftover:
 * test/regressions/sse-dropped-events-cost-uncharged.test.ts), and 2,000 delivered
 * notifications (~150 KB, past a 92,012-byte limit and 11x max_response_bytes).
 * Before the fix: every stream went on to the seller's end (outcome `ok`).
 */
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { sseIds } from '../helpers/raw.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine } from '../support/hostile-seller.js';
import { createResumeCodec } from '../../src/resume/token.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { drainOrClose } from '../../src/response/drain.js';
import { SSE_DROPPED_EVENT_CHARGE_BYTES as DROP_CHARGE, SSE_IGNORED_LINE_CHARGE_BYTES as CHARGE } from '../../src/response/sse-ignored-lines.js';

const SECRET = 'get-stream-undelivered-secret-0123456789abcdef';
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });
/** One read of the gateway past the limit point, at most (a socket read; a decoded piece is less). */
const READ = 65_536;

const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
const FIRST = note(1);
/** An id-only block of 12 bytes: `id: 00000K`, the blank line. */
const idBlock = (k: number): string => `id: ${String(k).padStart(6, '0')}\n\n`;
const ID_BLOCK = idBlock(1).length;

const OVER_CAP_DATA = 70_000;
const overCapUnit = (k: number): string => `${idBlock(k)}data: ${'a'.repeat(OVER_CAP_DATA)}\n\n`;
const OVER_CAP_UNIT = overCapUnit(1).length;

/** A JSON-RPC response of exactly 900 bytes. */
const response = (k: number): string => {
  const base = `{"jsonrpc":"2.0","id":${100_000 + k},"result":{"pad":""}}`;
  return `{"jsonrpc":"2.0","id":${100_000 + k},"result":{"pad":"${'p'.repeat(900 - base.length)}"}}`;
};
const responseUnit = (k: number): string => `${idBlock(k)}data: ${response(k)}\n\n`;
const RESPONSE_UNIT = responseUnit(1).length;

/** A JSON-RPC response of 100,000 bytes in the form MCP servers write (`event: message`): held as bytes across chunks (sse-held-block.ts). */
const heldUnit = (k: number): string => {
  const base = `{"jsonrpc":"2.0","id":${200_000 + k},"result":{"pad":""}}`;
  return `${idBlock(k)}event: message\ndata: {"jsonrpc":"2.0","id":${200_000 + k},"result":{"pad":"${'p'.repeat(100_000 - base.length)}"}}\n\n`;
};
const HELD_UNIT = heldUnit(1).length;

const X_LINE = `x: ${'a'.repeat(200)}\n`;
const unknownBlock = (k: number): string => `id: ${String(k).padStart(6, '0')}\n${X_LINE.repeat(4)}\n`;
const UNKNOWN_BLOCK = unknownBlock(1).length;

/** The undelivered limit per case: max_response_bytes + max_sse_event_bytes + SSE_PENDING_SLACK_BYTES (`agentLimits`). */
const LIMITS = {
  'over-cap': 2 * OVER_CAP_UNIT + ID_BLOCK,
  responses: 100 * (RESPONSE_UNIT + DROP_CHARGE) + ID_BLOCK,
  'held-responses': 3 * (HELD_UNIT + DROP_CHARGE) + ID_BLOCK,
  unknown: 100 * (UNKNOWN_BLOCK + 4 * CHARGE),
  'id-only': 10_000 * ID_BLOCK,
  endless: 50_000 + 50_000 + SSE_PENDING_SLACK_BYTES,
  'control-notes': 100 * RESPONSE_UNIT + ID_BLOCK,
  'control-comments': 100 * RESPONSE_UNIT + ID_BLOCK,
  'control-delivered': 100 * RESPONSE_UNIT + ID_BLOCK,
} as const;
type Case = keyof typeof LIMITS;
/** The over-cap case's max_sse_event_bytes (its events are over it and the slack). */
const OVER_CAP_EVENT_LIMIT = 1000;

/**
 * The agent's limits that make its undelivered limit `LIMITS[kind]`: max_sse_event_bytes
 * unset (equal to max_response_bytes) where the sum splits evenly, else one byte under it;
 * the over-cap case's 1,000.
 */
const agentLimits = (kind: Case): Record<string, number> => {
  const events = LIMITS[kind] - SSE_PENDING_SLACK_BYTES;
  if (kind === 'over-cap') return { max_response_bytes: events - OVER_CAP_EVENT_LIMIT, max_sse_event_bytes: OVER_CAP_EVENT_LIMIT };
  const response = Math.ceil(events / 2);
  return events % 2 === 0 ? { max_response_bytes: response } : { max_response_bytes: response, max_sse_event_bytes: response - 1 };
};

/** A heartbeat comment of 33 bytes: its frame forgives 64 x 33 = 2,112 bytes, a dropped 900-byte response's 908 and charge 1,024 included. */
const HEARTBEAT = ': keepalive 2026-01-01T00:00:00Z\n';

const range = (n: number, f: (k: number) => string): string => Array.from({ length: n }, (_, k) => f(k + 1)).join('');

/** The seller's body after the first notification, per case (the endless one is written in a loop). */
const BODIES: Partial<Record<Case, string>> = {
  'over-cap': range(50, overCapUnit),
  responses: range(400, responseUnit),
  'held-responses': range(20, heldUnit),
  unknown: range(1000, unknownBlock),
  'id-only': range(15_000, idBlock),
  'control-notes': range(400, (k) => `data: ${response(k)}\n\n${note(k + 1)}`),
  'control-comments': range(400, (k) => `data: ${response(k)}\n\n${HEARTBEAT}\n`),
  'control-delivered': range(2000, (k) => note(k + 1)),
};

const serve = async (kind: Case, res: ServerResponse): Promise<void> => {
  if (kind === 'over-cap') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'deflate' });
    res.end(deflateSync(FIRST + BODIES[kind]!));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (kind !== 'endless') {
    res.end(FIRST + BODIES[kind]!);
    return;
  }
  res.write(FIRST);
  const lines = Buffer.from(`x: ${'a'.repeat(996)}\n`.repeat(64));
  for (let written = 0; written < 8 * 1024 * 1024 && !res.destroyed; written += lines.length) {
    if (!res.write(lines)) await drainOrClose(res);
  }
  res.end();
};

const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => serve(new URL(req.url, 'http://x').searchParams.get('case') as Case, res)),
  (seller) =>
    startObservedGateway(
      agentsYaml(
        Object.fromEntries(
          Object.keys(LIMITS).map((kind) => [kind, { url: `${seller.url}?case=${kind}`, ...agentLimits(kind as Case) }]),
        ),
        ['resume:', `  secret: ${SECRET}`],
      ),
    ),
);

const readStream = async (agent: Case): Promise<string> => {
  const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  return withTimeout(res.text(), 10_000, `the ${agent} stream`);
};
const exchangeLine = (agent: Case): Promise<LogLine> => stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent, 5_000);
/** The seller id the host's token carries. */
const sellerIdOf = (agent: Case, token: string): string | undefined => {
  const v = codec.verify(token, agent, stack.gateway.sellerUrl(agent));
  assert.ok(v.ok, token);
  return v.state.upstreamId;
};

/**
 * The decoded bytes the limit stands for: LIMITS but where unknown-field lines and dropped
 * events count their charge too (the `unknown` blocks' bytes; the responses' units and an id
 * block; the endless case's whole lines within it).
 */
const DECODED: Partial<Record<Case, number>> = {
  responses: 100 * RESPONSE_UNIT + ID_BLOCK,
  'held-responses': 3 * HELD_UNIT + ID_BLOCK,
  unknown: 100 * UNKNOWN_BLOCK,
  endless: Math.floor(LIMITS.endless / (1000 + CHARGE)) * 1000,
};

/** The stream ended at its limit point: the notification, the token of `lastId`, the exchange line. */
async function assertEndedUndelivered(agent: Case, lastId: number | undefined, dropped?: Record<string, number>): Promise<void> {
  const text = await readStream(agent);
  const line = await exchangeLine(agent);
  assert.deepEqual([line.outcome, line.reason], ['resumable_end', 'sse_undelivered'], `${agent}: ${JSON.stringify(line)}`);
  if (lastId === undefined) assert.equal(text, FIRST);
  else {
    const tokens = sseIds(text);
    assert.equal(tokens.length, 1, text.slice(0, 500));
    assert.equal(text, `${FIRST}id: ${tokens[0]}\n\n`);
    assert.equal(sellerIdOf(agent, tokens[0]!), String(lastId).padStart(6, '0'));
  }
  assert.deepEqual(line.events_dropped, dropped);
  const decoded = line.bytes_decoded as number;
  const limit = DECODED[agent] ?? LIMITS[agent];
  assert.ok(decoded >= FIRST.length + limit && decoded <= FIRST.length + limit + READ, `${agent}: bytes_decoded ${decoded}`);
}

describe('get-stream-undelivered-bytes-unbounded (hostile trial 37, F1)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('over-cap events each within the skip allowance, deflate: ends at the limit point', () =>
    // Units 1 and 2 are taken whole, then unit 3's id block ends exactly at the limit.
    assertEndedUndelivered('over-cap', 3, { sse_event: 2 }));

  test('responses dropped from the GET stream (get_stream_response): ends at the limit point', () =>
    assertEndedUndelivered('responses', 101, { get_stream_response: 100 }));

  test('responses of 100,000 bytes held across chunks, dropped: ends at the limit point', () =>
    assertEndedUndelivered('held-responses', 4, { get_stream_response: 3 }));

  test('blocks of unknown-field lines: ends at the limit point', () => assertEndedUndelivered('unknown', 100));

  test('id-only blocks: ends at the limit point', () => assertEndedUndelivered('id-only', 10_000));

  test('endless unknown-field lines, no blank line: ends after the limit', () => assertEndedUndelivered('endless', undefined));

  test('control: dropped responses, each followed by a delivered notification, 4x the limit in all: the stream goes on', async () => {
    const text = await readStream('control-notes');
    assert.equal(text, FIRST + range(400, (k) => note(k + 1)));
    const line = await exchangeLine('control-notes');
    assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['ok', 'get_stream_response', { get_stream_response: 400 }]);
  });

  test('control: heartbeat comments forgiving each dropped response and its charge keep the stream going', async () => {
    const text = await readStream('control-comments');
    assert.equal(text, FIRST + HEARTBEAT.repeat(400));
    const line = await exchangeLine('control-comments');
    assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['ok', 'get_stream_response', { get_stream_response: 400 }]);
  });

  test('control: delivered events well past max_response_bytes in all do not end the stream', async () => {
    const text = await readStream('control-delivered');
    assert.equal(text, FIRST + BODIES['control-delivered']);
    assert.ok(text.length > 1.5 * LIMITS['control-delivered'] && text.length > 10 * agentLimits('control-delivered').max_response_bytes!, `${text.length} bytes`);
    const line = await exchangeLine('control-delivered');
    assert.deepEqual([line.outcome, line.reason], ['ok', null]);
  });
});
