/**
 * src/shutdown-streams.ts: the margin before the grace's end, and when the shutdown asks the
 * streams to finish (`endStreams(false)`) or to end (`endStreams(true)`), on a fake gateway and
 * node:test's mocked timers (no sockets).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import type { Logger } from 'pino';
import { SHUTDOWN_SWEEP_MS, endStreamsForShutdown, shutdownAnswerMarginMs } from '../../src/shutdown-streams.js';

const NEARLY_OVER = 'shutdown_grace_ms nearly over: answering the calls still streaming with gateway_shutdown';

/** A gateway whose `open` streams all answer calls that cannot be resumed: `endStreams(false)` ends none, `endStreams(true)` all. */
function fakeGateway(open: number) {
  const calls: boolean[] = [];
  return {
    calls,
    openStreams: open,
    endStreams(final = true) {
      calls.push(final);
      return final ? open : 0;
    },
  };
}

function fakeLogger() {
  const lines: Array<[Record<string, unknown>, string]> = [];
  return { lines, logger: { info: (fields: Record<string, unknown>, msg: string) => lines.push([fields, msg]) } as unknown as Logger };
}

describe('shutdownAnswerMarginMs', () => {
  test('min(1000 ms, half the grace, rounded up)', () => {
    assert.deepEqual(
      [1, 2, 3, 1500, 1999, 2000, 2001, 10_000, 86_400_000].map(shutdownAnswerMarginMs),
      [1, 1, 2, 750, 1000, 1000, 1000, 1000, 1000],
    );
  });
});

describe('endStreamsForShutdown', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval'] }));
  afterEach(() => mock.timers.reset());

  test('10 s: finish at the signal and at each sweep, end everything 1 s before the grace runs out, one line', () => {
    const gw = fakeGateway(2);
    const { lines, logger } = fakeLogger();
    const s = endStreamsForShutdown(gw, logger, 10_000);
    assert.deepEqual([s.ended, s.finishing, gw.calls], [0, 2, [false]]);
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.deepEqual(gw.calls, [false, false]);
    mock.timers.tick(9_000 - SHUTDOWN_SWEEP_MS - 1);
    assert.equal(gw.calls.includes(true), false);
    assert.deepEqual(lines, []);
    mock.timers.tick(1);
    assert.equal(gw.calls.at(-1), true);
    assert.deepEqual(lines, [[{ grace_ms: 10_000, margin_ms: 1_000, sse_streams_ended: 2 }, NEARLY_OVER]]);
    // Later sweeps end at once what starts after that.
    const before = gw.calls.length;
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.deepEqual(gw.calls.slice(before), [true]);
    s.stop();
    mock.timers.tick(10_000);
    assert.equal(gw.calls.length, before + 1, 'stopped: no sweep, no timer');
  });

  test('nothing left when the time comes: no line', () => {
    const gw = { openStreams: 1, endStreams: (final = true) => (final ? 0 : 1) };
    const { lines, logger } = fakeLogger();
    const s = endStreamsForShutdown(gw, logger, 1_500);
    assert.deepEqual([s.ended, s.finishing], [1, 0]);
    mock.timers.tick(1_500);
    assert.deepEqual(lines, []);
    s.stop();
  });

  test('the smallest grace (1 ms) ends everything at the signal', () => {
    const gw = fakeGateway(3);
    const s = endStreamsForShutdown(gw, fakeLogger().logger, 1);
    assert.deepEqual([s.ended, s.finishing, gw.calls], [3, 0, [true]]);
    s.stop();
  });

  test('endAll (a forced exit) ends everything now, and the sweeps after it too', () => {
    const gw = fakeGateway(1);
    const s = endStreamsForShutdown(gw, fakeLogger().logger, 60_000);
    assert.equal(s.endAll(), 1);
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.deepEqual(gw.calls, [false, true, true]);
    s.stop();
  });
});
