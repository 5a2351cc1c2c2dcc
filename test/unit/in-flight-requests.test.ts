/**
 * The registry of requests in flight (src/routing/in-flight-requests.ts), on its own: what a
 * POSTed request reusing an id held in its seller url and session is refused with (hostile
 * trial 54, F4; re-read of session 33), what is held and for how long, and that it keeps
 * nothing of a session past its last request, nor an exchange past its end (issue 5: the
 * `Map` of sessions holds strings and slot numbers only). The cancellation side:
 * test/unit/cancellations.test.ts; end to end:
 * test/regressions/duplicate-in-flight-id-hangs-first-call.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Exchange } from '../../src/exchange.js';
import { InFlightRequests, NOT_REGISTERED, type IdRefusal } from '../../src/routing/in-flight-requests.js';
import { acceptedCancel, batchOf, exchangeOf, SELLER, slotOf } from '../helpers/in-flight-exchanges.js';
import { hostRpc } from '../helpers/written-request-ids.js';

/** A `tools/call` whose id the host wrote `idText`, as the peek reads it. */
const call = (idText: string) => hostRpc(idText, 'tools/call');

const RULE = '(MCP: a request ID must not be reused within a session)';
const single = (shown: string): IdRefusal => ({ refusal: `Invalid Request: request id ${shown} is already in flight in this session ${RULE}; it was not sent to the seller: send it with an id not used before in this session.` });
const batchInFlight = (shown: string): IdRefusal => ({
  refusal: `Invalid Request: the batch holds request id ${shown}, which is already in flight in this session ${RULE}; the batch was not sent to the seller: send it with ids not used before in this session.`,
});
const batchTwice = (shown: string): IdRefusal => ({ refusal: `Invalid Request: the batch holds request id ${shown} more than once ${RULE}; the batch was not sent to the seller: give each of its requests its own id.` });

test('one id rule, the seller transport\'s: numbers by their double, strings exactly, "7" is not 7; per seller url and session', () => {
  const r = new InFlightRequests();
  const x = exchangeOf('s', call('7'), 'a');
  const slot = slotOf(r.open(x));
  assert.deepEqual(r.open(exchangeOf('s', call('7'), 'a')), single('7'));
  assert.deepEqual(r.open(exchangeOf('s', call('7.0'), 'a')), single('7.0'));
  assert.deepEqual(r.open(exchangeOf('t', call('7'), 'a')), single('7'), 'another agent of the same seller url');
  for (const other of [exchangeOf('s', call('"7"'), 'a'), exchangeOf('s', call('7'), 'b'), exchangeOf('o', call('7'), 'a'), exchangeOf('s', call('7'), undefined)]) {
    assert.equal(typeof r.open(other), 'number');
  }
  // 0 held: 1e-400 and -0 are the same double.
  slotOf(r.open(exchangeOf('s', call('0'), 'a')));
  assert.deepEqual(r.open(exchangeOf('s', call('1e-400'), 'a')), single('1e-400'));
  assert.deepEqual(r.open(exchangeOf('s', call('-0'), 'a')), single('-0'));
  slotOf(r.open(exchangeOf('s', call('9007199254740992'), 'a')));
  assert.deepEqual(r.open(exchangeOf('s', call('9007199254740993'), 'a')), single('9007199254740993'));
  slotOf(r.open(exchangeOf('s', call('"job"'), 'a')));
  assert.deepEqual(r.open(exchangeOf('s', call('"job"'), 'a')), single('"job"'));
  // Its exchange over, the id is free.
  r.close(slot, x);
  slotOf(r.open(exchangeOf('s', call('7'), 'a')));
});

test('batches: an id in flight or one id twice refuses the whole batch, first id in order; a batch holds its ids', () => {
  const r = new InFlightRequests();
  slotOf(r.open(exchangeOf('s', call('7'), 'a')));
  assert.deepEqual(r.open(exchangeOf('s', batchOf('9', '8', '9', '7'), 'a')), batchTwice('9'));
  assert.deepEqual(r.open(exchangeOf('s', batchOf('8', '7', '8'), 'a')), batchInFlight('7'));
  const b = exchangeOf('s', batchOf('10', '11'), 'a');
  const slot = slotOf(r.open(b));
  assert.deepEqual(r.open(exchangeOf('s', call('11'), 'a')), single('11'));
  assert.deepEqual(r.open(exchangeOf('s', batchOf('12', '10'), 'a')), batchInFlight('10'));
  r.close(slot, b);
  slotOf(r.open(exchangeOf('s', call('11'), 'a')));
});

