/**
 * Reads the JSON-RPC facts the gateway needs from the host's request body (id, method,
 * tool name) without changing it: the original bytes are what is forwarded.
 *
 * Source: gateway issue item 4 ("the gateway reads the JSON-RPC request it forwards so that
 * a limit and an error can be tied to the request"); ARCHITECTURE §3 (refusals).
 */
import type { RpcPeek } from '../exchange.js';
import { BACKSLASH, COLON, COMMA, CR, DIGIT_0, DIGIT_9, DOT, LBRACE, LBRACKET, LF, LOWER_E, LOWER_F, LOWER_N, LOWER_T, MINUS, PLUS, QUOTE, RBRACE, RBRACKET, SPACE, TAB, UPPER_E } from '../mcp/json-bytes.js';

export const NO_BODY: RpcPeek = Object.freeze({ kind: 'none', id: null, method: undefined, toolName: undefined });

export type PeekResult =
  | { ok: true; peek: RpcPeek }
  | { ok: false; kind: 'parse_error' | 'invalid_request'; message: string; id: string | number | null };

function isId(v: unknown): v is string | number | null {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * Parses a request body (UTF-8 JSON) into a peek.
 * - not JSON -> `parse_error` (JSON-RPC -32700, HTTP 400);
 * - JSON but not a JSON-RPC message (not an object/array, no string `method` on a non-response)
 *   -> `invalid_request` (-32600, HTTP 400), with the id when one could be read;
 * - an array -> `batch` (forwarded and bounded, never rewritten).
 * A JSON-RPC *response* sent by the host (answer to a server->client request such as
 * `elicitation/create`) is a valid body: it is forwarded as a `notification`-kind peek.
 * Structure bounds are checked by the caller before this runs.
 */
export function peekJsonRpc(body: Buffer): PeekResult {
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, kind: 'parse_error', message: 'Parse error: the request body is not valid JSON.', id: null };
  }
  return peekMessage(msg);
}

/** {@link peekJsonRpc} on the parsed message (or on its top-level members that matter, {@link quickPeek}). */
function peekMessage(msg: unknown): PeekResult {
  if (Array.isArray(msg)) {
    if (msg.length === 0) {
      return { ok: false, kind: 'invalid_request', message: 'Invalid Request: empty JSON-RPC batch.', id: null };
    }
    return { ok: true, peek: { kind: 'batch', id: null, method: undefined, toolName: undefined } };
  }
  if (msg === null || typeof msg !== 'object') {
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: a JSON-RPC message must be an object.', id: null };
  }
  const m = msg as Record<string, unknown>;
  const id = Object.hasOwn(m, 'id') && isId(m.id) ? m.id : null;
  if (m.jsonrpc !== '2.0') {
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: "jsonrpc" must be "2.0".', id };
  }
  if (typeof m.method !== 'string') {
    if (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error')) {
      // The host answering a server-initiated request: forwarded as is.
      return { ok: true, peek: { kind: 'notification', id, method: undefined, toolName: undefined } };
    }
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: "method" must be a string.', id };
  }
  if (Object.hasOwn(m, 'id') && !isId(m.id)) {
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: "id" must be a string, a number or null.', id: null };
  }
  let toolName: string | undefined;
  if (m.method === 'tools/call' && m.params !== null && typeof m.params === 'object') {
    const name = (m.params as Record<string, unknown>).name;
    if (typeof name === 'string') toolName = name;
  }
  const kind = Object.hasOwn(m, 'id') ? 'request' : 'notification';
  return { ok: true, peek: { kind, id, method: m.method, toolName } };
}

/** Top-level members {@link quickPeek} reads (the others are only validated and counted). */
const OTHER = 0;
const JSONRPC = 1;
const ID = 2;
const METHOD = 3;
const PARAMS = 4;
const RESULT = 5;
const ERROR = 6;
/** `name` inside the last `params` object. */
const NAME = 7;

/** Deepest nesting {@link quickPeek} follows itself (deeper: the usual path decides). */
const QUICK_MAX_DEPTH = 64;
/** One entry per open container: 1 for an array, 0 for an object. */
const openArrays = new Uint8Array(QUICK_MAX_DEPTH + 1);

