/**
 * Incremental, validating JSON scan of a seller's body, fed chunk by chunk as the bytes
 * arrive: one pass that enforces the structure bounds, validates the JSON grammar, and
 * collects what the JSON stage needs to decide, without `JSON.parse`, that a body can go out
 * as the seller's bytes.
 *
 * Why (issue 5, "the gateway must not parse and re-serialize a body it leaves unchanged";
 * fairness under attack): `checkJsonBounds` + `JSON.parse` of a whole 4 MiB body cost ~25 ms
 * of one blocked event loop per response, and a 4 MiB `[[[...` or node bomb was buffered in
 * full before its first byte was looked at. Fed per chunk, the scan spreads its work over the
 * arrival of the body (a 64 KiB chunk is well under a millisecond), stops a bomb at the
 * first byte over a bound (AdCP security, summarized in mcp-response-extraction.md §Size
 * Limits: "bound JSON depth and node count"), and leaves nothing to scan when the body ends.
 *
 * Grammar: RFC 8259 exactly as `JSON.parse(buf.toString('utf8'))` accepts it: whitespace is
 * space, tab, LF, CR; no BOM (unless {@link JsonScanOptions.ignoreBom} drops a leading one);
 * strings reject raw control characters (< 0x20) and bad escapes (`\u` needs 4 hex digits);
 * numbers follow the RFC grammar (no leading zeros, no `+`, no bare `.`); literals `true`,
 * `false`, `null`. Bytes >= 0x80 are accepted inside strings without UTF-8 validation
 * (`toString('utf8')` maps invalid sequences to U+FFFD, which `JSON.parse` accepts) and
 * rejected outside them (as `JSON.parse` rejects any non-ASCII character there).
 *
 * Counting (same as {@link checkJsonBounds}): every value is one node (object, array, string,
 * number, `true`, `false`, `null`; object keys are not); depth is the nesting of
 * arrays/objects. At an opening bracket the depth bound is checked before the node bound.
 *
 * Implementation: the scan itself is WebAssembly (assembly/json-scan.ts, compiled into
 * json-scan-wasm.ts by `npm run build:wasm`): string contents, most of an MCP message, are
 * skipped 16 (a long string: 64) bytes at a time with SIMD compares, and compact members
 * (`"key":"value",`) are read in one run. Measured on the bench's 4 MiB get_products result
 * (64 KiB chunks, the chunk copies included): ~0.5 ms/MiB on a loaded reference machine
 * where the scan before that work took ~0.8 ms/MiB (callgrind: 15 against 26 million
 * instructions per 4 MiB); the same scan in JavaScript ran at ~1.8 ms/MiB. One module
 * instance serves every scanner of the process: the scanner that ran last keeps its small
 * state (and its container stack, one bit per open bracket) in the core's memory, and
 * another scanner's call first saves it out (see `owner`).
 *
 * Cost: O(n) time, O(depth) memory (depth / 8 bytes), no allocation per token or per chunk,
 * none per scanner unless scanners are fed in turn.
 *
 * Also {@link scanStringText}: a JSON string of a scanned body (a legacy tool result's text)
 * decoded and scanned as a JSON text of its own in the same core, for the lift without parsing.
 */
import { assertBoundLimit, BACKSLASH } from './json-bytes.js';
import { JSON_SCAN_WASM_BASE64 } from './json-scan-wasm.js';
import { instantiateWasmCore, WASM_INT32_MAX as UNBOUNDED } from './wasm-core.js';
import { matchBomStart, NOT_BOM, UTF8_BOM } from './utf8-bom.js';

/** The bounds; `Infinity` disables one. */
export interface JsonScanLimits {
  /** Maximum nesting of arrays/objects (`{}` alone is depth 1). */
  readonly maxDepth: number;
  /** Maximum number of JSON values (object keys do not count). */
  readonly maxNodes: number;
}

/** A scanner's options: its bounds, and whether a leading BOM is dropped. */
export interface JsonScanOptions extends JsonScanLimits {
  /**
   * Drop a UTF-8 byte order mark (EF BB BF) at the very start of the text, even one cut over
   * chunks, before the scan (RFC 8259 §8.1: a parser "MAY ignore the presence of a byte order
   * mark rather than treating it as an error"); a BOM anywhere else, or a partial one, is still
   * a syntax error. The text scanned, and every offset of the result (ranges, a failure's
   * offset), then begin after it: {@link JsonScanner.leadingBomBytes} is how many bytes were
   * dropped. Off by default (a text that starts with a BOM is then a `syntax` failure at
   * offset 0, as `JSON.parse` refuses it). Source: a seller's JSON answer starting with a BOM
   * was refused `upstream_not_mcp` (test/regressions/json-answer-with-bom-refused.test.ts).
   */
  readonly ignoreBom?: boolean;
  /**
   * Tell whether any key of the text is or may be `__proto__` ({@link JsonScanSummary.mayHoldProtoKey}:
   * set only with this option). Off for a seller's message (a length compare per key in the
   * core's hottest loop: 2-5% of the scan of a 1 MiB result); on for the scan of a long
   * `content[].text` (extract.ts readTextObject). A hostile trial 24, L1.
   */
  readonly noteProtoKeys?: boolean;
}

/** Why a scan failed; `offset` is the 0-based byte position of the byte that failed it. */
export type JsonScanFailure =
  | {
      readonly ok: false;
      /** Same strings as the `details.reason` values of src/errors/codes.ts. */
      readonly reason: 'json_depth' | 'json_nodes';
      readonly limit: number;
      /** Always `limit + 1`: the scan stops at the first breach. */
      readonly observed: number;
      readonly offset: number;
    }
  | {
      readonly ok: false;
      /** Not JSON (`offset` = the body length when it ended early). */
      readonly reason: 'syntax';
      readonly offset: number;
    };

/** Byte range `[start, end)` of a value in the scanned body. */
export type ByteRange = readonly [start: number, end: number];

/**
 * Facts about the members of a top-level object (a JSON-RPC message), by key as written.
 * Duplicate keys: the last one wins, as in `JSON.parse` (whether a name repeats: the summary's
 * {@link JsonScanSummary.repeatedName}).
 */
