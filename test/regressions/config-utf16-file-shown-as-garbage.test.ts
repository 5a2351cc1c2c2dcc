/**
 * Regression (a hostile new operator's trial 45, Info): a config file saved as UTF-16 (a
 * Windows editor's "Unicode") was read as UTF-8 and refused with its bytes as text:
 * `expected a mapping (the file must have at least an \`agents:\` block), got "��a\u0000g\u0000e…"`,
 * rather than saying what is wrong with it.
 *
 * Input: one valid config saved as UTF-16 LE and BE (with a byte order mark and without),
 * and UTF-32 LE, checked with the CLI's `--check-config` (in process: helpers/check-config.ts); the same text as UTF-8
 * (control), and a UTF-8 file with a stray NUL byte (not taken for UTF-16).
 * Expected: exit 2, one problem naming the encoding and the fix; the UTF-8 file is valid.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const TEXT = 'agents:\n  a:\n    url: http://127.0.0.1:3001/mcp\n';
const BOM = '\ufeff';
const be16 = (s: string): Buffer => Buffer.from(s, 'utf16le').swap16();
const le32 = (s: string): Buffer =>
  Buffer.concat(
    [...s].map((c) => {
      const unit = Buffer.alloc(4);
      unit.writeUInt32LE(c.codePointAt(0) ?? 0);
      return unit;
    }),
  );

const CASES: ReadonlyArray<readonly [name: string, bytes: Buffer, encoding: string]> = [
  ['utf16le-bom', Buffer.from(BOM + TEXT, 'utf16le'), 'UTF-16 LE (byte order mark FF FE)'],
  ['utf16be-bom', be16(BOM + TEXT), 'UTF-16 BE (byte order mark FE FF)'],
  ['utf16le', Buffer.from(TEXT, 'utf16le'), 'UTF-16 LE (every other byte is 0)'],
  ['utf16be', be16(TEXT), 'UTF-16 BE (every other byte is 0)'],
  ['utf32le-bom', le32(BOM + TEXT), 'UTF-32 LE (byte order mark FF FE 00 00)'],
];

test('a UTF-16 or UTF-32 config file is named as such (was: its bytes shown as text)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'config-utf16-'));
  try {
    for (const [name, bytes, encoding] of CASES) {
      const file = join(dir, `${name}.yaml`);
      await writeFile(file, bytes);
      const run = await checkConfigRun(file);
      assert.deepEqual(run, { code: 2, stdout: '', stderr: `${file}: 1 problem\n  the file is not UTF-8: it looks like ${encoding}; save it as UTF-8\n` }, name);
    }
    const utf8 = join(dir, 'utf8.yaml');
    await writeFile(utf8, TEXT);
    const ok = await checkConfigRun(utf8);
    assert.equal(ok.code, 0, ok.stderr);
    // A NUL in a UTF-8 file is no sign of UTF-16: the loader's own problems, as before.
    const nul = join(dir, 'nul.yaml');
    await writeFile(nul, 'agents:\n  a:\n    url: "http://127.0.0.1:3001/mcp"\u0000\n');
    const run = await checkConfigRun(nul);
    assert.equal(run.code, 2);
    assert.doesNotMatch(run.stderr, /not UTF-8/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
