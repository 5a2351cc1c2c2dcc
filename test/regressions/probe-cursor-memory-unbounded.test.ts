/**
 * Regression (a new user's trial 9, F6, Medium): `probe` kept every `nextCursor` it had seen,
 * whole, to detect a cursor loop, for up to 1000 pages. A seller answering each `tools/list`
 * page with no tools and a new 1,000,000-character cursor made it hold up to
 * 1000 x `max_response_bytes` of cursors: with a 256 MB heap it died of heap exhaustion
 * (SIGABRT) after 245 pages instead of reporting. The probe now keeps a SHA-256 digest per
 * cursor for the loop check and follows no cursor over `MAX_CURSOR_BYTES` (65,536 UTF-8 bytes):
 * one over it ends the listing with an error row naming the limit (src/probe/probe.ts).
 *
 * Input: a raw seller on 127.0.0.1 whose pages carry unique large cursors (1,000,000
 * characters; exactly 65,536 bytes; 65,537 bytes; 65,536 characters of 65,537 bytes) and
 * whose listing ends after a few pages (so the probe as it was ends too); one whose cursors
 * differ only in their last byte and then repeat.
 * Expected: exact rows. A cursor over the limit: the page that carried it is measured, then
 * one error row `nextCursor is N bytes, over the probe's limit of 65536 bytes: stopped`, no
 * further tools/list request is sent, capabilities `skipped`, the CLI exits 1. A cursor of
 * exactly the limit is followed and sent back whole. A repeated cursor is still a loop.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { runProbe, type ProbeReport, type ProbeRow } from '../../src/probe/probe.js';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';

const TARGET = 131_072;
/** The probe's bound on one cursor, UTF-8 bytes (`MAX_CURSOR_BYTES`, docs: README "Probe"). */
const MAX_CURSOR_BYTES = 65_536;
const ENDS_AFTER_PAGES = 5;

/** A seller whose tools/list page n (1-based) carries `cursors[n - 1]` (none past the list: the last page). */
function startPager(cursors: readonly string[]): Promise<RawSeller & { pageBytes: number[]; sentCursors: (string | undefined)[] }> {
  const pageBytes: number[] = [];
  const sentCursors: (string | undefined)[] = [];
  return startRawSeller((req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(405).end();
    const msg = JSON.parse(req.body.toString('utf8') || 'null') as { id?: unknown; method?: string; params?: { cursor?: string } } | null;
    if (msg?.id === undefined) return void res.writeHead(202).end();
    let result: unknown = {};
    if (msg.method === 'initialize') result = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'pager', version: '1' } };
    if (msg.method === 'tools/list') {
      sentCursors.push(msg.params?.cursor);
      const next = cursors[sentCursors.length - 1];
      result = { tools: [], ...(next === undefined ? {} : { nextCursor: next }) };
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
    if (msg.method === 'tools/list') pageBytes.push(Buffer.byteLength(body));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  }).then((seller) => Object.assign(seller, { pageBytes, sentCursors }));
}

const configFor = (seller: RawSeller): string => `agents:\n  p:\n    url: ${seller.url}\n`;

async function probe(seller: RawSeller): Promise<ProbeReport> {
  return runProbe({ config: parseConfig(configFor(seller), { env: {} }), agent: 'p', logger: false });
}

/** Unique cursors of `length` characters (`fill` repeated, the page number at the end). */
function uniqueCursors(length: number, fill = 'c', pages = ENDS_AFTER_PAGES): string[] {
  return Array.from({ length: pages }, (_, i) => String(i + 1).padStart(length, fill));
}

const page = (n: number, bytes: number): ProbeRow => ({
  surface: 'tools_list_page',
  page: n,
  transport: 'json',
  bytes,
  target_bytes: TARGET,
  status: bytes > TARGET ? 'over' : 'pass',
  tools: 0,
});
const stopped = (n: number, error: string): ProbeRow => ({ surface: 'tools_list_page', page: n, target_bytes: TARGET, status: 'error', error });
const overLimit = (bytes: number): string => `nextCursor is ${bytes} bytes, over the probe's limit of ${MAX_CURSOR_BYTES} bytes: stopped`;