export interface TopMembers {
  /** Range of the last `jsonrpc` value. */
  readonly jsonrpc: ByteRange | undefined;
  /** Range of the last `id` value. */
  readonly id: ByteRange | undefined;
  readonly hasResult: boolean;
  readonly hasError: boolean;
  /**
   * A top-level `method` member was seen (unescaped key). A message with `method` beside
   * `result` or `error` is no response (JSON-RPC 2.0 §4, §5): json-stage.ts answersExchange.
   * Recorded by the core's top-level key compare (one more compare, for a key that is none
   * of `jsonrpc`, `id`, `result`, `error`). Source: a new user's trial, 2026-12-03.
   */
  readonly hasMethod: boolean;
  /**
   * Range of the last top-level `method` value (any JSON value; set exactly when `hasMethod`).
   * A message names a method only when that value is a non-empty string
   * (response/json-value-at.ts isMethodName; response/rewrite.ts namesMethod): the MCP Go SDK
   * reads an empty (or null) method as none (internal/jsonrpc2 DecodeMessage), so such a
   * message with an `id` is a response to it. Captured as `id` is: two stores at the value's
   * end. Source: a review
   * (test/regressions/seller-message-without-kind-forwarded.test.ts).
   */
  readonly method: ByteRange | undefined;
  /**
   * Range of the last top-level `params` value (any JSON value), key written without an
   * escape; captured as `method` is. Read where a seller's `notifications/cancelled` names the
   * request it gives up (response/server-request-id.ts sellerCancelledIdOf), so that the SSE
   * judge's scan finds it with no second scan of the event's top level (re-read review of
   * 7767818, M3: test/regressions/server-request-check-rescans-events.test.ts).
   */
  readonly params: ByteRange | undefined;
  /** False when a top-level key is written with an escape (`"\u0069d"`): the facts above may then miss a member. */
  readonly plainKeys: boolean;
  /**
   * Range of `result.structuredContent` (the last `result`'s, when `result` is an object),
   * or undefined: absent, or a key of that `result` is written with an escape (it might
   * be a later `structuredContent`).
   */
  readonly structuredContent: ByteRange | undefined;
  /** A `result` member was seen and none of the last `result`'s keys is written with an escape. */
  readonly resultPlainKeys: boolean;
  /** Offset of the `}` that closes the last `result` (when it is an object). */
  readonly resultEnd: number | undefined;
  /**
   * Range of the last `result`'s last `isError` value (any JSON value), or undefined: absent,
   * or `result` is not an object. Read only when `resultPlainKeys` (an escaped key may be
   * another `isError`).
   */
  readonly isError: ByteRange | undefined;
  /** Range of the last `result`'s last `resultType` value (any JSON value), as `isError`. */
  readonly resultType: ByteRange | undefined;
  /** The last `result`'s last `content`, when it is an array. */
  readonly content: ContentItems | undefined;
}

/**
 * The items of `result.content` (the last `content` of the last `result`): where each
 * item's `text` string is in the body, so that a rewrite can replace just those bytes
 * (json-stage.ts splice). For an item object with several `text` keys, the last one (as
 * JSON.parse keeps); undefined when that value is not a string or the item is not an object.
 */
export interface ContentItems {
  /** Number of elements of the array. */
  readonly count: number;
  /** False when a key of an item object is written with an escape (`"te\u0078t"`): then a text range may be missing. */
  readonly plainKeys: boolean;
  /** Range of the `text` string (quotes included) of items 0 .. min(count, SCAN_CONTENT_ITEMS) - 1. */
  readonly texts: readonly (ByteRange | undefined)[];
  /**
   * Range of the `type` string (quotes included) of the same items: the last `type` key's
   * value, undefined when that value is not a string, when the item has no `type` or is not
   * an object.
   */
  readonly types: readonly (ByteRange | undefined)[];
}

/** A complete, valid JSON text within the bounds. */
export interface JsonScanSummary {
  readonly ok: true;
  readonly depth: number;
  readonly nodes: number;
  /** Kind of the top-level value. */
  readonly top: 'object' | 'array' | 'scalar';
  /** Set when `top` is `object`. */
  readonly members: TopMembers | undefined;
  /**
   * True when some string value of a member whose key is `text` (or is written with an
   * escape, so may be `text`) starts with `{`, a space or an escape, i.e. may hold JSON
   * object text (the only text the normalization parses: extract.ts parseTextObject). False
   * proves that no `text` member anywhere holds JSON object text.
   */
  readonly textMayHoldObject: boolean;
  /**
   * True when a number token (outside strings) is longer than 15 characters or has an
   * exponent. False proves every number survives `JSON.parse` + `JSON.stringify` with its
   * value (at most 14 digits, no exponent: DBL_DIG; see json-numbers.ts), so the exact
   * `hasLossyNumber` check can be skipped.
   */
  readonly numberMayBeLossy: boolean;
  /**
   * A name was read twice in one object among those the scan tells exactly: in a message
   * object (the top-level object, or an object element of a top-level array) `jsonrpc`, `id`,
   * `method`, `params`, `result`, `error`; in the last `result` `content`,
   * `structuredContent`, `isError`, `resultType`; in one of its `content` items `text`,
   * `type`. Keys written with an escape are not compared. Exact: true proves a repeat.
   */
  readonly repeatedName: boolean;
  /**
   * The scan proves that no message object repeats a name: none is {@link repeatedName}, no
   * message key is written with an escape, and no message object has two names outside the
   * JSON-RPC members (the scan keeps no key bytes to compare them). False: a repeat, or the
   * caller counts the parsed members against {@link messageKeys}
   * (mcp/repeated-names.ts repeatsMemberName).
   */
  readonly namesDistinct: boolean;
  /** Keys of the message objects as written, escaped ones and repeats included. */
  readonly messageKeys: number;
  /**
   * With {@link JsonScanOptions.noteProtoKeys}: as {@link ObjectTextFacts.mayHoldProtoKey}, for
   * every key of the text at any depth (false proves that no object in it has a member
   * `__proto__`; extract.ts ParsedTextFacts). Undefined without it.
   */
  readonly mayHoldProtoKey: boolean | undefined;
}

export type JsonScanResult = JsonScanSummary | JsonScanFailure;



// ---------------------------------------------------------------------------------------
// The WebAssembly core (assembly/json-scan.ts documents the protocol; slots mirrored here).

