/**
 * The requests a host's `notifications/cancelled` can name (src/routing/in-flight-requests.ts,
 * the registry of requests in flight) and the id it names (src/mcp/cancelled-id.ts): what is
 * registered, what a cancellation marks, and the exact id comparison (trial 17, L1;
 * test/regressions/cancelled-call-gets-minted-upstream-reset.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcPeek } from '../../src/exchange.js';
import { InFlightRequests, NOT_REGISTERED, turnVerdict } from '../../src/routing/in-flight-requests.js';
import { cancelledRequestIdOf, type WrittenRequestId } from '../../src/mcp/cancelled-id.js';
import { acceptedCancel, exchangeOf, SELLER, slotOf } from '../helpers/in-flight-exchanges.js';
import { sendWindowMs } from '../../src/admission/agent-guard.js';

/** A requestId as a notification writes it (`text`: its JSON value). */
const written = (text: string): WrittenRequestId => ({ bytes: Buffer.from(text), range: [0, text.length] });

const call = (id: string | number, idText?: string): RpcPeek => ({ kind: 'request', id, idText, method: 'tools/call', toolName: 'get_products', taskId: undefined });

test('registers single requests with a session only', () => {
  const r = new InFlightRequests();
  assert.equal(r.open(exchangeOf('s', call(1), undefined)), NOT_REGISTERED);
  assert.equal(r.open(exchangeOf('s', { kind: 'notification', id: null, idText: undefined, method: 'notifications/progress', toolName: undefined, taskId: undefined }, 'a')), NOT_REGISTERED);
  assert.equal(r.open(exchangeOf('s', { kind: 'batch', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined, batchRequestIds: [] }, 'a')), NOT_REGISTERED);
  const x = exchangeOf('s', call(1), 'a');
  const slot = slotOf(r.open(x));
  assert.notEqual(slot, NOT_REGISTERED);
  assert.equal(r.size, 1);
  r.close(slot, x);
  r.close(slot, x); // twice: a no-op
  assert.equal(r.size, 0);
  assert.equal(acceptedCancel(r, SELLER, 'a', written('1')), 0, 'an ended exchange is not marked');
  assert.equal(x.cancelled, false);
});

test('a cancellation marks the request of its agent, session and id, exactly', () => {
  const r = new InFlightRequests();
  const target = exchangeOf('s', call(7), 'a');
  const others = [exchangeOf('s', call(7), 'b'), exchangeOf('t', call(7), 'a'), exchangeOf('s', call('7'), 'a'), exchangeOf('s', call(8), 'a')];
  // `t`'s 7 in session a is refused (agents s and t share the seller url, so its sessions and
  // ids): never in flight beside `s`'s, so never marked with it.
  const opened = [target, ...others].map((x) => r.open(x));
  assert.deepEqual(
    opened.map((o) => typeof o === 'number'),
    [true, true, false, true, true],
  );
  assert.equal(acceptedCancel(r, SELLER, 'a', written('7.0')), 1);
  assert.equal(target.cancelled, true);
  assert.deepEqual(
    others.map((x) => x.cancelled),
    [false, false, false, false],
  );
});

test('the requestId of a notifications/cancelled, as written', () => {
  const of = (text: string): string | undefined => {
    const w = cancelledRequestIdOf(Buffer.from(text));
    return w === undefined ? undefined : w.bytes.toString('utf8', w.range[0], w.range[1]);
  };
  assert.equal(of('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}'), '7');
  assert.equal(of('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a\\u0062"}}'), '"a\\u0062"');
  assert.equal(of('{"method":"notifications/cancelled","params":{"requestId":9007199254740993}}'), '9007199254740993');
  assert.equal(of('{"method":"notifications/cancelled","params":{"requestId":-1.0}}'), '-1.0');
  // Escaped keys and duplicates read as JSON.parse reads them (the last wins).
  assert.equal(of('{"method":"notifications/cancelled","params":{"request\\u0049d":3,"requestId":4}}'), '4');
  assert.equal(of('{"params":{"requestId":1},"par\\u0061ms":{"requestId":2}}'), '2');
  for (const none of ['{"method":"notifications/cancelled"}', '{"params":[]}', '{"params":{"requestId":null}}', '{"params":{"requestId":{}}}', '{"params":{"requestId":true}}', '{"params":{"reason":"x"}}', '[]']) {
    assert.equal(of(none), undefined, none);
  }
});

