// AssemblyScript source of the SSE raw-event planner: compiled to WebAssembly by
// `npm run build:wasm` (scripts/build-wasm.ts) into src/response/sse-plan-wasm.ts, which
// src/response/sse-raw-plan.ts loads. test/unit/json-scan-wasm-build.test.ts fails when that
// file is not what this source compiles to.
//
// The same plan as src/response/sse-raw-events.ts planRawEvents (its module doc gives the
// rules and their sources), in one pass over a window of a chunk instead of several native
// searches per event: 16 bytes at a time, the lanes holding LF, `{`, `[`, a backslash, `d` or
// `D` (then checked for the `"i` or `"I` of `"id` before it: `d` is rarer in JSON-RPC than
// `"`; in any ASCII case, as a Go host reads `"ID"` as `id`), or a
// byte >= 0x80 found with SIMD compares (one mask; most 16-byte runs have none), then those
// lanes handled in order: an LF ends a line (the optional first `event: <type>` line, `data: `
// lines, the blank line that ends the block), the others are counted in the block.
//
// Why (issue 5, bench/README.md "SSE events/s"): on the flood of small progress
// notifications, planRawEvents' searches (one per line, one per bracket, the `"id` search)
// were ~0.14 CPU µs per event of the gateway's ~0.55.
//
// Protocol with the JavaScript side (offsets in bytes, relative to the window):
// - `windowPtr()`: where the caller copies the window (at most WINDOW_CAPACITY bytes);
//   `plan` writes 32 zero bytes after it (the last 16-byte load reads past its end).
// - `plan(len, atChunkStart, maxBytes, maxDepth, hints)`: plans the complete event
//   blocks of the window from its first byte (an event start), returns the number of
//   segments written at `segmentsPtr()`: int32 pairs (exclusive end, flags), flags bit 0 =
//   raw, bit 1 = the segment holds a byte >= 0x80 (the caller checks it is valid UTF-8).
//   `plannedEnd()`: the end of the last block planned (0: none). It stops early (the caller
//   plans on from `plannedEnd()`) when MAX_SEGMENTS - 2 segments are written.
//   `atChunkStart`: the window starts at the chunk's first byte, where a lone LF (the end of
//   a blank line whose first LF came in the previous chunk) ends the plan. `hints`: HINT_ID
//   (the stream answers a request: a block holding `"id`, in any ASCII case, or a backslash
//   is not raw),
//   HINT_KEYS (a block holding `"result` or `"error` in any ASCII case, `"reſult` with `ſ`,
//   C5 BF, for the `s`, or `\u`, is not raw: src/response/sse-raw-events.ts
//   RawEventLimits.responseKeys), HINT_METHOD (a block is raw only when its first data line
//   starts with a byte other than `{`, `[`, a space or a tab, or with `{"method":"` or
//   `{"jsonrpc":"2.0","method":"` and a byte other than `"` and the block holds exactly one
//   `"method` in any ASCII case: RawEventLimits.methodNamed), or any of them. The key hints' lanes are a `"` followed by `r`, `R`, `e` or `E` (HINT_KEYS), `m`
//   or `M` (HINT_METHOD) (the next 16 bytes, loaded one byte on, folded with `| 0x20`): a
//   key's start, rare inside strings, so few lanes are looked at.

const WINDOW_CAPACITY: i32 = 65536;
const MAX_SEGMENTS: i32 = 4096;

const WINDOW: usize = memory.data(WINDOW_CAPACITY + 32, 16);
const SEGMENTS: usize = memory.data(MAX_SEGMENTS * 8, 16);

/** Splats of LF, `{`, `[`, backslash, `d`, `"`, 0x20, `r`, `e`, `m` (loaded once per call: as `v128.const`s V8 rebuilds each at every use). */
const SPLATS: usize = memory.data<u8>([
  0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a,
  0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
  0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b, 0x5b,
  0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c,
  0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64,
  0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
  0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
  0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72, 0x72,
  0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65, 0x65,
  0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d, 0x6d,
], 16);

