/**
 * src/shutdown-streams.ts: the margin before the grace's end, and which phase the shutdown
 * asks the streams for (`endStreams('grace' | 'no_requests' | 'final')`): at the signal, at each
 * sweep, after each exchange's end, at the margin; on a fake gateway and node:test's mocked
 * timers (no sockets).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import type { Logger } from 'pino';
import type { Exchange } from '../../src/exchange.js';
import type { SseShutdownPhase } from '../../src/response/pipeline.js';
import { SHUTDOWN_SWEEP_MS, endStreamsForShutdown, shutdownAnswerMarginMs } from '../../src/shutdown-streams.js';

const NEARLY_OVER = 'shutdown_grace_ms nearly over: ending the SSE streams still open';
const NOTHING_IN_FLIGHT = 'nothing in flight: ending the SSE streams that answer no request';

/**
 * A gateway with `calls` request streams and `quiet` streams answering no request, and
 * `requests` request exchanges in flight: `grace` ends none, `no_requests` the quiet ones,
 * `final` all that are left.
 */
function fakeGateway(opts: { calls: number; quiet: number; requests: number }) {
  const phases: SseShutdownPhase[] = [];
  const ends: Array<(exchange: Exchange, hostStatus: number | null) => void> = [];
  const gw = {
    phases,
    calls: opts.calls,
    quiet: opts.quiet,
    requestsInFlight: opts.requests,
    get openStreams() {
      return gw.calls + gw.quiet;
    },
    endStreams(phase: SseShutdownPhase = 'final') {
      phases.push(phase);
      if (phase === 'grace') return 0;
      let n = gw.quiet;
      gw.quiet = 0;
      if (phase === 'final') {
        n += gw.calls;
        gw.calls = 0;
      }
      return n;
    },
    onExchangeEnd(listener: (exchange: Exchange, hostStatus: number | null) => void) {
      ends.push(listener);
    },
    /** A request exchange ends. */
    endRequest() {
      gw.requestsInFlight--;
      for (const listener of ends) listener({} as Exchange, 200);
    },
  };
  return gw;
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
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'setImmediate'] }));
  afterEach(() => mock.timers.reset());

  test('10 s, a request in flight: grace at the signal and at each sweep, final 1 s before the grace runs out, one line', () => {
    const gw = fakeGateway({ calls: 2, quiet: 1, requests: 2 });
    const { lines, logger } = fakeLogger();
    const s = endStreamsForShutdown(gw, logger, 10_000);
    assert.deepEqual([s.ended, s.finishing, gw.phases], [0, 3, ['grace']]);
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.deepEqual(gw.phases, ['grace', 'grace']);
    mock.timers.tick(9_000 - SHUTDOWN_SWEEP_MS - 1);
    assert.deepEqual([...new Set(gw.phases)], ['grace']);
    assert.deepEqual(lines, []);
    mock.timers.tick(1);
    assert.equal(gw.phases.at(-1), 'final');
    assert.deepEqual(lines, [[{ grace_ms: 10_000, margin_ms: 1_000, sse_streams_ended: 3 }, NEARLY_OVER]]);
    // Later sweeps end at once what starts after that.
    const before = gw.phases.length;
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.deepEqual(gw.phases.slice(before), ['final']);
    s.stop();
    mock.timers.tick(10_000);
    assert.equal(gw.phases.length, before + 1, 'stopped: no sweep, no timer');
  });

  test('the last request ends: the streams answering no request end right after it (not at the next sweep), one line', () => {
    const gw = fakeGateway({ calls: 0, quiet: 2, requests: 1 });
    const { lines, logger } = fakeLogger();
    const s = endStreamsForShutdown(gw, logger, 10_000);
    assert.deepEqual([s.ended, s.finishing, gw.phases], [0, 2, ['grace']]);
    gw.endRequest();
    mock.timers.tick(0);
    assert.deepEqual(gw.phases, ['grace', 'no_requests']);
    assert.deepEqual(lines, [[{ sse_streams_ended: 2 }, NOTHING_IN_FLIGHT]]);
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.equal(lines.length, 1, 'nothing more to end: no second line');
    s.stop();
    gw.endRequest();
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.equal(gw.phases.length, 3, 'stopped: an exchange end looks no more');
  });

  test('no request in flight at the signal: the streams answering no request end then (counted in ended, no extra line)', () => {
    const gw = fakeGateway({ calls: 0, quiet: 1, requests: 0 });
    const { lines, logger } = fakeLogger();
    const s = endStreamsForShutdown(gw, logger, 10_000);
    assert.deepEqual([s.ended, s.finishing, gw.phases], [1, 0, ['no_requests']]);
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.deepEqual(lines, []);
    s.stop();
  });

  test('nothing left when the time comes: no line', () => {
    const gw = fakeGateway({ calls: 1, quiet: 0, requests: 1 });
    const { lines, logger } = fakeLogger();
    const s = endStreamsForShutdown(gw, logger, 1_500);
    gw.calls = 0; // the seller answered
    mock.timers.tick(1_500);
    assert.deepEqual(lines, []);
    s.stop();
  });

  test('the smallest grace (1 ms) ends everything at the signal', () => {
    const gw = fakeGateway({ calls: 2, quiet: 1, requests: 2 });
    const s = endStreamsForShutdown(gw, fakeLogger().logger, 1);
    assert.deepEqual([s.ended, s.finishing, gw.phases], [3, 0, ['final']]);
    s.stop();
  });

  test('endAll (a forced exit) ends everything now, and the sweeps after it too', () => {
    const gw = fakeGateway({ calls: 1, quiet: 1, requests: 1 });
    const s = endStreamsForShutdown(gw, fakeLogger().logger, 60_000);
    assert.equal(s.endAll(), 2);
    mock.timers.tick(SHUTDOWN_SWEEP_MS);
    assert.deepEqual(gw.phases, ['grace', 'final', 'final']);
    s.stop();
  });
});
