/**
 * Regression (hostile trial 32, L1): on the standalone GET stream (no total, by design) an
 * event over `max_sse_event_bytes` is dropped and skipped to its end, and skipping decodes it,
 * with nothing reaching the host to slow the seller down: `Content-Encoding: gzip, gzip` made
 * 6,392 bytes decode to 536,870,920 (2 s of the gateway's CPU, nothing delivered), and one
 * endless event kept it decoding for as long as the host held the stream.
 *
 * Then (response/sse-chunk-taker.ts `take`): an event still going `max_response_bytes` past its bound
 * ended such a stream plainly (outcome `resumable_end`, reason `sse_event`); one that ends
 * within that is skipped and the stream goes on, as before
 * (test/regressions/get-stream-oversized-event.test.ts). Now (hostile trial 37, F1: that
 * allowance bounded one event, not the connection) the skipped bytes count with every other
 * byte that reaches the host as nothing, from the last byte delivered
 * (response/sse-undelivered.ts): the event's bytes before its cap broke included, and the end's
 * reason is `sse_undelivered` (test/regressions/get-stream-undelivered-bytes-unbounded.test.ts).
 * The allowance is `max_response_bytes` plus the per-event cap (`max_sse_event_bytes` +
 * 65,536: an event the cap accepts passes after up to `max_response_bytes` of junk,
 * test/regressions/get-stream-event-at-cap-ends-stream.test.ts): 275,536 bytes here.
 *
 * Input: agent limits max_sse_event_bytes 10000, max_response_bytes 200000; a raw seller whose
 * GET stream sends one small event, then `data: ` and 64 KiB writes of `a` with no line end,
 * up to 32 MiB (its writes wait for the gateway to read). Control, another agent: an event of
 * 150,000 bytes (within the allowance), then a small one, then the end.
 * Expected: the endless stream ends at the host after the first event, outcome
 * `resumable_end`, reason `sse_undelivered`, `events_dropped` {"sse_event":1}, the gateway
 * having decoded the first event and the allowance, and at most one read (65,536) more;
 * the control's host gets both small events and the stream ends as the seller ends it (`ok`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { sseMessages } from '../helpers/raw.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { drainOrClose } from '../../src/response/drain.js';

const EVENT_LIMIT = 10_000;
const RESPONSE_LIMIT = 200_000;
/** The undelivered limit (response/sse-undelivered.ts): max_response_bytes + the per-event cap. */
const ALLOWANCE = RESPONSE_LIMIT + EVENT_LIMIT + SSE_PENDING_SLACK_BYTES;
const READ = 65_536;
const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;

const stack = useSellerAndGateway(
  () =>
    startRawSeller(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(note(1));
      if (req.url?.includes('control') === true) {
        res.write(`data: ${'b'.repeat(150_000)}\n\n`);
        res.end(note(2));
        return;
      }
      res.write('data: ');
      const block = Buffer.alloc(64 * 1024, 'a');
      for (let written = 0; written < 32 * 1024 * 1024 && !res.destroyed; written += block.length) {
        if (!res.write(block)) await drainOrClose(res);
      }
      res.end();
    }),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        endless: { url: seller.url, max_sse_event_bytes: EVENT_LIMIT, max_response_bytes: RESPONSE_LIMIT },
        control: { url: `${seller.url}?control`, max_sse_event_bytes: EVENT_LIMIT, max_response_bytes: RESPONSE_LIMIT },
      }),
    ),
);

const readStream = async (agent: string): Promise<string> => {
  const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  return withTimeout(res.text(), 10_000, `the ${agent} stream`);
};

describe('get-stream-skipped-event-decoded-without-end', { timeout: TEST_TIMEOUT_MS }, () => {
  test('an event still going past the allowance (max_response_bytes + the per-event cap) ends the stream, resumable', async () => {
    const text = await readStream('endless');
    assert.deepEqual(sseMessages(text), [{ jsonrpc: '2.0', method: 'notifications/message', params: { n: 1 } }]);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'endless', 5_000);
    assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['resumable_end', 'sse_undelivered', { sse_event: 1 }]);
    const decoded = line.bytes_decoded as number;
    assert.ok(decoded >= note(1).length + ALLOWANCE && decoded <= note(1).length + ALLOWANCE + READ, `bytes_decoded ${decoded}`);
  });

  test('control: an event that ends within the allowance is skipped; the stream goes on to its end', async () => {
    const text = await readStream('control');
    assert.deepEqual(
      (sseMessages(text) as Array<{ params: { n: number } }>).map((m) => m.params.n),
      [1, 2],
    );
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'control', 5_000);
    assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['ok', 'sse_event', { sse_event: 1 }]);
  });
});
