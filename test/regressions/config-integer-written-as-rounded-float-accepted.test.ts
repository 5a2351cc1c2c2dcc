/**
 * Regression: an integer setting written as a float that only rounds to an integer was
 * accepted as that integer, and a port written `-0` as port 0.
 *
 * Reported failure (a hostile trial): `max_json_depth: 64.0000000000000001` was read as 64
 * (yaml reads a number as the nearest double, and 64.0000000000000001 has none of its own),
 * where `64.5` is refused as no integer; `listen.port: -0` started on a free port, as `0`
 * does. Likewise `1e-400` (a double 0) was port 0.
 * Now (config/yaml-numbers.ts): a number is read from its scalar's YAML text; one whose text
 * is not an integer is refused at its path, showing the text, as a fraction is; so is a
 * negative zero. A float whose text is an integer still counts as one, as docs/configuration.md
 * says (`16.0`, `4.194304e6`; a control below).
 *
 * Input: config files with those numbers, checked with the CLI's `--check-config` (in process: helpers/check-config.ts).
 * Expected: exit 2, nothing on stdout, and exactly the stderr below; the control: exit 0.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertCheckConfigProblems, checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const AGENT = 'agents:\n  a:\n    url: http://127.0.0.1:9/mcp\n';
const PORT = 'expected an integer >= 0 and <= 65535';

const CASES: ReadonlyArray<readonly [label: string, file: string, text: string, problems: readonly string[]]> = [
  [
    'max_json_depth: 64.0000000000000001',
    'depth.yaml',
    `${AGENT}    max_json_depth: 64.0000000000000001\n`,
    ['  agents.a.max_json_depth (line 4, column 21): expected an integer >= 1 and <= 10000, got 64.0000000000000001'],
  ],
  [
    'rounding floats in bytes, ms and count keys',
    'keys.yaml',
    `defaults:\n  max_response_bytes: 4194303.99999999999\n  backoff_after_breaches: 3.0000000000000001e0\n${AGENT}    response_deadline_ms: 1000.00000000000001\n`,
    [
      '  defaults.max_response_bytes (line 2, column 23): expected an integer >= 1 and <= 4194304 (4 MiB), got 4194303.99999999999',
      '  defaults.backoff_after_breaches (line 3, column 27): expected an integer >= 0 and <= 1000 (0 turns the backoff off), got 3.0000000000000001e0',
      '  agents.a.response_deadline_ms (line 7, column 27): expected an integer >= 1 and <= 86400000 (24 h), got 1000.00000000000001',
    ],
  ],
  ['listen.port: -0', 'port-minus-zero.yaml', `listen:\n  port: -0\n${AGENT}`, [`  listen.port (line 2, column 9): ${PORT}, got -0 (a negative zero)`]],
  ['ops_listen.port: -0.0', 'ops-port-minus-zero.yaml', `ops_listen:\n  port: -0.0\n${AGENT}`, [`  ops_listen.port (line 2, column 9): ${PORT}, got -0.0 (a negative zero)`]],
  ['listen.port: 1e-400 (a double 0)', 'port-tiny.yaml', `listen:\n  port: 1e-400\n${AGENT}`, [`  listen.port (line 2, column 9): ${PORT}, got 1e-400`]],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-integer-text-'));
  for (const [, file, text] of CASES) await writeFile(join(dir, file), text);
  await writeFile(join(dir, 'exact.yaml'), `listen:\n  port: 0.0\n${AGENT}    max_json_depth: 6.4e1\n    max_response_bytes: 4.194304e6\n    response_deadline_ms: 100000e-2\n`);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config reads an integer setting as its YAML text writes it', { concurrency: true }, () => {
  for (const [label, file, , problems] of CASES) {
    test(`${label}: exit 2, refused at its path (was accepted)`, OPTIONS, async () => {
      await assertCheckConfigProblems(join(dir, file), problems);
    });
  }

  test('control: floats whose text is an integer count as that integer (docs/configuration.md)', OPTIONS, async () => {
    const path = join(dir, 'exact.yaml');
    const run = await checkConfigRun(path);
    assert.deepEqual([run.code, run.stderr], [0, '']);
    assert.match(run.stdout, /\n {2}listen {17}127\.0\.0\.1:0 \(any free port\)\n/);
    assert.match(run.stdout, /\na {11}http:\/\/127\.0\.0\.1:9\/mcp {2}4194304 {13}4194304 {14}64 {14}100000 {10}1000 {18}/);
  });
});