/** The report's rows after `initialize`. */
const rowsAfterInit = (report: ProbeReport): readonly ProbeRow[] => report.rows.slice(1);

describe('probe: cursors are bounded and not kept', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('unique 1,000,000-character cursors: stops after the first page with an error naming the limit (was: followed and kept every one)', async () => {
    const seller = await startPager(uniqueCursors(1_000_000));
    try {
      const report = await probe(seller);
      assert.equal(seller.sentCursors.length, 1, 'one tools/list request, none with the oversized cursor');
      assert.deepEqual(rowsAfterInit(report), [
        page(1, seller.pageBytes[0] as number),
        stopped(2, overLimit(1_000_000)),
        { surface: 'get_adcp_capabilities', target_bytes: 65_536, status: 'skipped' },
      ]);
      assert.equal(report.within_target, false);
    } finally {
      await seller.close();
    }
  });

  it('the CLI: the same seller, exit 1 and the error row in the table', async () => {
    const seller = await startPager(uniqueCursors(1_000_000));
    const dir = await mkdtemp(join(tmpdir(), 'probe-cursor-'));
    try {
      const file = join(dir, 'probe.yaml');
      await writeFile(file, configFor(seller));
      const run = await runCli(['probe', 'p', '--config', file]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stdout, /^tools\/list page 2 +131,072 +error: nextCursor is 1000000 bytes, over the probe's limit of 65536 bytes: stopped$/m);
      assert.equal(seller.sentCursors.length, 1);
    } finally {
      await seller.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a cursor of exactly 65,536 bytes is followed and sent back whole; one byte more (ASCII or UTF-8) stops', async () => {
    const atLimit = uniqueCursors(MAX_CURSOR_BYTES, 'c', 3);
    const fits = await startPager(atLimit);
    try {
      const report = await probe(fits);
      assert.deepEqual(fits.sentCursors, [undefined, ...atLimit]);
      assert.deepEqual(rowsAfterInit(report), [
        ...fits.pageBytes.map((bytes, i) => page(i + 1, bytes)),
        { surface: 'get_adcp_capabilities', target_bytes: 65_536, status: 'not_offered' },
      ]);
      assert.equal(report.rows.length, 1 + 4 + 1);
    } finally {
      await fits.close();
    }
    // 65,537 ASCII bytes; then 65,536 characters, the last one `é` (2 bytes): 65,537 bytes.
    for (const cursors of [uniqueCursors(MAX_CURSOR_BYTES + 1), uniqueCursors(MAX_CURSOR_BYTES - 1).map((c) => `${c}é`)]) {
      const over = await startPager(cursors);
      try {
        const report = await probe(over);
        assert.equal(over.sentCursors.length, 1);
        assert.deepEqual(rowsAfterInit(report), [
          page(1, over.pageBytes[0] as number),
          stopped(2, overLimit(MAX_CURSOR_BYTES + 1)),
          { surface: 'get_adcp_capabilities', target_bytes: 65_536, status: 'skipped' },
        ]);
      } finally {
        await over.close();
      }
    }
  });

  it('a repeated cursor is still a loop (cursors differing only in their last byte are not)', async () => {
    const a = `${'x'.repeat(MAX_CURSOR_BYTES - 1)}a`;
    const b = `${'x'.repeat(MAX_CURSOR_BYTES - 1)}b`;
    const seller = await startPager([a, b, a, b]);
    try {
      const report = await probe(seller);
      assert.deepEqual(seller.sentCursors, [undefined, a, b]);
      assert.deepEqual(rowsAfterInit(report), [
        ...seller.pageBytes.map((bytes, i) => page(i + 1, bytes)),
        stopped(4, 'nextCursor repeats an earlier cursor: stopped'),
        { surface: 'get_adcp_capabilities', target_bytes: 65_536, status: 'skipped' },
      ]);
    } finally {
      await seller.close();
    }
  });
});
