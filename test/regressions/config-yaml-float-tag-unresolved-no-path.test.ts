/**
 * Regression: a YAML core tag on a value it does not fit got yaml's own message, with no YAML
 * path, and validation stopped there; and `!!float 64`, a YAML 1.2 float, was one of them.
 *
 * Reported failure (a new user's trial, 2026-12-03, F7): `max_json_depth: !!float 64` (and
 * `!!float "64"`) gave `line 4, column 21: YAML: Unresolved tag: tag:yaml.org,2002:float`, and
 * the misspelled `max_respons_bytes` on the next line was not reported; `!!int 64.0`,
 * `!!int 6.4e1` and `!!int 1e-400` the same with `...:int`. docs/configuration.md allows the
 * core tags, and counts a float with an integral value as that integer.
 * Now (config/yaml-tags.ts): `!!float` reads every YAML 1.2 float (`!!float 64` is 64: yaml's
 * own `!!float` wants a `.` or an exponent); a core tag on a value it does not fit is refused
 * at the value's YAML path, showing the tag and what was written (under `headers`, the tag
 * only), and the rest of the file is checked.
 *
 * Input: config files with such values, checked with the CLI's `--check-config` (in process: helpers/check-config.ts) and the
 * real loader (`parseConfig`).
 * Expected: exit 2, nothing on stdout, and exactly the stderr below; the values read.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { assertCheckConfigProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const AGENT = 'agents:\n  a:\n    url: http://127.0.0.1:9/mcp\n';
const DEPTH = 'expected an integer >= 1 and <= 10000';
/** The trial's next line: a misspelled key, reported whatever the line before it holds. */
const TYPO = '    max_respons_bytes: 5\n';
const TYPO_PROBLEM = '  agents.a.max_respons_bytes (line 5, column 5): unknown key `max_respons_bytes` (did you mean `max_response_bytes`?)';

const CASES: ReadonlyArray<readonly [label: string, file: string, value: string, problems: readonly string[]]> = [
  ['!!float 64 (a YAML 1.2 float: 64)', 'float-64.yaml', '!!float 64', [TYPO_PROBLEM]],
  ['!!float "64"', 'float-quoted.yaml', '!!float "64"', [TYPO_PROBLEM]],
  ['!!int 64.0', 'int-fraction.yaml', '!!int 64.0', [`  agents.a.max_json_depth (line 4, column 27): ${DEPTH}, got !!int 64.0, which is not a YAML integer`, TYPO_PROBLEM]],
  ['!!int 6.4e1', 'int-exponent.yaml', '!!int 6.4e1', [`  agents.a.max_json_depth (line 4, column 27): ${DEPTH}, got !!int 6.4e1, which is not a YAML integer`, TYPO_PROBLEM]],
  ['!!int 1e-400', 'int-tiny.yaml', '!!int 1e-400', [`  agents.a.max_json_depth (line 4, column 27): ${DEPTH}, got !!int 1e-400, which is not a YAML integer`, TYPO_PROBLEM]],
  ['!!float abc', 'float-word.yaml', '!!float abc', [`  agents.a.max_json_depth (line 4, column 29): ${DEPTH}, got !!float abc, which is not a YAML float`, TYPO_PROBLEM]],
  ['!!int "6x"', 'int-quoted.yaml', '!!int "6x"', [`  agents.a.max_json_depth (line 4, column 27): ${DEPTH}, got !!int "6x", which is not a YAML integer`, TYPO_PROBLEM]],
  ['!!bool yes', 'bool-yes.yaml', '!!bool yes', [`  agents.a.max_json_depth (line 4, column 28): ${DEPTH}, got !!bool yes, which is not a YAML boolean (true or false)`, TYPO_PROBLEM]],
  ['!!int [1]', 'int-list.yaml', '!!int [1]', [`  agents.a.max_json_depth (line 4, column 27): ${DEPTH}, got a list tagged !!int`, TYPO_PROBLEM]],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-yaml-core-tags-'));
  for (const [, file, value] of CASES) await writeFile(join(dir, file), `${AGENT}    max_json_depth: ${value}\n${TYPO}`);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config: a core tag on a value it does not fit, at its path; the rest still checked', { concurrency: true }, () => {
  for (const [label, file, , problems] of CASES) {
    test(`${label}: exit 2, exactly these problems`, OPTIONS, async () => {
      await assertCheckConfigProblems(join(dir, file), problems);
    });
  }
});

function problemsOf(text: string): Array<[string, string]> {
  try {
    parseConfig(text, { env: {} });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems.map((p) => [p.path, p.message]);
  }
  return assert.fail('parsed');
}

describe('the loader', () => {
  test('!!float reads YAML 1.2 floats, quoted or not: integer settings take the integral ones', () => {
    const config = parseConfig(`${AGENT}    max_json_depth: !!float 64\n    max_json_nodes: !!float "640"\n    response_deadline_ms: !!float +1e3\n`, { env: {} });
    const limits = config.agents.get('a')?.limits;
    assert.deepEqual([limits?.max_json_depth, limits?.max_json_nodes, limits?.response_deadline_ms], [64, 640, 1000]);
  });

  test('listen.port: !!int 64.0', () => {
    assert.deepEqual(problemsOf(`listen: { host: 127.0.0.1, port: !!int 64.0 }\n${AGENT}`), [
      ['listen.port', 'expected an integer >= 0 and <= 65535, got !!int 64.0, which is not a YAML integer'],
    ]);
  });

  test('a header value: the tag only, never the value', () => {
    assert.deepEqual(problemsOf(`${AGENT}    headers: { authorization: !!int secret-token }\n`), [
      ['agents.a.headers.authorization', 'expected a string header value (quote numbers), got a value tagged !!int, which is not a YAML integer'],
    ]);
  });

  test('a key', () => {
    assert.deepEqual(problemsOf(`${AGENT}    tools:\n      !!int 1.5: { max_json_depth: 3 }\n`), [
      ['agents.a.tools', 'mapping keys must be plain strings, got !!int 1.5, which is not a YAML integer'],
    ]);
  });

  test('!!null, !!map and !!seq on values they do not fit', () => {
    assert.deepEqual(problemsOf(`${AGENT}    max_json_depth: !!null x\n    max_json_nodes: !!map abc\n    accept_encoding: !!seq { gzip: 1 }\n`), [
      ['agents.a.max_json_depth', `${DEPTH}, got !!null x, which is not a YAML null`],
      ['agents.a.max_json_nodes', 'expected an integer >= 1 and <= 100000000, got !!map abc, which is not a mapping'],
      ['agents.a.accept_encoding', 'expected a list of content codings, such as [gzip, deflate, br] or [identity], got a mapping tagged !!seq'],
    ]);
  });
});