/**
 * The result of `checkJsonBounds(body, limits)` then {@link peekJsonRpc}(body), in one pass
 * over the bytes without decoding the body or `JSON.parse`, for the usual request (a
 * JSON-RPC object whose top-level keys, and those of its `params`, are written without
 * escapes); undefined when that pass cannot decide it exactly: a body that is not valid JSON
 * or breaks a bound (whichever the usual path reports first), a top-level array or scalar,
 * an escaped key where it matters, nesting past 64. The caller then takes the usual path.
 *
 * Exact by construction: the bytes are validated against the JSON grammar as
 * `JSON.parse(body.toString('utf8'))` accepts it (json-scan.ts gives the rules), nodes and
 * depth are counted as `checkJsonBounds` counts them (on valid JSON its counts are exact),
 * and the members `peekJsonRpc` reads (`jsonrpc`, `id`, `method`, `result`, `error`, and
 * `params.name`; the last of duplicates, as `JSON.parse` keeps) are decoded as `JSON.parse`
 * decodes them, then judged by the same code. Why (issue 5, 1 KiB results): the request's
 * bounds scan + decode + `JSON.parse` was ~6 µs of the gateway's fixed cost per exchange.
 */
export function quickPeek(body: Buffer, maxDepth: number, maxNodes: number): PeekResult | undefined {
  const n = body.length;
  let i = skipWs(body, 0);
  if (body[i] !== LBRACE) return undefined;
  let depth = 0;
  let nodes = 0;
  /** The key of the member being read in the top-level object (depth 1) and in `params` (depth 2). */
  let key1 = OTHER;
  let key2 = OTHER;
  /** Where the value being read at depth 1 / 2 starts. */
  let start1 = 0;
  let start2 = 0;
  /** The last `params` value is an object (its `name` is read). */
  let paramsObject = false;
  // Ranges [start, end) of the last value of each member read; -1: absent.
  let jsonrpc0 = -1;
  let jsonrpc1 = -1;
  let id0 = -1;
  let id1 = -1;
  let method0 = -1;
  let method1 = -1;
  let params0 = -1;
  let params1 = -1;
  let name0 = -1;
  let name1 = -1;
  let hasResult = false;
  let hasError = false;

  for (;;) {
    // A value starts at `i`.
    if (++nodes > maxNodes) return undefined;
    if (depth === 1) {
      start1 = i;
      if (key1 === PARAMS) {
        paramsObject = body[i] === LBRACE;
        name0 = -1;
        key2 = OTHER;
      }
    } else if (depth === 2) {
      start2 = i;
    }
    const c = body[i];
    let ended: boolean;
    if (c === LBRACE || c === LBRACKET) {
      if (++depth > maxDepth || depth > QUICK_MAX_DEPTH) return undefined;
      const array = c === LBRACKET;
      openArrays[depth] = array ? 1 : 0;
      i = skipWs(body, i + 1);
      if (body[i] === (array ? RBRACKET : RBRACE)) {
        i++;
        depth--;
        ended = true;
      } else if (array) {
        ended = false;
      } else {
        i = readKey(body, i, depth === 1 ? 1 : depth === 2 && key1 === PARAMS && paramsObject ? 2 : 0);
        if (i < 0) return undefined;
        if (depth === 1) key1 = foundKey;
        else if (depth === 2 && key1 === PARAMS && paramsObject) key2 = foundKey;
        ended = false;
      }
    } else {
      i = c === QUOTE ? stringEnd(body, i) : c === LOWER_T ? literalEnd(body, i, TRUE) : c === LOWER_F ? literalEnd(body, i, FALSE) : c === LOWER_N ? literalEnd(body, i, NULL) : numberEnd(body, i);
      if (i < 0) return undefined;
      ended = true;
    }
    // After a complete value, each container it completes, up to the start of the next value.
    while (ended) {
      if (depth === 1) {
        if (key1 === JSONRPC) {
          jsonrpc0 = start1;
          jsonrpc1 = i;
        } else if (key1 === ID) {
          id0 = start1;
          id1 = i;
        } else if (key1 === METHOD) {
          method0 = start1;
          method1 = i;
        } else if (key1 === PARAMS) {
          params0 = start1;
          params1 = i;
        } else if (key1 === RESULT) {
          hasResult = true;
        } else if (key1 === ERROR) {
          hasError = true;
        }
      } else if (depth === 2 && key1 === PARAMS && paramsObject) {
        if (key2 === NAME) {
          name0 = start2;
          name1 = i;
        }
      } else if (depth === 0) {
        if (skipWs(body, i) !== n) return undefined;
        const m: Record<string, unknown> = {};
        if (jsonrpc0 >= 0) m.jsonrpc = valueOf(body, jsonrpc0, jsonrpc1);
        if (id0 >= 0) m.id = valueOf(body, id0, id1);
        if (method0 >= 0) m.method = valueOf(body, method0, method1);
        if (params0 >= 0) m.params = paramsObject ? (name0 >= 0 ? { name: valueOf(body, name0, name1) } : {}) : valueOf(body, params0, params1);
        if (hasResult) m.result = true;
        if (hasError) m.error = true;
        return peekMessage(m);
      }
      i = skipWs(body, i);
      const d = body[i];
      if (d === COMMA) {
        i = skipWs(body, i + 1);
        if (openArrays[depth] === 0) {
          i = readKey(body, i, depth === 1 ? 1 : depth === 2 && key1 === PARAMS && paramsObject ? 2 : 0);
          if (i < 0) return undefined;
          if (depth === 1) key1 = foundKey;
          else if (depth === 2 && key1 === PARAMS && paramsObject) key2 = foundKey;
        }
        ended = false;
      } else if (d === (openArrays[depth] === 1 ? RBRACKET : RBRACE)) {
        i++;
        depth--;
      } else {
        return undefined;
      }
    }
  }
}

