/**
 * The floor on this machine (its own process, one per repetition): UTF-8 decode +
 * `JSON.parse` + `JSON.stringify` + UTF-8 encode of the seller's whole JSON-RPC message,
 * the least a rewrite that re-serializes the message can cost. Reports each step's median
 * time and the whole in MB/s (10^6 bytes of the seller's message per second of one core).
 *
 * Each iteration starts after a full GC (run with --expose-gc), so the figures do not depend
 * on what the previous message left behind.
 *
 * Also measures the JS heap that the parsed form of a message occupies (with --expose-gc):
 * how much of the memory case's peak the parsed objects can explain.
 *
 * IPC in: `{ type: 'run', messages: [{ variant, bytes }], heap: [{ variant, bytes }], maxMsPerMessage, maxIterations }`;
 * out: `{ type: 'result', result: MicroResult }`.
 */
import { sizedMessage, type Variant } from './cases.js';
import { median } from './stats.js';

export interface FloorFigure {
  variant: Variant;
  bytes: number;
  iterations: number;
  decodeMs: number;
  parseMs: number;
  stringifyMs: number;
  encodeMs: number;
  totalMs: number;
  /** 10^6 bytes of the message per second. */
  mbPerS: number;
}

export interface HeapFigure {
  variant: Variant;
  bytes: number;
  /** JS heap growth after `JSON.parse` of the message (after full GCs), bytes. */
  parsedHeapBytes: number;
}

export interface MicroResult {
  floor: FloorFigure[];
  heap: HeapFigure[];
}

interface RunMessage {
  type: 'run';
  messages: { variant: Variant; bytes: number }[];
  heap: { variant: Variant; bytes: number }[];
  maxMsPerMessage: number;
  maxIterations: number;
}

const WARMUP_ITERATIONS = 3;
const MIN_ITERATIONS = 5;

function floorOf(variant: Variant, bytes: number, maxMs: number, maxIterations: number): FloorFigure {
  const wire = Buffer.from(sizedMessage(variant, bytes), 'utf8');
  const t = { decode: [] as number[], parse: [] as number[], stringify: [] as number[], encode: [] as number[], total: [] as number[] };
  let sink = 0;
  const gc = (globalThis as { gc?: () => void }).gc;
  const start = performance.now();
  for (let i = 0; i < WARMUP_ITERATIONS + maxIterations; i++) {
    // Each iteration starts from a clean heap (the previous one's garbage is not billed to it).
    gc?.();
    const t0 = performance.now();
    const text = wire.toString('utf8');
    const t1 = performance.now();
    const value: unknown = JSON.parse(text);
    const t2 = performance.now();
    const out = JSON.stringify(value);
    const t3 = performance.now();
    const encoded = Buffer.from(out, 'utf8');
    const t4 = performance.now();
    sink += encoded.length;
    if (i >= WARMUP_ITERATIONS) {
      t.decode.push(t1 - t0);
      t.parse.push(t2 - t1);
      t.stringify.push(t3 - t2);
      t.encode.push(t4 - t3);
      t.total.push(t4 - t0);
      if (performance.now() - start > maxMs && t.total.length >= MIN_ITERATIONS) break;
    }
  }
  if (sink === 0) throw new Error('nothing encoded');
  const totalMs = median(t.total);
  return {
    variant,
    bytes: wire.length,
    iterations: t.total.length,
    decodeMs: median(t.decode),
    parseMs: median(t.parse),
    stringifyMs: median(t.stringify),
    encodeMs: median(t.encode),
    totalMs,
    mbPerS: wire.length / 1e6 / (totalMs / 1000),
  };
}

function heapOf(variant: Variant, bytes: number): HeapFigure {
  const gc = (globalThis as { gc?: () => void }).gc;
  const text = sizedMessage(variant, bytes);
  if (!gc) return { variant, bytes, parsedHeapBytes: NaN };
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const parsed: unknown = JSON.parse(text);
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  // Keep `parsed` alive across the measurement.
  if (parsed === null) throw new Error('unreachable');
  return { variant, bytes, parsedHeapBytes: after - before };
}

process.on('message', (raw: unknown) => {
  const msg = raw as RunMessage;
  if (msg.type !== 'run') return;
  try {
    const floor = msg.messages.map((m) => floorOf(m.variant, m.bytes, msg.maxMsPerMessage, msg.maxIterations));
    const heap = msg.heap.map((m) => heapOf(m.variant, m.bytes));
    process.send!({ type: 'result', result: { floor, heap } satisfies MicroResult }, () => process.exit(0));
  } catch (err) {
    process.send!({ type: 'error', message: (err as Error).message }, () => process.exit(1));
  }
});
process.on('disconnect', () => process.exit(0));
