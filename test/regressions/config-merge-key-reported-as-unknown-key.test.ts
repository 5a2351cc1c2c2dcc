/**
 * Regression (a hostile new operator's trial 45, Info): a YAML merge key,
 * `a: { <<: {url: ...} }` (or `<<: *base`), gave `unknown key \`<<\`` with the list of known
 * keys, plus `missing required key \`url\`` for the keys it was meant to bring, rather than
 * saying merge keys are not supported (docs/configuration.md: "merge keys (`<<:`) are not
 * supported").
 *
 * Input: the trial's t13.yaml, and a merge of an alias, with the CLI's `--check-config` (in process: helpers/check-config.ts);
 * a quoted `"<<"` key (control: an ordinary unknown key).
 * Expected: exit 2, one problem at the merge key saying so and what to do, and no problem for
 * the keys it would have brought.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertCheckConfigProblems, checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const MERGE = 'merge keys (<<) are not supported: write the keys out (an alias can stand for a whole mapping: `a: *base`)';

test('a merge key is named as such, without the problems of the keys it would bring (was: unknown key, missing url)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'config-merge-key-'));
  try {
    const t13 = join(dir, 't13.yaml');
    await writeFile(t13, 'agents:\n  a:\n    <<: {url: http://127.0.0.1:3001/mcp}\n');
    await assertCheckConfigProblems(t13, [`  agents.a["<<"] (line 3, column 5): ${MERGE}`]);

    const alias = join(dir, 'alias.yaml');
    await writeFile(alias, 'agents:\n  a: &base {url: http://127.0.0.1:3001/mcp}\n  b:\n    <<: *base\n    max_response_bytes: 1000\n');
    await assertCheckConfigProblems(alias, [`  agents.b["<<"] (line 4, column 5): ${MERGE}`]);

    const quoted = join(dir, 'quoted.yaml');
    await writeFile(quoted, 'agents:\n  a:\n    url: http://127.0.0.1:3001/mcp\n    "<<": 1\n');
    const run = await checkConfigRun(quoted);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^ {2}agents\.a\["<<"\] \(line 4, column 5\): unknown key `<<`/m);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