/** `plan`'s `hints` bits (module doc). */
const HINT_ID: i32 = 1;
const HINT_KEYS: i32 = 2;
const HINT_METHOD: i32 = 4;
/** `resu`, `lt`, `erro` as little-endian words, and `r`: a key's letters after `| 0x20` folding. */
const RESU_U32: u32 = 0x75736572;
const LT_U16: u16 = 0x746c;
const ERRO_U32: u32 = 0x6f727265;
const FOLD_U32: u32 = 0x20202020;
/** `re` then C5 BF (`ſ`, which Go folds to `s`) as a little-endian word, its letters folded with `| 0x2020`; then `ul`. */
const RE_LONG_S_U32: u32 = 0xbfc56572;
const UL_U16: u16 = 0x6c75;
/** `meth`, `od` as little-endian words: the letters of a `"method` key after its quote, folded. */
const METH_U32: u32 = 0x6874656d;
const OD_U16: u16 = 0x646f;
/** `{"me`, `thod` as little-endian words: `{"method":"` is they, `":` and `"`. */
const OPEN_ME_U32: u32 = 0x656d227b;
const THOD_U32: u32 = 0x646f6874;
/** `{"js`, `onrp`, `c":"`, `2.0"`, `,"me` as little-endian words: `{"jsonrpc":"2.0","method":"` is they, `thod`, `":` and `"`. */
const OPEN_JS_U32: u32 = 0x736a227b;
const ONRP_U32: u32 = 0x70726e6f;
const C_QUOTE_COLON_QUOTE_U32: u32 = 0x223a2263;
const TWO_DOT_ZERO_QUOTE_U32: u32 = 0x22302e32;
const COMMA_ME_U32: u32 = 0x656d222c;
/** `":` (little-endian u16), then the value's opening quote. */
const QUOTE_COLON_U16: u16 = 0x3a22;
/** provesMethod's answers. */
const NO_PROOF: i32 = 0;
const PREFIX_PROOF: i32 = 1;
const NO_CONTAINER: i32 = 2;

/** `even` and `data` as little-endian u32, `t: ` / `: ` as u16 / u8 checks below. */
const EVEN_U32: u32 = 0x6e657665;
const DATA_U32: u32 = 0x61746164;
/** `t: ` after `even` (little-endian u16 `t:` then a space). */
const T_COLON_U16: u16 = 0x3a74;
/** `"i` as little-endian u16. */
const QUOTE_I_U16: u16 = 0x6922;
const LF: u8 = 0x0a;
/** `: ` as little-endian u16. */
const COLON_SPACE_U16: u16 = 0x203a;

let planned: i32 = 0;

export function windowPtr(): usize {
  return WINDOW;
}
export function windowCapacity(): i32 {
  return WINDOW_CAPACITY;
}
export function segmentsPtr(): usize {
  return SEGMENTS;
}
export function plannedEnd(): i32 {
  return planned;
}

