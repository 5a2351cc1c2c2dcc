/**
 * Regression (a team note): "`probe --verbose`'s gateway log lines on stderr still carry C1 and
 * bidi characters raw." The probe's table escapes a seller's strings (src/probe/shown-text.ts;
 * test/regressions/probe-prints-seller-terminal-escapes.test.ts), but with `--verbose` the
 * in-process gateway's pino lines go to stderr, the operator's terminal, and some carry seller
 * text: the SSE parser's complaint about a malformed line (`ignored malformed SSE line`, at
 * `debug`) quotes the seller's `retry` value or unknown field name. pino writes JSON, which
 * escapes C0 controls (`\u001b`), but C1 controls (U+0080..U+009F: U+009B is CSI, U+009D is
 * OSC), DEL, bidi and other format characters (U+202E, U+2066..U+2069, U+200F) and U+2028 are
 * valid in a JSON string as they are: they reached the terminal raw.
 *
 * Now each line the probe's gateway writes to stderr is passed through `inertJson`
 * (src/observability/inert-json.ts; every logger's lines since trial 12), which writes those
 * characters `\uhhhh`: the same JSON value, nothing a terminal acts on.
 *
 * Input: the real CLI (`node dist/main.js probe s --verbose --config <file>`, the
 * config at `log_level: debug`) against a raw seller on 127.0.0.1 that answers `initialize`
 * over SSE with, before its response event, a `retry:` line whose value holds ESC, C1, DEL and
 * bidi characters and a line of an unknown field whose name holds others.
 * Expected: exit 0; every stderr line is a JSON object, none holds a raw control, format or
 * line-separator character; the two `ignored malformed SSE line` lines carry the seller's exact
 * strings (parsed), and the raw text holds them `\u`-escaped.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import type { RawSeller } from '../support/raw-seller.js';
import { initializeResult, METHOD_NOT_FOUND, startProbeSeller } from '../helpers/probe-seller.js';

/** The seller's `retry` value: ESC (C0), CSI and NEL (C1), DEL, RLO, LRI..PDI, RLM, and a line separator. */
const RETRY = '1\u001b[31m\u009b31m\u0085\u007f\u202eevil\u2066x\u2069\u200f\u2028end';
/** The same as `inertJson` writes it inside the JSON text (ESC by JSON itself). */
const RETRY_ESCAPED = '1\\u001b[31m\\u009b31m\\u0085\\u007f\\u202eevil\\u2066x\\u2069\\u200f\\u2028end';
/** An unknown field's name: OSC (C1), RLI and FSI. */
const FIELD = 'f\u009d0;t\u2067\u2068';
const FIELD_ESCAPED = 'f\\u009d0;t\\u2067\\u2068';

let raw: RawSeller;
let dir: string;
let config: string;

before(async () => {
  raw = await startProbeSeller(
    (method) => (method === 'initialize' ? initializeResult() : method === 'tools/list' ? { result: { tools: [] } } : METHOD_NOT_FOUND),
    (method) => (method === 'initialize' ? `retry: ${RETRY}\n${FIELD}: v\n` : undefined),
  );
  dir = await mkdtemp(join(tmpdir(), 'probe-verbose-'));
  config = join(dir, 'gateway.yaml');
  await writeFile(config, ['log_level: debug', 'agents:', '  s:', `    url: ${raw.url}`, ''].join('\n'));
});

after(async () => {
  await raw.close();
  await rm(dir, { recursive: true, force: true });
});

/** A character a terminal may act on (C0, DEL, C1, format characters) or that breaks a line. */
const RAW_CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

describe('probe-verbose-log-bidi-raw', () => {
  test("--verbose: the gateway's stderr lines carry the seller's C1 and bidi characters \\u-escaped, each line the same JSON (were raw)", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const run = await runCli(['probe', 's', '--verbose', '--config', config]);
    assert.equal(run.code, 0);
    assert.equal(run.stderr.endsWith('\n'), true);
    const lines = run.stderr.slice(0, -1).split('\n');
    // Where a raw one is, as [line, offset, code point]: never the character itself (the test's own output goes to a terminal too).
    const raws = lines.flatMap((line, k) => [...line.matchAll(new RegExp(RAW_CONTROL, 'gu'))].map((m) => [k, m.index, m[0].codePointAt(0)!.toString(16)]));
    assert.deepEqual(raws, []);
    const parsed = lines.map((line) => JSON.parse(line) as { msg?: string; err?: { message?: string } });
    const malformed = parsed.filter((l) => l.msg === 'ignored malformed SSE line').map((l) => l.err?.message);
    // Compared as booleans: a failure prints no seller character raw.
    assert.deepEqual(
      malformed.map((m, k) => m === [`Invalid \`retry\` value: "${RETRY}"`, `Unknown field "${FIELD}"`][k]),
      [true, true],
    );
    assert.equal(run.stderr.includes(`"message":"Invalid \`retry\` value: \\"${RETRY_ESCAPED}\\""`), true);
    assert.equal(run.stderr.includes(`"message":"Unknown field \\"${FIELD_ESCAPED}\\""`), true);
  });
});
