/**
 * Regression (issue 5, 1 KiB results; bench/README.md "The exchange record in dictionary
 * mode"): the exchange record (src/exchange.ts createExchange) was an object literal holding a
 * getter (`get cancelled()`, 294764c), which V8 makes in dictionary mode: every exchange a
 * hash table, ~2-3 µs to make and a hash lookup for each of the dozens of reads of its
 * properties per request. Now a class instance: fast properties, one hidden class for every
 * exchange, `cancelled` a getter on the prototype that follows `cancelAccepted` and
 * `cancelsAwaited` as before.
 *
 * How: V8's `%HasFastProperties` and `%HaveSameMap` (natives syntax, enabled for this process
 * before the probe functions are compiled). No timing is measured.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { exchangeOf } from '../helpers/in-flight-exchanges.js';
import type { RpcPeek } from '../../src/exchange.js';

setFlagsFromString('--allow-natives-syntax');
// V8 natives syntax, compiled after the flag is set.
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const rpc = (id: number): RpcPeek => ({ kind: 'request', method: 'tools/call', toolName: 'get_products', id, idText: undefined }) as unknown as RpcPeek;

describe('the exchange record', () => {
  test('has fast properties, and every exchange the same hidden class', () => {
    const a = exchangeOf('s', rpc(1), undefined);
    const b = exchangeOf('o', rpc(2), 'session-1', true);
    assert.equal(hasFastProperties(a), true);
    assert.equal(hasFastProperties(b), true);
    assert.equal(haveSameMap(a, b), true);
    // The handler's and the stages' writes keep it so.
    a.finished = true;
    a.outcome = 'rewritten';
    a.bytesSaved += 10;
    a.actions.push('deduped');
    assert.equal(hasFastProperties(a), true);
  });

  test('cancelled follows cancelAccepted and cancelsAwaited', () => {
    const e = exchangeOf('s', rpc(3), 'session-1');
    assert.equal(e.cancelled, false);
    e.cancelsAwaited = 2;
    assert.equal(e.cancelled, true);
    e.cancelsAwaited = 0;
    assert.equal(e.cancelled, false);
    e.cancelAccepted = true;
    assert.equal(e.cancelled, true);
  });
});
