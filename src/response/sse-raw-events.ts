/**
 * The SSE stage's byte-level fast path (sse-stage.ts): which event blocks of a chunk can go
 * to the host as the seller's bytes, without decoding, parsing (eventsource-parser) and
 * re-encoding them, because the gateway neither reads nor changes them and the bytes are
 * exactly what the parse + encode path would write.
 *
 * Why (issue 5, bench/README.md "SSE events/s"): on a stream of small progress notifications,
 * decode + parse + encode of each event cost the gateway ~1.7 CPU µs per event against
 * ~0.4 for a plain proxy.
 *
 * A block (from an event boundary through its blank line) is forwarded raw only when all of
 * this holds, each an exact consequence of what the slow path would do with it:
 *
 * - Canonical form, so the bytes equal what sse-encode.ts writes for the parsed event: an
 *   optional first line `event: <non-empty type>`, then one or more `data: ` lines (a space
 *   after each colon), then the blank line; LF line endings only (the caller sends chunks
 *   holding a CR down the slow path); the block is valid UTF-8 (decoding would turn invalid
 *   bytes into U+FFFD). No `id` field (its resume token is minted from the count: slow path),
 *   no `retry`, no comment, no other field.
 * - Size: the block's bytes bound the event's data bytes (`max_sse_event_bytes`) and its
 *   UTF-16 length (`max_json_nodes`, the first test of json-bounds.ts withinJsonBounds).
 * - Structure: at most `max_json_depth` `{` and `[` in the block (withinJsonBounds' second
 *   test), so the depth/node bounds provably hold without a scan.
 * - Not the response: on a stream that answers a request, a block holding `"id` or a
 *   backslash anywhere may be it: the response carries the request's id in an `id` member
 *   (JSON-RPC 2.0 §5; rewrite.ts isResponseToExchange), whose key is the bytes `"id"` unless
 *   written with escapes (RFC 8259 §7; UTF-8 decoding never turns other bytes into ASCII).
 *
 * - On the standalone GET stream, where no response may pass (sse-message.ts
 *   standaloneVerdict), a block that may hold one is taken out of the plan's raw runs
 *   afterwards ({@link withResponsesParsed}): one holding `"result`, `"error` or `\u`. So is,
 *   on a request's or a batch's stream, a block holding `"result` or `"error` (a message with
 *   either member is the response awaited or refused, whatever its `id`, an absent one
 *   included: rewrite.ts claimsResponse).
 *
 * Anything else (and any doubt) is the slow path: eventsource-parser stays the parser of
 * every event whose content the gateway reads or changes.
 *
 * {@link planRawEvents} is the reference: the SSE stage plans with the WebAssembly planner
 * (sse-raw-plan.ts planRawEventsFast, the same plan in one SIMD pass), which falls back to it
 * for a block larger than its 64 KiB window.
 */
import { isAscii, isUtf8 } from 'node:buffer';

const LF = 0x0a;
const LF_LF = Buffer.from('\n\n', 'latin1');
const LEFT_BRACE = 0x7b;
const LEFT_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
/**
 * The start of an unescaped `id` key (see module doc), searched backwards: Node's backward
 * search looks for the needle's last byte first (memrchr), and `d` is rarer in JSON-RPC
 * than the `i` of a forward search for `id"` or the `"` of `"id"` (measured on the bench's
 * progress notifications: 28 ns per event for `"id` backwards, 48 for `id"` forwards, 170
 * for `"id"` either way).
 */
const QUOTE_ID = Buffer.from('"id', 'latin1');

/** The bounds a raw block must provably respect (the exchange's limits). */
export interface RawEventLimits {
  /** `max_sse_event_bytes`. */
  readonly maxEventBytes: number;
  /** `max_json_depth`. */
  readonly maxDepth: number;
  /** `max_json_nodes`. */
  readonly maxNodes: number;
  /** The stream answers a request, or waits for a batch's responses: blocks that may be one stay on the slow path. */
  readonly answerable: boolean;
}

/**
 * The complete event blocks of a chunk range, in order, as segments: segment k is
 * `[ends[k-1] or from, ends[k])`, either a run of consecutive blocks that may all be
 * forwarded as the seller's bytes (`raw[k]`), or blocks for the parser: one block, or a run
 * of canonical blocks (no id line) that holds invalid UTF-8.
 */
export interface RawEventPlan {
  /** Exclusive end of each segment (just past a blank line), ascending. */
  readonly ends: number[];
  /** Whether segment k may be forwarded as the seller's bytes. */
  readonly raw: boolean[];
}