interface ScanCore {
  readonly memory: { readonly buffer: ArrayBuffer };
  chunkPtr(): number;
  chunkCapacity(): number;
  statePtr(): number;
  stackPtr(): number;
  reserveStack(bytes: number): number;
  scan(len: number): number;
  scanNotingKeys(len: number): number;
  finish(): number;
  tablePtr(): number;
  maxMembers(): number;
  textRegion(len: number, stackBytes: number): number;
  textOut(): number;
  unescapeText(len: number): number;
  scanText(len: number): number;
  textSummary(serializedBytes: number): number;
  summaryOut(): number;
}

const I_DEPTH = 6;
const I_MAX_SEEN_DEPTH = 7;
const I_NODES = 8;
const I_TOP = 9;
const I_HAS_RESULT = 19;
const I_HAS_ERROR = 20;
const I_PLAIN_KEYS = 21;
const I_TEXT_MAY_HOLD_OBJECT = 22;
const I_NUMBER_MAY_BE_LOSSY = 23;
const I_MAX_DEPTH = 24;
const I_MAX_NODES = 25;
const I_HAS_JSONRPC = 27;
const I_HAS_ID = 28;
const I_HAS_SC = 29;
const I_SC_ESCAPED_KEY = 18;
const I_ITEM_COUNT = 31;
const I_ITEMS_PLAIN = 32;
const I_ITEM_TEXT_BITS = 33;
const I_HAS_RESULT_END = 36;
const I_CONTENT_ARRAY = 37;
const I_TABLE = 38;
const I_TABLE_COUNT = 39;
const I_ITEM_TYPE_BITS = 48;
const I_HAS_IS_ERROR = 51;
const I_HAS_RESULT_TYPE = 52;
const I_HAS_METHOD = 53;
const I_NAME_FLAGS = 55;
const I_MESSAGE_KEYS = 56;
const I_PROTO_KEY = 57;
const I_HAS_PARAMS = 59;
/** Int32 slots (8 of them, from 40, carry the bytes of the key being read). */
const I32_SLOTS = 60;
const F_CAPTURE_START = 1;
const F_JSONRPC_START = 2;
const F_JSONRPC_END = 3;
const F_ID_START = 4;
const F_ID_END = 5;
const F_SC_START = 6;
const F_SC_END = 7;
const F_FAIL_OFFSET = 8;
const F_RESULT_END = 9;
const F_IS_ERROR_START = 12;
const F_IS_ERROR_END = 13;
const F_RESULT_TYPE_START = 14;
const F_RESULT_TYPE_END = 15;
const F_ITEM_TEXT = 16;
const F_ITEM_TYPE = 48;
const F_METHOD_START = 80;
const F_METHOD_END = 81;
const F_PARAMS_START = 82;
const F_PARAMS_END = 83;
const F64_SLOTS = 84;
/**
 * Items of `result.content` whose `text` and `type` ranges the scan keeps (assembly/json-scan.ts
 * MAX_ITEMS); the scan-based rewrites decline a result with more, and the parse path's splice
 * finds the rest by a walk of the bytes (mcp/tool-result-ranges.ts; review 38).
 */
export const SCAN_CONTENT_ITEMS = 16;

/** I_NAME_FLAGS bit (assembly/json-scan.ts NAMES_REPEATED; the other, NAMES_UNPROVED, only clears `namesDistinct`). */
const NAMES_REPEATED = 1;
const FAIL_SYNTAX = 1;
const FAIL_DEPTH = 2;
const TOP_OBJECT = 1;
const TOP_ARRAY = 2;

const core = instantiateWasmCore<ScanCore>(JSON_SCAN_WASM_BASE64);
const CHUNK_PTR = core.chunkPtr();
const CHUNK_CAPACITY = core.chunkCapacity();
const STATE_PTR = core.statePtr();
const STATE_I32 = STATE_PTR >> 2;
const STATE_F64 = (STATE_PTR + I32_SLOTS * 4) >> 3;
const STATE_BYTES = I32_SLOTS * 4 + F64_SLOTS * 8;
const STACK_PTR = core.stackPtr();
const TABLE_I32 = core.tablePtr() >> 2;
/** Members of a top-level object the text scan records (assembly/json-scan.ts MAX_MEMBERS). */
export const SCAN_TEXT_MEMBERS = core.maxMembers();
/** Int32 fields per member (assembly/json-scan.ts MEMBER_FIELDS). */
const MEMBER_FIELDS = 6;
let stackReserved = 0;

/**
 * The bytes of the core's WebAssembly memory: it only grows (a WebAssembly memory never shrinks),
 * so this is also what it keeps for the process's life. For tests and diagnostics
 * (test/regressions/scan-large-text-grows-wasm-memory.test.ts).
 */
export function coreMemoryBytes(): number {
  return core.memory.buffer.byteLength;
}

/** Views of the core's memory, renewed when it grows (a grown memory detaches the old buffer). */
let views = makeViews();
function makeViews(): { buffer: ArrayBuffer; u8: Uint8Array; i32: Int32Array; f64: Float64Array } {
  const buffer = core.memory.buffer;
  return { buffer, u8: new Uint8Array(buffer), i32: new Int32Array(buffer), f64: new Float64Array(buffer) };
}
function currentViews(): typeof views {
  // Growing the memory detaches its old buffer, and a view of a detached buffer has length 0
  // (cheaper to look at than `memory.buffer`, a call into the engine's API).
  if (views.u8.length === 0) views = makeViews();
  return views;
}

function toCoreBound(limit: number): number {
  return limit >= UNBOUNDED ? UNBOUNDED : limit;
}

/** A scanner's state while another one holds the core (JsonScanner `save`). */
interface SavedState {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  /** The container stack, one bit per open array/object (grown as needed). */
  stack: Uint8Array;
}

/**
 * The scanner whose state (slots and container stack) is in the core's memory, or undefined.
 * A scanner's state stays there between its calls while no other scanner runs (the usual
 * case: one response's chunks in a row); another scanner's call first saves it out
 * (JsonScanner `own`). Issue 5, 1 KiB results: copying the state in and out around every
 * call, through three typed arrays allocated per response, cost more than scanning the KiB.
 */
let owner: JsonScanner | undefined;

/** Saves the state of the scanner in the core, if any (before the core's memory past the stack is reused). */
function releaseCore(): void {
  owner?.save(currentViews());
}

/** Makes room for `stackBytes` of container stack; false when memory cannot grow. */
function reserveStack(stackBytes: number): boolean {
  if (stackBytes <= stackReserved) return true;
  if (!core.reserveStack(stackBytes)) return false;
  stackReserved = stackBytes;
  return true;
}

