// Reported failure (review of bench/scan.ts, 2026-12-02): a script decided whether it was run
// or imported by comparing `import.meta.url` with `file://` + process.argv[1]. Under a path
// with a space (percent-encoded in the URL) the two differed, so `npm run bench:scan` printed
// nothing and exited 0, even for a bad option. src/entry-point.ts compares real paths; the CLI
// (src/main.ts), bench/scan.ts and scripts/build-wasm.ts use it. Here each runs from a
// checkout reached through a directory with a space and a symlink, as a new user's might be.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROCESS_TEST_TIMEOUT_MS, REPO, runScript as run } from '../helpers/process.js';
import { VERSION } from '../../src/version.js';

describe('a script run from a path with a space, through a symlink, still runs (src/entry-point.ts)', () => {
  let dir = '';
  let checkout = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'adcp gw '));
    checkout = join(dir, 'my checkout');
    symlinkSync(REPO, checkout, 'dir');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('bench/scan.ts refuses a bad --rounds with exit code 2 (it printed nothing and exited 0)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const r = await run(join(checkout, 'bench', 'scan.ts'), ['--rounds', '0']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^--rounds must be an integer from 1 to 100 \(got 0\)$/m);
  });

  it('the CLI (src/main.ts) prints its version', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const r = await run(join(checkout, 'src', 'main.ts'), ['--version']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), VERSION);
  });

  it('scripts/build-wasm.ts prints its usage for --help', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const r = await run(join(checkout, 'scripts', 'build-wasm.ts'), ['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: npm run build:wasm \[-- --check\]$/m);
  });
});