/**
 * Splits `chunk[from, chunk.length)` into its complete event blocks and tells which ones may
 * be forwarded raw (module doc); consecutive raw blocks come as one segment. The bytes after
 * the last block (an incomplete event) are not part of the plan.
 *
 * Preconditions (the caller's): `from` is an event start (a boundary, or the stream's start
 * with no BOM), and the chunk holds no CR, so every blank line is LF LF and every line ends
 * with LF.
 *
 * Cost (bench/README.md "SSE events/s"; a JavaScript loop over the bytes cost ~5x more than
 * native searches, and a regular expression ~0.9 ns per byte): one native search per line of
 * a block that may be raw (its start checked), one to the blank line of any other block, one
 * per bracket in the planned bytes plus one per bracket kind, one backward search for `"id`
 * and one for a backslash over the whole range (plus one per occurrence); and an ASCII (else
 * UTF-8) validity check of the planned bytes. Nothing is allocated per raw block.
 */
export function planRawEvents(chunk: Buffer, from: number, limits: RawEventLimits): RawEventPlan {
  const n = chunk.length;
  const ends: number[] = [];
  const raw: boolean[] = [];
  const maxBytes = Math.min(limits.maxEventBytes, limits.maxNodes);
  const maxDepth = limits.maxDepth;
  const hints = limits.answerable ? responseHints(chunk, from) : undefined;
  /** Next response hint at or after the block being planned (n: none). */
  let hintAt = n;
  let hintIndex = 0;
  if (hints !== undefined && hints.length > 0) hintAt = hints[0]!;
  /** Next `{` / `[` at or after the last block counted (n: none). */
  let brace = nextByte(chunk, LEFT_BRACE, from);
  let bracket = nextByte(chunk, LEFT_BRACKET, from);
  /** Start of the run of raw blocks being extended (-1: none). */
  let runStart = -1;
  let anyRaw = false;
  /** Field names are compared a word at a time (fewer loads than byte by byte). */
  const view = new DataView(chunk.buffer, chunk.byteOffset, n);
  let pos = from;
  while (pos < n) {
    const start = pos;
    let end = -1;
    let at = start;
    let ok = true;
    // The optional `event: <type>` line, then `data: ` lines to the blank line.
    if (isMessageLine(view, at, n)) {
      // What MCP servers write: compared in place of a search for its end.
      at += MESSAGE_LINE_BYTES;
      if (at >= n) break; // incomplete: not part of the plan
      if (chunk[at] === LF) {
        ok = false; // no data: dispatches nothing
        end = at + 1;
      }
    } else if (isEventField(chunk, at)) {
      const lf = chunk.indexOf(LF, at + 8);
      if (lf === -1 || lf + 1 >= n) break; // incomplete: not part of the plan
      at = lf + 1;
      if (chunk[at] === LF) {
        ok = false; // no data: dispatches nothing
        end = at + 1;
      }
    }
    while (end === -1) {
      if (!isDataField(view, at, n)) {
        ok = false;
        break;
      }
      const lf = chunk.indexOf(LF, at + 6);
      if (lf === -1 || lf + 1 >= n) break; // incomplete
      if (chunk[lf + 1] === LF) end = lf + 2;
      else at = lf + 1;
    }
    if (!ok && end === -1) {
      // The first blank line at or after the line that failed (a lone LF block: the previous
      // byte, the boundary's own LF; at a chunk's start that LF is not here: not planned).
      const blank = at > start ? chunk.indexOf(LF_LF, at - 1) : chunk[start] === LF ? start - 1 : chunk.indexOf(LF_LF, start);
      end = blank === -1 ? -1 : blank + 2;
    }
    if (end === -1) break; // incomplete: not part of the plan
    if (ok && end - start > maxBytes) ok = false;
    if (ok) {
      // Brackets in the block, counted up to one past the bound.
      let count = 0;
      if (brace < start) brace = nextByte(chunk, LEFT_BRACE, start);
      while (brace < end && count <= maxDepth) {
        count++;
        brace = nextByte(chunk, LEFT_BRACE, brace + 1);
      }
      if (bracket < start) bracket = nextByte(chunk, LEFT_BRACKET, start);
      while (bracket < end && count <= maxDepth) {
        count++;
        bracket = nextByte(chunk, LEFT_BRACKET, bracket + 1);
      }
      ok = count <= maxDepth;
    }
    if (hintAt < end) {
      ok = false;
      while (hintAt < end) hintAt = ++hintIndex < hints!.length ? hints![hintIndex]! : n;
    }
    if (ok) {
      if (runStart === -1) runStart = start;
      anyRaw = true;
    } else {
      if (runStart !== -1) {
        ends.push(start);
        raw.push(true);
        runStart = -1;
      }
      ends.push(end);
      raw.push(false);
    }
    pos = end;
  }
  if (runStart !== -1) {
    ends.push(pos);
    raw.push(true);
  }
  // Decoding would replace invalid UTF-8 (U+FFFD): such bytes are not what the slow path
  // writes. A run holding any goes to the parser whole.
  if (anyRaw && !isAscii(chunk.subarray(from, pos))) {
    for (let k = 0, at = from; k < ends.length; at = ends[k++]!) if (raw[k] && !isUtf8(chunk.subarray(at, ends[k]))) raw[k] = false;
  }
  return { ends, raw };
}

