// AssemblyScript source of the JSON scan core: compiled to WebAssembly by `npm run build:wasm`
// (scripts/build-wasm.ts) into src/mcp/json-scan-wasm.ts, which src/mcp/json-scan.ts loads.
// test/unit/json-scan-wasm-build.test.ts fails when that file is not what this source compiles to.
//
// One incremental, validating pass over a JSON text fed in chunks: the RFC 8259 grammar as
// `JSON.parse(bytes.toString('utf8'))` accepts it, the depth/node bounds, and the facts the
// JSON stage needs (src/mcp/json-scan.ts documents them: top-level `jsonrpc`/`id`/`method` ranges,
// `result`/`error` presence, `result.structuredContent` range, the ranges of
// `result.isError`, `result.resultType` and of each `result.content` item's `text` and `type`
// strings, `textMayHoldObject`, `numberMayBeLossy`, member names read twice in one message
// object, a key that is or may be `__proto__`). String contents, most of an MCP message, are
// skipped 16 bytes at a time (a long string: 64) with SIMD compares (quote, backslash, control
// character); below depth 2, compact members (`"key":"value",`) are read in one run, numbers
// and literals whole.
//
// Why WebAssembly (issue 5, measured): the same scan in JavaScript ran at ~1.8 ms per MiB of
// a get_products result, more than the whole pass-through proxy spends on that MiB; a plain
// JavaScript byte loop alone costs ~1.3 ms/MiB on the reference machine.
//
// Protocol with the JavaScript side (all offsets in bytes):
// - `chunkPtr()`: where the caller copies a chunk (at most CHUNK_CAPACITY bytes) before `scan`
//   (which writes 4 zero bytes right after it, in the area's slack: scanChunk).
// - `statePtr()`: the scanner state, I32_SLOTS int32 slots (eight of them, from I_KEY, hold
//   the bytes of the key being read) then F64_SLOTS float64 slots (slot numbers below, mirrored in
//   src/mcp/json-scan.ts). The state of the scanner being fed is
//   there during a call (the caller keeps it there between calls of the same scanner and
//   swaps states when another scanner is fed); one instance serves every scanner of the
//   process, one call at a time.
// - `stackPtr()`: the container stack, one bit per open array/object (1 = object), bit d for
//   depth d + 1; `reserveStack(bytes)` grows memory so that many bytes fit.
// - `scan(len)`: scans the chunk; returns the failure code (0 none).
// - `finish()`: the end of the text; returns the failure code.
// - A JSON string's content as a JSON text of its own (the text of a legacy tool result, which
//   the JSON stage lifts into `structuredContent` without a JS string; src/mcp/json-scan.ts
//   scanStringText): `textRegion(len, stackBytes)` makes room past the stack and returns
//   where the caller copies the string's content (no quotes); `unescapeText(len)` decodes its
//   escapes into UTF-8 at `textOut()`; `scanText(len)` scans those bytes in one call, like
//   `scan` but in place, with the top-level member table (I_TABLE) recorded when asked.

import { MEMBER_FIELDS, M_ELEMENTS, M_FIRST, M_KEY_END, M_KEY_START, M_VALUE_END, M_VALUE_START, SUMMARY_OUT_BYTES, SUMMARY_UNDECIDED, writeSummary } from './text-summary';

// Int32 slots.
const I_STATE: i32 = 0;
const I_NUMBER_STATE: i32 = 1;
const I_NUMBER_CHARS: i32 = 2;
const I_LITERAL: i32 = 3;
const I_LITERAL_POS: i32 = 4;
const I_UNICODE_DIGITS: i32 = 5;
const I_DEPTH: i32 = 6;
const I_MAX_SEEN_DEPTH: i32 = 7;
const I_NODES: i32 = 8;
const I_TOP: i32 = 9;
const I_STRING_IS_KEY: i32 = 10;
const I_KEY_LENGTH: i32 = 11;
const I_KEY_ESCAPED: i32 = 12;
const I_VALUE_OF_TEXT_KEY: i32 = 13;
const I_CAPTURE_KEY: i32 = 14;
const I_CAPTURE_DEPTH: i32 = 15;
const I_RESULT_PENDING: i32 = 16;
const I_IN_RESULT: i32 = 17;
const I_SC_ESCAPED_KEY: i32 = 18;
const I_HAS_RESULT: i32 = 19;
const I_HAS_ERROR: i32 = 20;
const I_PLAIN_KEYS: i32 = 21;
const I_TEXT_MAY_HOLD_OBJECT: i32 = 22;
const I_NUMBER_MAY_BE_LOSSY: i32 = 23;
const I_MAX_DEPTH: i32 = 24;
const I_MAX_NODES: i32 = 25;
const I_FAILURE: i32 = 26;
const I_HAS_JSONRPC: i32 = 27;
const I_HAS_ID: i32 = 28;
const I_HAS_SC: i32 = 29;
// `result.content` (the last `content` of the last `result`), for the JSON stage's splice:
const I_CONTENT_STATE: i32 = 30; // CONTENT_* below
const I_ITEM_COUNT: i32 = 31; // elements begun in the content array
const I_ITEMS_PLAIN: i32 = 32; // 0 once a key of an item object had an escape
const I_ITEM_TEXT_BITS: i32 = 33; // bit k: item k (< MAX_ITEMS) has a string `text`, range in F_ITEM_TEXT
const I_TEXT_PENDING: i32 = 34; // an item's `text` key was read: its value is next
const I_TEXT_CAPTURE: i32 = 35; // that value is a string being read
const I_HAS_RESULT_END: i32 = 36;
const I_CONTENT_ARRAY: i32 = 37; // the last `content` of `result` is an array
// The top-level member table (a text being lifted: its keys, array lengths, `status`):
const I_TABLE: i32 = 38; // 1: record the members of a top-level object in TABLE
const I_TABLE_COUNT: i32 = 39; // members begun (past MAX_MEMBERS only counted)
/** Slots 40..47 hold the first bytes of the key being read (up to 32 bytes, KEY_BYTES_KEPT used), so they travel with the state. */
const I_KEY: i32 = 40;
// The checks of a tool result read from the scan (src/response/scanned-result.ts):
const I_ITEM_TYPE_BITS: i32 = 48; // bit k: item k (< MAX_ITEMS) has a string `type`, range in F_ITEM_TYPE
const I_TYPE_PENDING: i32 = 49; // an item's `type` key was read: its value is next
const I_TYPE_CAPTURE: i32 = 50; // that value is a string being read
const I_HAS_IS_ERROR: i32 = 51; // the last `result` has an `isError` member, range in F_IS_ERROR_*
const I_HAS_RESULT_TYPE: i32 = 52; // the last `result` has a `resultType` member, range in F_RESULT_TYPE_*
const I_HAS_METHOD: i32 = 53; // the top-level object has a `method` member (a message with it is no response)
// Repeated member names (src/mcp/json-scan.ts JsonScanSummary.repeatedName, namesDistinct, messageKeys):
const I_NAMES_SEEN: i32 = 54; // BIT_* of the names read in the message object, the last `result` and the content item being read
const I_NAME_FLAGS: i32 = 55; // NAMES_REPEATED, NAMES_UNPROVED
const I_MESSAGE_KEYS: i32 = 56; // keys of the message objects as written (the top-level object, or each object element of a top-level array)
/**
 * 1 once a key at any depth is `__proto__` as written, or holds a `\u` escape of one of its
 * characters (`\u005f`, `\u0070`: it may spell `__proto__`; escapesProtoChar). Complete only
 * for `scanText` and `scanNotingKeys` (scanChunk `noteKeys`). src/mcp/json-scan.ts
 * ObjectTextFacts.mayHoldProtoKey: the lift and the dedupe leave such a text to the parse
 * path, which decides exactly (src/mcp/proto-key.ts).
 */
const I_PROTO_KEY: i32 = 57;
/** The hex digits read so far of a key's `\u` escape cut by a chunk's end, one byte each (token; I_PROTO_KEY). */
const I_ESCAPE_DIGITS: i32 = 58;
/** The top-level object has a `params` member (unescaped key), range in F_PARAMS_* (src/response/server-request-id.ts sellerCancelledIdOf). */
const I_HAS_PARAMS: i32 = 59;
const I32_SLOTS: i32 = 60;
// Float64 slots (absolute byte offsets in the text).
const F_CONSUMED: i32 = 0;
const F_CAPTURE_START: i32 = 1;
const F_JSONRPC_START: i32 = 2;
const F_JSONRPC_END: i32 = 3;
const F_ID_START: i32 = 4;
const F_ID_END: i32 = 5;
const F_SC_START: i32 = 6;
const F_SC_END: i32 = 7;
const F_FAIL_OFFSET: i32 = 8;
const F_RESULT_END: i32 = 9; // the `}` that closes the last `result` object
const F_ITEM_START: i32 = 10; // start of the item `text` string being read
const F_TYPE_START: i32 = 11; // start of the item `type` string being read
const F_IS_ERROR_START: i32 = 12; // [start, end) of the last `result`'s last `isError` value
const F_IS_ERROR_END: i32 = 13;
const F_RESULT_TYPE_START: i32 = 14; // [start, end) of the last `result`'s last `resultType` value
const F_RESULT_TYPE_END: i32 = 15;
const F_ITEM_TEXT: i32 = 16; // [start, end) of item k's `text` string at 16 + 2k
const F_ITEM_TYPE: i32 = 48; // [start, end) of item k's `type` string at 48 + 2k
const F_METHOD_START: i32 = 80; // [start, end) of the top-level object's last `method` value
const F_METHOD_END: i32 = 81;
const F_PARAMS_START: i32 = 82; // [start, end) of the top-level object's last `params` value
const F_PARAMS_END: i32 = 83;
const F64_SLOTS: i32 = 84;
/** Items of `result.content` whose `text` and `type` ranges are kept (the scan-based rewrites decline a result with more). */
const MAX_ITEMS: i32 = 16;
/** Members of a top-level object recorded in TABLE. */
const MAX_MEMBERS: i32 = 64;
/**
 * Int32 fields of a TABLE entry (offsets in the scanned text): the key's string (quotes
 * included) [start, end), the value [start, end), the value's first byte, and for an array
 * value its number of elements.
 */