/** The key {@link readKey} read last (OTHER when not tracked). */
let foundKey = OTHER;
/** Whether the string {@link stringEnd} read last holds an escape. */
let stringEscaped = false;

/**
 * Reads the key at `at` (a `"`) and the `:` after it; returns the start of the value, or -1
 * (not JSON, or an escaped key where keys are tracked). `tracked`: 1 in the top-level object,
 * 2 in the last `params` object, 0 elsewhere. Sets {@link foundKey}.
 */
function readKey(bytes: Buffer, at: number, tracked: number): number {
  foundKey = OTHER;
  if (bytes[at] !== QUOTE) return -1;
  const end = stringEnd(bytes, at);
  if (end < 0) return -1;
  if (tracked !== 0) {
    if (stringEscaped) return -1;
    foundKey = tracked === 1 ? topKeyOf(bytes, at + 1, end - 1) : sameBytes(bytes, at + 1, end - 1, NAME_BYTES) ? NAME : OTHER;
  }
  const colon = skipWs(bytes, end);
  if (bytes[colon] !== COLON) return -1;
  return skipWs(bytes, colon + 1);
}

const bytesOf = (word: string): readonly number[] => [...word].map((c) => c.charCodeAt(0));
const TRUE = bytesOf('true');
const FALSE = bytesOf('false');
const NULL = bytesOf('null');
const NAME_BYTES = bytesOf('name');
const JSONRPC_BYTES = bytesOf('jsonrpc');
const ID_BYTES = bytesOf('id');
const METHOD_BYTES = bytesOf('method');
const PARAMS_BYTES = bytesOf('params');
const RESULT_BYTES = bytesOf('result');
const ERROR_BYTES = bytesOf('error');

/** The tracked top-level key written (unescaped) as bytes [start, end), or OTHER. */
function topKeyOf(bytes: Buffer, start: number, end: number): number {
  switch (end - start) {
    case 2:
      return sameBytes(bytes, start, end, ID_BYTES) ? ID : OTHER;
    case 5:
      return sameBytes(bytes, start, end, ERROR_BYTES) ? ERROR : OTHER;
    case 6:
      return sameBytes(bytes, start, end, METHOD_BYTES) ? METHOD : sameBytes(bytes, start, end, PARAMS_BYTES) ? PARAMS : sameBytes(bytes, start, end, RESULT_BYTES) ? RESULT : OTHER;
    case 7:
      return sameBytes(bytes, start, end, JSONRPC_BYTES) ? JSONRPC : OTHER;
    default:
      return OTHER;
  }
}

function sameBytes(bytes: Buffer, start: number, end: number, expected: readonly number[]): boolean {
  if (end - start !== expected.length) return false;
  for (let k = 0; k < expected.length; k++) if (bytes[start + k] !== expected[k]) return false;
  return true;
}

