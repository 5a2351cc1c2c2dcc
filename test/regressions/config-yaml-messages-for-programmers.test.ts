/**
 * Regression: config file problems reported in words meant for a programmer, or not at all
 * what was wrong.
 *
 * Reported failure (a new user's trial, 2026-12-03, F10):
 * - a file holding two YAML documents gave yaml's advice to its programmer, `YAML: Source
 *   contains multiple documents; please use YAML.parseAllDocuments()`;
 * - flow nesting 1,000 deep or more gave `YAML: Maximum call stack size exceeded` (yaml's
 *   composer is recursive), at a column that varied between runs (791, then 1740);
 * - `max_json_depth: !!binary aGVsbG8=` was reported as "got a mapping" (yaml resolves the
 *   explicit `!!binary` tag in any schema, to bytes, which the message took for a mapping).
 * Now: a second document is a problem at the place it starts; a mapping or list more than
 * 64 levels deep is refused before yaml composes the document, at the first such one (so at
 * the same place every run), block or flow, and also when aliases put one that deep (a chain
 * of anchors took 100 s and 2 GB and printed a 10,000-segment path); a `!!binary` or
 * `!!timestamp` value is named as what it is.
 *
 * Input: config files with those contents, checked with the CLI's `--check-config` (in process: helpers/check-config.ts).
 * Expected: exit 2, nothing on stdout, and exactly the stderr below: the file, one problem,
 * its position (and YAML path where it has one) and what is wrong.
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
const TOO_DEEP = 'the config is nested too deeply: more than 64 levels of mappings and lists';

/** Anchors `&a0`..`&a9` under `x`, each nesting the previous alias 40 lists deep: x[1] reaches 80 levels through `*a0`. */
const aliasChain = (): string => {
  const items = Array.from({ length: 10 }, (_, k) => `  - &a${k} ${'['.repeat(40)}${k === 0 ? '1' : `*a${k - 1}`}${']'.repeat(40)}`);
  return `${AGENT}x:\n${items.join('\n')}\n`;
};

const CASES: ReadonlyArray<readonly [label: string, file: string, text: string, problem: string]> = [
  [
    'a second document after ---',
    'two-docs.yaml',
    `${AGENT}---\nlog_level: info\n`,
    '  line 4, column 1: the config file must hold one YAML document, and a second one starts here',
  ],
  [
    'a second document after ...',
    'two-docs-end-marker.yaml',
    `${AGENT}...\nlog_level: info\n`,
    '  line 5, column 1: the config file must hold one YAML document, and a second one starts here',
  ],
  // `tools:` is level 4 (the top-level mapping is 1): its 62nd `[` (column 12 + 61) is level 65.
  ['flow lists 1,000 deep', 'deep-flow-lists.yaml', `${AGENT}    tools: ${'['.repeat(1000)}${']'.repeat(1000)}\n`, `  line 4, column 73: ${TOO_DEEP}`],
  ['flow mappings 1,000 deep', 'deep-flow-maps.yaml', `${AGENT}    tools: ${'{a: '.repeat(1000)}1${'}'.repeat(1000)}\n`, `  line 4, column 256: ${TOO_DEEP}`],
  [
    'block mappings 1,000 deep',
    'deep-block-maps.yaml',
    `${AGENT}    tools:\n${Array.from({ length: 1000 }, (_, i) => `${' '.repeat(6 + i)}k:\n`).join('')}${' '.repeat(1006)}x: 1\n`,
    // The mapping at line 5 + i is level 4 + i: level 65 on line 66, at column 6 + 61 + 1.
    `  line 66, column 68: ${TOO_DEEP}`,
  ],
  [
    'lists nested past 64 levels through aliases',
    'deep-aliases.yaml',
    aliasChain(),
    // x is level 2, x[1]'s 40 lists levels 3-42, `*a0` in the innermost: a0's 23rd `[` (line 5,
    // column 9 + 22), at x[1] and 62 [0], is level 65.
    `  x[1]${'[0]'.repeat(62)} (line 5, column 31): ${TOO_DEEP} (through aliases)`,
  ],
  [
    'max_json_depth: !!binary aGVsbG8=',
    'binary.yaml',
    `${AGENT}    max_json_depth: !!binary aGVsbG8=\n`,
    '  agents.a.max_json_depth (line 4, column 30): expected an integer >= 1 and <= 10000, got binary data (!!binary)',
  ],
  [
    'headers: !!timestamp 2001-12-14',
    'timestamp.yaml',
    `${AGENT}    headers: !!timestamp 2001-12-14\n`,
    '  agents.a.headers (line 4, column 26): expected a mapping of header name to value, got a timestamp (!!timestamp)',
  ],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-yaml-messages-'));
  for (const [, file, text] of CASES) await writeFile(join(dir, file), text);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config names what is wrong with the YAML, for an operator', { concurrency: true }, () => {
  for (const [label, file, , problem] of CASES) {
    test(`${label}: exit 2, one problem, in an operator's words (was yaml's, or wrong)`, OPTIONS, async () => {
      const path = join(dir, file);
      const run = await checkConfigRun(path);
      assert.deepEqual(run, { code: 2, stdout: '', stderr: `${path}: 1 problem\n${problem}\n` });
    });
  }
});