// MEMBER_FIELDS and the M_* field numbers: assembly/text-summary.ts, which reads the table too.

// Names whose repeat the scan tells exactly (I_NAMES_SEEN bits). A message object's: the
// JSON-RPC 2.0 members (§4, §5), and BIT_OTHER for any other name: a second other name in
// the same object cannot be told from a repeat without its bytes (the scan keeps none), so it
// leaves the names unproved (NAMES_UNPROVED: the caller counts the parsed members), as a key
// written with an escape does. Those of the last `result` and of the content item being read
// that the rewrite reads (src/response/rewrite.ts, splice.ts). A key equal to one of these
// names (`params` aside) only under Go's case folding (ASCII case, `ſ` as `s`) counts as its
// repeat (caseVariant).
const BIT_JSONRPC: i32 = 1;
const BIT_ID: i32 = 2;
const BIT_RESULT: i32 = 4;
const BIT_ERROR: i32 = 8;
const BIT_METHOD: i32 = 16;
const BIT_PARAMS: i32 = 32;
const BIT_OTHER: i32 = 64;
const BIT_SC: i32 = 1 << 8;
const BIT_IS_ERROR: i32 = 1 << 9;
const BIT_RESULT_TYPE: i32 = 1 << 10;
const BIT_CONTENT: i32 = 1 << 11;
const BIT_TEXT: i32 = 1 << 12;
const BIT_TYPE: i32 = 1 << 13;
const RESULT_BITS: i32 = BIT_SC | BIT_IS_ERROR | BIT_RESULT_TYPE | BIT_CONTENT;
const ITEM_BITS: i32 = BIT_TEXT | BIT_TYPE;
/** I_NAME_FLAGS: a name above was read twice in one object. */
const NAMES_REPEATED: i32 = 1;
/**
 * I_NAME_FLAGS: a key written with an escape in a message object, the last `result` or a
 * `content` item, or a second other name in a message object.
 */
const NAMES_UNPROVED: i32 = 2;


const CONTENT_NONE: i32 = 0;
const CONTENT_PENDING: i32 = 1; // `content` key read in `result`: its value is next
const CONTENT_OPEN: i32 = 2; // inside that array

// Failure codes.
const FAIL_SYNTAX: i32 = 1;
const FAIL_DEPTH: i32 = 2;
const FAIL_NODES: i32 = 3;

// Scan states (same meaning as the former JavaScript scanner's).
const S_VALUE: i32 = 0; // a value (start, after `:`, after `,` in an array)
const S_VALUE_OR_CLOSE: i32 = 1; // after `[`
const S_KEY_OR_CLOSE: i32 = 2; // after `{`
const S_KEY: i32 = 3; // after `,` in an object
const S_COLON: i32 = 4; // after a key
const S_AFTER_VALUE: i32 = 5; // `,` or the container's closing bracket
const S_DONE: i32 = 6; // the top-level value is complete: whitespace only
const S_STRING: i32 = 7;
const S_ESCAPE: i32 = 8;
const S_UNICODE: i32 = 9;
const S_NUMBER: i32 = 10;
const S_LITERAL: i32 = 11;

// Number sub-states (RFC 8259 §6).
const N_MINUS: i32 = 0; // after `-`: a digit must follow
const N_ZERO: i32 = 1; // a leading 0: no more integer digits
const N_INT: i32 = 2;
const N_DOT: i32 = 3; // after `.`: a digit must follow
const N_FRAC: i32 = 4;
const N_EXP_MARK: i32 = 5; // after `e`/`E`: sign or digit
const N_EXP_SIGN: i32 = 6; // after the exponent sign: a digit must follow
const N_EXP: i32 = 7;

/** Number tokens longer than this may not round-trip (`numberMayBeLossy`). */
const SAFE_NUMBER_CHARS: i32 = 15;
/** Longest top-level key the scan compares (`structuredContent`). */
const MEMBER_KEY_MAX: i32 = 17;
/** Bytes of a key cut by a chunk's end kept in KEY: the longest key compared, `ſtructuredContent` (caseVariant). */
const KEY_BYTES_KEPT: i32 = MEMBER_KEY_MAX + 1;

const TOP_OBJECT: i32 = 1;
const TOP_ARRAY: i32 = 2;
const TOP_SCALAR: i32 = 3;

const CHUNK_CAPACITY: i32 = 65536;

const STATE: usize = memory.data(I32_SLOTS * 4 + F64_SLOTS * 8, 16);
const F64_BASE: usize = STATE + <usize>(I32_SLOTS * 4);
const KEY: usize = STATE + <usize>(I_KEY * 4);
// 16 bytes of slack past the capacity: the SIMD loads never read outside the area.
const CHUNK: usize = memory.data(CHUNK_CAPACITY + 16, 16);
const TABLE: usize = memory.data(MAX_MEMBERS * MEMBER_FIELDS * 4, 16);
/** Where `textSummary` writes (assembly/text-summary.ts). */
const SUMMARY_OUT: usize = memory.data(SUMMARY_OUT_BYTES, 16);
// `true`, `false`, `null`, each at a fixed offset of 8.
const LITERALS: usize = memory.data<u8>([0x74, 0x72, 0x75, 0x65, 0, 0, 0, 0, 0x66, 0x61, 0x6c, 0x73, 0x65, 0, 0, 0, 0x6e, 0x75, 0x6c, 0x6c, 0, 0, 0, 0]);
const LITERAL_LENGTHS: usize = memory.data<u8>([4, 5, 4, 0]);
// Key names compared at the top level and in `result`.
const NAME_JSONRPC: usize = memory.data<u8>([0x6a, 0x73, 0x6f, 0x6e, 0x72, 0x70, 0x63]);
const NAME_ID: usize = memory.data<u8>([0x69, 0x64]);
const NAME_RESULT: usize = memory.data<u8>([0x72, 0x65, 0x73, 0x75, 0x6c, 0x74]);
const NAME_ERROR: usize = memory.data<u8>([0x65, 0x72, 0x72, 0x6f, 0x72]);
const NAME_METHOD: usize = memory.data<u8>([0x6d, 0x65, 0x74, 0x68, 0x6f, 0x64]);
const NAME_PARAMS: usize = memory.data<u8>([0x70, 0x61, 0x72, 0x61, 0x6d, 0x73]);
/** `text` as a little-endian u32. */
const TEXT_U32: u32 = 0x74786574;
/** `true`, `null` and the first four bytes of `false` as little-endian u32s (the inline literal path of scanChunk). */
const TRUE_U32: u32 = 0x65757274;
const NULL_U32: u32 = 0x6c6c756e;
const FALS_U32: u32 = 0x736c6166;
const NAME_CONTENT: usize = memory.data<u8>([0x63, 0x6f, 0x6e, 0x74, 0x65, 0x6e, 0x74]);
const NAME_TEXT: usize = memory.data<u8>([0x74, 0x65, 0x78, 0x74]);
const NAME_TYPE: usize = memory.data<u8>([0x74, 0x79, 0x70, 0x65]);
const NAME_IS_ERROR: usize = memory.data<u8>([0x69, 0x73, 0x45, 0x72, 0x72, 0x6f, 0x72]);
const NAME_RESULT_TYPE: usize = memory.data<u8>([0x72, 0x65, 0x73, 0x75, 0x6c, 0x74, 0x54, 0x79, 0x70, 0x65]);
const NAME_SC: usize = memory.data<u8>([0x73, 0x74, 0x72, 0x75, 0x63, 0x74, 0x75, 0x72, 0x65, 0x64, 0x43, 0x6f, 0x6e, 0x74, 0x65, 0x6e, 0x74]);
/** `__pr` and `oto_` as little-endian u32s (the first 8 of the 9 bytes of `__proto__`; isProtoKey). */
const PROTO_HEAD_U32: u32 = 0x72705f5f;
const PROTO_MID_U32: u32 = 0x5f6f746f;

const STACK: usize = (__heap_base + 15) & ~<usize>15;