/**
 * Feed the body with {@link feed} as chunks arrive, then call {@link end}.
 *
 * - `feed(chunk)`: scans the chunk; returns the failure once the body is known to be
 *   invalid or over a bound (later calls return the same failure and scan nothing).
 * - `end()`: the summary of a complete valid body, or the failure (a body that ends inside
 *   a value is a `syntax` failure at offset = its length); the same object on later calls.
 *   After a successful `end()`, `feed` throws (the body was complete).
 * - Errors: the constructor throws `RangeError` for a negative, fractional or NaN limit;
 *   `feed` throws `RangeError` if the core cannot grow its memory for the container stack
 *   (only with an unbounded depth, past ~4 GiB of open brackets).
 *
 * - With `ignoreBom` ({@link JsonScanOptions.ignoreBom}), a leading BOM is dropped first: the
 *   scan and its offsets start after {@link leadingBomBytes} bytes. Cost: a compare of the
 *   first byte, then one of a field per chunk.
 *
 * Any number of scanners may be fed in turn (interleaved responses), or abandoned mid-body
 * (an aborted request): each keeps its own state (see {@link owner}); nothing is allocated
 * per scanner unless another scanner runs between two of its calls.
 */
export class JsonScanner {
  private readonly maxDepth: number;
  private readonly maxNodes: number;
  private failure: JsonScanFailure | undefined;
  private summary: JsonScanSummary | undefined;
  /** This scanner's state while another one holds the core; undefined before it ever did. */
  private saved: SavedState | undefined;
  /**
   * With `ignoreBom`, while the text's start is undecided: the bytes of a BOM matched so far
   * (0-2, held back from the core); {@link BOM_DECIDED} once the start is past (from the
   * start without `ignoreBom`).
   */
  private bomMatched: number;
  /** See {@link leadingBomBytes}. */
  private bomBytes = 0;
  /** {@link JsonScanOptions.noteProtoKeys}. */
  private readonly noteProtoKeys: boolean;

  constructor(options: JsonScanOptions) {
    assertBoundLimit('JsonScanner', 'maxDepth', options.maxDepth);
    assertBoundLimit('JsonScanner', 'maxNodes', options.maxNodes);
    this.maxDepth = options.maxDepth;
    this.maxNodes = options.maxNodes;
    this.bomMatched = options.ignoreBom === true ? 0 : BOM_DECIDED;
    this.noteProtoKeys = options.noteProtoKeys === true;
  }

  /**
   * 3 when the text began with a UTF-8 BOM that was dropped ({@link JsonScanOptions.ignoreBom}),
   * else 0: the bytes before the first one the scan (and every offset it reports) counts.
   */
  get leadingBomBytes(): number {
    return this.bomBytes;
  }

  feed(chunk: Uint8Array): JsonScanFailure | undefined {
    if (this.failure !== undefined) return this.failure;
    // Its state is gone once it ended (save() keeps none): more bytes are a caller's bug.
    if (this.summary !== undefined) throw new Error('JsonScanner: feed after a successful end()');
    if (this.bomMatched !== BOM_DECIDED) chunk = this.afterBom(chunk);
    for (let from = 0; from < chunk.length; from += CHUNK_CAPACITY) {
      const part = chunk.length <= CHUNK_CAPACITY ? chunk : chunk.subarray(from, Math.min(chunk.length, from + CHUNK_CAPACITY));
      let v = this.own();
      // The stack may grow by one level per byte, up to the depth bound.
      const depthAfter = Math.min(v.i32[STATE_I32 + I_MAX_DEPTH]!, v.i32[STATE_I32 + I_DEPTH]! + part.length);
      if (!reserveStack((depthAfter >> 3) + 1)) throw new RangeError(`JsonScanner: cannot grow memory for a stack of ${(depthAfter >> 3) + 1} bytes`);
      v = currentViews();
      v.u8.set(part, CHUNK_PTR);
      const code = this.noteProtoKeys ? core.scanNotingKeys(part.length) : core.scan(part.length);
      if (code !== 0) return this.fail(code);
    }
    return undefined;
  }

  end(): JsonScanResult {
    if (this.failure !== undefined) return this.failure;
    if (this.summary !== undefined) return this.summary;
    // A text that ended inside a BOM's bytes: those bytes are the text (a syntax failure).
    const held = this.bomMatched;
    this.bomMatched = BOM_DECIDED;
    if (held > 0 && this.feed(UTF8_BOM.subarray(0, held)) !== undefined) return this.failure!;
    this.own();
    const code = core.finish();
    if (code !== 0) return this.fail(code);
    const { i32, f64 } = currentViews();
    const s = STATE_I32;
    const f = STATE_F64;
    const topKind = i32[s + I_TOP];
    const top = topKind === TOP_OBJECT ? 'object' : topKind === TOP_ARRAY ? 'array' : 'scalar';
    const hasResult = i32[s + I_HAS_RESULT] === 1;
    const nameFlags = i32[s + I_NAME_FLAGS]!;
    this.summary = {
      ok: true,
      depth: i32[s + I_MAX_SEEN_DEPTH]!,
      nodes: i32[s + I_NODES]!,
      top,
      members:
        top === 'object'
          ? {
              jsonrpc: i32[s + I_HAS_JSONRPC] ? [f64[f + F_JSONRPC_START]!, f64[f + F_JSONRPC_END]!] : undefined,
              id: i32[s + I_HAS_ID] ? [f64[f + F_ID_START]!, f64[f + F_ID_END]!] : undefined,
              hasResult,
              hasError: i32[s + I_HAS_ERROR] === 1,
              hasMethod: i32[s + I_HAS_METHOD] === 1,
              method: i32[s + I_HAS_METHOD] ? [f64[f + F_METHOD_START]!, f64[f + F_METHOD_END]!] : undefined,
              params: i32[s + I_HAS_PARAMS] ? [f64[f + F_PARAMS_START]!, f64[f + F_PARAMS_END]!] : undefined,
              plainKeys: i32[s + I_PLAIN_KEYS] === 1,
              structuredContent: i32[s + I_HAS_SC] && !i32[s + I_SC_ESCAPED_KEY] ? [f64[f + F_SC_START]!, f64[f + F_SC_END]!] : undefined,
              resultPlainKeys: hasResult && i32[s + I_SC_ESCAPED_KEY] === 0,
              resultEnd: i32[s + I_HAS_RESULT_END] ? f64[f + F_RESULT_END]! : undefined,
              isError: i32[s + I_HAS_IS_ERROR] ? [f64[f + F_IS_ERROR_START]!, f64[f + F_IS_ERROR_END]!] : undefined,
              resultType: i32[s + I_HAS_RESULT_TYPE] ? [f64[f + F_RESULT_TYPE_START]!, f64[f + F_RESULT_TYPE_END]!] : undefined,
              content: i32[s + I_CONTENT_ARRAY] ? contentItems(i32, f64) : undefined,
            }
          : undefined,
      textMayHoldObject: i32[s + I_TEXT_MAY_HOLD_OBJECT] === 1,
      numberMayBeLossy: i32[s + I_NUMBER_MAY_BE_LOSSY] === 1,
      repeatedName: (nameFlags & NAMES_REPEATED) !== 0,
      namesDistinct: nameFlags === 0,
      messageKeys: i32[s + I_MESSAGE_KEYS]!,
      mayHoldProtoKey: this.noteProtoKeys ? i32[s + I_PROTO_KEY] === 1 : undefined,
    };
    return this.summary;
  }

