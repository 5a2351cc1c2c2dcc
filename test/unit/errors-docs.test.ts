// docs/errors.md is the one human reference for src/errors/codes.ts: its three tables must
// list exactly the catalog's codes, reasons and refusals, with the same values, both ways
// (Fastify core's habit: every error code documented, a test keeps docs and code equal).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADCP_CODES, DROP_REASONS, END_REASONS, NARROWABLE_METHODS, REASONS, REFUSALS } from '../../src/errors/codes.js';
import type { AdcpCode } from '../../src/errors/codes.js';
import { REPO } from '../helpers/repo.js';

const doc = readFileSync(join(REPO, 'docs/errors.md'), 'utf8');

type Row = Record<string, string>;

/** Every markdown table of the doc: header cells -> rows keyed by header. Cells hold no `|`. */
function tables(markdown: string): { header: string[]; rows: Row[] }[] {
  const found: { header: string[]; rows: Row[] }[] = [];
  const lines = markdown.split('\n');
  const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('|') || !/^\|[-| :]+\|$/.test(lines[i + 1]?.trim() ?? '')) continue;
    const header = cells(lines[i]!);
    const rows: Row[] = [];
    for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) {
      const values = cells(lines[i]!);
      assert.equal(values.length, header.length, `row with ${values.length} cells under a ${header.length}-column header: ${lines[i]}`);
      rows.push(Object.fromEntries(header.map((h, k) => [h, values[k]!])));
    }
    found.push({ header, rows });
  }
  return found;
}

function table(headerStart: string[]): Map<string, Row> {
  const match = tables(doc).filter((t) => headerStart.every((h, k) => t.header[k] === h));
  assert.equal(match.length, 1, `expected one table headed ${headerStart.join(' | ')}`);
  const byName = new Map<string, Row>();
  for (const row of match[0]!.rows) {
    const name = /^`([^`]+)`$/.exec(row[headerStart[0]!]!)?.[1];
    assert.ok(name, `first cell must be one backticked name: ${row[headerStart[0]!]}`);
    assert.ok(!byName.has(name), `${name} listed twice`);
    byName.set(name, row);
  }
  return byName;
}

function sameNames(docNames: Iterable<string>, codeNames: Iterable<string>, what: string) {
  const d = new Set(docNames);
  const c = new Set(codeNames);
  assert.deepEqual([...c].filter((n) => !d.has(n)), [], `${what} in src/errors/codes.ts but not in docs/errors.md`);
  assert.deepEqual([...d].filter((n) => !c.has(n)), [], `${what} in docs/errors.md but not in src/errors/codes.ts`);
}

function recoveryCell(code: AdcpCode): string {
  const spec = ADCP_CODES[code];
  if (spec.recoveryNarrowable === spec.recoveryOther) return `\`${spec.recoveryOther}\``;
  return `\`${spec.recoveryNarrowable}\` on ${NARROWABLE_METHODS.map((m) => `\`${m}\``).join(' and ')}, else \`${spec.recoveryOther}\``;
}

describe('docs/errors.md matches src/errors/codes.ts', () => {
  test('catalog texts hold no | (they are table cells)', () => {
    for (const spec of [...Object.values(ADCP_CODES), ...Object.values(REASONS), ...Object.values(REFUSALS), ...Object.values(DROP_REASONS), ...Object.values(END_REASONS)]) {
      assert.ok(!spec.description.includes('|') && !spec.source.includes('|'), spec.description);
    }
  });

  test('codes', () => {
    const rows = table(['Code', 'JSON-RPC code', 'Recovery', 'Meaning', 'Source']);
    sameNames(rows.keys(), Object.keys(ADCP_CODES), 'codes');
    for (const [code, spec] of Object.entries(ADCP_CODES)) {
      const row = rows.get(code)!;
      assert.equal(row['JSON-RPC code'], String(spec.jsonRpcCode), code);
      assert.equal(row.Recovery, recoveryCell(code as AdcpCode), code);
      assert.equal(row.Meaning, spec.description, code);
      assert.equal(row.Source, spec.source, code);
    }
  });

  test('reasons', () => {
    const rows = table(['Reason', 'Code', 'HTTP status (id null)', 'Recovery', 'Details fields', 'Meaning', 'Source']);
    sameNames(rows.keys(), Object.keys(REASONS), 'reasons');
    for (const [reason, spec] of Object.entries(REASONS)) {
      const row = rows.get(reason)!;
      assert.equal(row.Code, `\`${spec.code}\``, reason);
      assert.equal(row['HTTP status (id null)'], String(spec.idNullStatus), reason);
      assert.equal(row.Recovery, recoveryCell(spec.code), reason);
      const fields = spec.details.length === 0 ? 'none' : spec.details.map((f) => `\`${f}\``).join(', ');
      assert.equal(row['Details fields'], fields, reason);
      assert.equal(row.Meaning, spec.description, reason);
      assert.equal(row.Source, spec.source, reason);
    }
  });

  test('refusals', () => {
    const rows = table(['Reason', 'HTTP status', 'JSON-RPC code', 'Meaning', 'Source']);
    sameNames(rows.keys(), Object.keys(REFUSALS), 'refusals');
    for (const [reason, spec] of Object.entries(REFUSALS)) {
      const row = rows.get(reason)!;
      assert.equal(row['HTTP status'], String(spec.statusCode), reason);
      assert.equal(row['JSON-RPC code'], String(spec.jsonRpcCode), reason);
      assert.equal(row.Meaning, spec.description, reason);
      assert.equal(row.Source, spec.source, reason);
    }
  });

  test('drop reasons (events dropped from a stream that answers no request)', () => {
    const rows = table(['Drop reason', 'Meaning', 'Source']);
    sameNames(rows.keys(), Object.keys(DROP_REASONS), 'drop reasons');
    for (const [reason, spec] of Object.entries(DROP_REASONS)) {
      const row = rows.get(reason)!;
      assert.equal(row.Meaning, spec.description, reason);
      assert.equal(row.Source, spec.source, reason);
      assert.ok(!Object.hasOwn(REASONS, reason), `${reason} is also a minted error's reason`);
    }
  });

  test('end reasons (a stream that answers no request ended plainly)', () => {
    const rows = table(['End reason', 'Meaning', 'Source']);
    sameNames(rows.keys(), Object.keys(END_REASONS), 'end reasons');
    for (const [reason, spec] of Object.entries(END_REASONS)) {
      const row = rows.get(reason)!;
      assert.equal(row.Meaning, spec.description, reason);
      assert.equal(row.Source, spec.source, reason);
      assert.ok(!Object.hasOwn(REASONS, reason) && !Object.hasOwn(DROP_REASONS, reason), `${reason} is also a minted error's or a drop's reason`);
    }
  });

  test('the doc shows one example of each shape', () => {
    assert.match(doc, /"isError": true/, 'tool result');
    assert.match(doc, /"code": -32027|"code": -32050/, 'JSON-RPC error');
    assert.match(doc, /^event: message\ndata: \{"jsonrpc":"2.0"/m, 'SSE final event');
  });
});
