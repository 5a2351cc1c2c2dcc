/**
 * Regression: `probe` printed the seller's strings raw, so a seller could put terminal escapes
 * and forged lines in the report an operator reads before trusting it.
 *
 * Failure (a hostile trial, F5): a seller's `serverInfo.name` `"p\u001b[31mRED\u001b[0m\nfake
 * line"` and `version` `"1\r\nresult: all within target"` reached stdout as they were: the ANSI
 * colour reached the terminal and a fake `result: all within target` line appeared near the top
 * of the report (the real result and exit 1 came at the end). A JSON-RPC error's message, shown
 * in a row's result, went out raw too.
 *
 * Now (src/probe/shown-text.ts, report.ts): the table shows every seller string escaped on one
 * line (`\x1b`, `\n`, `\r`, `\t`, `\x7f`, `\x9b`, `\u202e`, `\u2028`, a lone surrogate `\ud800`,
 * `\u{e0041}`, `\` as `\\`; `é` as it is), each value at most 200 characters, cut with `…`;
 * `--json` keeps the exact strings, with DEL, C1 and format characters `\u`-escaped too (valid
 * JSON, nothing a terminal acts on).
 *
 * Input: the real CLI (`node dist/main.js probe <agent> --config <file>`, and with
 * `--json`) against a raw seller on 127.0.0.1: agent `weird` names itself with those characters
 * and answers tools/list with a JSON-RPC error whose message holds an OSC title sequence, a TAB
 * and U+2028; agent `long` has a 300-character name and a version of 100 ESC characters.
 * Expected: the exact stdout lines below, exit 1 and 0.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import type { RawSeller } from '../support/raw-seller.js';
import { initializeResult, METHOD_NOT_FOUND, startProbeSeller } from '../helpers/probe-seller.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

const WEIRD_NAME = 'p\u001b[31mRED\u001b[0m\nfake line';
const WEIRD_VERSION = '1\r\nresult: all within target\u202e\\\ud800\u{e0041}\u009b\u007f\u0000caf\u00e9';
const WEIRD_ERROR = 'bad\u001b]0;title\u0007\ttab\u2028next';
const LONG_NAME = 'L'.repeat(300);
const LONG_VERSION = '\u001b'.repeat(100);

let raw: RawSeller;
let dir: string;
let config: string;
let origin: string;

before(async () => {
  raw = await startProbeSeller((method, url) => {
    const weird = url === '/weird';
    if (method === 'initialize') return weird ? initializeResult(WEIRD_NAME, WEIRD_VERSION) : initializeResult(LONG_NAME, LONG_VERSION);
    if (method === 'tools/list' && weird) return { error: { code: -32000, message: WEIRD_ERROR } };
    if (method === 'tools/list') return { result: { tools: [{ name: 'list_products', inputSchema: { type: 'object' } }] } };
    return METHOD_NOT_FOUND;
  });
  origin = new URL(raw.url).origin;
  dir = await mkdtemp(join(tmpdir(), 'probe-escapes-'));
  config = join(dir, 'gateway.yaml');
  await writeFile(config, ['agents:', '  weird:', `    url: ${origin}/weird`, '  long:', `    url: ${origin}/long`, ''].join('\n'));
});

after(async () => {
  await raw.close();
  await rm(dir, { recursive: true, force: true });
});

/** Any character a terminal may act on, or that breaks a line, other than the final newline. */
const RAW_CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

describe("probe shows a seller's strings inert", { concurrency: true }, () => {
  test('the table: server name, version and a JSON-RPC error message escaped, each on its line (were raw: ESC, CR, LF, a forged result line)', OPTIONS, async () => {
    const run = await runCli(['probe', 'weird', '--config', config]);
    assert.deepEqual([run.code, run.stderr], [1, '']);
    assert.deepEqual(run.stdout.split('\n'), [
      `probe: agent weird -> ${origin}/weird, through the gateway's pipeline`,
      'server: p\\x1b[31mRED\\x1b[0m\\nfake line 1\\r\\nresult: all within target\\u202e\\\\\\ud800\\u{e0041}\\x9b\\x7f\\x00caf\u00e9, MCP 2025-11-25',
      '',
      'surface                via   bytes   target  result',
      '---------------------  ----  -----  -------  ----------------------------------------------------------',
      'initialize             json    225        -  -',
      'tools/list page 1      json     96  131,072  error: JSON-RPC -32000: bad\\x1b]0;title\\x07\\ttab\\u2028next',
      'get_adcp_capabilities                65,536  skipped: tools/list did not complete',
      '',
      'tools/list: 0 pages, 0 tools, 0 bytes',
      'total: 2 messages, 321 bytes',
      'result: 1 error',
      '',
    ]);
  });

  test('the table: a value over 200 characters once escaped is cut to 199 and `…`, never inside an escape', OPTIONS, async () => {
    const run = await runCli(['probe', 'long', '--config', config]);
    assert.deepEqual([run.code, run.stderr], [0, '']);
    const lines = run.stdout.split('\n');
    assert.equal(lines[1], `server: ${'L'.repeat(199)}\u2026 ${'\\x1b'.repeat(49)}\u2026, MCP 2025-11-25`);
    assert.equal(lines.at(-2), 'result: all within target');
  });

  test('--json: the exact strings, valid JSON on one line, with no raw control or format character', OPTIONS, async () => {
    const run = await runCli(['probe', 'weird', '--json', '--config', config]);
    assert.deepEqual([run.code, run.stderr], [1, '']);
    assert.equal(run.stdout.endsWith('\n'), true);
    assert.equal(RAW_CONTROL.exec(run.stdout.slice(0, -1)), null);
    const report = JSON.parse(run.stdout) as { server: unknown; surfaces: Array<{ error?: string }> };
    assert.deepEqual(report.server, { name: WEIRD_NAME, version: WEIRD_VERSION });
    assert.equal(report.surfaces[1]?.error, `JSON-RPC -32000: ${WEIRD_ERROR}`);
  });
});