  /**
   * Puts this scanner's state in the core (saving the state of the scanner there first),
   * and returns the views of the core's memory.
   */
  private own(): typeof views {
    const v = currentViews();
    if (owner === this) return v;
    owner?.save(v);
    const saved = this.saved;
    if (saved === undefined) {
      initialState(v, this.maxDepth, this.maxNodes); // a new scanner
    } else {
      v.i32.set(saved.i32, STATE_I32);
      v.f64.set(saved.f64, STATE_F64);
      const used = (saved.i32[I_DEPTH]! + 7) >> 3;
      // The core's memory held this stack before (reserved stack only grows).
      if (used > 0) v.u8.set(saved.stack.subarray(0, used), STACK_PTR);
    }
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the core's one owner (see `owner`)
    owner = this;
    return v;
  }

  /** Copies this scanner's state out of the core (another scanner is about to use it). Internal. */
  save(v: typeof views): void {
    owner = undefined;
    // A scanner that failed or ended reads nothing from the core again.
    if (this.failure !== undefined || this.summary !== undefined) return;
    let saved = this.saved;
    if (saved === undefined) saved = this.saved = { i32: new Int32Array(I32_SLOTS), f64: new Float64Array(F64_SLOTS), stack: new Uint8Array(16) };
    saved.i32.set(v.i32.subarray(STATE_I32, STATE_I32 + I32_SLOTS));
    saved.f64.set(v.f64.subarray(STATE_F64, STATE_F64 + F64_SLOTS));
    const used = (saved.i32[I_DEPTH]! + 7) >> 3;
    if (used > saved.stack.length) saved.stack = new Uint8Array(Math.max(used, saved.stack.length * 2));
    if (used > 0) saved.stack.set(v.u8.subarray(STACK_PTR, STACK_PTR + used));
  }

  /**
   * The bytes of `chunk` the core scans while the text's start is undecided ({@link
   * bomMatched}): after a whole leading BOM, none while it may still be one, and the held
   * bytes of a partial one before `chunk` once it is not (a copy: only for such a text,
   * which the core then refuses at offset 0).
   */
  private afterBom(chunk: Uint8Array): Uint8Array {
    const held = this.bomMatched;
    const matched = matchBomStart(chunk, held);
    if (matched === UTF8_BOM.length) {
      this.bomMatched = BOM_DECIDED;
      this.bomBytes = UTF8_BOM.length;
      return chunk.subarray(UTF8_BOM.length - held);
    }
    if (matched !== NOT_BOM) {
      this.bomMatched = matched;
      return NO_BYTES;
    }
    this.bomMatched = BOM_DECIDED;
    return held === 0 ? chunk : Buffer.concat([UTF8_BOM.subarray(0, held), chunk]);
  }

  /** The failure the core reported (this scanner owns the core). */
  private fail(code: number): JsonScanFailure {
    const offset = currentViews().f64[STATE_F64 + F_FAIL_OFFSET]!;
    if (code === FAIL_SYNTAX) this.failure = { ok: false, reason: 'syntax', offset };
    else {
      const limit = code === FAIL_DEPTH ? this.maxDepth : this.maxNodes;
      this.failure = { ok: false, reason: code === FAIL_DEPTH ? 'json_depth' : 'json_nodes', limit, observed: limit + 1, offset };
    }
    return this.failure;
  }
}

/** {@link JsonScanner.bomMatched} once the text's start is past (or no BOM is dropped). */
const BOM_DECIDED = -1;
/** What {@link JsonScanner.afterBom} gives the core while a text's start may still be a BOM. */
const NO_BYTES = new Uint8Array(0);

/** Writes a new scan's state into the core (a new scanner's, or a text scan's: scanStringText). */
function initialState(v: typeof views, maxDepth: number, maxNodes: number): void {
  v.u8.fill(0, STATE_PTR, STATE_PTR + STATE_BYTES);
  v.i32[STATE_I32 + I_PLAIN_KEYS] = 1;
  v.i32[STATE_I32 + I_MAX_DEPTH] = toCoreBound(maxDepth);
  v.i32[STATE_I32 + I_MAX_NODES] = toCoreBound(maxNodes);
  v.f64[STATE_F64 + F_CAPTURE_START] = -1;
}

/** The content items recorded in the core's state (its owner ended). */
function contentItems(i32: Int32Array, f64: Float64Array): ContentItems {
  const count = i32[STATE_I32 + I_ITEM_COUNT]!;
  const bits = i32[STATE_I32 + I_ITEM_TEXT_BITS]!;
  const typeBits = i32[STATE_I32 + I_ITEM_TYPE_BITS]!;
  const texts: (ByteRange | undefined)[] = [];
  const types: (ByteRange | undefined)[] = [];
  for (let k = 0; k < Math.min(count, SCAN_CONTENT_ITEMS); k++) {
    texts.push(bits & (1 << k) ? [f64[STATE_F64 + F_ITEM_TEXT + 2 * k]!, f64[STATE_F64 + F_ITEM_TEXT + 2 * k + 1]!] : undefined);
    types.push(typeBits & (1 << k) ? [f64[STATE_F64 + F_ITEM_TYPE + 2 * k]!, f64[STATE_F64 + F_ITEM_TYPE + 2 * k + 1]!] : undefined);
  }
  return { count, plainKeys: i32[STATE_I32 + I_ITEMS_PLAIN] === 1, texts, types };
}

