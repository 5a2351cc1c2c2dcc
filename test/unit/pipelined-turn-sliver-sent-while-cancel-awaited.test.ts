/**
 * Regression (a review of the one cancel-hold mechanism, Low): a pipelined request whose turn
 * came with a cancellation naming it still awaiting the seller's answer, and between -1 and 0 ms
 * of its send window left, was neither held (InFlightRequests.holdAtTurn judges the exact time
 * left: too late to hold) nor refused (the handler judged its turn on the time left rounded up:
 * `send`), so it went to the seller. The turn is now judged on the exact time left.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queuedTurn } from '../../src/routing/pipelined-wait.js';
import { sendWindowMs } from '../../src/admission/agent-guard.js';

test('pipelined-turn-sliver-sent-while-cancel-awaited: a turn 0.5 ms past its send window is too late, not sent', () => {
  const deadlineMs = 1000;
  // sendWindowMs(remaining, 1000) = remaining - 250: 249.5 ms left is 0.5 ms past the window.
  const queuedAt = { ms: 0, cancelHold: undefined };
  const nowMs = deadlineMs - 249.5;
  assert.ok(sendWindowMs(249.5, deadlineMs) < 0, 'holdAtTurn does not hold it');
  assert.deepEqual(queuedTurn(queuedAt, deadlineMs, nowMs), { maxWaitMs: 250, turn: 'too_late' });
});

test('pipelined-turn-sliver-sent-while-cancel-awaited: exactly at the window and before it the turn is sent; a hold that timed out is cancel_wait', () => {
  assert.deepEqual(queuedTurn({ ms: 0, cancelHold: undefined }, 1000, 750), { maxWaitMs: 250, turn: 'send' });
  assert.deepEqual(queuedTurn({ ms: 0, cancelHold: undefined }, 1000, 100), { maxWaitMs: 900, turn: 'send' });
  assert.deepEqual(queuedTurn({ ms: 0, cancelHold: 'timeout' }, 1000, 100), { maxWaitMs: 900, turn: 'cancel_wait' });
  assert.deepEqual(queuedTurn({ ms: 0, cancelHold: 'accepted' }, 1000, 750.5), { maxWaitMs: 250, turn: 'cancel_wait' });
  assert.deepEqual(queuedTurn(undefined, 1000, 123), { maxWaitMs: 1000, turn: 'send' });
});