test('a resumed stream (GET) holds no id and is never refused; a resumed batch is not registered', () => {
  const r = new InFlightRequests();
  const resumed = exchangeOf('s', call('7'), 'a', true);
  const slot = slotOf(r.open(resumed));
  slotOf(r.open(exchangeOf('s', call('7'), 'a')));
  slotOf(r.open(exchangeOf('s', call('7'), 'a', true)));
  assert.equal(r.open(exchangeOf('s', batchOf('1', '2'), 'a', true)), NOT_REGISTERED);
  r.close(slot, resumed);
  assert.equal(r.size, 2);
});

test('nothing outlives its last request: closing in any order empties every session; a second close is a no-op', () => {
  const r = new InFlightRequests();
  const open: Array<[number, Exchange]> = [];
  for (let i = 0; i < 30; i++) {
    const x = exchangeOf(i % 2 === 0 ? 's' : 'o', call(String(i)), `session-${i % 4}`);
    open.push([slotOf(r.open(x)), x]);
  }
  assert.deepEqual([r.size, r.sessions], [30, 4]);
  // Middle, head and tail of the chains: each order leaves the others linked.
  for (const k of [5, 0, 29, 12, 13, 1, 2, 3]) r.close(...open[k]!);
  for (const k of [5, 0, 29]) assert.equal(typeof r.open(exchangeOf(k % 2 === 0 ? 's' : 'o', call(String(k)), `session-${k % 4}`)), 'number', `id ${k} freed`);
  for (const k of [4, 6, 28]) assert.deepEqual(r.open(exchangeOf(k % 2 === 0 ? 's' : 'o', call(String(k)), `session-${k % 4}`)), single(String(k)), `id ${k} still held`);
  const r2 = new InFlightRequests();
  const held = open.map(([, x]) => [slotOf(r2.open(x)), x] as [number, Exchange]);
  for (const [slot, x] of held.reverse()) {
    r2.close(slot, x);
    r2.close(slot, x);
  }
  assert.deepEqual([r2.size, r2.sessions], [0, 0]);
  // Slots are reused: the arrays grow to the peak in flight only.
  const again = exchangeOf('s', call('1'), 'z');
  assert.ok(slotOf(r2.open(again)) < 30);
  assert.equal(acceptedCancel(r, SELLER, 'nobody', { bytes: Buffer.from('1'), range: [0, 1] }), 0);
});

/** The engine's `gc()`, without starting node with --expose-gc. */
function engineGc(): (options?: { type: 'minor' | 'major' }) => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
}

function oldSpaceUsed(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
}

test('issue 5: an exchange that ended is not kept alive through scavenges by the session map (a new session per request)', () => {
  // As test/unit/inflight-table.test.ts: the map is promoted, then churned with a session made
  // and dropped per request, each exchange holding 8 KiB; what reaches the old generation must
  // not be the dead exchanges.
  const gc = engineGc();
  const r = new InFlightRequests();
  const LIVE = 8;
  const ENTRIES = 1_000;
  const base = exchangeOf('s', call('1'), 'x');
  const entry = (i: number): Exchange => Object.assign(Object.create(base) as Exchange, { session: `session-${i}`, payload: new Array<number>(1_000).fill(i + 0.5) });
  const live: Array<[number, Exchange]> = [];
  for (let i = 0; i < LIVE; i++) {
    const x = entry(i);
    live.push([slotOf(r.open(x)), x]);
  }
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  gc({ type: 'major' });
  const before = oldSpaceUsed();
  for (let i = LIVE; i < LIVE + ENTRIES; i++) {
    r.close(...live[i % LIVE]!);
    const x = entry(i);
    live[i % LIVE] = [slotOf(r.open(x)), x];
    if (i % 20 === 0) gc({ type: 'minor' });
  }
  const grown = oldSpaceUsed() - before;
  const garbage = ENTRIES * 8 * 1024;
  assert.ok(grown < garbage * 0.15, `old space grew ${grown} bytes over ${garbage} bytes of dead exchanges`);
});