/** Scans a whole JSON text at once (tests, and callers that already hold the bytes). */
export function scanJson(bytes: Uint8Array, limits: JsonScanLimits | JsonScanOptions): JsonScanResult {
  const scanner = new JsonScanner(limits);
  scanner.feed(bytes);
  return scanner.end();
}

/**
 * A top-level member of an object text, as {@link scanStringText} and {@link scanTopMembers}
 * record it: offsets in the bytes scanned (for scanStringText, the text's unescaped UTF-8
 * bytes). Duplicate keys each have an entry, in the order written.
 */
export interface TextMember {
  /** The key's JSON string, quotes included. */
  readonly key: ByteRange;
  /** The value's JSON text. */
  readonly value: ByteRange;
  /** The value's first byte (`{`, `[`, `"`, `-`, a digit, `t`, `f`, `n`). */
  readonly first: number;
  /** For an array value, its number of elements (else 0). */
  readonly elements: number;
}

/** What {@link scanObjectText} found: a JSON object text within the bounds. */
export interface ObjectTextFacts {
  /**
   * The string's value as UTF-8 (what `Buffer.from(JSON.parse(string), 'utf8')` gives): a view
   * of the WebAssembly memory, valid only until the next call into this module (any scanner's
   * `feed`/`end`, the next scanObjectText): copy it out before. No copy is made here because the
   * caller copies it once, into the message it writes (a 1 MiB copy into a fresh buffer costs
   * ~0.6 ms, most of it page faults).
   */
  readonly bytes: Uint8Array;
  /** As in {@link JsonScanSummary}: false proves every number of the text round-trips. */
  readonly numberMayBeLossy: boolean;
  /** As in {@link JsonScanSummary}: the text's nesting of arrays and objects (`{}` alone: 1). */
  readonly depth: number;
  /** As in {@link JsonScanSummary}: the text's JSON values, the object itself included. */
  readonly nodes: number;
  /**
   * True when a key of the object, at any depth, is `__proto__` as written, or holds a `\u`
   * escape of one of its characters `_` `p` `r` `o` `t` (it may spell it: `"\u005f_proto__"`);
   * false proves no key is `__proto__`. Set by the scan's key reads (assembly/json-scan.ts
   * I_PROTO_KEY: a length compare per key, no pass of its own). The lift and the dedupe leave
   * such a text to the parse path (lift-text.ts judgeStringText), which decides exactly
   * (proto-key.ts). Source: a hostile trial 24, L1.
   */
  readonly mayHoldProtoKey: boolean;
}

/** What {@link scanStringText} found: the facts and the object's members. */
export interface ObjectTextScan extends ObjectTextFacts {
  /** The object's members in the order written. */
  readonly members: readonly TextMember[];
}

/**
 * The JSON string at `body[range]` (quotes included, as a successful scan of `body` gave its
 * range; `body` valid UTF-8) read as a JSON text of its own, without a JavaScript string: its
 * escapes decoded to UTF-8 and the result scanned under `limits` (the same pass as
 * {@link scanJson}), recording the top-level members in the core, where {@link textMembers}
 * and {@link textSummary} read them (until the next call into this module).
 *
 * Returns the object text's facts; `null` when its decoded UTF-8 bytes are more than
 * `maxTextBytes` (checked first, before anything is copied into the core, as extract.ts
 * readTextObject checks the size before anything else: such a text is passed over whatever it
 * holds, over a structure bound too, a lone surrogate counted as U+FFFD's 3 bytes, as
 * `Buffer.byteLength` counts the JavaScript text there: {@link decodedBytesOver});
 * {@link TEXT_OVER_BOUND} when it starts with
 * `{` (after JSON whitespace) and breaks `limits.maxDepth` or `limits.maxNodes` (what follows
 * the value that broke it is not read: it may be invalid after it); `null` when the text is no
 * JSON object otherwise (does not start with `{`, invalid before any bound breaks, a text
 * `JSON.parse` would refuse or read as no object); `undefined` when it cannot tell exactly: the
 * string holds a lone surrogate (`\ud800` alone: its JavaScript text has no UTF-8), the object
 * has more than {@link SCAN_TEXT_MEMBERS} members, or memory cannot grow for it.
 *
 * Why (issue 5, the (c) rewrite path): lifting a legacy 1 MiB text by `toString` +
 * `JSON.parse` of the message, `Buffer.from` and `JSON.parse` of the text cost ~7 ms; this
 * pass ~1 ms (src/response/lift-splice.ts; the dedupe of a byte copy too: dedupe-splice.ts).
 *
 * Memory: the core's memory grows to hold the string and its decoded bytes (room for twice
 * the string's length) and keeps that size for the process's life (a WebAssembly memory never
 * shrinks: {@link coreMemoryBytes}). Never for a text over `maxTextBytes`: its decoded length is
 * counted in JavaScript first when the string is longer than that (only then can the decoded
 * bytes be), so such a text costs no memory at all (before, a 100 MB text scanned under a
 * 4 MiB bound grew it by 200 MB, for good, then answered `null`: review 37, F4,
 * test/regressions/scan-large-text-grows-wasm-memory.test.ts). A string within the bound
 * grows it to at most twice the bound; one longer than the bound whose decoded bytes fit it
 * (escapes: up to 6 bytes written for 1 decoded) to twice its own length. The gateway scans
 * only strings of a body it holds, under `max_response_bytes`, which is also the bound here
 * (response/scanned-result.ts): at most twice `max_response_bytes` (docs/configuration.md).
 */