// The state, in globals while a call runs (loaded from / saved to STATE).
let state: i32 = 0;
let numberState: i32 = 0;
let numberChars: i32 = 0;
let literal: i32 = 0;
let literalPos: i32 = 0;
let unicodeDigits: i32 = 0;
let depth: i32 = 0;
let maxSeenDepth: i32 = 0;
let nodes: i32 = 0;
let top: i32 = 0;
let stringIsKey: i32 = 0;
let keyLength: i32 = 0;
/** Within a call: where the current key's bytes start in the chunk (unescaped keys only). */
let keyStart: usize = 0;
/** Within a call: the key's bytes to compare (the chunk, or KEY when the key was cut by a chunk's end). */
let keyPtr: usize = 0;
let keyEscaped: i32 = 0;
let valueOfTextKey: i32 = 0;
let captureKey: i32 = 0;
let captureDepth: i32 = 0;
let resultPending: i32 = 0;
let inResult: i32 = 0;
let scEscapedKey: i32 = 0;
let hasResult: i32 = 0;
let hasError: i32 = 0;
let plainKeys: i32 = 0;
let textMayHoldObject: i32 = 0;
let numberMayBeLossy: i32 = 0;
let maxDepth: i32 = 0;
let maxNodes: i32 = 0;
let failure: i32 = 0;
let hasJsonrpc: i32 = 0;
let hasId: i32 = 0;
let hasSc: i32 = 0;
let contentState: i32 = 0;
let table: i32 = 0;
let tableCount: i32 = 0;
/** Within a call: where the bytes being scanned start (CHUNK, or the text region's output). */
let base: usize = CHUNK;
/** The text region (textRegion): the string content copied in, its unescaped bytes out. */
let textIn: usize = 0;
let textOutPtr: usize = 0;
let consumed: f64 = 0;
let captureStart: f64 = -1;
let jsonrpcStart: f64 = 0;
let jsonrpcEnd: f64 = 0;
let idStart: f64 = 0;
let idEnd: f64 = 0;
let scStart: f64 = 0;
let scEnd: f64 = 0;
let failOffset: f64 = 0;

export function chunkPtr(): usize {
  return CHUNK;
}
export function chunkCapacity(): i32 {
  return CHUNK_CAPACITY;
}
export function statePtr(): usize {
  return STATE;
}
export function stackPtr(): usize {
  return STACK;
}

/** Grows memory so that `bytes` of stack fit; false when memory cannot grow. */
export function reserveStack(bytes: i32): bool {
  const need = STACK + <usize>bytes;
  const have = <usize>memory.size() << 16;
  if (need <= have) return true;
  const pages = <i32>((need - have + 0xffff) >> 16);
  return memory.grow(pages) >= 0;
}

function getI(slot: i32): i32 {
  return load<i32>(STATE + <usize>(slot << 2));
}
function setI(slot: i32, v: i32): void {
  store<i32>(STATE + <usize>(slot << 2), v);
}
function getF(slot: i32): f64 {
  return load<f64>(F64_BASE + <usize>(slot << 3));
}
function setF(slot: i32, v: f64): void {
  store<f64>(F64_BASE + <usize>(slot << 3), v);
}

function loadState(): void {
  state = getI(I_STATE);
  numberState = getI(I_NUMBER_STATE);
  numberChars = getI(I_NUMBER_CHARS);
  literal = getI(I_LITERAL);
  literalPos = getI(I_LITERAL_POS);
  unicodeDigits = getI(I_UNICODE_DIGITS);
  depth = getI(I_DEPTH);
  maxSeenDepth = getI(I_MAX_SEEN_DEPTH);
  nodes = getI(I_NODES);
  top = getI(I_TOP);
  stringIsKey = getI(I_STRING_IS_KEY);
  keyLength = getI(I_KEY_LENGTH);
  keyEscaped = getI(I_KEY_ESCAPED);
  valueOfTextKey = getI(I_VALUE_OF_TEXT_KEY);
  captureKey = getI(I_CAPTURE_KEY);
  captureDepth = getI(I_CAPTURE_DEPTH);
  resultPending = getI(I_RESULT_PENDING);
  inResult = getI(I_IN_RESULT);
  scEscapedKey = getI(I_SC_ESCAPED_KEY);
  hasResult = getI(I_HAS_RESULT);
  hasError = getI(I_HAS_ERROR);
  plainKeys = getI(I_PLAIN_KEYS);
  textMayHoldObject = getI(I_TEXT_MAY_HOLD_OBJECT);
  numberMayBeLossy = getI(I_NUMBER_MAY_BE_LOSSY);
  maxDepth = getI(I_MAX_DEPTH);
  maxNodes = getI(I_MAX_NODES);
  failure = getI(I_FAILURE);
  hasJsonrpc = getI(I_HAS_JSONRPC);
  hasId = getI(I_HAS_ID);
  hasSc = getI(I_HAS_SC);
  contentState = getI(I_CONTENT_STATE);
  table = getI(I_TABLE);
  tableCount = getI(I_TABLE_COUNT);
  consumed = getF(F_CONSUMED);
  captureStart = getF(F_CAPTURE_START);
  jsonrpcStart = getF(F_JSONRPC_START);
  jsonrpcEnd = getF(F_JSONRPC_END);
  idStart = getF(F_ID_START);
  idEnd = getF(F_ID_END);
  scStart = getF(F_SC_START);
  scEnd = getF(F_SC_END);
  failOffset = getF(F_FAIL_OFFSET);
}

function saveState(): void {
  setI(I_STATE, state);
  setI(I_NUMBER_STATE, numberState);
  setI(I_NUMBER_CHARS, numberChars);
  setI(I_LITERAL, literal);
  setI(I_LITERAL_POS, literalPos);
  setI(I_UNICODE_DIGITS, unicodeDigits);
  setI(I_DEPTH, depth);
  setI(I_MAX_SEEN_DEPTH, maxSeenDepth);
  setI(I_NODES, nodes);
  setI(I_TOP, top);
  setI(I_STRING_IS_KEY, stringIsKey);
  setI(I_KEY_LENGTH, keyLength);
  setI(I_KEY_ESCAPED, keyEscaped);
  setI(I_VALUE_OF_TEXT_KEY, valueOfTextKey);
  setI(I_CAPTURE_KEY, captureKey);
  setI(I_CAPTURE_DEPTH, captureDepth);
  setI(I_RESULT_PENDING, resultPending);
  setI(I_IN_RESULT, inResult);
  setI(I_SC_ESCAPED_KEY, scEscapedKey);
  setI(I_HAS_RESULT, hasResult);
  setI(I_HAS_ERROR, hasError);
  setI(I_PLAIN_KEYS, plainKeys);
  setI(I_TEXT_MAY_HOLD_OBJECT, textMayHoldObject);
  setI(I_NUMBER_MAY_BE_LOSSY, numberMayBeLossy);
  setI(I_MAX_DEPTH, maxDepth);
  setI(I_MAX_NODES, maxNodes);
  setI(I_FAILURE, failure);
  setI(I_HAS_JSONRPC, hasJsonrpc);
  setI(I_HAS_ID, hasId);
  setI(I_HAS_SC, hasSc);
  setI(I_CONTENT_STATE, contentState);
  setI(I_TABLE, table);
  setI(I_TABLE_COUNT, tableCount);
  setF(F_CONSUMED, consumed);
  setF(F_CAPTURE_START, captureStart);
  setF(F_JSONRPC_START, jsonrpcStart);
  setF(F_JSONRPC_END, jsonrpcEnd);
  setF(F_ID_START, idStart);
  setF(F_ID_END, idEnd);
  setF(F_SC_START, scStart);
  setF(F_SC_END, scEnd);
  setF(F_FAIL_OFFSET, failOffset);
}

// ---------------------------------------------------------------------------------------

/** Absolute offset of chunk position `p`. */
function at(p: usize): f64 {
  return consumed + <f64>(p - base);
}

function fail(p: usize): i32 {
  failure = FAIL_SYNTAX;
  failOffset = at(p);
  return failure;
}

function failBound(code: i32, p: usize): i32 {
  failure = code;
  failOffset = at(p);
  return failure;
}

function isDigit(b: i32): bool {
  return <u32>(b - 0x30) <= 9;
}

function isHexDigit(b: i32): bool {
  return <u32>(b - 0x30) <= 9 || <u32>((b | 0x20) - 0x61) <= 5;
}

/** The byte after `\` in a one-character escape: `"` `\` `/` b f n r t. */
function isSimpleEscape(b: i32): bool {
  return b == 0x22 || b == 0x5c || b == 0x2f || b == 0x62 || b == 0x66 || b == 0x6e || b == 0x72 || b == 0x74;
}

function numberAccepts(ns: i32): bool {
  return ns == N_ZERO || ns == N_INT || ns == N_FRAC || ns == N_EXP;
}

/** Bit for depth `d` (1-based) of the container stack: 1 = object. */
function stackKind(d: i32): i32 {
  const i = d - 1;
  return (<i32>load<u8>(STACK + <usize>(i >> 3)) >> (i & 7)) & 1;
}

function stackSet(d: i32, object: i32): void {
  const i = d - 1;
  const a = STACK + <usize>(i >> 3);
  const bit = 1 << (i & 7);
  const v = <i32>load<u8>(a);
  store<u8>(a, object ? v | bit : v & ~bit);
}

function keyIs(name: usize, length: i32): bool {
  if (keyLength != length) return false;
  for (let k = 0; k < length; k++) if (load<u8>(keyPtr + <usize>k) != load<u8>(name + <usize>k)) return false;
  return true;
}

/** The 9 key bytes at `p` (the caller's length test) are `__proto__` (I_PROTO_KEY). */
function isProtoKey(p: usize): bool {
  return load<u32>(p) == PROTO_HEAD_U32 && load<u32>(p + 4) == PROTO_MID_U32 && load<u8>(p + 8) == 0x5f;
}

/**
 * The 4 hex digits of a key's `\u` escape (`d0`-`d3`, as written) stand for a character of
 * `__proto__`: `_` `p` `r` `o` `t` (U+005F, U+0070, U+0072, U+006F, U+0074; I_PROTO_KEY).
 * `\u00e9` (ensure_ascii's escapes of non-ASCII keys) and other letters (`\u0061`) are not.
 */
