/**
 * Hostile trial 56, F1 (High): json-numbers.ts exactDecimal read a number's exponent with
 * `BigInt(exponentText)`, quadratic in its digits (`BigInt('9'.repeat(4e6))` ~1.15 s). A host's
 * `notifications/cancelled` with `{"requestId":1e999…9}` (4,000,000 nines, a 4 MB body)
 * stalled the whole gateway 3.7 s with one request in flight in its session and 14 s with four
 * (the id read once per request in flight: routing/in-flight-requests.ts cancel); a host
 * request id `1e-<4M nines>` and a seller's response id `1e<4M nines>` did the same.
 *
 * Asserted without timing: `globalThis.BigInt` is wrapped to count calls on a text longer than
 * 64 characters; none may happen, on every path the trial took, and the answers stay exact.
 * The exact equality itself against the old BigInt computation: test/unit/json-numbers.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exactDecimal, sameJsonNumber } from '../../src/mcp/json-numbers.js';
import { isRequestId } from '../../src/response/json-value-at.js';
import { InFlightRequests } from '../../src/routing/in-flight-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';
import { acceptedCancel, exchangeOf, SELLER, slotOf } from '../helpers/in-flight-exchanges.js';
import { hostRpc } from '../helpers/written-request-ids.js';

const N = 100_000;
const NINES = '9'.repeat(N);
const written = (text: string): WrittenRequestId => ({ bytes: Buffer.from(text), range: [0, text.length] });

/** Runs `body` with `globalThis.BigInt` counting its calls on a text over 64 characters; returns the count. */
function longBigIntCalls(body: () => void): number {
  const real = globalThis.BigInt;
  let calls = 0;
  const counting = (value: string | number | bigint | boolean) => {
    if (typeof value === 'string' && value.length > 64) calls++;
    return real(value);
  };
  globalThis.BigInt = Object.assign(counting, real) as BigIntConstructor;
  try {
    body();
  } finally {
    globalThis.BigInt = real;
  }
  return calls;
}

test('exactDecimal and sameJsonNumber: a 100,000-digit exponent is read without a BigInt of it, exactly', () => {
  const calls = longBigIntCalls(() => {
    assert.equal(exactDecimal(`1e${NINES}`), `1e${NINES}`);
    assert.equal(exactDecimal(`-1.50E+0${NINES}`), `-15e${'9'.repeat(N - 1)}8`);
    assert.equal(exactDecimal(`1e-${NINES}`), `1e-${NINES}`);
    assert.equal(exactDecimal(`100e-${NINES}`), `1e-${'9'.repeat(N - 1)}7`);
    assert.equal(exactDecimal(`1000e${NINES}`), `1e1${'0'.repeat(N - 1)}2`);
    assert.equal(exactDecimal(`0.1e1${'0'.repeat(N)}`), `1e${'9'.repeat(N)}`);
    assert.equal(sameJsonNumber(`1e${NINES}`, `10e${'9'.repeat(N - 1)}8`), true);
    assert.equal(sameJsonNumber(`1e${NINES}`, `1e-${NINES}`), false);
    assert.equal(sameJsonNumber(`1e0${NINES}`, `1e${NINES}`), true);
  });
  assert.equal(calls, 0);
});

test('a seller response id 1e<100,000 nines> against the request ids 1 and 1e-5: not theirs, no BigInt of it', () => {
  const id = Buffer.from(`1e${NINES}`);
  const calls = longBigIntCalls(() => {
    assert.equal(isRequestId(id, [0, id.length], hostRpc('1', 'tools/call')), false);
    assert.equal(isRequestId(id, [0, id.length], hostRpc('1e-5', 'tools/call')), false);
  });
  assert.equal(calls, 0);
});

test('a cancellation requestId 1e<100,000 nines> with 4 requests in flight: none marked; 1e-<…> spellings still match exactly', () => {
  const r = new InFlightRequests();
  for (const id of ['1', '2.5', '1e-5', `1e-${'0'.repeat(N)}7`]) slotOf(r.open(exchangeOf('s', hostRpc(id, 'tools/call'), 'a')));
  const calls = longBigIntCalls(() => {
    assert.equal(acceptedCancel(r, SELLER, 'a', written(`1e${NINES}`)), 0);
    assert.equal(acceptedCancel(r, SELLER, 'a', written(`1e-${NINES}`)), 0);
    assert.equal(acceptedCancel(r, SELLER, 'a', written(`10e-0${'0'.repeat(N)}8`)), 1, '1e-7 written two ways');
    assert.equal(acceptedCancel(r, SELLER, 'a', written(`0.00001e-${'0'.repeat(N)}0`)), 1, '1e-5 written two ways');
  });
  assert.equal(calls, 0);
});