/** See the module doc. */
export function plan(len: i32, atChunkStart: i32, maxBytes: i32, maxDepth: i32, hintBits: i32): i32 {
  v128.store(WINDOW + <usize>len, i8x16.splat(0));
  v128.store(WINDOW + <usize>len, i8x16.splat(0), 16);
  const lfS = v128.load(SPLATS);
  const braceS = v128.load(SPLATS, 16);
  const bracketS = v128.load(SPLATS, 32);
  const backslashS = v128.load(SPLATS, 48);
  const dS = v128.load(SPLATS, 64);
  const quoteS = v128.load(SPLATS, 80);
  const foldS = v128.load(SPLATS, 96);
  const rS = v128.load(SPLATS, 112);
  const eS = v128.load(SPLATS, 128);
  const mS = v128.load(SPLATS, 144);
  const hints = (hintBits & HINT_ID) != 0;
  const keyHints = (hintBits & HINT_KEYS) != 0;
  const methodHints = (hintBits & HINT_METHOD) != 0;
  planned = 0;
  let count = 0;
  // A raw run is being extended (it ends at `planned`), and whether it holds a byte >= 0x80.
  let runOpen = false;
  let runHigh = false;
  // The block and line being read.
  let blockStart = 0;
  let lineStart = 0;
  let firstLine = true;
  let bad = false;
  let sawData = false;
  let brackets = 0;
  let hint = false;
  let high = false;
  // HINT_METHOD: what the first data line proves (provesMethod: NO_PROOF, PREFIX_PROOF,
  // NO_CONTAINER), and the `"method` keys seen.
  let methodProof = NO_PROOF;
  let methodKeys = 0;
  for (let p = 0; p < len; p += 16) {
    const ptr = WINDOW + <usize>p;
    const v = v128.load(ptr);
    // One mask of the lanes to look at: LF, `{`, `[`, a backslash, `d` or `D` (the end of `"id`
    // in any ASCII case: `| 0x20` maps only `D` and `d` onto `d`), >= 0x80.
    let marks = v128.or(
      v128.or(i8x16.eq(v, lfS), v128.or(i8x16.eq(v, braceS), i8x16.eq(v, bracketS))),
      v128.or(v128.or(i8x16.eq(v, backslashS), i8x16.eq(v128.or(v, foldS), dS)), v),
    );
    if (keyHints || methodHints) {
      // A `"` whose next byte is `r`/`e` (HINT_KEYS), `m` (HINT_METHOD) in either case: where
      // `"result` / `"error` / `"method` may start.
      const next = v128.or(v128.load(ptr, 1), foldS);
      let keyStarts = i8x16.splat(0);
      if (keyHints) keyStarts = v128.or(i8x16.eq(next, rS), i8x16.eq(next, eS));
      if (methodHints) keyStarts = v128.or(keyStarts, i8x16.eq(next, mS));
      marks = v128.or(marks, v128.and(i8x16.eq(v, quoteS), keyStarts));
    }
    let bits = i8x16.bitmask(marks);
    if (bits == 0) continue;
    if (len - p < 16) bits &= (1 << (len - p)) - 1;
    while (bits != 0) {
      const i = p + ctz(bits);
      bits &= bits - 1;
      const c = load<u8>(WINDOW + <usize>i);
      if (c != LF) {
        if (c == 0x7b || c == 0x5b) brackets++;
        else if (c >= 0x80) high = true;
        else if (c == 0x5c) {
          if (hints || (keyHints && load<u8>(WINDOW + <usize>i, 1) == 0x75)) hint = true;
        } else if (c == 0x22) {
          // Only marked with HINT_KEYS or HINT_METHOD: `"result` or `"error`, any ASCII case,
          // or `"reſult`; `"method` in any ASCII case (counted).
          const at = WINDOW + <usize>i;
          const raw = load<u32>(at, 1);
          const word = raw | FOLD_U32;
          if (word == METH_U32) {
            if ((load<u16>(at, 5) | <u16>0x2020) == OD_U16) methodKeys++;
          } else if ((word == RESU_U32 && (load<u16>(at, 5) | <u16>0x2020) == LT_U16) || (word == ERRO_U32 && (load<u8>(at, 5) | 0x20) == 0x72)) hint = true;
          else if ((raw | 0x2020) == RE_LONG_S_U32 && (load<u16>(at, 5) | <u16>0x2020) == UL_U16 && (load<u8>(at, 7) | 0x20) == 0x74) hint = true;
        }
        // `d` or `D`: a hint when `"i` or `"I` comes before it in this block (before the window: not planned).
        else if (hints && i - 2 >= blockStart && (load<u16>(WINDOW + <usize>(i - 2)) | <u16>0x2000) == QUOTE_I_U16) hint = true;
        continue;
      }
      if (i == lineStart) {
        // The blank line: the block ends here.
        const end = i + 1;
        if (i == 0 && atChunkStart != 0) return count; // a lone LF at the chunk's start: not planned
        const ok = !bad && sawData && end - blockStart <= maxBytes && brackets <= maxDepth && !hint && (!methodHints || methodProof == NO_CONTAINER || (methodProof == PREFIX_PROOF && methodKeys == 1));
        if (ok) {
          runOpen = true;
          if (high) runHigh = true;
        } else {
          if (runOpen) {
            store<i32>(SEGMENTS + (<usize>count << 3), blockStart);
            store<i32>(SEGMENTS + (<usize>count << 3), runHigh ? 3 : 1, 4);
            count++;
            runOpen = false;
            runHigh = false;
          }
          store<i32>(SEGMENTS + (<usize>count << 3), end);
          store<i32>(SEGMENTS + (<usize>count << 3), high ? 2 : 0, 4);
          count++;
        }
        planned = end;
        blockStart = end;
        lineStart = end;
        firstLine = true;
        bad = false;
        sawData = false;
        brackets = 0;
        hint = false;
        high = false;
        methodProof = NO_PROOF;
        methodKeys = 0;
        if (count >= MAX_SEGMENTS - 2) return closeRun(count, runOpen, runHigh);
      } else {
        if (!bad) {
          const at = WINDOW + <usize>lineStart;
          const length = i - lineStart;
          if (firstLine && length >= 8 && load<u32>(at) == EVEN_U32 && load<u16>(at, 4) == T_COLON_U16 && load<u8>(at, 6) == 0x20) {
            // `event: <non-empty type>` (its byte 7 is not the LF, which is further on).
          } else if (length >= 6 && load<u32>(at) == DATA_U32 && load<u16>(at, 4) == COLON_SPACE_U16) {
            if (methodHints && !sawData) methodProof = provesMethod(at + 6, length - 6);
            sawData = true;
          } else bad = true;
        }
        firstLine = false;
        lineStart = i + 1;
      }
    }
  }
  return closeRun(count, runOpen, runHigh);
}

