/**
 * Hot-path review of the elicitation tracking (routing/host-answer-waits.ts): a request of the
 * seller's on a stream answering no request (the standalone GET stream: the MCP TypeScript
 * SDK's `server.elicitInput()`) is awaited by every stream of its session opened within its own
 * `sse_idle_timeout_ms` of it, each paused at most to its own `sse_deadline_ms`. Nothing ended
 * the shared id itself but the host's answer, the seller's cancellation or the session's last
 * stream closing: a GET stream kept open for days kept it, and with it every chunk holding a
 * cancellation of the session's streams parsed (sse-stage.ts `readAll`) and the session's
 * entry alive. Now it expires once no stream can wait for it any more: the stream's
 * `sse_idle_timeout_ms` + `sse_deadline_ms` after it was seen (`awaitShared` `keepMs`).
 *
 * Input (the timers mocked, no real time): a GET member shares request 5 with `keepMs`
 * 1,000 + 5,000; a call's stream (grace 1,000) opens. Expected: the call's clock pauses (`p`),
 * the session has a request awaited; 5,999 ms later still; at 6,000 ms the clock runs again
 * (`pr`) and nothing is awaited.
 */
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostAnswerWaits, sessionKeyOf } from '../../src/routing/host-answer-waits.js';
import { clock } from '../helpers/recording-idle-clock.js';


test('shared-elicitation-wait-never-expires: a shared request expires after the idle limit + the deadline', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const waits = new HostAnswerWaits();
    const get = waits.openStream('seller', 'S', undefined);
    get.awaitShared('n5', 1_000 + 5_000);
    const c = clock();
    const call = waits.openStream('seller', 'S', c, 1_000);
    assert.deepEqual([c.calls, waits.anyAwaitedIn(sessionKeyOf('seller', 'S'))], ['p', true]);
    mock.timers.tick(5_999);
    assert.deepEqual([c.calls, waits.anyAwaitedIn(sessionKeyOf('seller', 'S'))], ['p', true]);
    mock.timers.tick(1);
    assert.deepEqual([c.calls, waits.anyAwaitedIn(sessionKeyOf('seller', 'S'))], ['pr', false]);
    call.close();
    get.close();
    assert.equal(waits.sessions, 0);
  } finally {
    mock.timers.reset();
  }
});