function escapesProtoChar(d0: i32, d1: i32, d2: i32, d3: i32): bool {
  if (d0 != 0x30 || d1 != 0x30) return false;
  if (d2 == 0x35 || d2 == 0x36) return (d3 | 0x20) == 0x66; // 5f, 6f
  return d2 == 0x37 && (d3 == 0x30 || d3 == 0x32 || d3 == 0x34); // 70, 72, 74
}

/**
 * The key (of `length` bytes, the caller's length test) equals `name`, a lower-case ASCII
 * name, under ASCII case folding (`| 0x20` maps exactly `A`-`Z` onto `a`-`z` among letters;
 * every byte of a name here is a letter). Called only for a key of a judged name's length
 * that is not that name as written (caseVariant): per key, never per byte of a value.
 */
function keyFolds(name: usize, length: i32): bool {
  for (let k = 0; k < length; k++) if ((load<u8>(keyPtr + <usize>k) | 0x20) != (load<u8>(name + <usize>k) | 0x20)) return false;
  return true;
}

/**
 * The key (of `length` + 1 bytes, the caller's length test) equals `name` (`length` bytes, its
 * one `s` at `s`) under Go's folding with `ſ` (U+017F, UTF-8 C5 BF) in place of that `s`:
 * C5 BF at `s`, and the other bytes equal under ASCII case folding (keyFolds' test). The byte
 * at `s` is tested first, so an ASCII key of that length costs one compare.
 */
function keyFoldsLongS(name: usize, length: i32, s: i32): bool {
  if (load<u8>(keyPtr + <usize>s) != 0xc5 || load<u8>(keyPtr + <usize>(s + 1)) != 0xbf) return false;
  for (let k = 0; k < s; k++) if ((load<u8>(keyPtr + <usize>k) | 0x20) != (load<u8>(name + <usize>k) | 0x20)) return false;
  for (let k = s + 1; k < length; k++) if ((load<u8>(keyPtr + <usize>(k + 1)) | 0x20) != (load<u8>(name + <usize>k) | 0x20)) return false;
  return true;
}

/**
 * A key not written as any judged name of its object (the caller's exact tests failed) that
 * equals one under Go's case folding: ASCII case (`ID`, `Result`, `CONTENT`, `Text`), and
 * `ſ` (U+017F, C5 BF) as `s` (`reſult`, `jſonrpc`, `iſError`, `reſultType`,
 * `ſtructuredContent`). Go's encoding/json (the MCP Go SDK's decoder) matches member names to
 * its struct fields with bytes.EqualFold, the last match winning (golang/go#43664), and Unicode
 * simple case folding puts `ſ` with `s` and `K` (U+212A, E2 84 AA) with `k`, so a Go host reads
 * such a key as that member: NAMES_REPEATED (src/mcp/repeated-names.ts; a new user's trial 8,
 * F3 and F3 (residual)). No judged name has a `k`, and each has at most one `s`: a `ſ`
 * variant is the name's length + 1 with C5 BF at the `s` (keyFoldsLongS). `level`: 1 a
 * message object (`jsonrpc`, `id`, `method`, `result`, `error`), 2 the last `result`
 * (`content`, `structuredContent`, `isError`, `resultType`), 3 a `content` item (`text`,
 * `type`: no `s`). Cost for an ASCII key: the length switch, and for a `ſ` variant's length
 * one byte compare.
 */
function caseVariant(level: i32): void {
  let hit = false;
  const n = keyLength;
  if (level == 1) {
    if (n == 2) hit = keyFolds(NAME_ID, 2);
    else if (n == 5) hit = keyFolds(NAME_ERROR, 5);
    else if (n == 6) {
      hit = keyFolds(NAME_RESULT, 6) || keyFolds(NAME_METHOD, 6);
    } else if (n == 7) hit = keyFolds(NAME_JSONRPC, 7) || keyFoldsLongS(NAME_RESULT, 6, 2);
    else if (n == 8) hit = keyFoldsLongS(NAME_JSONRPC, 7, 1);
  } else if (level == 2) {
    if (n == 7) hit = keyFolds(NAME_CONTENT, 7) || keyFolds(NAME_IS_ERROR, 7);
    else if (n == 8) hit = keyFoldsLongS(NAME_IS_ERROR, 7, 1);
    else if (n == 10) hit = keyFolds(NAME_RESULT_TYPE, 10);
    else if (n == 11) hit = keyFoldsLongS(NAME_RESULT_TYPE, 10, 2);
    else if (n == MEMBER_KEY_MAX) hit = keyFolds(NAME_SC, MEMBER_KEY_MAX);
    else if (n == KEY_BYTES_KEPT) hit = keyFoldsLongS(NAME_SC, MEMBER_KEY_MAX, 0);
  } else if (n == 4) hit = keyFolds(NAME_TEXT, 4) || keyFolds(NAME_TYPE, 4);
  if (hit) setI(I_NAME_FLAGS, getI(I_NAME_FLAGS) | NAMES_REPEATED);
}

/**
 * The splats `specialLanes` compares with, loaded from memory once per call of a scanning
 * function: as `v128.const`s, V8 rebuilds each one (three instructions) at every use.
 */
const SPECIAL_CONSTANTS: usize = memory.data<u8>([
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
  0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
  0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c, 0x5c,
], 16);

/**
 * Lanes of `v` holding `"`, `\` or a byte < 0x20 (all ones there); `two`, `space`,
 * `backslash`: those bytes splatted (SPECIAL_CONSTANTS).
 */
function specialLanes(v: v128, two: v128, space: v128, backslash: v128): v128 {
  // `b ^ 0x02 <= 0x20` is `b < 0x20 || b == 0x22`; `x <= 0x20` as `min(x, 0x20) == x` (two
  // x64 instructions: V8 lowers `lt_u` to four).
  const x = v128.xor(v, two);
  return v128.or(i8x16.eq(i8x16.min_u(x, space), x), i8x16.eq(v, backslash));
}

/**
 * First position in [p, end) holding `"`, `\` or a byte < 0x20; `end` when none. 16 bytes,
 * then 64 at a time (a long string), then 16.
 */
function findSpecial(p: usize, end: usize): usize {
  const two = v128.load(SPECIAL_CONSTANTS);
  const space = v128.load(SPECIAL_CONSTANTS, 16);
  const backslash = v128.load(SPECIAL_CONSTANTS, 32);
  if (p + 16 <= end) {
    const bits = i8x16.bitmask(specialLanes(v128.load(p), two, space, backslash));
    if (bits != 0) return p + <usize>ctz(bits);
    p += 16;
    while (p + 64 <= end) {
      const a = v128.or(specialLanes(v128.load(p), two, space, backslash), specialLanes(v128.load(p, 16), two, space, backslash));
      const b = v128.or(specialLanes(v128.load(p, 32), two, space, backslash), specialLanes(v128.load(p, 48), two, space, backslash));
      if (v128.any_true(v128.or(a, b))) break;
      p += 64;
    }
    while (p + 16 <= end) {
      const bits = i8x16.bitmask(specialLanes(v128.load(p), two, space, backslash));
      if (bits != 0) return p + <usize>ctz(bits);
      p += 16;
    }
  }
  if (p < end) {
    // The tail: read 16 bytes (the area has 16 bytes of slack) and ignore those past `end`.
    const bits = i8x16.bitmask(specialLanes(v128.load(p), two, space, backslash)) & ((1 << <i32>(end - p)) - 1);
    if (bits != 0) return p + <usize>ctz(bits);
  }
  return end;
}

/** Keeps the key bytes [from, to) in KEY (a key cut by a chunk's end), at most KEY_BYTES_KEPT in all. */
function keyBuffer(from: usize, to: usize): void {
  let k = keyLength;
  keyLength = k + <i32>(to - from);
  for (let p = from; p < to && k < KEY_BYTES_KEPT; p++, k++) store<u8>(KEY + <usize>k, load<u8>(p));
}

/** The unescaped key ended at `q` (its closing quote): points `keyPtr` at its bytes. */
function keyEnd(q: usize): void {
  if (keyLength == 0) {
    keyPtr = keyStart;
    keyLength = <i32>(q - keyStart);
  } else {
    keyBuffer(keyStart, q);
    keyPtr = KEY;
  }
}

/** A new `content` (or `result`): forget the items of any earlier one (JSON.parse: the last key wins). */
function resetContent(): void {
  setI(I_ITEM_COUNT, 0);
  setI(I_ITEM_TEXT_BITS, 0);
  setI(I_ITEM_TYPE_BITS, 0);
  setI(I_ITEMS_PLAIN, 1);
  setI(I_CONTENT_ARRAY, 0);
  setI(I_TEXT_PENDING, 0);
  setI(I_TYPE_PENDING, 0);
}

/** Field `field` of the current (last begun) TABLE entry. */
function memberField(field: i32): usize {
  return TABLE + <usize>(((tableCount - 1) * MEMBER_FIELDS + field) << 2);
}

/** Sets a field of the current TABLE entry (entries past MAX_MEMBERS are not kept). */
function memberSet(field: i32, v: i32): void {
  if (tableCount <= MAX_MEMBERS) store<i32>(memberField(field), v);
}

