/**
 * Reloads of a gateway's config file in tests, as an operator makes them: the file replaced in
 * one step (written beside it, then renamed over it, as editors and config managers do), then
 * the reload a SIGHUP starts (src/reload.ts).
 */
import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import type { Reloader } from '../../src/reload.js';

let swaps = 0;

/**
 * Replaces `file` with `text` in one step (written beside it, then renamed over it): a file
 * watch never reads it half-written (an in-place write of a 3,000-agent config was read
 * half-written by the gateway's file watch, its reload failed, in a CI run with three test
 * files at once: startup-log-lists-every-agent).
 */
export async function replaceFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.${++swaps}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

/** Replaces `file` with `text` in one step and reloads it through `reloader` as a SIGHUP would; asserts the reload applied. */
export async function rewriteAndReload(file: string, text: string, reloader: Reloader): Promise<void> {
  await replaceFile(file, text);
  const result = await reloader.reload('sighup');
  assert.equal(result.ok, true, JSON.stringify(result));
}
