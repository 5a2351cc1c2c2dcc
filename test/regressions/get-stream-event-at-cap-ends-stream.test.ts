/**
 * Regression (the undelivered bound's wart, after hostile trial 37, F1): on a stream without a
 * cumulative total (the standalone GET stream), the count of decoded bytes that reached the
 * host as nothing (response/sse-undelivered.ts) includes the bytes of the event being read,
 * and its limit was `max_response_bytes`. With `max_sse_event_bytes` unset (equal to that
 * limit), an event whose data is exactly at the per-event cap, which that cap accepts, has a
 * block a few bytes longer (its `event:` and `id:` lines, `data: `, the blank line): it ended
 * the stream by itself (`resumable_end`, `sse_undelivered`) before it went out, and so did one
 * after a little junk (docs/configuration.md documented it as a caveat).
 *
 * Now the limit is `max_response_bytes` plus the stage's per-event cap (`max_sse_event_bytes`
 * + SSE_PENDING_SLACK_BYTES, sse-stage.ts): an event the per-event cap accepts (its other lines
 * within the slack) passes after up to `max_response_bytes` of bytes that reached the host as
 * nothing.
 *
 * Input: a raw seller on 127.0.0.1 through the real gateway (a resume secret, so the host's
 * token can be read); agents with `max_response_bytes` 100,000 and `max_sse_event_bytes`
 * unset. Each GET stream: a notification, then
 * - alone: `event: message`, `id: 7`, a notification whose data is exactly 100,000 bytes;
 * - junk: an unknown-field block (`x: ...`), a JSON-RPC response (dropped,
 *   `get_stream_response`), then that event;
 * - full junk: junk that counts exactly 100,000 bytes (50 dropped responses and an unknown-field
 *   line, their bytes and 1,024 each: src/response/sse-ignored-lines.ts, hostile trial 52, F2,
 *   and its leftover, dropped events), then the event in the form MCP servers write
 *   (`event: message`, one `data:` line, no id: held as bytes across chunks);
 * then a second notification, and the seller's end.
 * Expected: the host gets the first notification, the event at the cap (`id: <token>` first,
 * carrying the seller's id 7), the second notification, exactly; the exchange ends as the
 * seller ends it (outcome `ok`; the junk's drops counted).
 * Before the fix: each stream ended before the event (3 of 3 failed: `resumable_end`,
 * `sse_undelivered`, the host given the first notification only).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { sseIds } from '../helpers/raw.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine } from '../support/hostile-seller.js';
import { createResumeCodec } from '../../src/resume/token.js';
import { SSE_DROPPED_EVENT_CHARGE_BYTES, SSE_IGNORED_LINE_CHARGE_BYTES } from '../../src/response/sse-ignored-lines.js';

/** What a dropped event and an unknown-field line each count on top of their bytes (the same). */
const CHARGE = SSE_DROPPED_EVENT_CHARGE_BYTES;
assert.equal(SSE_IGNORED_LINE_CHARGE_BYTES, CHARGE);

const SECRET = 'get-stream-event-at-cap-secret-0123456789abcdef';
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });
/** `max_response_bytes`; `max_sse_event_bytes` unset: the per-event cap on data is the same. */
const LIMIT = 100_000;

const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
const FIRST = note(1);
const LAST = note(2);

/** A notification of exactly LIMIT bytes: the data the per-event cap accepts, at the cap. */
const AT_CAP = ((): string => {
  const base = '{"jsonrpc":"2.0","method":"notifications/message","params":{"pad":""}}';
  return `{"jsonrpc":"2.0","method":"notifications/message","params":{"pad":"${'p'.repeat(LIMIT - base.length)}"}}`;
})();
const WITH_ID = `event: message\nid: 7\ndata: ${AT_CAP}\n\n`;
const HELD_FORM = `event: message\ndata: ${AT_CAP}\n\n`;

/** A JSON-RPC response, dropped from the GET stream (`get_stream_response`). */
const dropped = (k: number): string => `data: {"jsonrpc":"2.0","id":${k},"result":{}}\n\n`;
const UNKNOWN = 'x: an unknown field\n\n';

/** Dropped responses in FULL_JUNK. */
const JUNK_RESPONSES = 50;
/**
 * Junk that counts exactly LIMIT: JUNK_RESPONSES dropped responses, then an unknown-field line
 * to the byte, each of them counting 1,024 more than its bytes (sse-ignored-lines.ts). Before
 * dropped events were charged: 100 responses and 100,000 bytes (the line's charge then came
 * out of the per-event slack).
 */
const FULL_JUNK = ((): string => {
  const responses = Array.from({ length: JUNK_RESPONSES }, (_, k) => dropped(1000 + k)).join('');
  const rest = LIMIT - responses.length - (JUNK_RESPONSES + 1) * CHARGE - 'x: \n\n'.length;
  const junk = `${responses}x: ${'j'.repeat(rest)}\n\n`;
  assert.equal(junk.length + (JUNK_RESPONSES + 1) * CHARGE, LIMIT);
  return junk;
})();

const CASES = {
  alone: { body: WITH_ID, drops: undefined },
  junk: { body: `${UNKNOWN}${dropped(9)}${WITH_ID}`, drops: { get_stream_response: 1 } },
  'full-junk': { body: `${FULL_JUNK}${HELD_FORM}`, drops: { get_stream_response: JUNK_RESPONSES } },
} as const;
type Case = keyof typeof CASES;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const kind = new URL(req.url, 'http://x').searchParams.get('case') as Case;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(FIRST + CASES[kind].body + LAST);
    }),
  (seller) =>
    startObservedGateway(
      agentsYaml(Object.fromEntries(Object.keys(CASES).map((kind) => [kind, { url: `${seller.url}?case=${kind}`, max_response_bytes: LIMIT }])), [
        'resume:',
        `  secret: ${SECRET}`,
      ]),
    ),
);

const readStream = async (agent: Case): Promise<string> => {
  const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  return withTimeout(res.text(), 10_000, `the ${agent} stream`);
};
const exchangeLine = (agent: Case): Promise<LogLine> => stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent, 5_000);

/** The host got the first notification, the event at the cap, the second notification; the stream ended as the seller ended it. */
async function assertDelivered(agent: Case, withId: boolean): Promise<void> {
  const text = await readStream(agent);
  const line = await exchangeLine(agent);
  assert.deepEqual([line.outcome, line.reason], ['ok', CASES[agent].drops === undefined ? null : 'get_stream_response'], `${agent}: ${JSON.stringify(line)}`);
  assert.deepEqual(line.events_dropped, CASES[agent].drops);
  if (!withId) {
    assert.equal(text, FIRST + HELD_FORM + LAST);
    return;
  }
  const tokens = sseIds(text);
  assert.equal(tokens.length, 1, text.slice(0, 300));
  assert.equal(text, `${FIRST}id: ${tokens[0]}\nevent: message\ndata: ${AT_CAP}\n\n${LAST}`);
  const v = codec.verify(tokens[0]!, agent, stack.gateway.sellerUrl(agent));
  assert.ok(v.ok, tokens[0]);
  assert.equal(v.state.upstreamId, '7');
}

describe('get-stream-event-at-cap-ends-stream', { timeout: TEST_TIMEOUT_MS }, () => {
  test('an event whose data is at the per-event cap (max_sse_event_bytes unset) is delivered; the stream goes on', () => assertDelivered('alone', true));

  test('the same after an unknown-field line and a dropped response', () => assertDelivered('junk', true));

  test('the same, in the held form, after junk counting exactly max_response_bytes', () => assertDelivered('full-junk', false));
});
