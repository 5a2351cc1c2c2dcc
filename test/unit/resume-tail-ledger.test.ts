/**
 * The counts of streams that went on past their last event token (src/resume/tail-ledger.ts;
 * hostile trial 24, F1: test/regressions/resume-untokenized-bytes-escape-cumulative-bound.test.ts):
 * keyed by the token's signature, the larger count kept, each entry for `ttlMs` from its note,
 * at most `maxEntries`, the least recently noted dropped first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESUME_TAIL_ENTRIES, ResumeTailLedger } from '../../src/resume/tail-ledger.js';

const SIG = 'S'.repeat(42);
/** A token-shaped text whose signature (last 43 characters) ends with `n`'s digit. */
const token = (n: number, payload = 'p'): string => `agw1.${payload}.${SIG}${n}`;

test('a noted count is returned for its token, by signature; none for another', () => {
  let now = 1_000;
  const ledger = new ResumeTailLedger(60_000, 10, () => now);
  assert.equal(ledger.usedBytesFor(token(1)), undefined);
  ledger.note(token(1), 91_055, 'a');
  assert.equal(ledger.usedBytesFor(token(1)), 91_055);
  assert.equal(ledger.usedBytesFor(token(1, 'other-payload')), 91_055);
  assert.equal(ledger.usedBytesFor(token(2)), undefined);
  now += 60_000;
  assert.equal(ledger.usedBytesFor(token(1)), 91_055);
});

test('noted again: the larger count stays, its lifetime from the last note', () => {
  let now = 0;
  const ledger = new ResumeTailLedger(1_000, 10, () => now);
  ledger.note(token(1), 500, 'a');
  ledger.note(token(1), 300, 'a');
  assert.equal(ledger.usedBytesFor(token(1)), 500);
  now = 900;
  ledger.note(token(1), 700, 'a');
  now = 1_800;
  assert.equal(ledger.usedBytesFor(token(1)), 700);
  assert.equal(ledger.size, 1);
});

test('an entry expires ttlMs after its note, and is dropped', () => {
  let now = 0;
  const ledger = new ResumeTailLedger(1_000, 10, () => now);
  ledger.note(token(1), 500, 'a');
  now = 1_000;
  assert.equal(ledger.usedBytesFor(token(1)), 500);
  now = 1_001;
  assert.equal(ledger.usedBytesFor(token(1)), undefined);
  assert.equal(ledger.size, 0);
  // An expired count is not kept by a new note either.
  ledger.note(token(2), 900, 'a');
  now = 2_002;
  ledger.note(token(2), 100, 'a');
  assert.equal(ledger.usedBytesFor(token(2)), 100);
});

test('bounded: the least recently noted go first; expired entries go at the next note', () => {
  let now = 0;
  const ledger = new ResumeTailLedger(1_000, 3, () => now);
  for (let n = 0; n < 3; n++) ledger.note(token(n), n + 1, 'a');
  ledger.note(token(0), 10, 'a'); // noted again: now the most recent
  ledger.note(token(3), 4, 'a');
  assert.equal(ledger.size, 3);
  assert.equal(ledger.usedBytesFor(token(1)), undefined);
  assert.deepEqual([0, 2, 3].map((n) => ledger.usedBytesFor(token(n))), [10, 3, 4]);
  now = 1_500;
  ledger.note(token(4), 5, 'a');
  assert.equal(ledger.size, 1);
  assert.equal(ledger.usedBytesFor(token(4)), 5);
});

test('the default bound is documented as 10000 entries', () => {
  assert.equal(RESUME_TAIL_ENTRIES, 10_000);
  const ledger = new ResumeTailLedger(60_000, undefined, () => 0);
  for (let n = 0; n < RESUME_TAIL_ENTRIES + 5; n++) ledger.note(`agw1.p.${String(n).padStart(43, '0')}`, n, 'a');
  assert.equal(ledger.size, RESUME_TAIL_ENTRIES);
  assert.equal(ledger.usedBytesFor(`agw1.p.${'0'.repeat(43)}`), undefined);
});
