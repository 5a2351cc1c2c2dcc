/**
 * README (Logs, "Levels") and observability/exchange-level.ts give the same level for every
 * outcome and reason: the table lists every outcome of the vocabulary, and each of its rows is
 * what `exchangeLineLevel` returns for it (a hostile operator's trial 53, F2). `host_aborted`
 * with a minted error's reason is the handler's (the level taken before the host's leaving
 * made it `host_aborted`): test/regressions/half-closed-host-logged-delivered.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { END_REASONS, REASONS } from '../../src/errors/codes.js';
import type { Outcome } from '../../src/exchange.js';
import { exchangeLineLevel } from '../../src/observability/exchange-level.js';
import { OUTCOMES } from '../../src/observability/log-vocabulary.js';
import { RECONFIGURED_REASONS } from '../../src/routing/open-streams.js';
import { REPO } from '../helpers/repo.js';

interface Row {
  outcome: Outcome;
  reason: string;
  level: string;
}

/** The rows of the table that follows `**Levels.**` in README.md. */
function levelTable(): Row[] {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const from = readme.indexOf('**Levels.**');
  assert.ok(from !== -1, 'README has a **Levels.** paragraph');
  const lines = readme.slice(from).split('\n');
  const start = lines.findIndex((l) => l.startsWith('| Outcome | Reason | Level |'));
  const rows: Row[] = [];
  for (let i = start + 2; lines[i]?.startsWith('|'); i++) {
    const [outcome, reason, level] = lines[i]!.slice(1, -1).split('|').map((c) => c.trim());
    rows.push({ outcome: /^`([a-z_]+)`$/.exec(outcome!)![1] as Outcome, reason: reason!, level: level! });
  }
  return rows;
}

/** Every reason an exchange line may carry. */
const ALL_REASONS = [...Object.keys(REASONS), ...Object.keys(END_REASONS), ...RECONFIGURED_REASONS];

test('the table lists every outcome', () => {
  assert.deepEqual([...new Set(levelTable().map((r) => r.outcome))].sort(), [...OUTCOMES].sort());
});

test("each row's level is exchangeLineLevel's", () => {
  const rows = levelTable();
  for (const row of rows) {
    const named = [...row.reason.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    let reasons: Array<string | undefined>;
    if (row.reason === 'any') reasons = [undefined, ...ALL_REASONS];
    else if (row.reason === 'none') reasons = [undefined];
    else if (row.reason === 'any other, or none') {
      const listed = new Set(rows.filter((r) => r.outcome === row.outcome).flatMap((r) => [...r.reason.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)));
      reasons = [undefined, ...ALL_REASONS.filter((r) => !listed.has(r))];
    } else if (row.reason === "a minted error's") continue; // the handler's: see the file comment
    else reasons = named;
    assert.ok(reasons.length > 0, `row ${JSON.stringify(row)}`);
    for (const reason of reasons) assert.equal(exchangeLineLevel(row.outcome, reason), row.level, `${row.outcome} ${reason ?? '(none)'}`);
  }
});

test('a host_aborted line of the seller answer the host left is info, whatever dropped event its reason names', () => {
  for (const reason of [undefined, 'sse_event', 'get_stream_response']) assert.equal(exchangeLineLevel('host_aborted', reason), 'info');
});
