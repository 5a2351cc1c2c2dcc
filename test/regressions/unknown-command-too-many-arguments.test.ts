/**
 * Reported failure (a hostile new user's trial 19, L5): `adcp-buyer-gateway frobnicate` said
 * `error: too many arguments. Expected 0 arguments but got 1.` (exit 2), naming neither the
 * unknown command nor the commands there are; and `--version --bogus` printed the version and
 * exited 0, where `--bogus` alone is a usage error (exit 2).
 *
 * Cause: commander takes an operand of a program with an action of its own (it serves) for an
 * excess argument, not a command; and its `.version()` prints and exits as soon as it meets
 * the flag, before the rest of the line is checked.
 *
 * Now (src/cli.ts refuseBadLineFirst): an operand of the program is an unknown command, refused
 * as `help <unknown>` refuses it (the name, the commands, exit 2); `--version` prints the
 * version only once the whole line is valid.
 *
 * Input: the real CLI (`node dist/main.js`, or src/main.ts through tsx when dist/ is stale:
 * test/helpers/process.ts). Expected: the exact stdout, stderr and exit code below.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import { VERSION } from '../../src/version.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

const unknownCommand = (name: string) => ({ code: 2, stdout: '', stderr: `error: unknown command '${name}' (commands: probe, help)\n` });
const unknownOption = (flag: string) => ({ code: 2, stdout: '', stderr: `error: unknown option '${flag}'\n` });

describe('unknown commands and flags beside --version are usage errors', { concurrency: true }, () => {
  test('`frobnicate`: unknown command, named with the commands, exit 2 (was: too many arguments)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['frobnicate']), unknownCommand('frobnicate'));
  });

  test('`--check-config extra`: unknown command `extra`, exit 2 (was: too many arguments)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['--check-config', 'extra']), unknownCommand('extra'));
  });

  test('`--version --bogus` and `--bogus --version`: unknown option, exit 2 (was: the version, exit 0)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['--version', '--bogus']), unknownOption('--bogus'));
    assert.deepEqual(await runCli(['--bogus', '--version']), unknownOption('--bogus'));
  });

  test('`frobnicate --version`: unknown command, exit 2 (was: the version, exit 0)', OPTIONS, async () => {
    assert.deepEqual(await runCli(['frobnicate', '--version']), unknownCommand('frobnicate'));
  });

  test('controls: `--bogus` alone exit 2; `--version` and `-V` print the version, exit 0; `help frobnicate` as before', OPTIONS, async () => {
    assert.deepEqual(await runCli(['--bogus']), unknownOption('--bogus'));
    assert.deepEqual(await runCli(['--version']), { code: 0, stdout: `${VERSION}\n`, stderr: '' });
    assert.deepEqual(await runCli(['-V']), { code: 0, stdout: `${VERSION}\n`, stderr: '' });
    assert.deepEqual(await runCli(['help', 'frobnicate']), unknownCommand('frobnicate'));
  });
});
