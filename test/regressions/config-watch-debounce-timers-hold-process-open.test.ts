/**
 * Regression (review 36, F6, Nit): src/config-watch.ts says "The timers are unref'd: they never
 * hold the process open" (its directory watch is `persistent: false`), but the two timers an
 * event starts, the debounce (`quiet`) and its ceiling (`deadline`), were plain `setTimeout`s:
 * a pending file check held the process open for up to `maxDelayMs`. Now they are unref'd as
 * the others (`later`). The gateway's process is held by its listeners, which outlive the
 * watch (src/reload.ts closes it at shutdown), so a due check is never lost to an early exit.
 *
 * Input: a watch on a temporary config file (debounce and ceiling 60 s, identity check 60 s, so
 * no other timer is made meanwhile); the file rewritten; the timers the watch makes while it
 * sees the event recorded.
 * Expected: exactly two timers, neither holding the process open (was: both ref'd).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { watchConfigFile } from '../../src/config-watch.js';

test('config-watch-debounce-timers-hold-process-open: the debounce and its ceiling are unref\'d (was: both held the process)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gw-watch-unref-'));
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, 'a: 1\n');
  const realSetTimeout = globalThis.setTimeout;
  const sleep = (ms: number): Promise<void> => new Promise((r) => realSetTimeout(r, ms));
  const made: NodeJS.Timeout[] = [];
  let changes = 0;
  const close = watchConfigFile({ file, debounceMs: 60_000, maxDelayMs: 60_000, identityCheckMs: 60_000, log: pino({ level: 'silent' }), onChange: () => changes++ });
  try {
    assert.ok(close !== undefined);
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      const timer = realSetTimeout(...args);
      made.push(timer);
      return timer;
    }) as typeof setTimeout;
    await writeFile(file, 'a: 2\n');
    await sleep(500); // the watch's event (inotify: within milliseconds)
  } finally {
    globalThis.setTimeout = realSetTimeout;
    // True: the check was waiting in its debounce (the event was seen).
    assert.equal(close?.(), true);
    await rm(dir, { recursive: true, force: true });
  }
  assert.deepEqual(
    made.map((t) => t.hasRef()),
    [false, false],
  );
  assert.equal(changes, 0);
});