test('ids compare exactly: by value as written for numbers, escapes decoded, never a string for a number', () => {
  const marks = (requestId: string, id: string | number, idText?: string): boolean => {
    const r = new InFlightRequests();
    slotOf(r.open(exchangeOf('s', call(id, idText), 'a')));
    return acceptedCancel(r, SELLER, 'a', written(requestId)) === 1;
  };
  assert.equal(marks('1', 1), true);
  assert.equal(marks('1.0', 1), true);
  assert.equal(marks('1E2', 100, '1e+2'), true);
  assert.equal(marks('9007199254740993', 9007199254740992), false);
  assert.equal(marks('-0', 0), true);
  assert.equal(marks('"1"', 1), false);
  assert.equal(marks('1', '1'), false);
  assert.equal(marks('"a\\u0062"', 'ab'), true);
  assert.equal(marks('"a"', 'b'), false);
});

test('a request waiting for its pipelined turn: cancellable, holds no id, closed at its turn; onCancelled once (hostile trial 55, F2)', () => {
  const r = new InFlightRequests();
  const agent = exchangeOf('s', call(1), 'a').agent;
  assert.equal(r.openWaiting(agent, 'a', { kind: 'notification', id: null, idText: undefined, method: 'notifications/progress', toolName: undefined, taskId: undefined }), undefined);
  const waiting = r.openWaiting(agent, 'a', call(61))!;
  // Its id is judged at its turn, not while it waits: a request with its id is registered beside it.
  const other = exchangeOf('s', call(61), 'a');
  const otherSlot = slotOf(r.open(other));
  let called = 0;
  other.onCancelled = () => called++;
  assert.equal(acceptedCancel(r, SELLER, 'a', written('61')), 2);
  assert.deepEqual([waiting.entry.cancelAccepted, other.cancelled, called, other.onCancelled], [true, true, 1, undefined]);
  assert.equal(acceptedCancel(r, SELLER, 'a', written('61')), 2);
  assert.equal(called, 1, 'called once');
  r.close(waiting.slot, waiting.entry);
  r.close(otherSlot, other);
  assert.deepEqual([r.size, r.sessions], [0, 0]);
});

test('a mark holds once the seller accepts a cancellation, is withdrawn when it refuses every one; onCancelled once (a review, Low)', () => {
  const r = new InFlightRequests();
  const x = exchangeOf('s', call(9), 'a');
  slotOf(r.open(x));
  const calls: string[] = [];
  x.onCancelled = () => calls.push('accepted');
  const refused = r.markCancelled(SELLER, 'a', written('9'))!;
  assert.deepEqual([refused.count, x.cancelled, x.cancelsAwaited], [1, true, 1], 'marked until the answer');
  refused.settle(false);
  refused.settle(true); // settled once: a no-op
  assert.deepEqual([x.cancelled, x.cancelAccepted, x.cancelsAwaited, calls], [false, false, 0, []]);
  // Two cancellations: one refused, one accepted, in either order: kept.
  const first = r.markCancelled(SELLER, 'a', written('9.0'))!;
  const second = r.markCancelled(SELLER, 'a', written('9'))!;
  first.settle(true);
  assert.deepEqual([x.cancelled, x.cancelAccepted, x.cancelsAwaited], [true, true, 1]);
  second.settle(false);
  assert.deepEqual([x.cancelled, x.cancelAccepted, x.cancelsAwaited, calls], [true, true, 0, ['accepted']]);
  assert.equal(r.markCancelled(SELLER, 'a', written('8')), undefined, 'none in flight');
});

