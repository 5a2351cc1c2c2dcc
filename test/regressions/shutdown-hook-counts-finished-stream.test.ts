/**
 * Regression (review 34, item 4): a graceful shutdown's `end` (response/pipeline.ts
 * SseShutdownEnd) returned true for an SSE stream already over whose entry had not yet left
 * the open streams, so app.ts `endStreams` counted it as ended: `sse_streams_ended` over-counted,
 * and a `nothing in flight: ending the SSE streams that answer no request` line could repeat
 * at the next look (src/shutdown-streams.ts).
 *
 * Input: the SSE stage (sse-stage-kit.ts, no sockets) for a `tools/call` whose seller sends its
 * response event and ends; its `end` captured from `onSseStart`, called once the stage is over
 * in every phase, with tokens that outlive the process and without.
 *
 * Expectation: the host got the response event only; each call returns false and writes
 * nothing more.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SseShutdownEnd } from '../../src/response/pipeline.js';
import { runSseStage } from '../unit/sse-stage-kit.js';

const RESPONSE = 'data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n';

describe('shutdown-hook-counts-finished-stream', () => {
  test('a stream already over: its shutdown end returns false, in every phase, and writes nothing', async () => {
    let end: SseShutdownEnd | undefined;
    const run = await runSseStage([RESPONSE], { onSseStart: (e) => (end = e) });
    assert.equal(run.body, RESPONSE);
    assert.equal(run.exchange.finished, true);
    assert.ok(end, 'the stage gave its end');
    const calls = [
      [true, 'grace'],
      [true, 'no_requests'],
      [true, 'final'],
      [false, 'final'],
    ] as const;
    assert.deepEqual(
      calls.map(([outlive, phase]) => end!(outlive, phase)),
      [false, false, false, false],
    );
    assert.equal(run.writes.join(''), RESPONSE);
    assert.equal(run.exchange.outcome, 'ok');
  });
});