function keyDone(): void {
  state = S_COLON;
  if (keyLength == 9 && !keyEscaped && isProtoKey(keyPtr)) setI(I_PROTO_KEY, 1);
  const text = keyIs(NAME_TEXT, 4);
  valueOfTextKey = keyEscaped || text ? 1 : 0;
  if (depth == 4 && contentState == CONTENT_OPEN) {
    // A key of an item object of result.content.
    if (keyEscaped) setI(I_ITEMS_PLAIN, 0);
    const k = getI(I_ITEM_COUNT) - 1;
    if (text && k < MAX_ITEMS) setI(I_ITEM_TEXT_BITS, getI(I_ITEM_TEXT_BITS) & ~(1 << k));
    setI(I_TEXT_PENDING, text ? 1 : 0);
    // A later `type` replaces an earlier one (JSON.parse: the last key wins), whatever its value.
    const type = !keyEscaped && !text && keyIs(NAME_TYPE, 4);
    if (type && k < MAX_ITEMS) setI(I_ITEM_TYPE_BITS, getI(I_ITEM_TYPE_BITS) & ~(1 << k));
    setI(I_TYPE_PENDING, type ? 1 : 0);
    if (keyEscaped) setI(I_NAME_FLAGS, getI(I_NAME_FLAGS) | NAMES_UNPROVED);
    else if (text || type) nameSeen(text ? BIT_TEXT : BIT_TYPE);
    else if (keyLength == 4) caseVariant(3);
    return;
  }
  if (depth == 2 && inResult) {
    if (keyEscaped) {
      scEscapedKey = 1;
      setI(I_NAME_FLAGS, getI(I_NAME_FLAGS) | NAMES_UNPROVED);
    } else if (keyIs(NAME_SC, MEMBER_KEY_MAX)) {
      captureKey = 3;
      nameSeen(BIT_SC);
    } else if (keyIs(NAME_IS_ERROR, 7)) {
      captureKey = 4;
      nameSeen(BIT_IS_ERROR);
    } else if (keyIs(NAME_RESULT_TYPE, 10)) {
      captureKey = 5;
      nameSeen(BIT_RESULT_TYPE);
    } else if (keyIs(NAME_CONTENT, 7)) {
      nameSeen(BIT_CONTENT);
      resetContent();
      contentState = CONTENT_PENDING;
    } else caseVariant(2);
    return;
  }
  if (depth == 2 && top == TOP_ARRAY) {
    // A key of an element of a top-level array (a batch's message).
    messageKey();
    return;
  }
  if (depth != 1) return;
  captureKey = 0;
  const bit = messageKey();
  if (bit == 0) {
    plainKeys = 0;
    return;
  }
  if (bit == BIT_JSONRPC) captureKey = 1;
  else if (bit == BIT_ID) captureKey = 2;
  else if (bit == BIT_RESULT) {
    // A new `result`: its names and its items' are read anew.
    setI(I_NAMES_SEEN, getI(I_NAMES_SEEN) & ~(RESULT_BITS | ITEM_BITS));
    hasResult = 1;
    resultPending = 1;
    // A later `result` replaces an earlier one (JSON.parse: the last key wins).
    hasSc = 0;
    setI(I_HAS_IS_ERROR, 0);
    setI(I_HAS_RESULT_TYPE, 0);
    scEscapedKey = 0;
    contentState = CONTENT_NONE;
    resetContent();
    setI(I_HAS_RESULT_END, 0);
  } else if (bit == BIT_ERROR) hasError = 1;
  else if (bit == BIT_METHOD) {
    setI(I_HAS_METHOD, 1);
    captureKey = 6;
  } else if (bit == BIT_PARAMS) {
    setI(I_HAS_PARAMS, 1);
    captureKey = 7;
  }
}

/**
 * The key just read is a member of a message object (the top-level object, or an object
 * element of a top-level array): counted (I_MESSAGE_KEYS) and its name recorded (nameSeen).
 * Returns its BIT_* (BIT_OTHER for a name that is none of the JSON-RPC members), 0 when it is
 * written with an escape (its name unknown: NAMES_UNPROVED).
 */
function messageKey(): i32 {
  setI(I_MESSAGE_KEYS, getI(I_MESSAGE_KEYS) + 1);
  if (keyEscaped) {
    setI(I_NAME_FLAGS, getI(I_NAME_FLAGS) | NAMES_UNPROVED);
    return 0;
  }
  const bit = keyIs(NAME_JSONRPC, 7)
    ? BIT_JSONRPC
    : keyIs(NAME_ID, 2)
      ? BIT_ID
      : keyIs(NAME_RESULT, 6)
        ? BIT_RESULT
        : keyIs(NAME_ERROR, 5)
          ? BIT_ERROR
          : keyIs(NAME_METHOD, 6)
            ? BIT_METHOD
            : keyIs(NAME_PARAMS, 6)
              ? BIT_PARAMS
              : BIT_OTHER;
  if (bit == BIT_OTHER) caseVariant(1);
  nameSeen(bit);
  return bit;
}

/** Records name `bit` (BIT_*) as read in its object: a second time is NAMES_REPEATED (BIT_OTHER: NAMES_UNPROVED). */
function nameSeen(bit: i32): void {
  const seen = getI(I_NAMES_SEEN);
  if (seen & bit) setI(I_NAME_FLAGS, getI(I_NAME_FLAGS) | (bit == BIT_OTHER ? NAMES_UNPROVED : NAMES_REPEATED));
  else setI(I_NAMES_SEEN, seen | bit);
}

/**
 * The captured string of the current item (`text` or `type`) ended at `absoluteEnd`: clears
 * `captureFlag` and, for items below MAX_ITEMS, keeps its range (from the F64 slot `startSlot`)
 * at `ranges` + 2k and sets bit k of `bits`.
 */
function endItemString(captureFlag: i32, startSlot: i32, ranges: i32, bits: i32, absoluteEnd: f64): void {
  setI(captureFlag, 0);
  const k = getI(I_ITEM_COUNT) - 1;
  if (k < MAX_ITEMS) {
    setF(ranges + 2 * k, getF(startSlot));
    setF(ranges + 2 * k + 1, absoluteEnd);
    setI(bits, getI(bits) | (1 << k));
  }
}

function valueDoneAt(absoluteEnd: f64): void {
  state = depth == 0 ? S_DONE : S_AFTER_VALUE;
  if (table && depth == 1 && top == TOP_OBJECT) memberSet(M_VALUE_END, <i32>absoluteEnd);
  if (depth == 4 && contentState == CONTENT_OPEN) {
    // The string value of an item's `text` or `type` ended.
    if (getI(I_TEXT_CAPTURE)) endItemString(I_TEXT_CAPTURE, F_ITEM_START, F_ITEM_TEXT, I_ITEM_TEXT_BITS, absoluteEnd);
    else if (getI(I_TYPE_CAPTURE)) endItemString(I_TYPE_CAPTURE, F_TYPE_START, F_ITEM_TYPE, I_ITEM_TYPE_BITS, absoluteEnd);
  }
  if (captureStart < 0 || depth != captureDepth) return;
  if (captureKey == 1) {
    hasJsonrpc = 1;
    jsonrpcStart = captureStart;
    jsonrpcEnd = absoluteEnd;
  } else if (captureKey == 2) {
    hasId = 1;
    idStart = captureStart;
    idEnd = absoluteEnd;
  } else if (captureKey == 3) {
    hasSc = 1;
    scStart = captureStart;
    scEnd = absoluteEnd;
  } else if (captureKey == 4) {
    setI(I_HAS_IS_ERROR, 1);
    setF(F_IS_ERROR_START, captureStart);
    setF(F_IS_ERROR_END, absoluteEnd);
  } else if (captureKey == 6) {
    setF(F_METHOD_START, captureStart);
    setF(F_METHOD_END, absoluteEnd);
  } else if (captureKey == 7) {
    setF(F_PARAMS_START, captureStart);
    setF(F_PARAMS_END, absoluteEnd);
  } else {
    setI(I_HAS_RESULT_TYPE, 1);
    setF(F_RESULT_TYPE_START, captureStart);
    setF(F_RESULT_TYPE_END, absoluteEnd);
  }
  captureStart = -1;
  captureKey = 0;
}

/**
 * String content from `p`; returns where to continue (a failure sets `failure`). Runs of
 * plain bytes are skipped 16 at a time; an escape lying whole in the chunk is checked here,
 * one cut by the chunk's end by the byte states of `scan`.
 */
function scanString(p: usize, end: usize): usize {
  const key = stringIsKey;
  if (valueOfTextKey) {
    // `p` is the value's first content byte.
    const b = load<u8>(p);
    if (b == 0x7b || b == 0x20 || b == 0x5c) textMayHoldObject = 1;
    valueOfTextKey = 0;
  }
  for (;;) {
    const q = findSpecial(p, end);
    if (q == end) {
      if (key && !keyEscaped) keyBuffer(keyStart, end);
      return end;
    }
    const b = <i32>load<u8>(q);
    if (b == 0x22) {
      if (key) {
        if (!keyEscaped) keyEnd(q);
        if (table && depth == 1) memberSet(M_KEY_END, <i32>at(q + 1));
        keyDone();
      }
      else valueDoneAt(at(q + 1));
      return q + 1;
    }
    if (b != 0x5c) {
      fail(q); // a raw control character
      return end;
    }
    if (key) keyEscaped = 1;
    if (q + 1 < end) {
      const e = <i32>load<u8>(q + 1);
      if (isSimpleEscape(e)) {
        p = q + 2;
        continue;
      }
      if (
        e == 0x75 &&
        q + 5 < end &&
        isHexDigit(load<u8>(q + 2)) &&
        isHexDigit(load<u8>(q + 3)) &&
        isHexDigit(load<u8>(q + 4)) &&
        isHexDigit(load<u8>(q + 5))
      ) {
        if (key && escapesProtoChar(load<u8>(q + 2), load<u8>(q + 3), load<u8>(q + 4), load<u8>(q + 5))) setI(I_PROTO_KEY, 1);
        p = q + 6;
        continue;
      }
    }
    // The escape runs past the chunk, or is invalid: the byte states decide.
    state = S_ESCAPE;
    return q + 1;
  }
}

