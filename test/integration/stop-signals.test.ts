/**
 * src/stop-signals.ts in a real process (test/support/stop-signals-child.ts sends itself the
 * signals): a stop signal that comes before any handler is set is held and handed to the
 * first handler set (only the first one: later ones meanwhile are dropped); giving the
 * signals their default action back raises a held one (the process dies by it) or drops it.
 * Reported failure it serves: test/regressions/stop-signal-during-startup.test.ts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO, PROCESS_TEST_TIMEOUT_MS, captureOutput, spawnTsx } from '../helpers/process.js';

const SCRIPT = join(REPO, 'test/support/stop-signals-child.ts');

async function run(mode: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawnTsx(SCRIPT, [mode]);
  const out = captureOutput(child);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  return { code, signal, stdout: out.stdout, stderr: out.stderr };
}

describe('stop signals: held, handed over, or given back', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('a held signal goes to the first handler set, later ones straight to it', async () => {
    assert.deepEqual(await run('handler'), { code: 0, signal: null, stdout: 'handled SIGTERM\nhandled SIGTERM\n', stderr: '' });
  });

  it('only the first signal is held', async () => {
    assert.deepEqual(await run('hold-handler'), { code: 0, signal: null, stdout: 'handled SIGTERM\n', stderr: '' });
  });

  it('given back with reraise: the process dies by the held signal', async () => {
    assert.deepEqual(await run('reraise'), { code: null, signal: 'SIGTERM', stdout: '', stderr: '' });
  });

  it('given back without reraise: the held signal is dropped', async () => {
    assert.deepEqual(await run('drop'), { code: 0, signal: null, stdout: 'alive\n', stderr: '' });
  });
});
