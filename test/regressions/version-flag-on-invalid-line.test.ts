/**
 * Reported failure (a hostile new user's trial 20, L1, on trial 19's fix): `--version` (`-V`)
 * still printed the version and exited 0 on lines that are usage errors without it:
 * `-V --check-config probe x` (without -V: `option '--check-config' cannot be used with the
 * command 'probe'`, exit 2), `-V help nothere` and `help -V foo` (without -V: unknown command,
 * exit 2). And `-hV` was `error: unknown option '-hV'` (exit 2) where `-Vh` showed the help.
 *
 * Cause: the version was printed by the program's preAction hook, which runs before the
 * action that refuses those lines (probe's `--check-config` check, `help`'s unknown name);
 * commander splits a short flag group only while its letters are options, and the help
 * flag is not one of them (it looks for `-h` alone), so `-Vh` was `-V -h` and `-hV` nothing.
 *
 * Now (src/cli.ts refuseBadLineFirst, src/cli-flag-groups.ts): the version is printed, exit
 * 0, only when the line without it is valid and is the plain serving line (with or without
 * `--config`). Otherwise:
 * - a line that is a usage error without `-V` is the same usage error with it;
 * - `help [command]` shows that help, as `--help -V` always did (help wins);
 * - `--check-config` or `probe <agent>` with `-V` is refused (exit 2) as `--check-config`
 *   with `probe` is: two commands, one of them would be dropped without a word;
 * (`-hV` stays commander's `unknown option '-hV'` while `-Vh` is the help: commander reads a
 * group letter by letter only while each is one of its options, and its help flag is not one;
 * a rewrite of the argument list for it was judged not worth owning.)
 *
 * Input: the real CLI (test/helpers/process.ts `runCli`). Expected: the exact stdout,
 * stderr and exit code below; the help's bytes are `--help`'s (`probe --help`'s).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import { VERSION } from '../../src/version.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

const usage = (stderr: string) => ({ code: 2, stdout: '', stderr: `${stderr}\n` });
const unknownCommand = (name: string) => usage(`error: unknown command '${name}' (commands: probe, help)`);
const CHECK_CONFIG_WITH_PROBE = usage(
  "error: option '--check-config' cannot be used with the command 'probe': --check-config checks the config and exits, probe <agent> calls the seller; give one of them",
);
const VERSION_WITH_CHECK_CONFIG = usage(
  "error: option '-V, --version' cannot be used with option '--check-config': --version prints the version and exits, --check-config checks the config and exits; give one of them",
);
const VERSION_WITH_PROBE = usage(
  "error: option '-V, --version' cannot be used with the command 'probe': --version prints the version and exits, probe <agent> calls the seller; give one of them",
);
const PRINTS_VERSION = { code: 0, stdout: `${VERSION}\n`, stderr: '' };

/** The help `args` print (stdout, exit 0), to compare with. */
async function helpOf(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await runCli(args);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Usage: adcp-buyer-gateway /);
  return r;
}

describe('--version prints the version only on a line valid without it', { concurrency: true }, () => {
  test('`-V --check-config probe x` (any order): the --check-config/probe usage error, exit 2 (was: the version, exit 0)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['--check-config', 'probe', 'x']), CHECK_CONFIG_WITH_PROBE);
    assert.deepEqual(await runCli(['-V', '--check-config', 'probe', 'x']), CHECK_CONFIG_WITH_PROBE);
    assert.deepEqual(await runCli(['probe', 'x', '--check-config', '--version']), CHECK_CONFIG_WITH_PROBE);
  });

  test('`-V help nothere`, `help -V foo`: unknown command, exit 2 (was: the version, exit 0)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['help', 'nothere']), unknownCommand('nothere'));
    assert.deepEqual(await runCli(['-V', 'help', 'nothere']), unknownCommand('nothere'));
    assert.deepEqual(await runCli(['help', '-V', 'foo']), unknownCommand('foo'));
  });

  test('`help -V`, `help probe --version`: the help, as `--help -V` (was: the version)', OPTIONS, async () => {
    const help = await helpOf(['--help']);
    assert.deepEqual(await runCli(['help', '-V']), help);
    assert.deepEqual(await runCli(['--help', '-V']), help);
    assert.deepEqual(await runCli(['help', 'probe', '--version']), await helpOf(['probe', '--help']));
  });

  test('`--check-config -V`, `probe x -V`: refused as two commands, exit 2, before any file is read (was: the version)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['--check-config', '-V', '--config', 'no-such-file.yaml']), VERSION_WITH_CHECK_CONFIG);
    assert.deepEqual(await runCli(['probe', 'x', '-V', '--config', 'no-such-file.yaml']), VERSION_WITH_PROBE);
  });

  test('controls: `-V`, `-V -c <file>` (never read), `--config=<file> --version`: the version; `-c -hV` is a file named -hV; `-xV` unknown', OPTIONS, async () => {
    assert.deepEqual(await runCli(['-V']), PRINTS_VERSION);
    assert.deepEqual(await runCli(['-V', '-c', 'no-such-file.yaml']), PRINTS_VERSION);
    assert.deepEqual(await runCli(['--config=no-such-file.yaml', '--version']), PRINTS_VERSION);
    assert.deepEqual(await runCli(['-V', '-c', '-hV']), PRINTS_VERSION);
    assert.deepEqual(await runCli(['-xV']), usage("error: unknown option '-xV'"));
  });
});
