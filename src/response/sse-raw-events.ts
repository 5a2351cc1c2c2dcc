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
 * - Not the response: on a stream that answers a request, a block holding `"id` (in any ASCII
 *   case) or a backslash anywhere may be it: the response carries the request's id in an `id`
 *   member (JSON-RPC 2.0 §5; rewrite.ts isResponseToExchange), whose key is the bytes `"id"`
 *   unless written with escapes (RFC 8259 §7; UTF-8 decoding never turns other bytes into
 *   ASCII), and a Go host reads `"ID"` as `id` (mcp/repeated-names.ts): `{"jsonrpc":"2.0",
 *   "ID":1}` claims request 1's answer (a new user's trial 8, F3 (residual):
 *   test/regressions/unicode-fold-member-names-accepted.test.ts). No other character folds to
 *   `i` or `d`. The same hint is set on the standalone GET stream and a POSTed notification's
 *   stream, where no response may pass: a message with an `id` and no `method`
 *   (`{"jsonrpc":"2.0","id":5}`) is one as a Go host reads it (rewrite.ts lacksMethod;
 *   hostile trials: test/regressions/id-only-message-on-request-stream-passes.test.ts).
 *
 * - A method named ({@link RawEventLimits.methodNamed}): where responses are judged, a block
 *   is raw only when its data provably names a method, or is no JSON object or array (its
 *   first byte is none of `{`, `[`, a space or a tab: text or a scalar, which no host reads as
 *   a message and the gateway forwards as such): it starts with `{"method":"` or
 *   `{"jsonrpc":"2.0","method":"` (as the TypeScript SDK, and the Go, Python and Java SDKs,
 *   write a notification: its first member, or the one after `"jsonrpc":"2.0"`, is a top-level
 *   `method`) and the string goes on (not `""`), and the block holds no other `"method` in any
 *   ASCII case (a later `method`, or a Go host's `"METHOD"`, would be the one read). A message
 *   with neither `result` nor `error` that names no method is no request or notification
 *   (rewrite.ts lacksMethod: with an `id`, a response as a Go host reads it; without one, no
 *   message at all: `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","method":""}`), and such a block
 *   held none of the other hints (a review:
 *   test/regressions/seller-message-without-kind-forwarded.test.ts). Any other block holding
 *   JSON (another member order, spaces, a request) is parsed, and judged by its data.
 *
 * - Not a response's key ({@link RawEventLimits.responseKeys}): on the standalone GET stream,
 *   where no response may pass (sse-message.ts standaloneVerdict), and on a request's or a
 *   batch's stream (a message with either member is the response awaited or refused,
 *   whatever its `id`, an absent one included: rewrite.ts claimsResponse), a block holding
 *   `"result` or `"error` in any case (`"reſult` too), or `\u`, is parsed ({@link responseKeyHints}).
 *
 * The event line's type plays no part: a named block (`event: x-custom`) is raw on these
 * terms only, its name's bytes counted with the rest (brackets, hints), and one that is not
 * goes to the parser, whose event the stage judges as a `message` event whatever its name
 * (sse-event-judge.ts namedEvent; a new user's trial 9, F1: the stage judged only unnamed and
 * `message` events, so a named response or 5,000-deep data left to the parser went out
 * unchecked; test/unit/sse-raw-plan.test.ts checks both planners on named blocks).
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
 * The start of an unescaped `id` key, in each ASCII case (see module doc), searched
 * backwards: Node's backward search looks for the needle's last byte first (memrchr), and `d`
 * is rarer in JSON-RPC than the `i` of a forward search for `id"` or the `"` of `"id"`
 * (measured on the bench's progress notifications: 28 ns per event for `"id` backwards, 48
 * for `id"` forwards, 170 for `"id"` either way). The WebAssembly planner finds all four in
 * its one pass (assembly/sse-plan.ts); this reference runs for a block over its window.
 */
const QUOTE_IDS = ['"id', '"iD', '"Id', '"ID'].map((key) => Buffer.from(key, 'latin1'));

