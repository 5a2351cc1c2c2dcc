/**
 * Regression: `adcp-buyer-gateway help probe` exited 2 (`error: too many arguments. Expected
 * 0 arguments but got 2.`) while `adcp-buyer-gateway probe --help` printed the help.
 *
 * Failure (a hostile trial): commander adds its `help [command]` command only to a program
 * without an action of its own, and this one serves: `help` was taken for arguments of the
 * program, which has none. `help` alone and `help unknown` were refused the same way.
 *
 * Now (src/cli.ts addHelpCommand): `help <command>` prints that command's help on stdout and
 * exits 0, as `<command> --help` does; `help` alone the program's, as `--help`; an unknown
 * command is a usage error that names it and the commands there are (exit 2, nothing on stdout).
 *
 * Input: the real CLI (`node dist/main.js`) with those arguments. Expected: the
 * exact stdout, stderr and exit code below.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli, type CliRun } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

let probeHelp: CliRun;
let programHelp: CliRun;

before(async () => {
  [probeHelp, programHelp] = await Promise.all([runCli(['probe', '--help']), runCli(['--help'])]);
}, OPTIONS);

describe('`help [command]` prints help as `--help` does', { concurrency: true }, () => {
  test('control: `probe --help` and `--help` print their help, exit 0', () => {
    assert.deepEqual([probeHelp.code, probeHelp.stderr, probeHelp.stdout.split('\n')[0]], [0, '', 'Usage: adcp-buyer-gateway probe [options] <agent>']);
    assert.deepEqual([programHelp.code, programHelp.stderr, programHelp.stdout.split('\n')[0]], [0, '', 'Usage: adcp-buyer-gateway [options] [command]']);
  });

  test("`help probe`: probe's help, exit 0 (was exit 2, too many arguments)", OPTIONS, async () => {
    assert.deepEqual(await runCli(['help', 'probe']), probeHelp);
  });

  test("`help`: the program's help, exit 0 (was exit 2, too many arguments)", OPTIONS, async () => {
    assert.deepEqual(await runCli(['help']), programHelp);
  });

  test('`help unknown`: a usage error naming the command, exit 2 (was: too many arguments)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['help', 'unknown']), { code: 2, stdout: '', stderr: "error: unknown command 'unknown' (commands: probe, help)\n" });
  });

  test('the program\'s help lists `help [command]`', () => {
    assert.match(programHelp.stdout, /\n {2}help \[command\] +show the help of a command/);
  });
});