export function scanObjectText(
  body: Uint8Array,
  range: ByteRange,
  limits: JsonScanLimits,
  maxTextBytes = Infinity,
): ObjectTextFacts | typeof TEXT_OVER_BOUND | null | undefined {
  assertBoundLimit('scanObjectText', 'maxDepth', limits.maxDepth);
  assertBoundLimit('scanObjectText', 'maxNodes', limits.maxNodes);
  const len = range[1] - range[0] - 2;
  if (len <= 0) return null;
  // The byte bound before the core's memory grows for the text (decodedBytesOver): a string no
  // longer than the bound has no more decoded bytes than that, so only a longer one is counted.
  if (len > maxTextBytes && decodedBytesOver(body, range[0] + 1, range[1] - 1, maxTextBytes)) return null;
  const stackBytes = (Math.min(toCoreBound(limits.maxDepth), len) >> 3) + 1;
  if (!reserveStack(stackBytes)) return undefined;
  // The text region lies past `stackBytes` of stack, where a deeper scanner's stack may be;
  // and the text's scan uses the state slots: whichever scanner is in the core moves out.
  releaseCore();
  const inPtr = core.textRegion(len, stackBytes);
  if (inPtr === 0) return undefined;
  currentViews().u8.set(new Uint8Array(body.buffer, body.byteOffset + range[0] + 1, len), inPtr); // a plain view: cheaper than a Buffer's `subarray`
  const outLen = core.unescapeText(len);
  if (outLen < 0) return undefined;
  // Without a lone surrogate (outLen < 0 above) the text's UTF-8 length is the decoded bytes' length.
  if (outLen > maxTextBytes) return null;
  const out = core.textOut();
  const v = currentViews();
  let first = out;
  while (first < out + outLen && isJsonSpace(v.u8[first]!)) first++;
  if (first === out + outLen || v.u8[first] !== 0x7b) return null;
  // A scan of its own, with the top-level member table (not a JsonScanner: none of its summary is needed).
  const top = scanTextOut(outLen, limits);
  if (top === undefined || top === TEXT_OVER_BOUND) return top;
  if (top !== 'object') return null;
  const s = STATE_I32;
  return {
    bytes: v.u8.subarray(out, out + outLen),
    numberMayBeLossy: v.i32[s + I_NUMBER_MAY_BE_LOSSY] === 1,
    depth: v.i32[s + I_MAX_SEEN_DEPTH]!,
    nodes: v.i32[s + I_NODES]!,
    mayHoldProtoKey: v.i32[s + I_PROTO_KEY] === 1,
  };
}

/** `Buffer#indexOf` of a byte, for a plain Uint8Array too (native; `Uint8Array#indexOf` is far slower on Node 20). */
const indexOfByte = Buffer.prototype.indexOf as (this: Uint8Array, value: number, from: number) => number;

/**
 * Whether the JSON string content `bytes[start, end)` (no quotes; valid, as a successful scan
 * found it) decodes to more than `max` UTF-8 bytes: each byte outside an escape is one, a
 * `\uXXXX` escape 1-3 (a surrogate pair of them 4; a lone surrogate 3, U+FFFD's, as
 * `Buffer.byteLength` counts it), any other escape 1. Counted without the core (so its memory
 * does not grow: {@link scanObjectText}): one native search per backslash, stopping once over.
 */
function decodedBytesOver(bytes: Uint8Array, start: number, end: number, max: number): boolean {
  let n = 0;
  let at = start;
  for (;;) {
    const esc = indexOfByte.call(bytes, BACKSLASH, at);
    if (esc < 0 || esc >= end) return n + (end - at) > max;
    n += esc - at;
    if (bytes[esc + 1] !== LOWER_U) {
      n += 1;
      at = esc + 2;
    } else {
      const cp = hex4At(bytes, esc + 2);
      at = esc + 6;
      if (cp >= 0xd800 && cp <= 0xdbff && bytes[at] === BACKSLASH && bytes[at + 1] === LOWER_U) {
        const low = hex4At(bytes, at + 2);
        if (low >= 0xdc00 && low <= 0xdfff) {
          n += 4;
          at += 6;
          continue;
        }
      }
      n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
    }
    if (n > max) return true;
  }
}

/** The four hex digits at `bytes[at]` as a number (valid JSON: they are hex digits). */
function hex4At(bytes: Uint8Array, at: number): number {
  let v = 0;
  for (let k = at; k < at + 4; k++) {
    const b = bytes[k]!;
    v = (v << 4) | (b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x61 + 10);
  }
  return v;
}
const LOWER_U = 0x75;

/** {@link scanObjectText} with the object's members read out (tests, and a caller that needs them all); `null` for a text over a bound too. */
export function scanStringText(body: Uint8Array, range: ByteRange, limits: JsonScanLimits): ObjectTextScan | null | undefined {
  const facts = scanObjectText(body, range, limits);
  if (facts === TEXT_OVER_BOUND) return null;
  return facts == null ? facts : { ...facts, members: textMembers() };
}

/**
 * {@link scanObjectText}'s answer for a text that starts as an object and breaks the depth or
 * node bound: the lift's walk ends there (extract.ts findLiftableTextOrBound; hostile trial
 * 38, F1), where a text that is no object is passed over.
 */
export const TEXT_OVER_BOUND = 'over_bound';

/** The object does not get a summary: its only key is `adcp_error` (src/mcp/lift-text.ts). */
export const ADCP_ERROR_ONLY = 'adcp_error_only';

/**
 * The summary's JSON string (src/mcp/summary.ts summaryJsonString, quotes included) of the
 * object the last {@link scanObjectText} scanned, written by the core from its member table
 * (assembly/text-summary.ts) for an object whose keys are plain ASCII (no escape, none twice,
 * none starting with a digit): a view of the core's memory, valid only until the next call
 * into this module, so copy it out before. {@link ADCP_ERROR_ONLY} when its only key is
 * `adcp_error`; `undefined` for any other object, which summary.ts then summarizes from
 * {@link textMembers}. `serializedBytes`: the text's UTF-8 length (the sentence states it).
 */
export function textSummary(serializedBytes: number): Uint8Array | typeof ADCP_ERROR_ONLY | undefined {
  if (serializedBytes > UNBOUNDED) return undefined;
  const n = core.textSummary(serializedBytes);
  if (n === SUMMARY_ADCP_ERROR_ONLY) return ADCP_ERROR_ONLY;
  if (n < 0) return undefined;
  const at = core.summaryOut();
  return currentViews().u8.subarray(at, at + n);
}
/** assembly/text-summary.ts SUMMARY_ADCP_ERROR_ONLY. */
const SUMMARY_ADCP_ERROR_ONLY = -2;

/** What {@link scanTopMembers} found: a JSON text within the bounds. */
export interface TopMembersScan {
  /** Kind of the top-level value. */
  readonly top: 'object' | 'array' | 'scalar';
  /** Values in the text, the top-level one included (an empty array: 1). */
  readonly nodes: number;
  /** Deepest nesting of arrays and objects in the text (`{}` alone: 1, a scalar: 0), as json-bounds.ts checkJsonBounds measures it. */
  readonly depth: number;
  /** For an object, its members in the order written (offsets in the bytes scanned); empty otherwise. */
  readonly members: readonly TextMember[];
}