/** The bounds a raw block must provably respect (the exchange's limits). */
export interface RawEventLimits {
  /** `max_sse_event_bytes`. */
  readonly maxEventBytes: number;
  /** `max_json_depth`. */
  readonly maxDepth: number;
  /** `max_json_nodes`. */
  readonly maxNodes: number;
  /**
   * Blocks that may hold an `id` member (`"id` in any ASCII case, or a backslash) stay on the
   * slow path: set where responses are judged (sse-stage.ts), on a request's or a batch's stream
   * (the response awaited is one) and on the streams where none may pass (a message with an
   * `id` and no `method` is a response as a Go host reads it: rewrite.ts lacksMethod).
   */
  readonly answerable: boolean;
  /**
   * Blocks that may hold a JSON-RPC response's key stay on the slow path: `"result` or
   * `"error` in any case (`"reſult` too), or `\u` ({@link responseKeyHints}). Set on the standalone GET
   * stream and on a request's or a batch's stream (sse-stage.ts).
   */
  readonly responseKeys?: boolean;
  /**
   * Blocks whose data is not proved to name a method stay on the slow path (module doc, "A
   * method named": {@link namesMethodRaw}). Set where responses are judged (sse-stage.ts): a
   * request's or a batch's stream, the standalone GET stream, a POSTed notification's stream.
   */
  readonly methodNamed?: boolean;
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
  /**
   * The segments k that are runs of canonical blocks sent to the parser for their invalid
   * UTF-8 (`raw[k]` false), ascending; absent when there are none. A stream without a total
   * takes such a run one block at a time (sse-chunk-taker.ts takePlanned: its undelivered count).
   */
  readonly invalidUtf8Runs?: number[];
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
 * per bracket in the planned bytes plus one per bracket kind, four backward searches for `"id`
 * and one for a backslash over the whole range (plus one per occurrence); with `methodNamed`,
 * for each block that may be raw, a prefix compare and two native searches of the block (`"m`,
 * `"M`); and an ASCII (else UTF-8) validity check of the planned bytes. Nothing is allocated per raw block.
 */
export function planRawEvents(chunk: Buffer, from: number, limits: RawEventLimits): RawEventPlan {
  const n = chunk.length;
  const ends: number[] = [];
  const raw: boolean[] = [];
  const maxBytes = Math.min(limits.maxEventBytes, limits.maxNodes);
  const maxDepth = limits.maxDepth;
  let hints = limits.answerable ? responseHints(chunk, from) : undefined;
  if (limits.responseKeys === true) {
    const keys = responseKeyHints(chunk, from);
    if (keys.length > 0) hints = hints === undefined || hints.length === 0 ? keys : [...hints, ...keys].sort((a, b) => a - b);
  }
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
    /** The first data line's value: its start and the LF that ends it (-1: none yet). */
    let dataAt = -1;
    let dataEnd = -1;
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
      if (dataAt === -1) {
        dataAt = at + 6;
        dataEnd = lf;
      }
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
    if (ok && limits.methodNamed === true) ok = namesMethodRaw(chunk, dataAt, dataEnd, start, end);
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
  // writes. A run holding any goes to the parser whole (noted: `invalidUtf8Runs`).
  let invalidUtf8Runs: number[] | undefined;
  if (anyRaw && !isAscii(chunk.subarray(from, pos))) {
    for (let k = 0, at = from; k < ends.length; at = ends[k++]!) {
      if (raw[k] && !isUtf8(chunk.subarray(at, ends[k]))) {
        raw[k] = false;
        (invalidUtf8Runs ??= []).push(k);
      }
    }
  }
  return invalidUtf8Runs === undefined ? { ends, raw } : { ends, raw, invalidUtf8Runs };
}

/** The offset of the first `byte` at or after `at`, or `chunk.length` when there is none. */
function nextByte(chunk: Buffer, byte: number, at: number): number {
  const i = chunk.indexOf(byte, at);
  return i === -1 ? chunk.length : i;
}

/**
 * The offsets in `chunk[from, chunk.length)` where `"id` (in any ASCII case) or a backslash
 * starts, ascending (usually none: four backward and one forward native search).
 */
function responseHints(chunk: Buffer, from: number): number[] {
  const found: number[] = [];
  for (const key of QUOTE_IDS) {
    for (let at = chunk.lastIndexOf(key); at >= from; at = at > 0 ? chunk.lastIndexOf(key, at - 1) : -1) found.push(at);
  }
  for (let at = chunk.indexOf(BACKSLASH, from); at !== -1; at = chunk.indexOf(BACKSLASH, at + 1)) found.push(at);
  if (found.length > 1) found.sort((a, b) => a - b);
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

/** `\u`: the only JSON escape that can spell a letter of a key (RFC 8259 §7). */
const UNICODE_ESCAPE = Buffer.from('\\u', 'latin1');
const QUOTE = 0x22;
/** `result` and `error` as Latin-1 text, lower case. */
const RESULT = 'result';
const ERROR = 'error';

/**
 * The offsets in `chunk[from, chunk.length)` where a response's key may start, ascending:
 * `"result` or `"error` in any ASCII case, `"reſult` (`ſ`, U+017F, C5 BF, in place of the `s`,
 * the rest in any ASCII case: Go's folding, mcp/repeated-names.ts; a new user's trial 8, F3
 * (residual): test/regressions/unicode-fold-member-names-accepted.test.ts), or `\u`
 * ({@link RawEventLimits.responseKeys}).
 *
 * Why: a response is an object with a `result` or an `error` member; as written its key is
 * the bytes `"result` / `"error` unless a letter of it is written with an escape, and the only
 * escape that spells a letter is `\u` (RFC 8259 §7; UTF-8 never turns other bytes into
 * ASCII). In any case: Go's encoding/json (the MCP Go SDK's decoder) matches member names
 * case-insensitively, so a Go host reads `"Result"` as `result` and routes
 * `{"jsonrpc":"2.0","ID":999,"Result":{...}}` to its pending call 999; the GET stream's raw
 * path forwarded it unparsed (a new user's trial 8, F3:
 * test/regressions/case-variant-member-names-accepted.test.ts). Earlier sources: a new
 * user's trial (a seller answered a pending call on the standalone GET stream:
 * test/regressions/get-stream-answers-pending-call.test.ts); a reviewer, 2026-12-03 (a
 * message with `result` and/or `error` and no `id` went out as the seller's bytes on a
 * request's stream: test/regressions/sse-result-and-error-without-id-forwarded.test.ts).
 *
 * The reference of the WebAssembly planner's HINT_KEYS (assembly/sse-plan.ts), which tells
 * it in its one pass; this one visits every `"` (a native search each): it runs only for a
 * chunk holding a block larger than the planner's window.
 */
function responseKeyHints(chunk: Buffer, from: number): number[] {
  const found: number[] = [];
  for (let at = chunk.indexOf(QUOTE, from); at !== -1; at = chunk.indexOf(QUOTE, at + 1)) {
    if (foldedAt(chunk, at + 1, RESULT) || foldedAt(chunk, at + 1, ERROR) || longSResultAt(chunk, at + 1)) found.push(at);
  }
  const quotes = found.length;
  for (let at = chunk.indexOf(UNICODE_ESCAPE, from); at !== -1; at = chunk.indexOf(UNICODE_ESCAPE, at + 1)) found.push(at);
  if (quotes > 0 && found.length > quotes) found.sort((a, b) => a - b);
  return found;
}

/** `chunk` holds `reſult` at `at`: `re`, C5 BF, `ult`, the letters under ASCII case folding. */
function longSResultAt(chunk: Buffer, at: number): boolean {
  return chunk[at + 2] === 0xc5 && chunk[at + 3] === 0xbf && foldedAt(chunk, at, 're') && foldedAt(chunk, at + 4, 'ult');
}

/** `chunk` holds `word` (lower-case ASCII letters) at `at` under ASCII case folding (`| 0x20` maps only `A`-`Z` onto letters). */
function foldedAt(chunk: Buffer, at: number, word: string): boolean {
  if (at + word.length > chunk.length) return false;
  for (let k = 0; k < word.length; k++) if ((chunk[at + k]! | 0x20) !== word.charCodeAt(k)) return false;
  return true;
}

/** The data prefixes that prove a top-level `method` (module doc, "A method named"), `"` last. */
const METHOD_FIRST = Buffer.from('{"method":"', 'latin1');
const METHOD_AFTER_JSONRPC = Buffer.from('{"jsonrpc":"2.0","method":"', 'latin1');
const SPACE = 0x20;
const TAB = 0x09;
/** `"m` and `"M`: where a `"method` key in any ASCII case may start. */
const QUOTE_MS = ['"m', '"M'].map((key) => Buffer.from(key, 'latin1'));
/** `ethod`, the letters after the `m` of a `"method` key, lower case. */
const ETHOD = 'ethod';

/**
 * Whether the block `chunk[start, end)`, whose first data line's value is `chunk[value,
 * lineEnd)`, provably names a method or holds no JSON object or array (module doc, "A method
 * named"): the value's first byte is none of `{`, `[`, a space, a tab; or the value starts
 * with {@link METHOD_FIRST} or {@link METHOD_AFTER_JSONRPC} and a byte of the line other than
 * `"` follows, and the block holds exactly one `"method` in any ASCII case (that one). The
 * reference of the WebAssembly planner's HINT_METHOD (assembly/sse-plan.ts): one native search
 * of the block per `"m` and `"M` in it, and two.
 */
function namesMethodRaw(chunk: Buffer, value: number, lineEnd: number, start: number, end: number): boolean {
  if (value >= 0 && value < lineEnd) {
    const first = chunk[value];
    if (first !== LEFT_BRACE && first !== LEFT_BRACKET && first !== SPACE && first !== TAB) return true;
  }
  const prefix = startsWithAt(chunk, value, lineEnd, METHOD_FIRST) ? METHOD_FIRST.length : startsWithAt(chunk, value, lineEnd, METHOD_AFTER_JSONRPC) ? METHOD_AFTER_JSONRPC.length : -1;
  if (prefix === -1 || value + prefix >= lineEnd || chunk[value + prefix] === QUOTE) return false;
  const block = chunk.subarray(start, end);
  let keys = 0;
  for (const key of QUOTE_MS) {
    // A letter is no LF: a match that starts in the block ends in it.
    for (let at = block.indexOf(key); at !== -1; at = block.indexOf(key, at + 1)) if (foldedAt(block, at + 2, ETHOD)) keys++;
  }
  return keys === 1;
}

/** `chunk[at, limit)` starts with `bytes`. */
function startsWithAt(chunk: Buffer, at: number, limit: number, bytes: Buffer): boolean {
  if (at < 0 || limit - at < bytes.length) return false;
  for (let k = 0; k < bytes.length; k++) if (chunk[at + k] !== bytes[k]) return false;
  return true;
}