test('a hold at its turn waits only for the cancellations awaited then; an acceptance, a timeout or a close ends it once (review of the cancel-accept fix, Medium 2)', async () => {
  const r = new InFlightRequests();
  // Held through holdAtTurn, its deadline leaving it `maxMs` to hold (started that long before its send window's end); `not held` when holdAtTurn holds nothing.
  const deadlineMs = 120_000;
  const hold = (x: ReturnType<typeof exchangeOf>, maxMs = 60_000): string[] => {
    const ends: string[] = [];
    if (!r.holdAtTurn(x, deadlineMs, performance.now() - (sendWindowMs(deadlineMs, deadlineMs) - maxMs), (end) => ends.push(end))) ends.push('not held');
    return ends;
  };
  // Nothing awaited: on at once.
  const x = exchangeOf('s', call(1), 'a');
  const xSlot = slotOf(r.open(x));
  assert.deepEqual(hold(x), ['not held']);
  // Awaited at its turn: a later cancellation does not lengthen the hold, though it still marks.
  const early = r.markCancelled(SELLER, 'a', written('1'))!;
  const ends = hold(x);
  const late = r.markCancelled(SELLER, 'a', written('1'))!;
  assert.deepEqual([x.cancelsAwaited, ends], [2, []]);
  early.settle(false);
  assert.deepEqual([ends, x.cancelled, x.cancelHold], [['refused'], true, undefined], 'on, marked by the later one until its answer');
  late.settle(false);
  assert.deepEqual([ends, x.cancelled], [['refused'], false]);
  // A later cancellation accepted during the hold ends it: never sent.
  const awaited = r.markCancelled(SELLER, 'a', written('1'))!;
  const ends2 = hold(x);
  r.markCancelled(SELLER, 'a', written('1'))!.settle(true);
  assert.deepEqual([ends2, x.cancelAccepted], [['accepted'], true]);
  awaited.settle(false);
  assert.deepEqual(ends2, ['accepted'], 'once');
  assert.deepEqual(hold(x), ['not held'], 'accepted already: at once');
  // Closed while held: `closed`, its timer cleared.
  const y = exchangeOf('s', call(2), 'a');
  const ySlot = slotOf(r.open(y));
  const pending = r.markCancelled(SELLER, 'a', written('2'))!;
  const ends3 = hold(y);
  r.close(ySlot, y);
  pending.settle(false);
  assert.deepEqual([ends3, y.cancelHold], [['closed'], undefined]);
  // Past its time: `timeout`, the cancellation still awaited; its answer then changes nothing.
  const z = exchangeOf('s', call(3), 'a');
  slotOf(r.open(z));
  const hung = r.markCancelled(SELLER, 'a', written('3'))!;
  const ends4 = hold(z, 5);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual([ends4, z.cancelsAwaited], [['timeout'], 1]);
  hung.settle(false);
  assert.deepEqual(ends4, ['timeout']);
  r.close(xSlot, x);
});

test("a request's turn, both sites' one mechanism (holdAtTurn, turnVerdict): held only while a cancellation is awaited, none accepted, and its deadline leaves time; late once held is cancel_wait", () => {
  const r = new InFlightRequests();
  const x = exchangeOf('s', call(4), 'a');
  const slot = slotOf(r.open(x));
  const ends: string[] = [];
  const then = (end: string): number => ends.push(end);
  assert.equal(r.holdAtTurn(x, 10_000, performance.now(), then), false, 'nothing awaited: not held');
  const pending = r.markCancelled(SELLER, 'a', written('4'))!;
  assert.equal(r.holdAtTurn(x, 10_000, performance.now() - 10_000, then), false, 'its deadline spent: not held');
  assert.equal(r.holdAtTurn(x, 10_000, performance.now(), then), true, 'held');
  pending.settle(false);
  assert.deepEqual(ends, ['refused']);
  r.markCancelled(SELLER, 'a', written('4'))!.settle(true);
  assert.equal(r.holdAtTurn(x, 10_000, performance.now(), then), false, 'accepted already: not held');
  r.close(slot, x);
  assert.deepEqual(
    [turnVerdict(undefined, 10_000, 10_000), turnVerdict(undefined, 0, 10_000), turnVerdict('refused', 10_000, 10_000), turnVerdict('refused', 0, 10_000), turnVerdict('timeout', 10_000, 10_000)],
    ['send', 'too_late', 'send', 'cancel_wait', 'cancel_wait'],
  );
});