/** The offset of the first `byte` at or after `at`, or `chunk.length` when there is none. */
function nextByte(chunk: Buffer, byte: number, at: number): number {
  const i = chunk.indexOf(byte, at);
  return i === -1 ? chunk.length : i;
}

/**
 * The offsets in `chunk[from, chunk.length)` where `"id` or a backslash starts, ascending
 * (usually none: one backward and one forward native search).
 */
function responseHints(chunk: Buffer, from: number): number[] {
  const found: number[] = [];
  for (let at = chunk.lastIndexOf(QUOTE_ID); at >= from; at = at > 0 ? chunk.lastIndexOf(QUOTE_ID, at - 1) : -1) found.push(at);
  found.reverse();
  const quotes = found.length;
  for (let at = chunk.indexOf(BACKSLASH, from); at !== -1; at = chunk.indexOf(BACKSLASH, at + 1)) found.push(at);
  if (quotes > 0 && found.length > quotes) found.sort((a, b) => a - b);
  return found;
}

/** Little-endian 32-bit / 16-bit words of Latin-1 text (as DataView reads them with `true`). */
const word32 = (text: string): number => Buffer.from(text, 'latin1').readUInt32LE(0);
const word16 = (text: string): number => Buffer.from(text, 'latin1').readUInt16LE(0);
const DATA = word32('data');
const COLON_SPACE = word16(': ');
const EVEN = word32('even');
const T_COLON_SPACE_M = word32('t: m');
const ESSA = word32('essa');
const GE = word16('ge');
/** `event: message` and its LF. */
const MESSAGE_LINE_BYTES = 15;

/** `data: ` at `at`, in a view of `n` bytes. */
function isDataField(view: DataView, at: number, n: number): boolean {
  return at + 6 <= n && view.getUint32(at, true) === DATA && view.getUint16(at + 4, true) === COLON_SPACE;
}

/** `event: message` then LF at `at`, in a view of `n` bytes. */
function isMessageLine(view: DataView, at: number, n: number): boolean {
  return (
    at + MESSAGE_LINE_BYTES <= n &&
    view.getUint32(at, true) === EVEN &&
    view.getUint32(at + 4, true) === T_COLON_SPACE_M &&
    view.getUint32(at + 8, true) === ESSA &&
    view.getUint16(at + 12, true) === GE &&
    view.getUint8(at + 14) === LF
  );
}

/** `event: ` at `at`, then a byte of a non-empty type. */
function isEventField(b: Buffer, at: number): boolean {
  return (
    at + 8 <= b.length &&
    b[at] === 0x65 &&
    b[at + 1] === 0x76 &&
    b[at + 2] === 0x65 &&
    b[at + 3] === 0x6e &&
    b[at + 4] === 0x74 &&
    b[at + 5] === 0x3a &&
    b[at + 6] === 0x20 &&
    b[at + 7] !== LF
  );
}

/** `"result`, `"error`: the start of a response's key as written without escapes (see {@link withResponsesParsed}). */
const QUOTE_RESULT = Buffer.from('"result', 'latin1');
const QUOTE_ERROR = Buffer.from('"error', 'latin1');
/** `\u`: the only JSON escape that can spell a letter of a key (RFC 8259 §7). */
const UNICODE_ESCAPE = Buffer.from('\\u', 'latin1');
/** The standalone GET stream's hints: its plan keeps blocks holding a backslash. */
const KEY_HINTS = [QUOTE_RESULT, QUOTE_ERROR, UNICODE_ESCAPE];
/** A request's or a batch's hints: its plan (`answerable`) already keeps every block holding a backslash out of its raw runs. */
const PLAIN_KEY_HINTS = [QUOTE_RESULT, QUOTE_ERROR];

