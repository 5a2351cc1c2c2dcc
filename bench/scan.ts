/**
 * `npm run bench:scan`: the JSON structure scan (src/mcp/json-scan.ts, the WebAssembly core
 * assembly/json-scan.ts) by content shape, side by side with `JSON.parse` of the same bytes,
 * in one process on one core. Every JSON answer the gateway reads goes through this scan as
 * its chunks arrive (the depth/node bounds and the facts the JSON stage needs), so its speed
 * per shape is the gateway's per-byte cost on the no-rewrite path; a hostile seller picks the
 * slowest shape (the node bomb is an array of `0`s).
 *
 * Per shape and round, each side is timed over the same message (the scan fed 64 KiB chunks,
 * as the gateway reads a body; the parse timed with its UTF-8 decode, as the gateway's parse
 * path does), the two sides alternating first; the table gives the median MB/s over rounds
 * (10^6 bytes of the message per second) with min–max, and scan ÷ parse per round.
 *
 * Options: `--rounds N` (default 15; with `--quick`, 3), `--quick` (~64 KiB messages, no node
 * bomb: CI smoke), `--help`. Bounded: every side times at least 3 passes a round, then stops
 * after `MAX_MS_PER_SIDE` ms or `MAX_ITERATIONS` passes, whichever comes first.
 */
import { parseArgs } from 'node:util';
import { isEntryPoint } from '../src/entry-point.js';
import { JsonScanner } from '../src/mcp/json-scan.js';
import { BUILTIN_DEFAULTS } from '../src/config/defaults.js';
import { MiB, nodeBombBody, sizedMessage } from './cases.js';
import { median, ratios, spread, type Spread } from './stats.js';

const CHUNK_BYTES = 64 * 1024;
const MAX_MS_PER_SIDE = 250;
const MAX_ITERATIONS = 50;

interface Shape {
  label: string;
  what: string;
  bytes: Buffer;
}

/** A `tools/call` response whose `structuredContent` is `sc`. */
const message = (sc: unknown): Buffer => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }], structuredContent: sc } }));

/** One day of an AdCP delivery report: numbers, a date, a boolean and a null. */
const deliveryRow = (i: number): Record<string, unknown> => ({
  date: `2026-11-${String(1 + (i % 28)).padStart(2, '0')}`,
  impressions: 12000 + i * 37,
  clicks: 40 + (i % 90),
  spend: Math.round((123.45 + i * 1.7) * 100) / 100,
  ctr: 0.0033,
  video_completions: 8000 + i,
  is_final: i % 2 === 0,
  pacing: null,
});

/** The shapes, each about `size` bytes. */
export function shapes(size: number): Shape[] {
  const n = (perElement: number): number => Math.max(1, Math.floor(size / perElement));
  return [
    { label: 'get_products (a)', what: "the bench's 1 KiB-4 MiB JSON case (a): products with a long description", bytes: Buffer.from(sizedMessage('a', size)) },
    { label: 'delivery report', what: 'rows of numbers, a date, a boolean and a null', bytes: message({ media_buy_deliveries: [{ media_buy_id: 'mb_1', by_day: Array.from({ length: n(140) }, (_, i) => deliveryRow(i)) }] }) },
    { label: 'short strings', what: 'an array of 7-10 byte strings', bytes: message({ ids: Array.from({ length: n(10) }, (_, i) => `abc${i}`) }) },
    { label: 'integers', what: 'an array of 7-digit integers', bytes: message({ values: Array.from({ length: n(8) }, (_, i) => 1_000_000 + i) }) },
    { label: 'literals', what: 'an array of true, false, null', bytes: message({ flags: Array.from({ length: n(5.3) }, (_, i) => (i % 3 === 0 ? true : i % 3 === 1 ? false : null)) }) },
    { label: 'node bomb', what: "the fairness case's attack: 1,990,000 zeros (over the default node bound: scanned here without it)", bytes: Buffer.from(nodeBombBody()) },
  ];
}

/** Milliseconds per pass of `run` over the message: the median of a round's iterations. */
function timeSide(run: () => void): number {
  const times: number[] = [];
  const start = performance.now();
  while (times.length < MAX_ITERATIONS && (times.length < 3 || performance.now() - start < MAX_MS_PER_SIDE)) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return median(times);
}