/** Whether `b` continues the number; advances the number state when it does. */
function numberContinues(b: i32): bool {
  const digit = isDigit(b);
  let next: i32;
  switch (numberState) {
    case N_MINUS:
      if (!digit) return false;
      next = b == 0x30 ? N_ZERO : N_INT;
      break;
    case N_ZERO:
    case N_INT:
      if (digit && numberState == N_INT) next = N_INT;
      else if (b == 0x2e) next = N_DOT;
      else if (b == 0x65 || b == 0x45) next = N_EXP_MARK;
      else return false;
      break;
    case N_DOT:
    case N_FRAC:
      if (digit) next = N_FRAC;
      else if (b == 0x65 || b == 0x45) {
        if (numberState == N_DOT) return false;
        next = N_EXP_MARK;
      } else return false;
      break;
    case N_EXP_MARK:
      if (b == 0x2b || b == 0x2d) next = N_EXP_SIGN;
      else if (digit) next = N_EXP;
      else return false;
      break;
    default: // N_EXP_SIGN, N_EXP
      if (!digit) return false;
      next = N_EXP;
  }
  numberState = next;
  if (next == N_EXP_MARK || ++numberChars > SAFE_NUMBER_CHARS) numberMayBeLossy = 1;
  return true;
}

function beginValue(b: i32, p: usize): i32 {
  if (depth == 0) top = b == 0x7b ? TOP_OBJECT : b == 0x5b ? TOP_ARRAY : TOP_SCALAR;
  if (captureKey != 0 && captureStart < 0) {
    captureStart = at(p);
    captureDepth = depth;
  }
  if (table && top == TOP_OBJECT) {
    if (depth == 1) {
      memberSet(M_VALUE_START, <i32>at(p));
      memberSet(M_FIRST, b);
      memberSet(M_ELEMENTS, 0);
    } else if (depth == 2 && !stackKind(2) && tableCount <= MAX_MEMBERS) memberSet(M_ELEMENTS, load<i32>(memberField(M_ELEMENTS)) + 1);
  }
  if (depth == 1) {
    // An element of a top-level array: a message of its own, whose names are read anew.
    if (top == TOP_ARRAY) setI(I_NAMES_SEEN, 0);
    inResult = resultPending && b == 0x7b ? 1 : 0;
    resultPending = 0;
  } else if (contentState != CONTENT_NONE) {
    if (depth == 2) {
      // The value of result's `content`: items are kept only when it is an array.
      contentState = contentState == CONTENT_PENDING && b == 0x5b ? CONTENT_OPEN : CONTENT_NONE;
      setI(I_CONTENT_ARRAY, contentState == CONTENT_OPEN ? 1 : 0);
    } else if (contentState == CONTENT_OPEN) {
      if (depth == 3) {
        setI(I_ITEM_COUNT, getI(I_ITEM_COUNT) + 1);
        setI(I_NAMES_SEEN, getI(I_NAMES_SEEN) & ~ITEM_BITS);
      }
      else if (depth == 4 && getI(I_TEXT_PENDING)) {
        setI(I_TEXT_PENDING, 0);
        if (b == 0x22) {
          setI(I_TEXT_CAPTURE, 1);
          setF(F_ITEM_START, at(p));
        }
      } else if (depth == 4 && getI(I_TYPE_PENDING)) {
        setI(I_TYPE_PENDING, 0);
        if (b == 0x22) {
          setI(I_TYPE_CAPTURE, 1);
          setF(F_TYPE_START, at(p));
        }
      }
    }
  }
  if (b != 0x22) valueOfTextKey = 0;
  if (b == 0x7b || b == 0x5b) {
    if (depth + 1 > maxDepth) return failBound(FAIL_DEPTH, p);
    if (++nodes > maxNodes) return failBound(FAIL_NODES, p);
    depth++;
    stackSet(depth, b == 0x7b ? 1 : 0);
    if (depth > maxSeenDepth) maxSeenDepth = depth;
    state = b == 0x7b ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE;
    return 0;
  }
  // Only a byte that can start a value is a node: anything else is a syntax error, not a breach.
  if (b != 0x22 && b != 0x2d && !isDigit(b) && b != 0x74 && b != 0x66 && b != 0x6e) return fail(p);
  if (++nodes > maxNodes) return failBound(FAIL_NODES, p);
  if (b == 0x22) {
    state = S_STRING;
    stringIsKey = 0;
    return 0;
  }
  if (b == 0x2d || isDigit(b)) {
    state = S_NUMBER;
    numberState = b == 0x2d ? N_MINUS : b == 0x30 ? N_ZERO : N_INT;
    numberChars = 1;
    return 0;
  }
  for (let l = 0; l < 3; l++) {
    if (b == <i32>load<u8>(LITERALS + <usize>(l << 3))) {
      state = S_LITERAL;
      literal = l;
      literalPos = 1;
      return 0;
    }
  }
  return fail(p);
}

function beginKey(b: i32, p: usize): i32 {
  if (b != 0x22) return fail(p);
  if (table && depth == 1) {
    tableCount++;
    memberSet(M_KEY_START, <i32>at(p));
  }
  state = S_STRING;
  stringIsKey = 1;
  keyLength = 0;
  keyStart = p + 1;
  keyEscaped = 0;
  return 0;
}

function close(object: i32, p: usize): i32 {
  if (depth == 0 || stackKind(depth) != object) return fail(p);
  depth--;
  if (depth == 1) {
    if (inResult) {
      setF(F_RESULT_END, at(p));
      setI(I_HAS_RESULT_END, 1);
    }
    inResult = 0;
  } else if (depth == 2 && contentState == CONTENT_OPEN) contentState = CONTENT_NONE;
  valueDoneAt(at(p + 1));
  return 0;
}

/** A significant byte in a structural state. Returns the failure code (0 none). */
function structural(b: i32, p: usize): i32 {
  switch (state) {
    case S_VALUE:
      return beginValue(b, p);
    case S_VALUE_OR_CLOSE:
      if (b == 0x5d) return close(0, p);
      return beginValue(b, p);
    case S_KEY_OR_CLOSE:
      if (b == 0x7d) return close(1, p);
      return beginKey(b, p);
    case S_KEY:
      return beginKey(b, p);
    case S_COLON:
      if (b != 0x3a) return fail(p);
      state = S_VALUE;
      return 0;
    case S_AFTER_VALUE: {
      if (b == 0x2c) {
        state = stackKind(depth) ? S_KEY : S_VALUE;
        return 0;
      }
      if (b == 0x7d) return close(1, p);
      if (b == 0x5d) return close(0, p);
      return fail(p);
    }
    default: // S_DONE: something after the top-level value
      return fail(p);
  }
}

/**
 * The bytes of a number, a literal or an escape from `p` (states S_NUMBER, S_LITERAL,
 * S_ESCAPE, S_UNICODE), until the token ends or the chunk does. Returns where to go on
 * (a failure sets `failure`).
 */
function token(p: usize, end: usize): usize {
  while (p < end) {
    const s = state;
    const b = <i32>load<u8>(p);
    if (s == S_NUMBER) {
      const ns = numberState;
      if (ns == N_INT || ns == N_FRAC || ns == N_EXP) {
        // A run of digits at once.
        let k = p;
        while (k < end && isDigit(load<u8>(k))) k++;
        if (k > p) {
          numberChars += <i32>(k - p);
          if (numberChars > SAFE_NUMBER_CHARS) numberMayBeLossy = 1;
          p = k;
          continue;
        }
      }
      if (numberContinues(b)) {
        p++;
        continue;
      }
      if (!numberAccepts(numberState)) {
        fail(p);
        return end;
      }
      valueDoneAt(at(p));
      return p; // the byte that ended the number is structural: scanned by the caller
    }
    if (s == S_ESCAPE) {
      if (b == 0x75) {
        // A key's `\u` escape cut by a chunk's end: its digits are kept as they come (I_ESCAPE_DIGITS).
        if (stringIsKey) setI(I_ESCAPE_DIGITS, 0);
        state = S_UNICODE;
        unicodeDigits = 0;
      } else if (isSimpleEscape(b)) {
        state = S_STRING;
        return p + 1;
      } else {
        fail(p);
        return end;
      }
      p++;
      continue;
    }
    if (s == S_UNICODE) {
      if (!isHexDigit(b)) {
        fail(p);
        return end;
      }
      p++;
      if (stringIsKey) setI(I_ESCAPE_DIGITS, (getI(I_ESCAPE_DIGITS) << 8) | b);
      if (++unicodeDigits == 4) {
        if (stringIsKey) {
          const d = getI(I_ESCAPE_DIGITS);
          if (escapesProtoChar(d >>> 24, (d >> 16) & 0xff, (d >> 8) & 0xff, d & 0xff)) setI(I_PROTO_KEY, 1);
        }
        state = S_STRING;
        return p;
      }
      continue;
    }
    // S_LITERAL
    if (b != <i32>load<u8>(LITERALS + <usize>((literal << 3) + literalPos))) {
      fail(p);
      return end;
    }
    p++;
    if (++literalPos == <i32>load<u8>(LITERAL_LENGTHS + <usize>literal)) {
      valueDoneAt(at(p));
      return p;
    }
  }
  return end;
}

