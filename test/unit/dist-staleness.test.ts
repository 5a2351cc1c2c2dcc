/**
 * scripts/build-if-stale.ts `distStaleness`: whether dist/ is what `npm run build` would write
 * from its inputs now (src/, package.json, tsconfig*.json: scripts/build-stamp.ts), which
 * decides whether `npm test`'s `pretest` builds and whether the tests' CLI processes run
 * dist/main.js or src/main.ts through tsx (test/helpers/process.ts).
 *
 * Input: a fake repository in a temporary directory (src/ with a subdirectory, package.json,
 * the two tsconfig files), and a build of it as scripts/build-if-stale.ts runs one: the stamp
 * begun (`beginBuildStamp`), the outputs written (dist/main.js, dist/mcp/scan.js), the stamp
 * finished (`finishBuildStamp`). A file's ctime cannot be set, so the build begins once the
 * file system's clock has passed every input's ctime (see `build`). Expected: null while every
 * input is as the build found it; else one sentence naming the first culprit found.
 *
 * Reported failure (a review, Low): the old rule (current when no input's mtime was at or after
 * the oldest output's) took as current a dist/ built while a source was edited (the edit older
 * than the outputs), a source restored with an old mtime (`cp -p`, `tar x`), a change of
 * package.json (its `type`) or of a tsconfig*.json other than the two it named, and a dist/
 * copied from another checkout: the cases marked "(was current)" below.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { distStaleness } from '../../scripts/build-if-stale.js';
import { BUILD_STAMP, beginBuildStamp, buildInputs, finishBuildStamp, STARTED_STAMP, type BuildStamp } from '../../scripts/build-stamp.js';

/** Seconds since the epoch, as utimes takes them: a time long before any test runs. */
const T0 = 1_700_000_000;

const roots: string[] = [];
let root = '';

/** A fake repository: sources, package.json and tsconfig files at T0 (their ctimes are now). */
function fakeRepo(mainText = 'export {};\n'): string {
  const dir = mkdtempSync(join(tmpdir(), 'dist-staleness-'));
  roots.push(dir);
  mkdirSync(join(dir, 'src/mcp'), { recursive: true });
  const files: Record<string, string> = {
    'src/main.ts': mainText,
    'src/mcp/scan.ts': 'export const scan = 1;\n',
    'src/mcp/types.d.ts': '',
    'package.json': '{"type":"module"}\n',
    'tsconfig.json': '{}\n',
    'tsconfig.build.json': '{"extends":"./tsconfig.json"}\n',
  };
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  for (const path of [...Object.keys(files), 'src/mcp', 'src']) utimesSync(join(dir, path), T0, T0);
  return dir;
}

/**
 * Resolves once a file created in `repo` gets an mtime past every input's mtime and ctime (the
 * file system's clock has moved on: at most 2000 tries, 1 ms apart, a hang guard).
 */
async function clockPastInputs(repo: string): Promise<void> {
  const newest = Math.max(...buildInputs(repo).inputs.map(([, , mtime, ctime]) => Math.max(mtime, ctime)));
  const probe = join(repo, '.clock-probe');
  for (let k = 0; k < 2000; k++) {
    rmSync(probe, { force: true });
    writeFileSync(probe, '');
    if (statSync(probe).mtimeMs > newest) break;
    await new Promise((r) => setTimeout(r, 1));
  }
  rmSync(probe);
}

/**
 * Builds `repo` as scripts/build-if-stale.ts does, begun once the clock has passed every input
 * (as a build begun after the last edit finds it), `during` run between the stamp's start and
 * the outputs (an edit while tsc runs, which then writes its outputs later: after the clock
 * passed the edit). Returns the stamp begun.
 */
async function build(repo: string, during?: () => void): Promise<BuildStamp> {
  await clockPastInputs(repo);
  const stamp = beginBuildStamp(repo);
  if (during !== undefined) {
    during();
    await clockPastInputs(repo);
  }
  mkdirSync(join(repo, 'dist/mcp'), { recursive: true });
  for (const out of ['dist/main.js', 'dist/mcp/scan.js']) writeFileSync(join(repo, out), '');
  finishBuildStamp(repo);
  return stamp;
}

const began = (stamp: BuildStamp): string => new Date(stamp.startedAtMs).toISOString();

/** Rewrites `path` under the repository with `text` and sets its mtime back to T0 (as `cp -p` of an old copy does). */
function restoreOld(path: string, text: string): void {
  writeFileSync(join(root, path), text);
  utimesSync(join(root, path), T0, T0);
}

beforeEach(() => {
  root = fakeRepo();
});

