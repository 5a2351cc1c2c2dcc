/**
 * Regression (review 35, F5): one agent's streams could evict another agent's tail-ledger
 * entries. src/resume/tail-ledger.ts was one process-wide LRU of 10,000 entries with no
 * per-agent share, so 10,000 streams of agent B ending with bytes after their last event token
 * dropped agent A's entry before A's resume came; that resume then counted from its token's
 * older count, reopening hostile trial 24, F1 (a resume is charged the bytes already sent
 * after its token) for A. Now, when the ledger is full, the entry dropped is the oldest of the
 * agent holding the most entries: an agent is never dropped from while another holds more, so
 * with k agents noting, each keeps at least its 10,000 / k (rounded down) most recent.
 *
 * Input: the ledger as app.ts makes it (10,000 entries, `resume.ttl_ms` 60 s, a fixed clock),
 * noted as sse-event-ids.ts `noteTail` notes it (the exchange's agent name).
 * Expected: the exact counts below. Before the fix: 4 of the 9 assertions failed, in 2 of
 * the 3 tests: A's one entry gone (undefined) and B's oldest kept in its place (1000), then
 * A's oldest and newest of its 5,000 gone (node:test reports the first of each test).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RESUME_TAIL_ENTRIES, ResumeTailLedger } from '../../src/resume/tail-ledger.js';

/** A token-shaped text (its last 43 characters are its signature) unique per (agent, n). */
const token = (agent: string, n: number): string => `agw1.payload.${agent}${String(n).padStart(42, '0')}`;

describe('other-agent-evicts-tail-ledger-entry', () => {
  test('10,000 of agent B’s tails leave agent A’s one entry in place', () => {
    const ledger = new ResumeTailLedger(60_000, undefined, () => 0);
    ledger.note(token('A', 0), 91_055, 'a');
    for (let n = 0; n < RESUME_TAIL_ENTRIES; n++) ledger.note(token('B', n), 1_000 + n, 'b');
    assert.equal(ledger.usedBytesFor(token('A', 0)), 91_055);
    assert.equal(ledger.size, RESUME_TAIL_ENTRIES);
    assert.equal(ledger.usedBytesFor(token('B', 0)), undefined, 'B’s own oldest went');
    assert.equal(ledger.usedBytesFor(token('B', RESUME_TAIL_ENTRIES - 1)), 1_000 + RESUME_TAIL_ENTRIES - 1);
  });

  test('with two agents noting, each keeps its 5,000 most recent whatever the other notes', () => {
    const ledger = new ResumeTailLedger(60_000, undefined, () => 0);
    for (let n = 0; n < 5_000; n++) ledger.note(token('A', n), n, 'a');
    for (let n = 0; n < 4 * RESUME_TAIL_ENTRIES; n++) ledger.note(token('B', n), n, 'b');
    assert.equal(ledger.usedBytesFor(token('A', 0)), 0);
    assert.equal(ledger.usedBytesFor(token('A', 4_999)), 4_999);
    assert.equal(ledger.size, RESUME_TAIL_ENTRIES);
  });

  test('an agent holding more than the other gives its own oldest for the other’s new entry', () => {
    const ledger = new ResumeTailLedger(60_000, 10, () => 0);
    for (let n = 0; n < 7; n++) ledger.note(token('A', n), n, 'a');
    for (let n = 0; n < 4; n++) ledger.note(token('B', n), 100 + n, 'b');
    assert.deepEqual([ledger.size, ledger.usedBytesFor(token('A', 0)), ledger.usedBytesFor(token('A', 1)), ledger.usedBytesFor(token('B', 0))], [10, undefined, 1, 100]);
  });
});
