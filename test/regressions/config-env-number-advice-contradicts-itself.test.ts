/**
 * Regression (a hostile new operator's trial 45, Info): for `defaults: {max_response_bytes:
 * ${NUM}}` the error advised quoting the reference (`write "${NUM}"`), and once quoted it was
 * refused as "a substituted value is always a string": the advice led nowhere, since a
 * `${VAR}` can never set a number or a boolean (docs/configuration.md, `${VAR}`).
 *
 * Input: the trial's e1 (flow, unquoted), e5 (block, unquoted) and e6 (quoted) configs with
 * `NUM=5`, and a boolean setting, with the CLI's `--check-config` (in process: helpers/check-config.ts); a string setting in a
 * flow mapping (control: quoting is the fix there, as before).
 * Expected: exit 2; for a number or boolean setting, one problem saying to write the value
 * itself, never to quote it; for a string setting, the quoting advice.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const AGENT = 'agents:\n  a: {url: "http://127.0.0.1:3001/mcp"}\n';
const NUMBER = 'a ${VAR} always makes a string, and this setting takes a number: write the number itself';

const CASES: ReadonlyArray<readonly [name: string, text: string, problem: string]> = [
  ['e1', `defaults: {max_response_bytes: \${NUM}}\n${AGENT}`, `defaults.max_response_bytes (line 1, column 32): \`\${NUM}\` cannot be used here: ${NUMBER}`],
  ['e5', `defaults:\n  max_response_bytes: \${NUM}\n${AGENT}`, `defaults.max_response_bytes (line 2, column 23): expected an integer >= 1 and <= 4194304 (4 MiB), got a string from \${...}: ${NUMBER}`],
  ['e6', `defaults:\n  max_response_bytes: "\${NUM}"\n${AGENT}`, `defaults.max_response_bytes (line 2, column 23): expected an integer >= 1 and <= 4194304 (4 MiB), got a string from \${...}: ${NUMBER}`],
  [
    'bool',
    'agents:\n  a: {url: "http://127.0.0.1:3001/mcp", tls_insecure_skip_verify: ${FLAG}}\n',
    'agents.a.tls_insecure_skip_verify (line 2, column 67): `${FLAG}` cannot be used here: a ${VAR} always makes a string, and this setting takes true or false: write true or false itself',
  ],
  [
    'string (control)',
    'listen: {host: ${HOST}}\nagents:\n  a: {url: "http://127.0.0.1:3001/mcp"}\n',
    'listen.host (line 1, column 16): `${HOST}` inside a flow mapping or list ({...} or [...]) must be quoted: write "${HOST}" (unquoted, YAML reads its braces as a mapping)',
  ],
];

test('a ${VAR} where a number or boolean goes: the advice is to write the value, not to quote it (was: quote it, then refused quoted)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'env-number-advice-'));
  try {
    for (const [name, text, problem] of CASES) {
      const file = join(dir, `${name.split(' ')[0]}.yaml`);
      await writeFile(file, text);
      const run = await checkConfigRun(file, { NUM: '5', FLAG: 'true', HOST: '127.0.0.1' });
      assert.deepEqual(run, { code: 2, stdout: '', stderr: `${file}: 1 problem\n  ${problem}\n` }, name);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
