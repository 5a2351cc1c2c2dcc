/**
 * Regression (a hostile new user's trial 12, L3, Low): a seller's `tools/list` answer with a
 * `nextCursor` that is not a string (`42`, `true`, `null`, `{}`) was not treated as the
 * protocol error it is. MCP's cursor is an opaque string (schema `Cursor: string`; pagination:
 * "The cursor is an opaque string token"), and the MCP TypeScript SDK client refuses such a
 * page, so a host's tool listing of this seller fails; the report found (at this commit) took
 * it for the end of the listing: `result: all within target`, exit 0. The trial reported the
 * number being sent back as `cursor`; either way nothing said the seller was wrong. The probe
 * now ends the listing with an error row naming the value's JSON type, never sends it back
 * (src/probe/probe.ts `notStringCursor`).
 *
 * Input: a raw seller on 127.0.0.1 whose first `tools/list` page carries `nextCursor` of each
 * JSON type but string, and later pages none; the same with `""` (the end, as before).
 * Expected: one `tools/list` request, without a cursor; the rows page 1 `pass`, page 2
 * `error: nextCursor is a number, not a string (MCP cursors are opaque strings): stopped`,
 * capabilities `skipped`; not within target; the CLI exits 1 with that row. `""`: the end.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { runProbe, type ProbeReport } from '../../src/probe/probe.js';
import { initializeResult, METHOD_NOT_FOUND, startProbeSeller } from '../helpers/probe-seller.js';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import type { RawSeller } from '../support/raw-seller.js';

const TARGET = 131_072;

/** A seller whose first tools/list page has `nextCursor: cursor` and no tools; later pages end the listing. */
async function startSeller(cursor: unknown): Promise<RawSeller & { listParams: () => unknown[] }> {
  let pages = 0;
  const seller = await startProbeSeller((method) => {
    if (method === 'initialize') return initializeResult('cursor', '1');
    if (method === 'tools/list') return { result: { tools: [], ...(++pages === 1 ? { nextCursor: cursor } : {}) } };
    return METHOD_NOT_FOUND;
  });
  const listParams = (): unknown[] =>
    seller.requests
      .map((r) => JSON.parse(r.body.toString('utf8') || 'null') as { method?: string; params?: unknown } | null)
      .filter((m) => m?.method === 'tools/list')
      .map((m) => m?.params);
  return Object.assign(seller, { listParams });
}

const configFor = (seller: RawSeller): string => `agents:\n  p:\n    url: ${seller.url}\n`;

function probe(seller: RawSeller): Promise<ProbeReport> {
  return runProbe({ config: parseConfig(configFor(seller), { env: {} }), agent: 'p', logger: false });
}

const CASES: [string, unknown, string][] = [
  ['42', 42, 'a number'],
  ['0', 0, 'a number'],
  ['1.5', 1.5, 'a number'],
  ['true', true, 'a boolean'],
  ['false', false, 'a boolean'],
  ['null', null, 'null'],
  ['{}', { page: 2 }, 'an object'],
  ['[]', ['p2'], 'an array'],
];

describe('probe: a nextCursor that is not a string ends the listing as an error', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  for (const [label, cursor, what] of CASES) {
    it(`nextCursor ${label}: error row naming ${what}, never sent back (was: the end of the listing, all within target)`, async () => {
      const seller = await startSeller(cursor);
      try {
        const report = await probe(seller);
        assert.deepEqual(seller.listParams(), [{}], 'one tools/list request, without a cursor');
        const page1 = report.rows[1];
        assert.deepEqual(report.rows.slice(1), [
          { surface: 'tools_list_page', page: 1, transport: 'json', bytes: page1?.bytes, target_bytes: TARGET, status: 'pass', tools: 0 },
          { surface: 'tools_list_page', page: 2, target_bytes: TARGET, status: 'error', error: `nextCursor is ${what}, not a string (MCP cursors are opaque strings): stopped` },
          { surface: 'get_adcp_capabilities', target_bytes: 65_536, status: 'skipped' },
        ]);
        assert.equal(report.within_target, false);
        assert.equal(report.totals.errors, 1);
      } finally {
        await seller.close();
      }
    });
  }

  it('nextCursor "": the end of the listing, as before', async () => {
    const seller = await startSeller('');
    try {
      const report = await probe(seller);
      assert.deepEqual(seller.listParams(), [{}]);
      assert.deepEqual(report.rows.slice(2), [{ surface: 'get_adcp_capabilities', target_bytes: 65_536, status: 'not_offered' }]);
      assert.equal(report.within_target, true);
    } finally {
      await seller.close();
    }
  });

  it('the CLI: exit 1, the error row in the table (was: exit 0, all within target)', async () => {
    const seller = await startSeller(42);
    const dir = await mkdtemp(join(tmpdir(), 'probe-numeric-cursor-'));
    try {
      const file = join(dir, 'probe.yaml');
      await writeFile(file, configFor(seller));
      const run = await runCli(['probe', 'p', '--config', file]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stdout, /^tools\/list page 2 +131,072 +error: nextCursor is a number, not a string \(MCP cursors are opaque strings\): stopped$/m);
      assert.match(run.stdout, /^result: 1 error$/m);
      assert.deepEqual(seller.listParams(), [{}]);
    } finally {
      await seller.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
