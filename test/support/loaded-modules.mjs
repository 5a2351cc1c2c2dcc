/**
 * Records every module a Node process loads, for tests of what a command loads
 * (test/regressions/cli-version-loads-metrics-stack.test.ts): run as `node --import
 * <this file> ...` with `LOADED_MODULES_FILE` naming a file, it appends one line per module:
 * each ES module's (or CommonJS module imported from one) URL as the loader loads it (a
 * `load` hook, in the loader's thread), then, at the process's exit, each CommonJS module's
 * path in `require.cache` (those required from CommonJS, which the hook does not see).
 * Plain JavaScript: it runs before tsx, and with the built CLI (node dist/main.js).
 */
import { appendFileSync } from 'node:fs';
import process from 'node:process';
import { createRequire, register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const FILE = process.env.LOADED_MODULES_FILE;

/** The loader's `load` hook: the module's URL, then Node's own load. */
export async function load(url, context, nextLoad) {
  if (FILE !== undefined) appendFileSync(FILE, `${url}\n`);
  return nextLoad(url, context);
}

if (isMainThread && FILE !== undefined) {
  register(import.meta.url);
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => appendFileSync(FILE, Object.keys(cache).map((path) => `${path}\n`).join('')));
}
