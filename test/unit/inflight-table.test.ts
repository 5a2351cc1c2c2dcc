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

test('set, get, delete, size and values', () => {
  const t = new InFlightTable<number>();
  assert.equal(t.size, 0);
  t.set('a', 1);
  t.set('b', 2);
  t.set('a', 3); // replaces: still two entries
  assert.equal(t.size, 2);
  assert.equal(t.get('a'), 3);
  assert.equal(t.get('missing'), undefined);
  assert.deepEqual(t.values().sort(), [2, 3]);
  assert.equal(t.delete('a'), true);
  assert.equal(t.delete('a'), false);
  assert.equal(t.size, 1);
  assert.deepEqual(t.values(), [2]);
});

test('keys that name Object.prototype members are ordinary keys', () => {
  const t = new InFlightTable<string>();
  for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    assert.equal(t.get(key), undefined, key);
    t.set(key, key.toUpperCase());
  }
  assert.equal(t.size, 4);
  assert.equal(t.get('__proto__'), '__PROTO__');
  assert.equal(t.delete('constructor'), true);
  assert.equal(t.get('constructor'), undefined);
  assert.equal(t.size, 3);
});

test('values() is a copy: deleting while walking it skips nothing', () => {
  const t = new InFlightTable<string>();
  for (let i = 0; i < 5; i++) t.set(`k${i}`, `k${i}`);
  const seen: string[] = [];
  for (const key of t.values()) {
    seen.push(key);
    t.delete(key);
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

interface Registry {
  set(key: string, value: object): void;
  delete(key: string): unknown;
}

const LIVE = 8; // entries in flight at any time
const ENTRIES = 1_000; // entries set and deleted after the table is old
const ENTRY_BYTES = 8 * 1024; // each entry's object graph (an array of 1,000 doubles)

/**
 * Bytes the old generation grows by while `registry` churns through {@link ENTRIES} entries,
 * each dead soon after, with a scavenge every 20 of them, after its table was promoted.
 */
function promotedByChurn(registry: Registry): number {
  const gc = engineGc();
  const entry = (i: number): object => ({ payload: new Array<number>(1_000).fill(i + 0.5) });
  for (let i = 0; i < LIVE; i++) registry.set(`k${i}`, entry(i));
  // The table outlives scavenges and is promoted, as while a few large answers hold entries.
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  gc({ type: 'major' });
  const before = oldSpaceUsed();
  for (let i = LIVE; i < LIVE + ENTRIES; i++) {
    registry.delete(`k${i - LIVE}`);
    registry.set(`k${i}`, entry(i));
    if (i % 20 === 0) gc({ type: 'minor' });
  }
  return oldSpaceUsed() - before;
}

test('gateway slows after large answers (regression): entries that left the table are not promoted by scavenges', (t) => {
  const garbage = ENTRIES * ENTRY_BYTES;
  const table = promotedByChurn(new InFlightTable<object>());
  assert.ok(table < garbage * 0.15, `old space grew ${table} bytes over ${garbage} bytes of dead entries`);
  // The failure this guards against, shown with a Map (what the registries were): on an engine
  // that chains its ordered tables, most of the dead entries end up in the old generation.
  const map = promotedByChurn(new Map<string, object>());
  if (map < garbage * 0.5) t.diagnostic(`this engine did not promote a Map's dead entries (${map} bytes): the Map comparison shows nothing here`);
  else assert.ok(map > table * 4, `Map ${map} bytes vs table ${table}`);
});
