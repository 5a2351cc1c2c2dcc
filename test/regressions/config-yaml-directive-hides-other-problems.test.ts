/**
 * Regression (a carried defect, "a `%YAML` refusal stops validation before the problems of the
 * rest of the file"): a config file with a `%YAML` directive naming a version other than 1.2
 * (refused at its line since test/regressions/config-yaml-1-1-directive-changes-numbers.test.ts)
 * got that one problem and nothing else, whereas an unknown key or a bad value in the same
 * file is reported with every other problem in one `--check-config` run. The operator fixed
 * the directive, ran again, and only then met the rest.
 *
 * Now (config/yaml-document.ts, config/load.ts) the file is read as YAML 1.2 all the same and
 * the directive is one problem among the others, listed in file order with them.
 *
 * Input: config files checked with the CLI's `--check-config` (in process: helpers/check-config.ts) and the loader the live
 * reload uses (`loadConfigFile`): `%YAML 1.1` / `---` in front of a body with an unknown key,
 * a value out of range and a value YAML 1.1 would read as a number (`1:30`); `%YAML 1.3`
 * after a comment, no `---`, in front of the same body; `%YAML 1.1` / `---` and nothing else;
 * `%YAML 1.1` in front of a file that also has a YAML syntax error (controls: already listed
 * together).
 * Expected: exit 2, nothing on stdout, and exactly the problem lists below.
 * Before the fix: only the `%YAML` problem.
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

/** Three problems when read as YAML 1.2, on lines 2, 5 and 6 of the body. */
const BODY = [
  'agents:',
  '  a:',
  '    url: http://127.0.0.1:9/mcp',
  '    max_respons_bytes: 1000',
  '    max_json_depth: 0',
  '    response_deadline_ms: 1:30',
  '',
].join('\n');

const V11 =
  'the config is read as YAML 1.2 (core schema), not as the YAML 1.1 this directive asks for (where 020 is 16, 1:30 is 90 and on is true): remove it, or write %YAML 1.2';
const V13 = 'the config is read as YAML 1.2 (core schema), not as the YAML 1.3 this directive asks for: remove it, or write %YAML 1.2';

/** The body's problems when it starts on line 3. */
const BODY_PROBLEMS = [
  '  agents.a.max_respons_bytes (line 6, column 5): unknown key `max_respons_bytes` (did you mean `max_response_bytes`?)',
  '  agents.a.max_json_depth (line 7, column 21): expected an integer >= 1 and <= 10000, got 0',
  '  agents.a.response_deadline_ms (line 8, column 27): expected an integer >= 1 and <= 86400000 (24 h), got "1:30"',
];

const CASES: ReadonlyArray<readonly [label: string, file: string, text: string, problems: readonly string[]]> = [
  ['%YAML 1.1 / ---, then an unknown key, a value out of range and 1:30', 'v11.yaml', `%YAML 1.1\n---\n${BODY}`, [`  line 1, column 1: ${V11}`, ...BODY_PROBLEMS]],
  ['%YAML 1.3 after a comment, no ---, then the same', 'v13-comment.yaml', `# gateway\n%YAML 1.3\n${BODY}`, [`  line 2, column 1: ${V13}`, ...BODY_PROBLEMS]],
  [
    '%YAML 1.1 / --- and no settings',
    'v11-empty.yaml',
    '%YAML 1.1\n---\n',
    [`  line 1, column 1: ${V11}`, '  the file has no settings (only comments or whitespace): at least an `agents:` block with one agent is required'],
  ],
  [
    'control: %YAML 1.1 and a YAML syntax error, listed together',
    'v11-syntax.yaml',
    '%YAML 1.1\n---\nagents:\n  a:\n    url: "http://127.0.0.1:9/mcp\n',
    [`  line 1, column 1: ${V11}`, '  line 6, column 1: YAML: Missing closing "quote'],
  ],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-yaml-directive-'));
  for (const [, file, text] of CASES) await writeFile(join(dir, file), text);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config lists a %YAML directive of another version with the rest of the file\'s problems', { concurrency: true }, () => {
  for (const [label, file, , problems] of CASES) {
    test(`${label}: exit 2, exactly these problems, in file order`, OPTIONS, async () => {
      await assertCheckConfigProblems(join(dir, file), problems);
    });
  }
});

describe('the loader live reload uses', () => {
  test('%YAML 1.1 / ---: the directive and the body\'s three problems, in file order', async () => {
    const err = await loadConfigFile(join(dir, 'v11.yaml')).then(
      () => assert.fail('loaded'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ConfigError);
    assert.deepEqual(
      err.problems.map((p) => ({ path: p.path, line: p.line, column: p.column })),
      [
        { path: '', line: 1, column: 1 },
        { path: 'agents.a.max_respons_bytes', line: 6, column: 5 },
        { path: 'agents.a.max_json_depth', line: 7, column: 21 },
        { path: 'agents.a.response_deadline_ms', line: 8, column: 27 },
      ],
    );
    assert.equal(err.problems[0]!.message, V11);
  });
});