/** A key's string begins (its content at `at`), in the inline paths of `scanChunk`. */
function beginKeyAt(at: usize): void {
  stringIsKey = 1;
  keyLength = 0;
  keyEscaped = 0;
  keyStart = at;
}

/**
 * Scans the chunk. The hot state (state, depth, nodes) lives in locals; bytes at depth 3 and
 * deeper (the bulk of a tool result: `result.structuredContent.…`, `result.content[i].…`)
 * take the inline paths below, which do exactly what `structural` does there (no member of
 * interest, no capture can start or end below depth 2). Everything else goes through the
 * generic functions, with the locals written back first.
 *
 * `noteKeys`: a key `__proto__` read by the inline compact-member run is noted too
 * (I_PROTO_KEY complete: `scanText`, `scanNotingKeys`); not by `scan`, every seller's message
 * (a length compare per key there cost the scan of a 1 MiB result 2-5%; behind this flag, in
 * a register, ~1%; a hostile trial 24, L1). Not two compiled copies of this function: binaryen
 * then left `structural` a call (~600 more instructions per 1 KiB message, +5%).
 */
function scanChunk(len: i32, noteKeys: bool): i32 {
  let p = base;
  const end = base + <usize>len;
  // Four zero bytes past the end, in the area's slack: a compact-member look-ahead of up to 3
  // bytes reads one of them at or past `end` (a control character: no match) instead of
  // testing the bound first.
  store<u32>(end, 0);
  const two = v128.load(SPECIAL_CONSTANTS);
  const space = v128.load(SPECIAL_CONSTANTS, 16);
  const backslash = v128.load(SPECIAL_CONSTANTS, 32);
  let s = state;
  let d = depth;
  let n = nodes;
  while (p < end) {
    if (s == S_STRING) {
      if (d >= 3 && !valueOfTextKey && contentState != CONTENT_OPEN) {
        if (!stringIsKey) {
          // A string value with no escape that ends in this chunk, below depth 2. Its end: the
          // first 16 bytes looked at here (most strings are shorter; when `end` is among them,
          // the zero byte there stops the search), the rest by findSpecial (written out at each
          // of the three places: binaryen does not inline a function used more than twice).
          const qBits = i8x16.bitmask(specialLanes(v128.load(p), two, space, backslash));
          const q = qBits != 0 ? p + <usize>ctz(qBits) : p + 16 < end ? findSpecial(p + 16, end) : end;
          if (load<u8>(q) == 0x22) {
            p = q + 1;
            // Compact JSON: `,` then the next member's key, read on here.
            if (load<u8>(p) == 0x2c) {
              if (!stackKind(d)) {
                s = S_VALUE;
                p++;
                continue;
              }
              if (load<u8>(p + 1) == 0x22) {
                beginKeyAt(p + 2);
                p += 2;
                continue;
              }
              s = S_KEY;
              p++;
              continue;
            }
            s = S_AFTER_VALUE;
            continue;
          }
          // An escape or a control character (scanString from there), or the chunk's end.
          p = q;
          if (q == end) continue;
        } else if (!keyEscaped && keyLength == 0) {
          // A run of compact members `"key":"value",` read here, key by key; it stops (the
          // state set for the loop to go on) at anything else: another kind of value, a `text`
          // key (its value is looked at: scanString), an escape, whitespace, the chunk's end.
          let k = p; // the key's first content byte
          for (;;) {
            const qBits = i8x16.bitmask(specialLanes(v128.load(k), two, space, backslash));
            const q = qBits != 0 ? k + <usize>ctz(qBits) : k + 16 < end ? findSpecial(k + 16, end) : end;
            if (load<u8>(q) != 0x22) {
              // The key goes on past the chunk (q == end: scanString keeps its bytes), or
              // holds an escape or a control character.
              keyStart = k;
              p = q;
              break;
            }
            if (noteKeys && q - k == 9 && isProtoKey(k)) setI(I_PROTO_KEY, 1);
            const textKey = q - k == 4 && load<u32>(k) == TEXT_U32 ? 1 : 0;
            if (load<u8>(q + 1) != 0x3a) {
              valueOfTextKey = textKey;
              s = S_COLON;
              p = q + 1;
              break;
            }
            if (textKey || load<u8>(q + 2) != 0x22) {
              valueOfTextKey = textKey;
              s = S_VALUE;
              p = q + 2;
              break;
            }
            if (++n > maxNodes) {
              nodes = n;
              return failBound(FAIL_NODES, q + 2);
            }
            const rFrom = q + 3;
            const rBits = i8x16.bitmask(specialLanes(v128.load(rFrom), two, space, backslash));
            const r = rBits != 0 ? rFrom + <usize>ctz(rBits) : rFrom + 16 < end ? findSpecial(rFrom + 16, end) : end;
            if (load<u8>(r) != 0x22) {
              // The value goes on past the chunk (r == end), or holds an escape or a control
              // character.
              stringIsKey = 0;
              p = r;
              break;
            }
            if (load<u8>(r + 1) != 0x2c) {
              s = S_AFTER_VALUE;
              p = r + 1;
              break;
            }
            if (load<u8>(r + 2) != 0x22) {
              s = S_KEY;
              p = r + 2;
              break;
            }
            k = r + 3;
          }
          if (s != S_STRING || (p == end && !stringIsKey)) continue;
        }
      }
      state = s;
      depth = d;
      p = scanString(p, end);
      if (failure != 0) return failure;
      s = state;
      continue;
    }
    const b = <i32>load<u8>(p);
    if (s <= S_AFTER_VALUE && d >= 3 && contentState != CONTENT_OPEN) {
      if (b == 0x22) {
        if (s == S_KEY || s == S_KEY_OR_CLOSE) {
          s = S_STRING;
          beginKeyAt(p + 1);
          p++;
          continue;
        }
        if (s == S_VALUE || s == S_VALUE_OR_CLOSE) {
          if (++n > maxNodes) {
            nodes = n;
            return failBound(FAIL_NODES, p);
          }
          s = S_STRING;
          stringIsKey = 0;
          p++;
          continue;
        }
      } else if (b == 0x2c) {
        if (s == S_AFTER_VALUE) {
          s = stackKind(d) ? S_KEY : S_VALUE;
          p++;
          continue;
        }
      } else if (b == 0x3a) {
        if (s == S_COLON) {
          s = S_VALUE;
          p++;
          continue;
        }
      } else if (b == 0x7d || b == 0x5d) {
        // A close that stays at depth >= 3 (the one back to depth 2 may end a capture: generic).
        const object = b == 0x7d ? 1 : 0;
        if (d > 3 && (s == S_AFTER_VALUE || (object ? s == S_KEY_OR_CLOSE : s == S_VALUE_OR_CLOSE)) && stackKind(d) == object) {
          d--;
          p++;
          // Compact JSON: `,` then the next member's key, read on here.
          if (load<u8>(p) == 0x2c) {
            if (!stackKind(d)) {
              s = S_VALUE;
              p++;
              continue;
            }
            if (load<u8>(p + 1) == 0x22) {
              s = S_STRING;
              beginKeyAt(p + 2);
              p += 2;
              continue;
            }
            s = S_KEY;
            p++;
            continue;
          }
          s = S_AFTER_VALUE;
          continue;
        }
      } else if (b == 0x7b || b == 0x5b) {
        if (s == S_VALUE || s == S_VALUE_OR_CLOSE) {
          valueOfTextKey = 0;
          if (d + 1 > maxDepth) {
            nodes = n;
            return failBound(FAIL_DEPTH, p);
          }
          if (++n > maxNodes) {
            nodes = n;
            return failBound(FAIL_NODES, p);
          }
          d++;
          const object = b == 0x7b ? 1 : 0;
          stackSet(d, object);
          if (d > maxSeenDepth) maxSeenDepth = d;
          p++;
          // The first key, or a string first element, read on here.
          if (load<u8>(p) == 0x22) {
            if (object) {
              s = S_STRING;
              beginKeyAt(p + 1);
              p++;
              continue;
            }
            if (++n > maxNodes) {
              nodes = n;
              return failBound(FAIL_NODES, p);
            }
            s = S_STRING;
            stringIsKey = 0;
            p++;
            continue;
          }
          s = object ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE;
          continue;
        }
      } else if (b == 0x20 || b == 0x0a || b == 0x0d || b == 0x09) {
        p++;
        continue;
      } else if ((b == 0x2d || isDigit(b)) && (s == S_VALUE || s == S_VALUE_OR_CLOSE)) {
        // A number that ends in this chunk (RFC 8259 §6: `-`? then `0` or [1-9][0-9]*, then
        // `.` [0-9]+ or not, then [eE] [+-]? [0-9]+ or not; then `,` `}` `]` or whitespace).
        // Anything else (a bad number, the chunk's end) is left to the generic path from its
        // first byte. The digit runs stop at the zero byte past `end` at the latest.
        let k = b == 0x2d ? p + 1 : p;
        const first = <i32>load<u8>(k);
        let ok = true;
        let exponent = false;
        if (first == 0x30) k++;
        else if (isDigit(first)) {
          k++;
          while (isDigit(load<u8>(k))) k++;
        } else ok = false;
        if (ok && load<u8>(k) == 0x2e) {
          if (isDigit(load<u8>(k + 1))) {
            k += 2;
            while (isDigit(load<u8>(k))) k++;
          } else ok = false;
        }
        if (ok && (<i32>load<u8>(k) | 0x20) == 0x65) {
          let e = k + 1;
          const sign = <i32>load<u8>(e);
          if (sign == 0x2b || sign == 0x2d) e++;
          if (isDigit(load<u8>(e))) {
            e++;
            while (isDigit(load<u8>(e))) e++;
            k = e;
            exponent = true;
          } else ok = false;
        }
        if (ok && k < end) {
          const after = <i32>load<u8>(k);
          if (after == 0x2c || after == 0x7d || after == 0x5d || after == 0x20 || after == 0x0a || after == 0x0d || after == 0x09) {
            valueOfTextKey = 0;
            if (++n > maxNodes) {
              nodes = n;
              return failBound(FAIL_NODES, p);
            }
            if (exponent || <i32>(k - p) > SAFE_NUMBER_CHARS) numberMayBeLossy = 1;
            s = S_AFTER_VALUE;
            p = k;
            continue;
          }
        }
      } else if ((b == 0x74 || b == 0x66 || b == 0x6e) && (s == S_VALUE || s == S_VALUE_OR_CLOSE)) {
        // `true`, `false` or `null` whole in this chunk (the generic path took ~35 ns per
        // literal: ~150 MB/s on an array of them). One cut by the chunk's end reads the zero
        // bytes past `end`, matches nothing, and is left to the generic path from its first
        // byte, as is anything else starting with t, f or n. The byte after it is checked by
        // S_AFTER_VALUE, as after the generic path's literal.
        const w = load<u32>(p);
        const length: usize = w == TRUE_U32 || w == NULL_U32 ? 4 : w == FALS_U32 && load<u8>(p + 4) == 0x65 ? 5 : 0;
        if (length != 0) {
          valueOfTextKey = 0;
          if (++n > maxNodes) {
            nodes = n;
            return failBound(FAIL_NODES, p);
          }
          s = S_AFTER_VALUE;
          p += length;
          continue;
        }
      }
    }
    // The generic path.
    state = s;
    depth = d;
    nodes = n;
    if (s >= S_ESCAPE) {
      p = token(p, end);
    } else if (b == 0x20 || b == 0x0a || b == 0x0d || b == 0x09) {
      p++;
    } else {
      if (structural(b, p) != 0) return failure;
      p++;
    }
    if (failure != 0) return failure;
    s = state;
    d = depth;
    n = nodes;
  }
  state = s;
  depth = d;
  nodes = n;
  consumed += <f64>len;
  return 0;
}

