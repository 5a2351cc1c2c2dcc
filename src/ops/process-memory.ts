/**
 * Two process-wide memory settings of a serving gateway, applied once when it starts
 * (cli.ts `serve`, before the gateway's modules load; the bench's gateway child calls this as
 * `serve` does). Both concern the upstream bodies' socket reads: every read is a fresh 64 KiB
 * `malloc`'d ArrayBuffer (Node's stream reads; undici's body chunks are views of it), which the
 * JSON stage copies into its body buffer and drops (read-body.ts BodyBytes), and which V8 frees
 * at its next collection: ~1 MiB of them per 1 MiB answer.
 *
 * 1. glibc's heap trim. The read buffers are carved from the top of glibc's main heap; V8
 *    frees a whole batch of them at once (a scavenge every 32 MiB of young ArrayBuffers: V8's
 *    `AllocateExternalBackingStore`), they merge into the heap's top, and glibc's default
 *    `M_TRIM_THRESHOLD` (128 KiB) hands that top back to the kernel (`brk` down). The next
 *    reads grow the heap again, and the kernel's receive copy faults in every page of it.
 *    Measured (2026-12-05, Node 20, bench JSON (a) 1 MiB at 4 connections, `strace -e brk` for
 *    20 s of alternating loads): the gateway grew its heap by 265 MiB in 1,261 `brk` calls and
 *    trimmed it 26 times (up to 29 MiB at once), the pass-through 29 MiB in 157 and 7 times
 *    (its piped chunks, still queued for the host when a collection runs, happen to pin the
 *    heap's top); `perf -e page-faults`: 349k faults against 12k, 90% in `_copy_to_iter`.
 *    On this machine a fault is dear (~15% of every profile in the hypervisor's
 *    `pvm_irq_enable`). glibc raises its thresholds by itself when a block it `mmap`ed is
 *    freed (mallopt(3), "dynamic mmap threshold": `M_MMAP_THRESHOLD` becomes the block's size
 *    and `M_TRIM_THRESHOLD` twice that, up to a 32 MiB block on 64-bit): so one untouched
 *    {@link GLIBC_THRESHOLD_BLOCK_BYTES} Buffer is allocated here and dropped, V8 frees it at
 *    one of the start-up's scavenges, and from then on glibc keeps up to 62 MiB of freed heap
 *    top for the next reads, and takes blocks under 31 MiB (the body pool's buffers) from its
 *    heap. Cost: an idle gateway may keep that much freed memory resident (RSS ~185-190 MiB
 *    under the 1 MiB load against ~120-140). Where glibc is not the allocator (musl, other
 *    systems) the block is simply freed; where the operator set glibc's `MALLOC_TRIM_THRESHOLD_`,
 *    `MALLOC_TOP_PAD_`, `MALLOC_MMAP_THRESHOLD_` or `MALLOC_MMAP_MAX_`, glibc ignores it and
 *    their settings stand.
 *
 * 2. V8's heap growing factor. V8 starts a mark-compact once the old generation's live size
 *    plus the external memory allocated since the last one reaches its limit less the young
 *    generation's capacity; the limit is the live size × a factor V8 picks from its collection
 *    and allocation speeds (1.5 for the gateway under load: ~10 MiB of headroom for its ~21 MiB
 *    heap), and the read buffers alone swing by 32 MiB between two scavenges. So the gateway
 *    ran a mark-compact of its whole heap about every 32 MiB of answers (20-30 per 600 1 MiB
 *    answers, ~25% of its profile at 4 MiB in marking and sweeping), or none, as V8's pick
 *    fell (bench/README.md, "Mark-compacts"). `--heap-growing-percent=300` pins the factor at
 *    4, V8's own ceiling for a heap of Node's default size, so the headroom (3 × a live size of
 *    17 MiB or more) always covers that swing. It is set at run time: V8 reads it at each
 *    mark-compact, when it sets the next limit (the semi-space sizes, by contrast, are fixed
 *    when the heap is made). A `--heap-growing-percent` given to `node` wins. Cost: up to 4× the
 *    live old generation before V8 collects it, where V8 might have chosen less.
 *
 * Together (`npm run bench:ab -- --base main --cases a`, 3 runs of 6 rounds, gateway CPU per
 * response): 1 MiB (a) 3,510 -> 1,036 µs (0.305×), 4 MiB (a) 17,955 -> 4,950 µs (0.287×), 1 KiB
 * (a) unchanged (1.014× and 1.007× in two runs, within their spreads); no mark-compact and ~0
 * faults per answer. Either alone is not enough: the factor alone left the faults (195-931 per
 * answer, more than before: every scavenge's batch then trims), the glibc block alone left the
 * mark-compacts in some runs (bench/README.md, "Read buffers").
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Size of the Buffer freed to raise glibc's thresholds: 31 MiB, under glibc's cap on the
 * dynamic adjustment (`DEFAULT_MMAP_THRESHOLD_MAX`, 32 MiB on 64-bit, compared with the
 * block's size and flags: a 32 MiB request does not count).
 */
export const GLIBC_THRESHOLD_BLOCK_BYTES = 31 * 1024 * 1024;

/** V8's `--heap-growing-percent` the gateway sets: a growing factor of 4. */
export const HEAP_GROWING_PERCENT = 300;

let tuned = false;

/**
 * Applies both settings (once per process; later calls do nothing). `execArgv` is the node
 * command line's flags (`process.execArgv`): a `--heap-growing-percent` there is left alone.
 */
export function tuneProcessMemory(execArgv: readonly string[] = process.execArgv): void {
  if (tuned) return;
  tuned = true;
  // Untouched, so never resident; unreferenced at once, freed by the next scavenge.
  if (process.platform === 'linux') Buffer.allocUnsafeSlow(GLIBC_THRESHOLD_BLOCK_BYTES);
  if (!execArgv.some((flag) => /^--heap[-_]growing[-_]percent(=|$)/.test(flag))) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
