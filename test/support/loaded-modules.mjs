/**
 * Records every module a Node process loads, for tests of what a command loads
 * (test/regressions/cli-version-loads-metrics-stack.test.ts): run as `node --import
 * <this file> ...` with `LOADED_MODULES_FILE` naming a file, it appends one line per module:
 * each ES module's (or CommonJS module imported from one) URL as the loader loads it (a
 * `load` hook, in the loader's thread), then, at the process's exit, each CommonJS module's
 * path in `require.cache` (those required from CommonJS, which the hook does not see).
 * Plain JavaScript: it runs before tsx, and with the built CLI (node dist/main.js).
 *
 * Where Node has `module.registerHooks` (22.15, 23.5 and later) the hook is registered with it:
 * synchronous, in this thread, and it sees `require` too. `module.register` (the loader
 * thread) is used only on an older Node: it is runtime-deprecated in Node 26 (DEP0205), whose
 * DeprecationWarning on stderr would fail the test's `stderr: ''` (review of fix-cli, Low).
 */
import { appendFileSync } from 'node:fs';
import process from 'node:process';
import * as nodeModule from 'node:module';
import { isMainThread } from 'node:worker_threads';

const FILE = process.env.LOADED_MODULES_FILE;

/** The module's URL, recorded. */
function record(url) {
  if (FILE !== undefined) appendFileSync(FILE, `${url}\n`);
}

/** The loader's `load` hook (`module.register`, a Node without `registerHooks`): the module's URL, then Node's own load. */
export async function load(url, context, nextLoad) {
  record(url);
  return nextLoad(url, context);
}

if (isMainThread && FILE !== undefined) {
  if (typeof nodeModule.registerHooks === 'function') {
    nodeModule.registerHooks({
      load(url, context, nextLoad) {
        record(url);
        return nextLoad(url, context);
      },
    });
  } else {
    nodeModule.register(import.meta.url);
  }
  const cache = nodeModule.createRequire(import.meta.url).cache;
  process.on('exit', () => appendFileSync(FILE, Object.keys(cache).map((path) => `${path}\n`).join('')));
}
