/**
 * Regression (a new user's trial, cosmetic): `--check-config` printed the problem of a number
 * at or above 2^53 twice, and showed it as the double it became, not as written:
 * `max_json_nodes: 1e30` gave two lines `... got 1e+30`, `9007199254740993` two lines
 * `... got 9007199254740992`, for every integer key (`max_response_bytes`,
 * `max_sse_event_bytes`, `response_deadline_ms`, ...) under `defaults`, an agent or a tool;
 * `2000000000` and `1.5e9` were reported once. Cause: zod's `.int()` reports a number outside
 * the safe integers as its own issue, next to the key's `max`/`min` one (config/schema.ts).
 *
 * Input: a config file with such numbers (and `-1e30`, a fraction, two numbers below 2^53, a
 * hex integer in range) under `defaults`, an agent and a tool, checked with the CLI's `--check-config` (in process: helpers/check-config.ts)
 * (`--check-config`).
 * Expected: exit 2, nothing on stdout, and on stderr exactly one line per bad key, each
 * showing the YAML text of the value (`got 1e30`, `got 9007199254740993`, `got 1.5e9`);
 * `defaults.max_response_bytes: 1e30` gets the default's own ceiling message, as any number
 * over it does.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const CONFIG = [
  'defaults:',
  '  max_response_bytes: 1e30',
  '  max_sse_event_bytes: 9007199254740993',
  '  response_deadline_ms: -1e30',
  'agents:',
  '  a:',
  '    url: "http://127.0.0.1:1/mcp"',
  '    max_json_nodes: 1e30',
  '    max_response_bytes: 9007199254740993',
  '    max_sse_event_bytes: 2000000000',
  '    response_deadline_ms: 1.5e9',
  '    max_json_depth: 1.5',
  '    sse_idle_timeout_ms: 0x10',
  '    tools:',
  '      get_products: { max_response_bytes: 12345678901234567890123 }',
  '',
].join('\n');

const BYTES = 'expected an integer >= 1 and <= 1073741824 (1 GiB)';
const DEFAULT_CEILING =
  'a default may not exceed 4194304 bytes (4 MiB), the protocol-wide ceiling on a default (AdCP MCP response extraction, "Size Limits"); ' +
  'raise max_response_bytes for a specific agent or tool instead';

test('--check-config: one line per key, the number as written', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'check-config-huge-'));
  try {
    const file = join(dir, 'v.yaml');
    await writeFile(file, CONFIG);
    const { code, stdout, stderr } = await checkConfigRun(file);
    assert.equal(stdout, '');
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      `${file}: 9 problems`,
      `  defaults.max_response_bytes (line 2, column 23): ${DEFAULT_CEILING}, got 1e30`,
      `  defaults.max_sse_event_bytes (line 3, column 24): ${BYTES}, got 9007199254740993`,
      '  defaults.response_deadline_ms (line 4, column 25): expected an integer >= 1 and <= 86400000 (24 h), got -1e30',
      '  agents.a.max_json_nodes (line 8, column 21): expected an integer >= 1 and <= 100000000, got 1e30',
      `  agents.a.max_response_bytes (line 9, column 25): ${BYTES}, got 9007199254740993`,
      `  agents.a.max_sse_event_bytes (line 10, column 26): ${BYTES}, got 2000000000`,
      '  agents.a.response_deadline_ms (line 11, column 27): expected an integer >= 1 and <= 86400000 (24 h), got 1.5e9',
      '  agents.a.max_json_depth (line 12, column 21): expected an integer >= 1 and <= 10000, got 1.5',
      `  agents.a.tools.get_products.max_response_bytes (line 15, column 43): ${BYTES}, got 12345678901234567890123`,
    ]);
    assert.equal(code, 2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
