/**
 * Regression: config values with a YAML tag outside the core schema were reported as what
 * yaml made of them, or without their YAML path, or not at all; `!!binary` and `!!timestamp`
 * were named (test/regressions/config-yaml-messages-for-programmers.test.ts).
 *
 * Reported failure (a hostile trial):
 * - `max_json_depth: !!set {a, b}`: `got a mapping` (yaml reads a set as a mapping of nulls);
 * - `headers: !!omap [a: b]` and `!!pairs`: `got a list`, plus `agents.a.headers[0]:
 *   unsupported YAML node` (the list holds yaml's pairs);
 * - `listen: !!set {}` and `listen: !!timestamp 2001-12-14` passed `--check-config` as valid
 *   (an empty mapping; a Date, an object with no keys);
 * - an application's tag (`max_json_depth: !foo 12`, a key `!foo max_json_depth:`) and a known tag on the
 *   other kind of node (`headers: !!set [a]`) gave yaml's warning (`YAML: Unresolved tag: !foo`,
 *   `YAML: tag:yaml.org,2002:set used for seq collection, but expects map`): a line and column,
 *   no path.
 * Now (config/yaml-tags.ts): a value with any tag outside YAML 1.2's core schema is refused at
 * its YAML path, the tag named, in the words the other problems use; a key with one is refused
 * as a mapping key.
 *
 * Input: config files with those values, checked with the CLI's `--check-config` (in process: helpers/check-config.ts).
 * Expected: exit 2, nothing on stdout, and exactly the stderr below.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const AGENT = 'agents:\n  a:\n    url: http://127.0.0.1:9/mcp\n';
const DEPTH = 'expected an integer >= 1 and <= 10000';
const HEADERS = 'expected a mapping of header name to value';
const LISTEN = 'expected a mapping with `host` and `port`';

const CASES: ReadonlyArray<readonly [label: string, file: string, text: string, problem: string]> = [
  ['max_json_depth: !!set {a, b}', 'set.yaml', `${AGENT}    max_json_depth: !!set {a, b}\n`, `  agents.a.max_json_depth (line 4, column 27): ${DEPTH}, got a set (!!set)`],
  ['headers: !!omap [a: b]', 'omap.yaml', `${AGENT}    headers: !!omap [a: b]\n`, `  agents.a.headers (line 4, column 21): ${HEADERS}, got an ordered mapping (!!omap)`],
  ['headers: !!pairs [a: b]', 'pairs.yaml', `${AGENT}    headers: !!pairs [a: b]\n`, `  agents.a.headers (line 4, column 22): ${HEADERS}, got a list of pairs (!!pairs)`],
  ['listen: !!set {} (was valid)', 'listen-set.yaml', `listen: !!set {}\n${AGENT}`, `  listen (line 1, column 15): ${LISTEN}, got a set (!!set)`],
  ['listen: !!timestamp 2001-12-14 (was valid)', 'listen-timestamp.yaml', `listen: !!timestamp 2001-12-14\n${AGENT}`, `  listen (line 1, column 21): ${LISTEN}, got a timestamp (!!timestamp)`],
  ['max_json_depth: !foo 12', 'local-tag.yaml', `${AGENT}    max_json_depth: !foo 12\n`, `  agents.a.max_json_depth (line 4, column 26): ${DEPTH}, got a value tagged !foo`],
  ['headers: !!set [a] (a set tag on a list)', 'set-on-list.yaml', `${AGENT}    headers: !!set [a]\n`, `  agents.a.headers (line 4, column 20): ${HEADERS}, got a set (!!set)`],
  ['a key tagged !foo', 'key-tag.yaml', `${AGENT}    !foo max_json_depth: 12\n`, '  agents.a (line 4, column 10): mapping keys must be plain strings, got a value tagged !foo'],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-yaml-tags-'));
  for (const [, file, text] of CASES) await writeFile(join(dir, file), text);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config names a tag outside the YAML core schema, at its path', { concurrency: true }, () => {
  for (const [label, file, , problem] of CASES) {
    test(`${label}: exit 2, one problem naming the tag and the path`, OPTIONS, async () => {
      const path = join(dir, file);
      const run = await checkConfigRun(path);
      assert.deepEqual(run, { code: 2, stdout: '', stderr: `${path}: 1 problem\n${problem}\n` });
    });
  }
});