function scanOnce(bytes: Buffer): void {
  // The default depth bound; no node bound, so that the node bomb is scanned to its end.
  const scanner = new JsonScanner({ maxDepth: BUILTIN_DEFAULTS.max_json_depth, maxNodes: Infinity });
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) scanner.feed(bytes.subarray(at, at + CHUNK_BYTES));
  if (!scanner.end().ok) throw new Error('bench:scan: a shape did not scan as valid JSON');
}

function parseOnce(bytes: Buffer): void {
  JSON.parse(bytes.toString('utf8'));
}

export interface ShapeFigure {
  label: string;
  what: string;
  bytes: number;
  scanMbPerS: Spread;
  parseMbPerS: Spread;
  scanOverParse: Spread;
}

export function measure(list: readonly Shape[], rounds: number): ShapeFigure[] {
  return list.map((shape) => {
    const scan: number[] = [];
    const parse: number[] = [];
    const mbPerS = (ms: number): number => shape.bytes.length / 1e6 / (ms / 1000);
    for (let r = 0; r < rounds; r++) {
      // The side timed first alternates (a warmer cache, a later JIT tier).
      if (r % 2 === 0) {
        scan.push(mbPerS(timeSide(() => scanOnce(shape.bytes))));
        parse.push(mbPerS(timeSide(() => parseOnce(shape.bytes))));
      } else {
        parse.push(mbPerS(timeSide(() => parseOnce(shape.bytes))));
        scan.push(mbPerS(timeSide(() => scanOnce(shape.bytes))));
      }
    }
    return { label: shape.label, what: shape.what, bytes: shape.bytes.length, scanMbPerS: spread(scan), parseMbPerS: spread(parse), scanOverParse: spread(ratios(scan, parse)) };
  });
}

const int = (x: number): string => Math.round(x).toLocaleString('en-US');
const mb = (s: Spread): string => `${int(s.median)} (${int(s.min)}–${int(s.max)})`;
const times = (s: Spread): string => `${s.median.toFixed(2)}× (${s.min.toFixed(2)}×–${s.max.toFixed(2)}×)`;

export function renderScanTable(figures: readonly ShapeFigure[], rounds: number): string {
  const lines = [
    '# JSON structure scan by content shape',
    '',
    `Node ${process.version}; ${rounds} rounds; MB/s = 10^6 bytes of the message per second of one core; median (min–max) over rounds. *scan*: the gateway's structure scan, fed 64 KiB chunks. *parse*: \`JSON.parse(buf.toString('utf8'))\` of the same bytes. *scan ÷ parse*: the scan's MB/s over the parse's, per round (above 1: the scan is faster).`,
    '',
    '| shape | bytes | scan MB/s | parse MB/s | scan ÷ parse | what |',
    '| --- | --- | --- | --- | --- | --- |',
    ...figures.map((f) => `| ${f.label} | ${int(f.bytes)} | ${mb(f.scanMbPerS)} | ${mb(f.parseMbPerS)} | ${times(f.scanOverParse)} | ${f.what} |`),
  ];
  return lines.join('\n') + '\n';
}

const USAGE = `Usage: npm run bench:scan -- [--rounds N] [--quick]
  The JSON structure scan's MB/s by content shape, beside JSON.parse of the same bytes (one core).
  --rounds N   rounds per shape, 1 to 100 (default 15; with --quick, 3)
  --quick      ~64 KiB messages, no node bomb (CI smoke)
`;

function main(): void {
  const { values } = parseArgs({ options: { rounds: { type: 'string' }, quick: { type: 'boolean' }, help: { type: 'boolean' } }, strict: true });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  // Digits only: Number() would also take `0x10` or `1e1` (found by a new user).
  if (values.rounds !== undefined && !/^\d{1,3}$/.test(values.rounds)) throw new Error(`--rounds must be an integer from 1 to 100 (got ${values.rounds})`);
  const rounds = Number(values.rounds ?? (values.quick ? 3 : 15));
  if (rounds < 1 || rounds > 100) throw new Error(`--rounds must be an integer from 1 to 100 (got ${values.rounds})`);
  const size = values.quick ? 64 * 1024 : MiB;
  const list = shapes(size).filter((s) => !values.quick || s.label !== 'node bomb');
  process.stdout.write(renderScanTable(measure(list, rounds), rounds));
}

if (isEntryPoint(import.meta.url)) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    process.exitCode = 2;
  }
}
