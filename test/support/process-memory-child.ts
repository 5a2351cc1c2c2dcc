/**
 * Child script for test/regressions/large-answer-read-buffers-refault-and-mark-compact.test.ts:
 *
 *   process-memory-child.ts <tuned|untuned>
 *
 * `tuned` first applies the gateway's process memory settings (src/ops/process-memory.ts
 * `tuneProcessMemory`, as the bin's `serve` does), `untuned` does not. Then, with V8's `gc`
 * exposed at run time:
 *
 * 1. a full collection (which frees the settings' glibc block);
 * 2. 256 read-buffer-sized Buffers (64 KiB, `malloc`'d as Node's socket reads are), each
 *    written whole so its pages are resident, then all dropped and collected at once, as V8
 *    frees a batch of read buffers (two collections 50 ms apart, so that the freeing, which
 *    V8 does on a background task, is over), three times; prints `trimmed_mib=N`: the most the
 *    `[heap]` mapping of /proc/self/maps shrank over one batch (glibc handing the freed top
 *    back to the kernel), in MiB;
 * 3. with `--trace-gc-verbose` set, two more full collections 300 ms apart with next to nothing
 *    allocated between them, so that V8's speed-based growing factor is small (its collector
 *    fast, the program idle: 1.2-1.4 on the reference machine) unless `--heap-growing-percent`
 *    pins it; V8 prints each new old-generation limit with the factor it used, to stdout:
 *    `[HeapController] Limit: old size: … KB, new limit: … KB (F)` on Node 20 and 22, the
 *    same line without `(F)` after `[HeapController] factor F based on …` on Node 24.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tuneProcessMemory } from '../../src/ops/process-memory.js';

type Gc = () => void;

if (process.argv[2] === 'tuned') tuneProcessMemory([]);
else if (process.argv[2] !== 'untuned') throw new Error('usage: process-memory-child.ts <tuned|untuned>');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as Gc;
gc();

/** Bytes of the `[heap]` mapping (glibc's main heap, grown and trimmed with `brk`). */
function heapBytes(): number {
  const line = readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .find((l) => l.endsWith('[heap]'));
  if (line === undefined) return 0;
  const [start, end] = line.split(' ')[0]!.split('-');
  return parseInt(end!, 16) - parseInt(start!, 16);
}

/** One batch of read-buffer-sized Buffers, filled, then dropped and collected: how far the heap shrank (bytes). */
async function batchTrimmed(): Promise<number> {
  let buffers: Buffer[] | undefined = Array.from({ length: 256 }, () => Buffer.allocUnsafeSlow(64 * 1024).fill(1));
  const filled = heapBytes();
  buffers.length = 0;
  buffers = undefined;
  // V8 frees a collection's dead ArrayBuffers on a background task: the next collection waits
  // for it to finish, and the pause lets it run meanwhile.
  gc();
  await sleep(50);
  gc();
  return filled - heapBytes();
}

// The most of {@link TRIM_ROUNDS} batches: untuned, some other block sometimes sits at the
// heap's top above a batch and glibc can trim nothing below it (one batch alone printed 0 in
// ~1 run in 12 on Node 20, 3 in 12 on Node 24: a flaky control); tuned, no batch may be trimmed.
const TRIM_ROUNDS = 3;
let trimmed = 0;
for (let i = 0; i < TRIM_ROUNDS; i++) trimmed = Math.max(trimmed, await batchTrimmed());
process.stdout.write(`trimmed_mib=${Math.round(trimmed / 2 ** 20)}\n`);

setFlagsFromString('--trace-gc-verbose');
for (let i = 0; i < 2; i++) {
  await sleep(300);
  gc();
}