/**
 * `plan`, a plan of `chunk[from, ...)` ({@link planRawEvents}), with every block of its raw
 * runs that may hold a JSON-RPC response made a segment for the parser of its own; `plan`
 * itself when there is none (the usual case). `answerable`: the plan was made with
 * {@link RawEventLimits.answerable} (its raw runs then hold no backslash).
 *
 * - On the standalone GET stream (`answerable` false), where the SSE stage drops any response
 *   (sse-message.ts standaloneVerdict; the `"id` hint does not cover it: a response there may
 *   have no `id`, and requests there have one). Source: a new user's trial (a seller answered
 *   a pending call on the standalone GET stream:
 *   test/regressions/get-stream-answers-pending-call.test.ts).
 * - On a request's or a batch's stream (`answerable` true), where a message with a `result`
 *   or an `error` member is the response awaited or ends the stream `upstream_not_mcp`
 *   (rewrite.ts claimsResponse, batch-answers.ts), whatever its `id`: the `"id` hint does
 *   not cover a message without one. Source: a reviewer, 2026-12-03 (a message with both
 *   members and no `id`, and one with either member and no `id`, went out as the seller's
 *   bytes: test/regressions/sse-result-and-error-without-id-forwarded.test.ts).
 *
 * A response is an object with a `result` or an `error` member; its key is the bytes
 * `"result` / `"error` unless a letter of it is written with an escape, and the only escape
 * that spells a letter is `\u` (RFC 8259 §7; UTF-8 never turns other bytes into ASCII). So a
 * block holding none of the three is no response, and stays raw; a block holding one (a
 * notification saying `"error"`, a string with `\u00e9`) is parsed, and forwarded if it is no
 * response. A raw run's blocks are canonical (no blank line inside one, each starts with
 * `event:` or `data:`), so the blank lines around such a bytes' offset are its block's bounds.
 *
 * Cost: none when the plan has no raw run (a chunk holding only a large response); else one
 * backward native search per needle (three on the standalone GET stream, two on a request's
 * or a batch's: `\u` is in a backslash, already out) from the end of the last raw run to
 * `from`, so the bytes after it (usually the response, which ends the chunk) are not read
 * again; nothing allocated when they find nothing; then two searches per block taken out.
 */
export function withResponsesParsed(chunk: Buffer, from: number, plan: RawEventPlan, answerable: boolean): RawEventPlan {
  let last = plan.ends.length - 1;
  while (last >= 0 && !plan.raw[last]) last--;
  if (last < 0) return plan;
  const hints = keyHints(chunk, from, plan.ends[last]!, answerable ? PLAIN_KEY_HINTS : KEY_HINTS);
  if (hints === undefined) return plan;
  const count = plan.ends.length;
  const ends: number[] = [];
  const raw: boolean[] = [];
  let h = 0;
  let segmentStart = from;
  for (let k = 0; k < count; k++) {
    const segmentEnd = plan.ends[k]!;
    if (!plan.raw[k]) {
      ends.push(segmentEnd);
      raw.push(false);
    } else {
      /** Start of the part of the run not yet planned again. */
      let at = segmentStart;
      for (; h < hints.length && hints[h]! < segmentEnd; h++) {
        const hint = hints[h]!;
        if (hint < at) continue; // before the run, or in a block already taken out
        const blank = chunk.lastIndexOf(LF_LF, hint);
        const blockStart = blank === -1 ? at : Math.max(at, blank + 2);
        const blockEnd = chunk.indexOf(LF_LF, hint) + 2;
        if (blockStart > at) {
          ends.push(blockStart);
          raw.push(true);
        }
        ends.push(blockEnd);
        raw.push(false);
        at = blockEnd;
      }
      if (at < segmentEnd) {
        ends.push(segmentEnd);
        raw.push(true);
      }
    }
    segmentStart = segmentEnd;
  }
  return { ends, raw };
}

/**
 * The offsets in `chunk[from, end)` where one of `needles` starts (a match starting there
 * lies whole in the range when `end` is a block's end: no needle holds an LF), ascending;
 * undefined when there is none. Searched backwards from `end`.
 */
function keyHints(chunk: Buffer, from: number, end: number, needles: readonly Buffer[]): number[] | undefined {
  let found: number[] | undefined;
  for (const needle of needles) {
    // A negative offset would count from the chunk's end: none is searched before `from`.
    const start = end - needle.length;
    if (start < from) continue;
    for (let at = chunk.lastIndexOf(needle, start); at >= from; at = at > 0 ? chunk.lastIndexOf(needle, at - 1) : -1) (found ??= []).push(at);
  }
  return found?.sort((a, b) => a - b);
}
