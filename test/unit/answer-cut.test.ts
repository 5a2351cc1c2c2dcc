/**
 * hostLeftMidAnswer (src/routing/answer-cut.ts): which closes turn an exchange into
 * `host_aborted`. Input: an exchange outcome and the host's request, whose socket is errored
 * (the connection failed: a host that left mid-answer) or not. Expectation: only a forwarded
 * answer (`ok`, `rewritten`, `resumable_end`) on an errored socket; a gateway-made answer and
 * an outcome already about the host or a shutdown never (the end-to-end case:
 * test/regressions/host-leaves-mid-answer-not-ok.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { hostLeftMidAnswer } from '../../src/routing/answer-cut.js';
import type { Outcome } from '../../src/exchange.js';

function requestOn(socket: { errored: Error | null } | null): IncomingMessage {
  return { socket } as unknown as IncomingMessage;
}
const FINISHED = { writableFinished: true };
const UNFINISHED = { writableFinished: false };
const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

test('a forwarded answer whose connection failed: the host left mid-answer', () => {
  for (const outcome of ['ok', 'rewritten', 'resumable_end'] as const) {
    assert.equal(hostLeftMidAnswer(outcome, requestOn({ errored: reset }), FINISHED), true, outcome);
    assert.equal(hostLeftMidAnswer(outcome, requestOn({ errored: null }), FINISHED), false, `${outcome}, a normal close`);
    assert.equal(hostLeftMidAnswer(outcome, requestOn({ errored: null }), UNFINISHED), true, `${outcome}, never finished (a queued answer whose connection died)`);
  }
});

test('a gateway-made answer, an outcome already set by the host or a shutdown, or no socket: unchanged', () => {
  const kept: Array<Outcome | undefined> = ['local_error', 'refused', 'host_aborted', 'shutdown_cut', undefined];
  for (const outcome of kept) {
    assert.equal(hostLeftMidAnswer(outcome, requestOn({ errored: reset }), FINISHED), false, String(outcome));
    assert.equal(hostLeftMidAnswer(outcome, requestOn({ errored: null }), UNFINISHED), false, `${String(outcome)}, never finished`);
  }
  assert.equal(hostLeftMidAnswer('ok', requestOn(null), FINISHED), false);
});
