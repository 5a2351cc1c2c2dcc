/**
 * Regression: a `%YAML 1.1` directive at the top of the config file switched yaml to YAML 1.1
 * rules, so settings were read other than docs/configuration.md says (YAML 1.2, core schema).
 *
 * Reported failure (a new user's trial, 2026-12-03, F3): with `%YAML 1.1` / `---` in front,
 * a file whose YAML 1.2 reading has 4 problems passed `--check-config` as valid: `020` was read
 * as 16 (octal), `1:30` as 90 (sexagesimal), `4_194_304` and `0b101` as numbers, and
 * `tls_insecure_skip_verify: on` as true (certificate checks turned off). Live reload took
 * such a file too. `%YAML 1.3` got yaml's `Unsupported YAML version 1.3`.
 * Now (config/yaml-document.ts): a `%YAML` directive naming a version other than 1.2 is a
 * problem at its line, saying the config is read as YAML 1.2, listed with the problems of the
 * file read so (test/regressions/config-yaml-directive-hides-other-problems.test.ts);
 * `%YAML 1.2` is fine.
 *
 * Input: config files with such directives, checked with the CLI's `--check-config` (in process: helpers/check-config.ts) and
 * the loader the live reload uses (`loadConfigFile`).
 * Expected: exit 2, nothing on stdout, and exactly the stderr below: the directive's problem,
 * then the YAML 1.2 reading's (`020` is 20); `%YAML 1.2`: the YAML 1.2 reading alone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfigFile } from '../../src/config/load.js';
import { assertCheckConfigProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

/** The trial's file: every value is read differently by YAML 1.1. */
const BODY = [
  'agents:',
  '  a:',
  '    url: http://127.0.0.1:9/mcp',
  '    max_json_depth: 020',
  '    max_json_nodes: 4_194_304',
  '    response_deadline_ms: 1:30',
  '    backoff_after_breaches: 0b101',
  '    tls_insecure_skip_verify: on',
  '',
].join('\n');

const V11 =
  'the config is read as YAML 1.2 (core schema), not as the YAML 1.1 this directive asks for (where 020 is 16, 1:30 is 90 and on is true): remove it, or write %YAML 1.2';
const V13 = 'the config is read as YAML 1.2 (core schema), not as the YAML 1.3 this directive asks for: remove it, or write %YAML 1.2';

/** The body's problems read as YAML 1.2, when it starts on line 3. */
const V12_PROBLEMS = [
  '  agents.a.max_json_nodes (line 7, column 21): expected an integer >= 1 and <= 100000000, got "4_194_304"',
  '  agents.a.response_deadline_ms (line 8, column 27): expected an integer >= 1 and <= 86400000 (24 h), got "1:30"',
  '  agents.a.backoff_after_breaches (line 9, column 29): expected an integer >= 0 and <= 1000 (0 turns the backoff off), got "0b101"',
  '  agents.a.tls_insecure_skip_verify (line 10, column 31): expected true or false, got "on"',
];

const CASES: ReadonlyArray<readonly [label: string, file: string, text: string, problems: readonly string[]]> = [
  ['%YAML 1.1 (was valid: 16, 4194304, 90, 5, true)', 'v11.yaml', `%YAML 1.1\n---\n${BODY}`, [`  line 1, column 1: ${V11}`, ...V12_PROBLEMS]],
  ['%YAML 1.1 after a comment, no ---', 'v11-comment.yaml', `# gateway\n%YAML 1.1\n${BODY}`, [`  line 2, column 1: ${V11}`, ...V12_PROBLEMS]],
  ['%YAML 1.3', 'v13.yaml', `%YAML 1.3\n---\n${BODY}`, [`  line 1, column 1: ${V13}`, ...V12_PROBLEMS]],
  ['%YAML 1.2: the YAML 1.2 reading', 'v12.yaml', `%YAML 1.2\n---\n${BODY}`, V12_PROBLEMS],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-yaml-version-'));
  for (const [, file, text] of CASES) await writeFile(join(dir, file), text);
  await writeFile(join(dir, 'v12-valid.yaml'), '%YAML 1.2\n---\nagents:\n  a:\n    url: http://127.0.0.1:9/mcp\n    max_json_depth: 020\n');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config reads the file as YAML 1.2 whatever its %YAML directive says', { concurrency: true }, () => {
  for (const [label, file, , problems] of CASES) {
    test(`${label}: exit 2, exactly these problems`, OPTIONS, async () => {
      await assertCheckConfigProblems(join(dir, file), problems);
    });
  }
});

describe('the loader live reload uses', () => {
  test('refuses %YAML 1.1 at its line, first of the file\'s problems', async () => {
    const path = join(dir, 'v11.yaml');
    const err = await loadConfigFile(path).then(
      () => assert.fail('loaded'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ConfigError);
    assert.deepEqual(err.problems[0], { path: '', message: V11, line: 1, column: 1 });
    assert.deepEqual(
      err.problems.slice(1).map((p) => p.path),
      ['agents.a.max_json_nodes', 'agents.a.response_deadline_ms', 'agents.a.backoff_after_breaches', 'agents.a.tls_insecure_skip_verify'],
    );
  });

  test('%YAML 1.2: 020 is 20', async () => {
    const config = await loadConfigFile(join(dir, 'v12-valid.yaml'));
    assert.equal(config.agents.get('a')?.limits.max_json_depth, 20);
  });
});