afterEach(() => {
  for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('distStaleness', () => {
  test('current: a finished build, nothing changed since it began', async () => {
    await build(root);
    assert.equal(distStaleness(root), null);
  });

  test('a source modified after the build is named, with the time the build began', async () => {
    const stamp = await build(root);
    writeFileSync(join(root, 'src/mcp/scan.ts'), 'export const scan = 2;\n');
    assert.equal(distStaleness(root), `src/mcp/scan.ts was modified after the build began (${began(stamp)})`);
  });

  test('a source edited while the build ran, older than the outputs (was current)', async () => {
    const stamp = await build(root, () => writeFileSync(join(root, 'src/main.ts'), 'export const edited = 1;\n'));
    assert.ok(statSync(join(root, 'src/main.ts')).mtimeMs < statSync(join(root, 'dist/main.js')).mtimeMs, 'the edit is older than the outputs');
    assert.equal(distStaleness(root), `src/main.ts was modified after the build began (${began(stamp)})`);
  });

  test('a source restored after the build with an old mtime, cp -p or tar x (was current)', async () => {
    const stamp = await build(root);
    restoreOld('src/main.ts', 'export const older = 0;\n');
    assert.equal(distStaleness(root), `src/main.ts was modified after the build began (${began(stamp)})`);
  });

  test('package.json changed after the build, its type (was current)', async () => {
    const stamp = await build(root);
    restoreOld('package.json', '{"type":"commonjs"}\n');
    assert.equal(distStaleness(root), `package.json was modified after the build began (${began(stamp)})`);
  });

  test('a tsconfig*.json added after the build, besides tsconfig.json and tsconfig.build.json (was current)', async () => {
    const stamp = await build(root);
    restoreOld('tsconfig.base.json', '{}\n');
    assert.equal(distStaleness(root), `tsconfig.base.json was modified after the build began (${began(stamp)})`);
  });

  test('a tsconfig file modified after the build', async () => {
    const stamp = await build(root);
    writeFileSync(join(root, 'tsconfig.build.json'), '{"extends":"./tsconfig.json","compilerOptions":{}}\n');
    assert.equal(distStaleness(root), `tsconfig.build.json was modified after the build began (${began(stamp)})`);
  });

  test('a dist/ copied in from another checkout, built after this one was written, from other sources (was current)', async () => {
    await clockPastInputs(root); // the other checkout's files are written later (their ctimes differ)
    const other = fakeRepo('export const other = 1;\n');
    const stamp = await build(other);
    cpSync(join(other, 'dist'), join(root, 'dist'), { recursive: true });
    assert.equal(distStaleness(root), `src is not as the build found it (${began(stamp)}): its size, mtime or ctime changed`);
  });

  test('an input changed at the very time the build began (a coarse clock) counts as changed after it', async () => {
    await build(root);
    const stamp = JSON.parse(readFileSync(join(root, BUILD_STAMP), 'utf8')) as BuildStamp;
    const times = stamp.inputs.map(([, , mtime, ctime]) => Math.max(mtime, ctime));
    stamp.startedAtMs = Math.max(...times);
    writeFileSync(join(root, BUILD_STAMP), JSON.stringify(stamp));
    const first = stamp.inputs[times.indexOf(stamp.startedAtMs)]![0];
    assert.equal(distStaleness(root), `${first} was modified after the build began (${began(stamp)})`);
  });

  test('an input the stamp does not list is new; one it lists that is gone was removed', async () => {
    const stamp = await build(root);
    const edit = (inputs: BuildStamp['inputs']): void => writeFileSync(join(root, BUILD_STAMP), JSON.stringify({ ...stamp, inputs }));
    edit(stamp.inputs.filter(([path]) => path !== 'src/mcp/types.d.ts'));
    assert.equal(distStaleness(root), `src/mcp/types.d.ts is new since the build began (${began(stamp)})`);
    edit([...stamp.inputs, ['src/gone.ts', 1, 0, 0]]);
    assert.equal(distStaleness(root), `src/gone.ts was removed since the build began (${began(stamp)})`);
  });

  test('a build begun and not finished (tsc failed, or was interrupted): no stamp', async () => {
    await build(root);
    beginBuildStamp(root);
    assert.equal(distStaleness(root), `${BUILD_STAMP} is missing (no build finished since the last one began)`);
    assert.ok(statSync(join(root, STARTED_STAMP)).isFile());
  });

  test('outputs without a stamp (a bare tsc, npm run build:tsc)', () => {
    mkdirSync(join(root, 'dist/mcp'), { recursive: true });
    for (const out of ['dist/main.js', 'dist/mcp/scan.js']) writeFileSync(join(root, out), '');
    assert.equal(distStaleness(root), `${BUILD_STAMP} is missing (no build finished since the last one began)`);
  });

  test('an unreadable stamp', async () => {
    await build(root);
    writeFileSync(join(root, BUILD_STAMP), '{"startedAtMs":');
    assert.equal(distStaleness(root), `${BUILD_STAMP} is unreadable`);
  });

  test('a source without its output (a new file)', async () => {
    await build(root);
    writeFileSync(join(root, 'src/mcp/new.ts'), '');
    assert.equal(distStaleness(root), 'dist/mcp/new.js is missing');
  });

  test('a deleted source: its directory was modified', async () => {
    const stamp = await build(root);
    rmSync(join(root, 'src/mcp/scan.ts'));
    assert.equal(distStaleness(root), `src/mcp was modified after the build began (${began(stamp)})`);
  });

  test('outputs without a source (left by a deleted one) and a .d.ts without an output are not looked at', async () => {
    await build(root);
    writeFileSync(join(root, 'dist/old.js'), '');
    utimesSync(join(root, 'dist/old.js'), T0 - 100, T0 - 100);
    assert.equal(distStaleness(root), null);
  });
});