/**
 * `bytes` (a whole JSON text) scanned under `limits` in one pass, recording the members of a
 * top-level object, as {@link scanStringText} records a text's (no JavaScript value is made).
 *
 * Returns the facts; `null` when the bytes are not a JSON text within the limits (empty,
 * invalid, over a bound: {@link scanJson} would fail); `undefined` when it cannot tell
 * exactly: the object has more than {@link SCAN_TEXT_MEMBERS} members, or memory cannot grow.
 * ({@link scanTopObject} tells these apart.)
 *
 * Why (issue 5): the JSON-RPC peek of a host request (request/peek.ts) was `JSON.parse` of
 * the whole body, every argument of a large request (a 4 MiB `sync_creatives`) made a
 * JavaScript value only to read three members: 71-99 ms of the event loop there, 11 ms
 * with this (request/peek.ts PEEK_SCAN_MIN_BYTES).
 *
 * Memory: as scanStringText (the same region of the core, twice the length of `bytes`).
 */
export function scanTopMembers(bytes: Uint8Array, limits: JsonScanLimits): TopMembersScan | null | undefined {
  const scan = scanTopObject(bytes, limits);
  if (scan === TEXT_INVALID || scan === TEXT_OVER_BOUND) return null;
  return scan?.members === undefined ? undefined : (scan as TopMembersScan);
}

/**
 * What {@link scanTopObject} found for a valid JSON text within the bounds whose top-level
 * object has more members than the scan's table keeps ({@link SCAN_TEXT_MEMBERS}): no member
 * is recorded, only how many are written.
 */
export interface WideTopObjectScan {
  readonly top: 'object';
  /** As in {@link TopMembersScan}. */
  readonly nodes: number;
  /** As in {@link TopMembersScan}. */
  readonly depth: number;
  /** None: the table holds only the first members. */
  readonly members: undefined;
  /** The members written in the object (repeated keys each counted), more than {@link SCAN_TEXT_MEMBERS}. */
  readonly memberCount: number;
}

/** {@link scanTopObject}'s answer for bytes that are no JSON text (empty, or invalid before any bound breaks). */
export const TEXT_INVALID = 'invalid';

/**
 * {@link scanTopMembers} telling its `null` and `undefined` apart: {@link TEXT_INVALID} for
 * bytes that are no JSON text (empty, or invalid before a bound breaks: `JSON.parse` would
 * throw, json-scan-wasm.test.ts checks the scan's validity against it), {@link TEXT_OVER_BOUND}
 * when they break `limits.maxDepth` or `limits.maxNodes` first, a {@link WideTopObjectScan}
 * (the member count, no members) for an object of more members than the table keeps, and
 * `undefined` only when memory cannot grow.
 *
 * Why: a host request whose top-level object had 99,993 members (1.09 MB) was left to
 * `JSON.parse` by the peek, ~230 ms of the event loop for each (a hostile trial 54:
 * request/peek.ts MAX_MESSAGE_MEMBERS, test/regressions/wide-request-object-stalls-event-loop.test.ts).
 */
export function scanTopObject(bytes: Uint8Array, limits: JsonScanLimits): TopMembersScan | WideTopObjectScan | typeof TEXT_INVALID | typeof TEXT_OVER_BOUND | undefined {
  assertBoundLimit('scanTopMembers', 'maxDepth', limits.maxDepth);
  assertBoundLimit('scanTopMembers', 'maxNodes', limits.maxNodes);
  const len = bytes.length;
  if (len === 0) return TEXT_INVALID;
  const stackBytes = (Math.min(toCoreBound(limits.maxDepth), len) >> 3) + 1;
  if (!reserveStack(stackBytes)) return undefined;
  releaseCore();
  if (core.textRegion(len, stackBytes) === 0) return undefined;
  currentViews().u8.set(bytes, core.textOut());
  const top = scanTextOut(len, limits);
  if (top === TEXT_OVER_BOUND) return top;
  if (top === null) return TEXT_INVALID;
  const i32 = currentViews().i32;
  const nodes = i32[STATE_I32 + I_NODES]!;
  const depth = i32[STATE_I32 + I_MAX_SEEN_DEPTH]!;
  // scanTextOut's undefined: an object of more members than the table keeps (all counted).
  if (top === undefined) return { top: 'object', nodes, depth, members: undefined, memberCount: i32[STATE_I32 + I_TABLE_COUNT]! };
  return { top, nodes, depth, members: top === 'object' ? textMembers() : [] };
}

/**
 * Scans the `len` bytes at the core's `textOut()` as one JSON text under `limits`, with the
 * top-level member table: the kind of its top-level value; {@link TEXT_OVER_BOUND} when it
 * breaks the depth or node bound, null when invalid before that, undefined when an object has
 * more members than the table keeps.
 */
function scanTextOut(len: number, limits: JsonScanLimits): TopMembersScan['top'] | typeof TEXT_OVER_BOUND | null | undefined {
  const v = currentViews();
  initialState(v, limits.maxDepth, limits.maxNodes);
  v.i32[STATE_I32 + I_TABLE] = 1;
  const failed = core.scanText(len) || core.finish();
  if (failed !== 0) return failed === FAIL_SYNTAX ? null : TEXT_OVER_BOUND;
  const topCode = v.i32[STATE_I32 + I_TOP];
  if (topCode !== TOP_OBJECT) return topCode === TOP_ARRAY ? 'array' : 'scalar';
  return v.i32[STATE_I32 + I_TABLE_COUNT]! > SCAN_TEXT_MEMBERS ? undefined : 'object';
}

/** The members of the object the last text scan read (scanObjectText, scanTopMembers), from the core's table. */
export function textMembers(): TextMember[] {
  const v = currentViews();
  const count = v.i32[STATE_I32 + I_TABLE_COUNT]!;
  const members: TextMember[] = [];
  for (let m = 0; m < count; m++) {
    const at = TABLE_I32 + m * MEMBER_FIELDS;
    members.push({
      key: [v.i32[at]!, v.i32[at + 1]!],
      value: [v.i32[at + 2]!, v.i32[at + 3]!],
      first: v.i32[at + 4]!,
      elements: v.i32[at + 5]!,
    });
  }
  return members;
}

function isJsonSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}
