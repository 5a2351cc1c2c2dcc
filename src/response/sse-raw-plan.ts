/**
 * {@link planRawEvents} (sse-raw-events.ts: the rules, their sources, the reference
 * implementation) computed by the WebAssembly planner (assembly/sse-plan.ts): one SIMD pass
 * per window of at most 64 KiB of the chunk, copied into the planner's memory, instead of
 * several native searches per event. Same inputs, same plan, element for element
 * (test/unit/sse-raw-plan.test.ts compares them over every split and random mixes).
 *
 * Why (issue 5, bench/README.md "SSE events/s"): on the flood of ~190-byte progress
 * notifications, planRawEvents cost ~0.14 CPU µs per event (its searches: one per line, one
 * per bracket, the `"id` search), a quarter of the gateway's SSE stage. The response-key hint
 * (`"result` / `"error` in any case, `"reſult`, `\u`: RawEventLimits.responseKeys) is told in the
 * same pass, where native searches could only find each spelling apart, and so is the proof
 * that a block's data names a method (RawEventLimits.methodNamed: its first data line's
 * prefix, its `"method` keys in any case counted).
 *
 * A chunk is planned window by window, each from the end of the last block the previous one
 * planned; raw segments that meet at a window edge are joined (the plan's runs are maximal),
 * and a raw run holding a byte >= 0x80 is checked to be valid UTF-8 whole, as the reference
 * does. A block that does not fit in one window (over 64 KiB) makes the whole chunk go to the
 * reference implementation.
 */
import { isUtf8 } from 'node:buffer';
import { SSE_PLAN_WASM_BASE64 } from './sse-plan-wasm.js';
import { instantiateWasmCore, WASM_INT32_MAX as INT32_MAX } from '../mcp/wasm-core.js';
import { planRawEvents, type RawEventLimits, type RawEventPlan } from './sse-raw-events.js';

/** The planner's exports (assembly/sse-plan.ts documents the protocol). */
interface PlanCore {
  readonly memory: { readonly buffer: ArrayBuffer };
  windowPtr(): number;
  windowCapacity(): number;
  segmentsPtr(): number;
  plannedEnd(): number;
  plan(len: number, atChunkStart: number, maxBytes: number, maxDepth: number, hints: number): number;
}

const core = instantiateWasmCore<PlanCore>(SSE_PLAN_WASM_BASE64);
const WINDOW_PTR = core.windowPtr();
/** Bytes per window (64 KiB). */
const WINDOW_CAPACITY = core.windowCapacity();
/** The planner never grows its memory: these views stay valid. */
const memory = new Uint8Array(core.memory.buffer);
const segments = new Int32Array(core.memory.buffer, core.segmentsPtr());
/** Segment flags (assembly/sse-plan.ts). */
const RAW = 1;
const HIGH = 2;

/** {@link planRawEvents}, by the WebAssembly planner (module doc); same preconditions, same result. */
export function planRawEventsFast(chunk: Buffer, from: number, limits: RawEventLimits): RawEventPlan {
  const n = chunk.length;
  const ends: number[] = [];
  const raw: boolean[] = [];
  /** Raw segments holding a byte >= 0x80 (indexes into `ends`). */
  let high: number[] | undefined;
  const maxBytes = Math.min(limits.maxEventBytes, limits.maxNodes, INT32_MAX);
  const maxDepth = Math.min(limits.maxDepth, INT32_MAX);
  /** The planner's `hints` bits (assembly/sse-plan.ts HINT_ID, HINT_KEYS, HINT_METHOD). */
  const hints = (limits.answerable ? 1 : 0) | (limits.responseKeys === true ? 2 : 0) | (limits.methodNamed === true ? 4 : 0);
  let at = from;
  while (at < n) {
    const len = Math.min(n - at, WINDOW_CAPACITY);
    memory.set(at === 0 && len === n ? chunk : chunk.subarray(at, at + len), WINDOW_PTR);
    const count = core.plan(len, at === 0 ? 1 : 0, maxBytes, maxDepth, hints);
    const planned = core.plannedEnd();
    for (let k = 0; k < count; k++) {
      const end = at + segments[2 * k]!;
      const flags = segments[2 * k + 1]!;
      const last = ends.length - 1;
      if ((flags & RAW) !== 0 && last >= 0 && raw[last] && k === 0) {
        // A raw run that goes on from the previous window: one segment.
        ends[last] = end;
        if ((flags & HIGH) !== 0 && high?.[high.length - 1] !== last) (high ??= []).push(last);
        continue;
      }
      ends.push(end);
      raw.push((flags & RAW) !== 0);
      if ((flags & (RAW | HIGH)) === (RAW | HIGH)) (high ??= []).push(ends.length - 1);
    }
    if (planned === 0) {
      if (at + len === n) break; // the rest is an incomplete block
      return planRawEvents(chunk, from, limits); // a block larger than a window: the reference plans the chunk
    }
    at += planned;
  }
  // Decoding would replace invalid UTF-8 (U+FFFD): a raw run holding any goes to the parser whole (noted, as the reference does).
  let invalidUtf8Runs: number[] | undefined;
  if (high !== undefined) {
    for (const k of high) {
      if (!isUtf8(chunk.subarray(k === 0 ? from : ends[k - 1]!, ends[k]))) {
        raw[k] = false;
        (invalidUtf8Runs ??= []).push(k);
      }
    }
  }
  return invalidUtf8Runs === undefined ? { ends, raw } : { ends, raw, invalidUtf8Runs };
}
