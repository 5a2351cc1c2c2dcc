/**
 * The in-flight table (src/inflight-table.ts) and the regression behind it: "the gateway gets
 * ~2x slower on small requests after large answers" (issue 5). A `Map` used as an in-flight
 * registry, once its table was old, kept every later entry alive through scavenges until a
 * mark-compact; the table must not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { InFlightTable } from '../../src/inflight-table.js';

test('add, remove, size and values', () => {
  const t = new InFlightTable<string>();
  assert.equal(t.size, 0);
  const a = t.add('a');
  const b = t.add('b');
  assert.notEqual(a, b);
  assert.equal(t.size, 2);
  assert.deepEqual(t.values().sort(), ['a', 'b']);
  assert.equal(t.remove(a, 'a'), true);
  assert.equal(t.remove(a, 'a'), false); // removed already
  assert.equal(t.remove(b, 'not b'), false); // another value: left alone
  assert.equal(t.size, 1);
  assert.deepEqual(t.values(), ['b']);
});

test('an entry removed twice does not remove the entry that reused its slot', () => {
  // An exchange's end function runs on its response's close and on a shutdown's cut.
  const t = new InFlightTable<() => void>();
  const first = (): void => {};
  const second = (): void => {};
  const slot = t.add(first);
  assert.equal(t.remove(slot, first), true);
  assert.equal(t.add(second), slot); // the free slot is reused
  assert.equal(t.remove(slot, first), false);
  assert.equal(t.size, 1);
  assert.deepEqual(t.values(), [second]);
});

test('the array grows to the peak in flight only: slots are reused', () => {
  const t = new InFlightTable<number>();
  const slots = new Set<number>();
  for (let i = 1; i <= 1_000; i++) {
    const a = t.add(i);
    const b = t.add(-i);
    slots.add(a).add(b);
    t.remove(a, i);
    t.remove(b, -i);
  }
  assert.equal(slots.size, 2);
  assert.equal(t.size, 0);
  assert.deepEqual(t.values(), []);
});

test('values() is a copy: removing while walking it skips nothing', () => {
  const t = new InFlightTable<string>();
  const slotOf = new Map<string, number>();
  for (let i = 0; i < 5; i++) slotOf.set(`k${i}`, t.add(`k${i}`));
  const seen: string[] = [];
  for (const value of t.values()) {
    seen.push(value);
    t.remove(slotOf.get(value)!, value);
  }
  assert.deepEqual(seen.sort(), ['k0', 'k1', 'k2', 'k3', 'k4']);
  assert.equal(t.size, 0);
});

/** The engine's `gc()`, without starting node with --expose-gc. */
function engineGc(): (options?: { type: 'minor' | 'major' }) => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
}

function oldSpaceUsed(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
}

/** A registry under test: `add` returns what `remove` needs. */
interface Registry<H> {
  add(value: object): H;
  remove(handle: H): void;
}

function tableRegistry(): Registry<[number, object]> {
  const table = new InFlightTable<object>();
  return { add: (value) => [table.add(value), value], remove: ([slot, value]) => void table.remove(slot, value) };
}

function mapRegistry(): Registry<string> {
  const map = new Map<string, object>();
  let n = 0;
  return {
    add: (value) => {
      const key = `k${n++}`;
      map.set(key, value);
      return key;
    },
    remove: (key) => void map.delete(key),
  };
}

const LIVE = 8; // entries in flight at any time
const ENTRIES = 1_000; // entries set and deleted after the table is old
const ENTRY_BYTES = 8 * 1024; // each entry's object graph (an array of 1,000 doubles)

/**
 * Bytes the old generation grows by while `registry` churns through {@link ENTRIES} entries,
 * each dead soon after, with a scavenge every 20 of them, after its table was promoted.
 */
function promotedByChurn<H>(registry: Registry<H>): number {
  const gc = engineGc();
  const entry = (i: number): object => ({ payload: new Array<number>(1_000).fill(i + 0.5) });
  const live: H[] = [];
  for (let i = 0; i < LIVE; i++) live.push(registry.add(entry(i)));
  // The table outlives scavenges and is promoted, as while a few large answers hold entries.
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  gc({ type: 'major' });
  const before = oldSpaceUsed();
  for (let i = LIVE; i < LIVE + ENTRIES; i++) {
    registry.remove(live[i % LIVE]!);
    live[i % LIVE] = registry.add(entry(i));
    if (i % 20 === 0) gc({ type: 'minor' });
  }
  return oldSpaceUsed() - before;
}

test('gateway slows after large answers (regression): entries that left the table are not promoted by scavenges', (t) => {
  const garbage = ENTRIES * ENTRY_BYTES;
  const table = promotedByChurn(tableRegistry());
  assert.ok(table < garbage * 0.15, `old space grew ${table} bytes over ${garbage} bytes of dead entries`);
  // The failure this guards against, shown with a Map (what the registries were): on an engine
  // that chains its ordered tables, most of the dead entries end up in the old generation.
  const map = promotedByChurn(mapRegistry());
  if (map < garbage * 0.5) t.diagnostic(`this engine did not promote a Map's dead entries (${map} bytes): the Map comparison shows nothing here`);
  else assert.ok(map > table * 4, `Map ${map} bytes vs table ${table}`);
});