/** Scans the `len` bytes at `chunkPtr()` with the state at `statePtr()`; returns the failure code (0 none). */
export function scan(len: i32): i32 {
  loadState();
  base = CHUNK;
  keyStart = CHUNK; // a key cut by the previous chunk's end goes on here
  const code = failure != 0 ? failure : scanChunk(len, false);
  saveState();
  return code;
}

/** `scan`, noting every key that is or may be `__proto__` (I_PROTO_KEY; src/mcp/json-scan.ts JsonScanOptions.noteProtoKeys). */
export function scanNotingKeys(len: i32): i32 {
  loadState();
  base = CHUNK;
  keyStart = CHUNK;
  const code = failure != 0 ? failure : scanChunk(len, true);
  saveState();
  return code;
}

/** The text ended: completes a top-level number, fails a text that ends inside a value. Returns the failure code. */
export function finish(): i32 {
  loadState();
  if (failure == 0) {
    if (state == S_NUMBER && numberAccepts(numberState)) valueDoneAt(consumed);
    if (state != S_DONE) {
      failure = FAIL_SYNTAX;
      failOffset = consumed;
    }
  }
  saveState();
  return failure;
}

// ---------------------------------------------------------------------------------------
// A JSON string's content as a JSON text (the text of a legacy tool result).

export function tablePtr(): usize {
  return TABLE;
}
export function maxMembers(): i32 {
  return MAX_MEMBERS;
}
export function textOut(): usize {
  return textOutPtr;
}

/**
 * Makes room for a string content of `len` bytes past `stackBytes` of container stack: the
 * input area (returned; the caller copies the content there) and the output area
 * (`textOut()`), each with 16 bytes of slack for the SIMD loads. 0 when memory cannot grow.
 */
export function textRegion(len: i32, stackBytes: i32): usize {
  const inPtr = (STACK + <usize>stackBytes + 31) & ~<usize>15;
  const outPtr = (inPtr + <usize>len + 31) & ~<usize>15;
  const need = outPtr + <usize>len + 16;
  const have = <usize>memory.size() << 16;
  if (need > have && memory.grow(<i32>((need - have + 0xffff) >> 16)) < 0) return 0;
  textIn = inPtr;
  textOutPtr = outPtr;
  return inPtr;
}

function hex4(p: usize): i32 {
  let v = 0;
  for (let k: usize = 0; k < 4; k++) {
    const b = <i32>load<u8>(p + k);
    if (!isHexDigit(b)) return -1;
    v = (v << 4) | (b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x61 + 10);
  }
  return v;
}

/** The byte a one-character escape stands for, or -1. */
function simpleEscape(e: i32): i32 {
  switch (e) {
    case 0x22:
    case 0x5c:
    case 0x2f:
      return e;
    case 0x62:
      return 0x08;
    case 0x66:
      return 0x0c;
    case 0x6e:
      return 0x0a;
    case 0x72:
      return 0x0d;
    case 0x74:
      return 0x09;
    default:
      return -1;
  }
}

/**
 * Decodes the `len` bytes of string content at the input area (JSON escapes, RFC 8259 §7)
 * into UTF-8 at `textOut()`; other bytes are copied as they are. Returns the output length,
 * or -1 for a lone surrogate (`\ud800` not followed by a low-surrogate escape, or a low one
 * alone: no UTF-8 for it) or a malformed escape (not after a successful scan).
 */
export function unescapeText(len: i32): i32 {
  let r = textIn;
  const end = textIn + <usize>len;
  let w = textOutPtr;
  const backslash = i8x16.splat(0x5c);
  while (r < end) {
    if (r + 16 <= end) {
      // 16 bytes at once; those from the first backslash on are written again below.
      const v = v128.load(r);
      v128.store(w, v);
      const bits = i8x16.bitmask(i8x16.eq(v, backslash));
      if (bits == 0) {
        r += 16;
        w += 16;
        continue;
      }
      const k = <usize>ctz(bits);
      r += k;
      w += k;
    } else {
      const b = load<u8>(r);
      if (b != 0x5c) {
        store<u8>(w, b);
        r++;
        w++;
        continue;
      }
    }
    // An escape at r.
    if (r + 1 >= end) return -1;
    const e = <i32>load<u8>(r + 1);
    if (e != 0x75) {
      const c = simpleEscape(e);
      if (c < 0) return -1;
      store<u8>(w, <u8>c);
      w++;
      r += 2;
      continue;
    }
    if (r + 6 > end) return -1;
    let cp = hex4(r + 2);
    if (cp < 0) return -1;
    r += 6;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      if (cp >= 0xdc00 || r + 6 > end || load<u8>(r) != 0x5c || load<u8>(r + 1) != 0x75) return -1;
      const low = hex4(r + 2);
      if (low < 0xdc00 || low > 0xdfff) return -1;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      r += 6;
    }
    if (cp < 0x80) {
      store<u8>(w, <u8>cp);
      w++;
    } else if (cp < 0x800) {
      store<u8>(w, <u8>(0xc0 | (cp >> 6)));
      store<u8>(w + 1, <u8>(0x80 | (cp & 0x3f)));
      w += 2;
    } else if (cp < 0x10000) {
      store<u8>(w, <u8>(0xe0 | (cp >> 12)));
      store<u8>(w + 1, <u8>(0x80 | ((cp >> 6) & 0x3f)));
      store<u8>(w + 2, <u8>(0x80 | (cp & 0x3f)));
      w += 3;
    } else {
      store<u8>(w, <u8>(0xf0 | (cp >> 18)));
      store<u8>(w + 1, <u8>(0x80 | ((cp >> 12) & 0x3f)));
      store<u8>(w + 2, <u8>(0x80 | ((cp >> 6) & 0x3f)));
      store<u8>(w + 3, <u8>(0x80 | (cp & 0x3f)));
      w += 4;
    }
  }
  return <i32>(w - textOutPtr);
}

/** Scans the `len` unescaped bytes at `textOut()` as one whole chunk, with the state at `statePtr()`; returns the failure code (0 none). */
export function scanText(len: i32): i32 {
  loadState();
  base = textOutPtr;
  keyStart = base;
  const code = failure != 0 ? failure : scanChunk(len, true);
  saveState();
  base = CHUNK;
  return code;
}

/**
 * After `scanText` of an object with the member table (I_TABLE): writes its summary's JSON
 * string at `summaryOut()` (assembly/text-summary.ts writeSummary) and returns its length, or
 * SUMMARY_UNDECIDED (-1: the JavaScript writer decides, also for more members than the table
 * keeps) or SUMMARY_ADCP_ERROR_ONLY (-2). `serializedBytes`: the text's UTF-8 length.
 */
export function textSummary(serializedBytes: i32): i32 {
  const count = getI(I_TABLE_COUNT);
  if (count > MAX_MEMBERS) return SUMMARY_UNDECIDED;
  return writeSummary(TABLE, count, textOutPtr, serializedBytes, SUMMARY_OUT);
}
export function summaryOut(): usize {
  return SUMMARY_OUT;
}