/** The JSON value at [start, end) of a validated body, as `JSON.parse` reads it; a container as an empty stand-in of its kind. */
function valueOf(bytes: Buffer, start: number, end: number): unknown {
  const c = bytes[start];
  if (c === QUOTE) {
    stringEnd(bytes, start);
    // Decoded alone, the bytes between the quotes give what decoding the whole body gives
    // there: a UTF-8 decoder never takes an ASCII byte (the quotes) into a bad sequence.
    return stringEscaped ? JSON.parse(bytes.toString('utf8', start, end)) : plainString(bytes, start + 1, end - 1);
  }
  if (c === LBRACE) return {};
  if (c === LBRACKET) return [];
  if (c === LOWER_T) return true;
  if (c === LOWER_F) return false;
  if (c === LOWER_N) return null;
  // An integer of up to 15 digits (the ids of real requests): read from the digits, exact.
  let k = c === MINUS ? start + 1 : start;
  if (end - k <= 15) {
    let value = 0;
    while (k < end) {
      const digit = bytes[k]! - DIGIT_0;
      if (digit < 0 || digit > 9) break;
      value = value * 10 + digit;
      k++;
    }
    if (k === end) return c === MINUS ? -value : value;
  }
  // Any other valid JSON number: `Number` reads it as `JSON.parse` does (same grammar, same rounding).
  return Number(bytes.toString('latin1', start, end));
}

/** Strings {@link plainString} made, by a hash of their bytes: the same method, tool name and `2.0` come in every request. */
const recentStrings: Array<string | undefined> = new Array<string | undefined>(64).fill(undefined);

/**
 * The UTF-8 bytes [start, end) (a JSON string's contents without escapes) as a string: a
 * string made before from the same bytes when one is at hand (compared in full, ASCII only),
 * else decoded. Decoding through `Buffer#toString` costs a call into the runtime per string.
 */
function plainString(bytes: Buffer, start: number, end: number): string {
  const len = end - start;
  if (len === 0) return '';
  if (len > 64) return bytes.toString('utf8', start, end);
  const slot = (len * 31 + bytes[start]! * 7 + bytes[end - 1]!) & 63;
  const cached = recentStrings[slot];
  if (cached !== undefined && cached.length === len) {
    let k = 0;
    while (k < len && cached.charCodeAt(k) === bytes[start + k]) k++;
    if (k === len) return cached;
  }
  const made = bytes.toString('utf8', start, end);
  // Kept when each byte gave one code unit: ASCII (the byte itself) or U+FFFD (equal to no
  // byte), so a later match in full means the same ASCII bytes, which decode to this string.
  if (made.length === len) recentStrings[slot] = made;
  return made;
}

/** The first index from `at` that is not JSON whitespace (the length at the end). */
function skipWs(bytes: Buffer, at: number): number {
  const n = bytes.length;
  let i = at;
  while (i < n) {
    const c = bytes[i]!;
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i;
    i++;
  }
  return n;
}

/** End (after the closing quote) of the valid JSON string at `at` (a `"`), or -1. Sets {@link stringEscaped}. */
function stringEnd(bytes: Buffer, at: number): number {
  const n = bytes.length;
  let escaped = false;
  let i = at + 1;
  while (i < n) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      stringEscaped = escaped;
      return i + 1;
    }
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      escaped = true;
      const e = bytes[i + 1];
      if (e === 0x75) {
        for (let k = i + 2; k < i + 6; k++) if (!isHex(bytes[k])) return -1;
        i += 6;
        continue;
      }
      // `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`
      if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== LOWER_F && e !== LOWER_N && e !== 0x72 && e !== LOWER_T) return -1;
      i += 2;
      continue;
    }
    i++;
  }
  return -1;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= DIGIT_0 && c <= DIGIT_9) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= DIGIT_0 && c <= DIGIT_9;
}

/** End of the valid JSON number at `at` (RFC 8259: `-`? int frac? exp?), or -1. */
function numberEnd(bytes: Buffer, at: number): number {
  let i = at;
  if (bytes[i] === MINUS) i++;
  if (bytes[i] === DIGIT_0) i++;
  else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i++;
  else return -1;
  if (bytes[i] === DOT) {
    i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  if (bytes[i] === LOWER_E || bytes[i] === UPPER_E) {
    i++;
    if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  return i;
}

/** End of the literal `word` at `at`, or -1. */
function literalEnd(bytes: Buffer, at: number, word: readonly number[]): number {
  for (let k = 0; k < word.length; k++) if (bytes[at + k] !== word[k]) return -1;
  return at + word.length;
}
