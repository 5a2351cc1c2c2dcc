/**
 * `exitAfterLogFlush` (src/observability/exit-after-log.ts) in a real process: it exits with
 * its code once the destination has written the lines out, and exits anyway when the
 * destination never calls back or throws (its wait is bounded). It returns at once.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, REPO, runScript } from '../helpers/process.js';

const SCRIPT = join(REPO, 'test/support/exit-after-log-child.ts');
const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

test('the lines are written out, in order, before the exit', OPTIONS, async () => {
  const r = await runScript(SCRIPT, ['flushes']);
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 3, stdout: '{"level":30,"msg":"first"}\n{"level":40,"msg":"last"}\n', stderr: 'returned\n' });
});

for (const mode of ['never-flushes', 'throws']) {
  test(`a destination that ${mode === 'throws' ? 'throws from flush' : 'never calls back'} does not hold the exit`, OPTIONS, async () => {
    const r = await runScript(SCRIPT, [mode]);
    assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 3, stdout: '', stderr: 'returned\n' });
  });
}