/**
 * What the `length` bytes at `value` (a first data line's value) prove
 * (src/response/sse-raw-events.ts namesMethodRaw): NO_CONTAINER when its first byte is none
 * of `{`, `[`, a space, a tab; PREFIX_PROOF when it starts with `{"method":"` or
 * `{"jsonrpc":"2.0","method":"` and a byte other than `"` (the block must then hold that one
 * `"method` only); else NO_PROOF.
 */
function provesMethod(value: usize, length: i32): i32 {
  if (length >= 1) {
    const first = load<u8>(value);
    if (first != 0x7b && first != 0x5b && first != 0x20 && first != 0x09) return NO_CONTAINER;
  }
  if (length >= 12 && load<u32>(value) == OPEN_ME_U32 && load<u32>(value, 4) == THOD_U32 && load<u16>(value, 8) == QUOTE_COLON_U16 && load<u8>(value, 10) == 0x22) {
    return load<u8>(value, 11) != 0x22 ? PREFIX_PROOF : NO_PROOF;
  }
  return length >= 28 &&
    load<u32>(value) == OPEN_JS_U32 &&
    load<u32>(value, 4) == ONRP_U32 &&
    load<u32>(value, 8) == C_QUOTE_COLON_QUOTE_U32 &&
    load<u32>(value, 12) == TWO_DOT_ZERO_QUOTE_U32 &&
    load<u32>(value, 16) == COMMA_ME_U32 &&
    load<u32>(value, 20) == THOD_U32 &&
    load<u16>(value, 24) == QUOTE_COLON_U16 &&
    load<u8>(value, 26) == 0x22 &&
    load<u8>(value, 27) != 0x22
    ? PREFIX_PROOF
    : NO_PROOF;
}

/** Writes the open raw run (through `planned`) as a segment; returns the segment count. */
function closeRun(count: i32, runOpen: bool, runHigh: bool): i32 {
  if (!runOpen) return count;
  store<i32>(SEGMENTS + (<usize>count << 3), planned);
  store<i32>(SEGMENTS + (<usize>count << 3), runHigh ? 3 : 1, 4);
  return count + 1;
}
