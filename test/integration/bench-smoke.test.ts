// Smoke test of the benchmark harness (bench/run.ts --quick, what `npm run bench:smoke` runs):
// it starts its seller, pass-through and gateway processes on 127.0.0.1, sends a few requests
// per case, prints its Markdown tables and exits 0. No figure is checked: the bench is run by
// hand, timing assertions have no place in the test suite.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, captureOutput, runScript, spawnTsx } from '../helpers/process.js';

/** The quick mode takes ~10-20 s; the backstop leaves room for a busy CI machine. */
const RUN_TIMEOUT_MS = 120_000;

describe('bench smoke (bench/run.ts --quick)', () => {
  /** Set when the quick run compiled (or took from the cache) this working tree: the A/B's head is then in the compile cache. */
  let quickRunDone = false;
  it('runs the quick mode to completion and prints the tables', { timeout: RUN_TIMEOUT_MS + 10_000 }, async () => {
    // --node-flags reaches the server children: V8's GC trace lines appear on stdout.
    // --alloc-prof: the gateway child writes its allocation profile, which profile-summary.ts reads.
    const child = spawnTsx('bench/run.ts', ['--quick', '--node-flags', '--trace-gc', '--alloc-prof']);
    const out = captureOutput(child);
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        // SIGTERM lets the bench end the children it started; SIGKILL is the backstop.
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        reject(new Error(`bench --quick did not finish within ${RUN_TIMEOUT_MS} ms\n${out.stderr}`));
      }, RUN_TIMEOUT_MS);
      child.on('error', reject);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    assert.equal(code, 0, `bench --quick exited ${code}\n${out.stderr}`);
    assert.match(out.stdout, /^# adcp-buyer-gateway benchmark/m);
    assert.match(out.stdout, /^\| case \| bytes \| via \| req\/s \|/m, 'the throughput table header');
    // The mark-compacts each server process made in the run, a count per repetition (bench/README.md "Mark-compacts").
    assert.match(out.stdout, /\| × CPU \| seller CPU µs\/req \| peak RSS MiB \| mark-compacts \| notes \|$/m, 'the seller CPU and mark-compacts columns');
    assert.match(out.stdout, /^\| [^|]*\| [^|]*\| gateway \|(?: [^|]*\|){8} \d+(?:, \d+)* \|/m, 'a gateway row with its mark-compact count');
    // The seller's CPU per response, measured for every target, the seller direct included (bench/README.md "Seller CPU").
    assert.match(out.stdout, /^\| [^|]*\| [^|]*\| seller direct \|(?: [^|]*\|){6} \d[\d,.]* (?:\([^|]*\) )?\|/m, 'a seller-direct row with the seller CPU per response');
    assert.match(out.stdout, /^\| target \| figure \| measured \| threshold \| result \|/m, 'the targets table header');
    assert.match(out.stdout, /^\[\d+:0x[0-9a-f]+\]\s+\d+ ms: (Scavenge|Mark-Compact)/m, 'a --trace-gc line from a child');
    const pid = /gateway http:\/\/127\.0\.0\.1:\d+ \(pid (\d+)\)/.exec(out.stderr)?.[1];
    assert.ok(pid, out.stderr);
    const profile = join(REPO, 'bench', 'profiles', `ALLOC.${pid}.heapprofile`);
    assert.ok(existsSync(profile), `${profile} written`);
    const summary = spawnTsx('bench/profile-summary.ts', [profile, '--top', '5']);
    const summaryOut = captureOutput(summary);
    assert.equal(await new Promise<number | null>((resolve) => summary.on('exit', resolve)), 0, summaryOut.stderr);
    assert.match(summaryOut.stdout, /^Sampled allocations: \d+\.\d MiB in all/m);
    assert.match(summaryOut.stdout, /^\| MiB \| share \| function \|$/m);
    rmSync(profile);
    quickRunDone = true;
  });

  it('bench/ab.ts --quick (npm run bench:ab) compares the working tree with HEAD and prints its table; a bad option is refused', { timeout: RUN_TIMEOUT_MS + 10_000 }, async () => {
    // Worktrees left by an earlier run that was killed (a stale `adcp-bench-ab-` entry made this test fail in a suite run after a killed one): only this run's must be gone.
    const benchWorktrees = (): string[] => execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter((line) => line.startsWith('worktree ') && line.includes('adcp-bench-ab-'));
    const before = benchWorktrees();
    const child = spawnTsx('bench/ab.ts', ['--quick', '--cases', 'a,b']);
    const out = captureOutput(child);
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        reject(new Error(`bench/ab.ts --quick did not finish within ${RUN_TIMEOUT_MS} ms\n${out.stderr}`));
      }, RUN_TIMEOUT_MS);
      child.on('error', reject);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    assert.equal(code, 0, `bench/ab.ts --quick exited ${code}\n${out.stderr}`);
    // The compile cache (bench/compile.ts): the test before compiled this working tree, so the
    // head is taken from the cache, and so is the base when HEAD holds the same sources (a clean
    // clone, as in CI): the smoke test compiled the same tree three times (~45 s of CPU).
    const compiled = /base (compiled|taken from the compile cache) \(sources sha256 ([0-9a-f]{12})…\), head (compiled|taken from the compile cache) \(sources sha256 ([0-9a-f]{12})…\)/.exec(out.stderr);
    assert.ok(compiled, out.stderr);
    if (quickRunDone) assert.equal(compiled[3], 'taken from the compile cache', 'the head, compiled by the test before');
    if (compiled[2] === compiled[4]) assert.equal(compiled[1], 'taken from the compile cache', 'the base, the same sources as the head');
    assert.match(out.stdout, /^# Gateway A\/B: working tree \(head\) against HEAD \(base, [0-9a-f]+\)$/m);
    assert.match(out.stdout, /^\| case \| pass-through µs\/req \| base µs\/req \| head µs\/req \| base ÷ pass \| head ÷ pass \| head ÷ base per run \| head ÷ base, all runs \| head cheaper \|$/m);
    assert.match(out.stdout, /^\| 1 KiB \(a\) \| \d/m);
    assert.match(out.stdout, /^\| 1 KiB \(b\) \| \d[^\n]*\| [01] of 1 \|$/m);
    // The temporary worktree of the base revision is gone: the same bench worktrees as before the run.
    assert.deepEqual(benchWorktrees(), before);

    const bad = spawnTsx('bench/ab.ts', ['--rounds', '0']);
    const badOut = captureOutput(bad);
    assert.equal(await new Promise<number | null>((resolve) => bad.on('exit', resolve)), 2);
    assert.match(badOut.stderr, /^--rounds must be an integer from 1 to 100, got "0"$/m);

    // --size takes only the full bench's JSON sizes.
    const badSize = await runScript('bench/ab.ts', ['--size', '2048']);
    assert.equal(badSize.code, 2, badSize.stderr);
    assert.match(badSize.stderr, /^--size takes one of 1024, 65536, 1048576, 4194304, got "2048"$/m);

    // A --base git cannot resolve: a usage error, not git's stack trace (found by a new user).
    const badBase = await runScript('bench/ab.ts', ['--base', 'no-such-rev-0123']);
    assert.equal(badBase.code, 2, badBase.stderr);
    assert.match(badBase.stderr, /^--base "no-such-rev-0123" is not a commit of this repository \(git rev-parse found none\)\nUsage: npm run bench:ab/);
    assert.doesNotMatch(badBase.stderr, /\n {4}at /);
  });

  it('bench/scan.ts --quick (npm run bench:scan) prints the scan table, one row per shape; a bad --rounds is refused', { timeout: 60_000 }, async () => {
    const child = spawnTsx('bench/scan.ts', ['--quick']);
    const out = captureOutput(child);
    assert.equal(await new Promise<number | null>((resolve) => child.on('exit', resolve)), 0, out.stderr);
    assert.match(out.stdout, /^# JSON structure scan by content shape$/m);
    assert.match(out.stdout, /^\| shape \| bytes \| scan MB\/s \| parse MB\/s \| scan ÷ parse \| what \|$/m);
    const rows = out.stdout.split('\n').filter((l) => /^\| [a-z_() ]+ \| [\d,]+ \| [\d,]+ \([\d,]+–[\d,]+\) \| [\d,]+ \(/.test(l));
    assert.deepEqual(rows.map((l) => l.split(' | ')[0]), ['| get_products (a)', '| delivery report', '| short strings', '| integers', '| literals']);
    // `1e1` and `0x10` are numbers to Number() but not what the usage asks for (found by a new user).
    for (const rounds of ['0', '1e1', '0x10']) {
      const bad = spawnTsx('bench/scan.ts', ['--rounds', rounds]);
      const badOut = captureOutput(bad);
      assert.equal(await new Promise<number | null>((resolve) => bad.on('exit', resolve)), 2, rounds);
      assert.match(badOut.stderr, new RegExp(`^--rounds must be an integer from 1 to 100 \\(got ${rounds}\\)$`, 'm'));
    }
  });

  it('refuses a --node-flags value that is not a Node flag, before starting anything', { timeout: 30_000 }, async () => {
    const child = spawnTsx('bench/run.ts', ['--node-flags', '--trace-gc ; rm']);
    const out = captureOutput(child);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(out.stderr, /--node-flags: ";" is not a Node flag \(--name or --name=value\)/);
    assert.doesNotMatch(out.stderr, /compiling a snapshot/);
  });
});
