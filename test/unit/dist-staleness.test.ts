/**
 * scripts/build-if-stale.ts `distStaleness`: whether dist/ is what `npm run build` would write
 * from src/ now, which decides whether `npm test`'s `pretest` builds and whether the tests'
 * CLI processes run dist/main.js or src/main.ts through tsx (test/helpers/process.ts).
 *
 * Input: a fake repository in a temporary directory (src/ with a subdirectory, its dist/
 * outputs, the two tsconfig files) whose modification times are set explicitly: inputs at
 * t0, outputs at t0 + 10 s. Expected: null while nothing is newer than the oldest output;
 * else one sentence naming the first culprit found.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { distStaleness } from '../../scripts/build-if-stale.js';

/** Seconds since the epoch, as utimes takes them. */
const T0 = 1_700_000_000;
const BUILT = T0 + 10;
const BUILT_ISO = new Date(BUILT * 1000).toISOString();

let root = '';
const at = (path: string, seconds: number): void => utimesSync(join(root, path), seconds, seconds);
const file = (path: string, seconds: number): void => {
  writeFileSync(join(root, path), '');
  at(path, seconds);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dist-staleness-'));
  for (const dir of ['src/mcp', 'dist/mcp']) mkdirSync(join(root, dir), { recursive: true });
  for (const f of ['src/main.ts', 'src/mcp/scan.ts', 'src/mcp/types.d.ts', 'tsconfig.json', 'tsconfig.build.json']) file(f, T0);
  for (const f of ['dist/main.js', 'dist/mcp/scan.js']) file(f, BUILT);
  at('src/mcp', T0);
  at('src', T0);
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('distStaleness', () => {
  test('current: every output newer than every input', () => {
    assert.equal(distStaleness(root), null);
  });

  test('a source modified after the build is named, with the build time', () => {
    at('src/mcp/scan.ts', BUILT + 1);
    assert.equal(distStaleness(root), `src/mcp/scan.ts was modified after dist/ was built (${BUILT_ISO})`);
  });

  test('a source modified in the same instant as the oldest output counts as modified after it', () => {
    at('src/main.ts', BUILT);
    assert.equal(distStaleness(root), `src/main.ts was modified after dist/ was built (${BUILT_ISO})`);
  });

  test('the build time is the oldest output: a source newer than that one is stale even if older than the others', () => {
    at('dist/mcp/scan.js', BUILT + 100);
    at('src/main.ts', BUILT + 50);
    assert.equal(distStaleness(root), `src/main.ts was modified after dist/ was built (${BUILT_ISO})`);
  });

  test('a source without its output (a new file)', () => {
    file('src/mcp/new.ts', T0);
    assert.equal(distStaleness(root), 'dist/mcp/new.js is missing');
  });

  test('a deleted source: its directory was modified', () => {
    at('src/mcp', BUILT + 1);
    assert.equal(distStaleness(root), `src/mcp was modified after dist/ was built (${BUILT_ISO})`);
  });

  test('a tsconfig file modified after the build', () => {
    at('tsconfig.build.json', BUILT + 1);
    assert.equal(distStaleness(root), `tsconfig.build.json was modified after dist/ was built (${BUILT_ISO})`);
  });

  test('outputs without a source (left by a deleted one) and a .d.ts without an output are not looked at', () => {
    file('dist/old.js', T0 - 100);
    assert.equal(distStaleness(root), null);
  });
});
