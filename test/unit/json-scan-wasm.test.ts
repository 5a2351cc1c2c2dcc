/**
 * Adversarial, differential tests of the WebAssembly JSON scan (assembly/json-scan.ts via
 * src/mcp/json-scan.ts) against an independent reference: a plain recursive-descent byte
 * parser written here from the contract in src/mcp/json-scan.ts (validity as
 * `JSON.parse(buf.toString('utf8'))`, first bad byte / body length for syntax, first breaching
 * byte for bounds, depth checked before nodes, members facts, textMayHoldObject,
 * numberMayBeLossy). The reference itself is cross-checked against `JSON.parse`,
 * `checkJsonBounds`, `hasLossyNumber` and the parsed message on every valid text.
 *
 * Every answer must be the same whatever the chunk split (1-byte chunks, cuts at every offset
 * around escapes, literals, numbers and member keys, 16-byte SIMD alignments, the 64 KiB core
 * buffer) and whatever other scanners are fed in between. Texts are generated at depths 0..8
 * so that both the depth >= 3 fast path of `scanChunk` and the generic path run. All
 * randomness is seeded (deterministic runs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonScanner, scanJson, SCAN_CONTENT_ITEMS, type ByteRange, type ContentItems, type JsonScanFailure, type JsonScanLimits, type JsonScanOptions, type JsonScanResult } from '../../src/mcp/json-scan.js';
import { checkJsonBounds } from '../../src/mcp/json-bounds.js';
import { hasLossyNumber } from '../../src/mcp/json-numbers.js';
import { holdsProtoKey } from '../../src/mcp/proto-key.js';
import { parses, rng, textMembersHoldObject } from '../helpers/json-fuzz.js';

const NO_LIMITS: JsonScanLimits = { maxDepth: Infinity, maxNodes: Infinity };
/** The core's buffer (json-scan.ts splits bigger chunks at this size). */
const CORE_CHUNK = 65536;

// ---------------------------------------------------------------------------------------
// Seeded randomness.

type Rng = () => number;
const int = (r: Rng, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, xs.length)]!;

/** Texts are built as "binary strings" (one char = one byte) so that invalid UTF-8 can be written. */
const bin = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
const bytesOf = (b: string): Buffer => Buffer.from(b, 'latin1');

// ---------------------------------------------------------------------------------------
// The reference: a recursive-descent parser over the bytes, written from the contract.

class Stop {
  constructor(readonly failure: JsonScanFailure) {}
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
type Role = 'top' | 'element' | 'result' | 'content' | 'item' | 'none';
/** Names whose repeat the scan tells exactly, by the role of their object (json-scan.ts JsonScanSummary.repeatedName). */
const MESSAGE_NAMES = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);
const TOLD_NAMES: Partial<Record<Role, ReadonlySet<string>>> = {
  top: MESSAGE_NAMES,
  element: MESSAGE_NAMES,
  result: new Set(['content', 'structuredContent', 'isError', 'resultType']),
  item: new Set(['text', 'type']),
};
/**
 * A key's Latin-1 text (its UTF-8 bytes) folded as Go's bytes.EqualFold folds toward ASCII: `A`-`Z`
 * to lower case, `ſ` (U+017F, C5 BF) to `s`, `K` (U+212A, E2 84 AA) to `k`.
 */
const foldGo = (s: string): string =>
  s
    .replace(/[A-Z]/g, (c) => c.toLowerCase())
    .replace(/\xc5\xbf/g, 's')
    .replace(/\xe2\x84\xaa/g, 'k');
/** The told names whose case variants count as repeats (`params` aside), folded, by role (assembly/json-scan.ts caseVariant). */
const FOLDED_NAMES: Partial<Record<Role, ReadonlySet<string>>> = {
  top: new Set(['jsonrpc', 'id', 'method', 'result', 'error']),
  element: new Set(['jsonrpc', 'id', 'method', 'result', 'error']),
  result: new Set(['content', 'structuredcontent', 'iserror', 'resulttype']),
  item: new Set(['text', 'type']),
};

/**
 * A key (its raw bytes between the quotes, as latin1) that is or may be `__proto__`
 * (assembly/json-scan.ts I_PROTO_KEY): written so, or holding a `\u` escape of one of its
 * characters `_` `p` `r` `o` `t`.
 */
function mayBeProtoKey(raw: string, escaped: boolean): boolean {
  if (!escaped) return raw === '__proto__';
  for (let k = 0; k < raw.length; k++) {
    if (raw[k] !== '\\') continue;
    if (raw[k + 1] === 'u' && ['005f', '0070', '0072', '006f', '0074'].includes(raw.slice(k + 2, k + 6).toLowerCase())) return true;
    k += raw[k + 1] === 'u' ? 5 : 1;
  }
  return false;
}

/** `noteProtoKeys`: as JsonScanOptions.noteProtoKeys (the summary's `mayHoldProtoKey` is undefined without it). */
function reference(b: Uint8Array, limits: JsonScanLimits, noteProtoKeys = false): JsonScanResult {
  const n = b.length;
  let i = 0;
  let depth = 0;
  let maxSeen = 0;
  let nodes = 0;
  let textMay = false;
  let lossy = false;
  let proto = false;
  const m = {
    jsonrpc: undefined as ByteRange | undefined,
    id: undefined as ByteRange | undefined,
    hasResult: false,
    hasError: false,
    hasMethod: false,
    method: undefined as ByteRange | undefined,
    params: undefined as ByteRange | undefined,
    plainKeys: true,
    sc: undefined as ByteRange | undefined,
    /** A key of the last `result` is written with an escape. */
    resultEscaped: false,
    resultEnd: undefined as number | undefined,
    isError: undefined as ByteRange | undefined,
    resultType: undefined as ByteRange | undefined,
    content: undefined as ContentItems | undefined,
    repeatedName: false,
    namesUnproved: false,
    messageKeys: 0,
    // The `content` array being read:
    count: 0,
    itemsPlain: true,
    texts: [] as (ByteRange | undefined)[],
    types: [] as (ByteRange | undefined)[],
  };
  const syntax = (at: number): never => {
    throw new Stop({ ok: false, reason: 'syntax', offset: at });
  };
  const bound = (reason: 'json_depth' | 'json_nodes', at: number): never => {
    const limit = reason === 'json_depth' ? limits.maxDepth : limits.maxNodes;
    throw new Stop({ ok: false, reason, limit, observed: limit + 1, offset: at });
  };
  const peek = (): number => (i < n ? b[i]! : syntax(n));
  const skipWs = (): void => {
    while (i < n) {
      const c = b[i]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };
  /** `i` at the opening quote; returns whether it held an escape, its raw bytes (keys) and its first content byte. */
  const readString = (wantRaw: boolean): { escaped: boolean; raw: string; first: number } => {
    i++;
    const from = i;
    const first = i < n ? b[i]! : -1;
    let escaped = false;
    for (;;) {
      const c = peek();
      if (c === 0x22) {
        const raw = wantRaw ? Buffer.from(b.subarray(from, i)).toString('latin1') : '';
        i++;
        return { escaped, raw, first };
      }
      if (c < 0x20) syntax(i);
      if (c !== 0x5c) {
        i++;
        continue;
      }
      escaped = true;
      i++;
      const e = peek();
      if (SIMPLE_ESCAPES.has(e)) i++;
      else if (e === 0x75) {
        i++;
        for (let k = 0; k < 4; k++) {
          if (!isHex(peek())) syntax(i);
          i++;
        }
      } else syntax(i);
    }
  };
  const readNumber = (): void => {
    const start = i;
    let exponent = false;
    if (b[i] === 0x2d) i++;
    let c = peek();
    if (c === 0x30) i++;
    else if (c >= 0x31 && c <= 0x39) while (i < n && isDigit(b[i]!)) i++;
    else syntax(i);
    if (i < n && b[i] === 0x2e) {
      i++;
      if (!isDigit(peek())) syntax(i);
      while (i < n && isDigit(b[i]!)) i++;
    }
    if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
      exponent = true;
      i++;
      c = peek();
      if (c === 0x2b || c === 0x2d) {
        i++;
        c = peek();
      }
      if (!isDigit(c)) syntax(i);
      while (i < n && isDigit(b[i]!)) i++;
    }
    if (exponent || i - start > 15) lossy = true;
  };
  const readLiteral = (word: string): void => {
    for (let k = 0; k < word.length; k++) {
      if (peek() !== word.charCodeAt(k)) syntax(i);
      i++;
    }
  };
  /** `i` after `{`. */
  const readObjectBody = (role: Role): void => {
    skipWs();
    if (peek() === 0x7d) {
      i++;
      return;
    }
    const told = TOLD_NAMES[role];
    const message = role === 'top' || role === 'element';
    const seen = new Set<string>();
    let others = 0;
    for (;;) {
      if (peek() !== 0x22) syntax(i);
      const key = readString(true);
      if (mayBeProtoKey(key.raw, key.escaped)) proto = true;
      if (message) m.messageKeys++;
      if (key.escaped && (message || role === 'result' || role === 'item')) m.namesUnproved = true;
      else if (!key.escaped && told?.has(key.raw)) {
        if (seen.has(key.raw)) m.repeatedName = true;
        seen.add(key.raw);
      } else {
        // A told name in another case, as Go folds it: a repeat (a Go host reads it as the name).
        if (!key.escaped && FOLDED_NAMES[role]?.has(foldGo(key.raw))) m.repeatedName = true;
        if (message && ++others === 2) m.namesUnproved = true;
      }
      skipWs();
      if (peek() !== 0x3a) syntax(i);
      i++;
      skipWs();
      const start = i;
      const plain = (name: string): boolean => !key.escaped && key.raw === name;
      let child: Role = 'none';
      if (role === 'top') {
        if (key.escaped) m.plainKeys = false;
        else if (key.raw === 'result') {
          m.hasResult = true;
          m.sc = undefined;
          m.resultEscaped = false;
          m.resultEnd = undefined;
          m.isError = undefined;
          m.resultType = undefined;
          m.content = undefined;
          child = 'result';
        } else if (key.raw === 'error') m.hasError = true;
        else if (key.raw === 'method') m.hasMethod = true;
      } else if (role === 'result') {
        if (key.escaped) m.resultEscaped = true;
        if (plain('content')) {
          m.content = undefined;
          child = 'content';
        }
      } else if (role === 'item') {
        if (key.escaped) m.itemsPlain = false;
        if (plain('text')) m.texts[m.count - 1] = undefined;
        if (plain('type')) m.types[m.count - 1] = undefined;
      }
      const kind = readValue(child, key.escaped || key.raw === 'text');
      const range: ByteRange = [start, i];
      if (role === 'top' && plain('jsonrpc')) m.jsonrpc = range;
      if (role === 'top' && plain('id')) m.id = range;
      if (role === 'top' && plain('method')) m.method = range;
      if (role === 'top' && plain('params')) m.params = range;
      if (role === 'result' && plain('structuredContent')) m.sc = range;
      if (role === 'result' && plain('isError')) m.isError = range;
      if (role === 'result' && plain('resultType')) m.resultType = range;
      if (role === 'item' && plain('text') && kind === 0x22) m.texts[m.count - 1] = range;
      if (role === 'item' && plain('type') && kind === 0x22) m.types[m.count - 1] = range;
      skipWs();
      const c = peek();
      if (c === 0x7d) {
        i++;
        return;
      }
      if (c !== 0x2c) syntax(i);
      i++;
      skipWs();
    }
  };
  /** `i` after `[`. */
  const readArrayBody = (role: Role): void => {
    skipWs();
    if (peek() === 0x5d) {
      i++;
      return;
    }
    for (;;) {
      if (role === 'content') m.count++;
      readValue(role === 'content' ? 'item' : role === 'top' ? 'element' : 'none', false);
      skipWs();
      const c = peek();
      if (c === 0x5d) {
        i++;
        return;
      }
      if (c !== 0x2c) syntax(i);
      i++;
      skipWs();
    }
  };
  /** Reads a value at `i`; returns its first byte. `role` says what an object (top, result, item) or array (content) is. */
  const readValue = (role: Role, ofTextKey: boolean): number => {
    const c = peek();
    if (c === 0x7b || c === 0x5b) {
      if (depth + 1 > limits.maxDepth) bound('json_depth', i);
      if (nodes + 1 > limits.maxNodes) bound('json_nodes', i);
      nodes++;
      depth++;
      if (depth > maxSeen) maxSeen = depth;
      i++;
      if (c === 0x7b) {
        readObjectBody(role === 'content' ? 'none' : role);
        if (role === 'result') m.resultEnd = i - 1;
      } else {
        if (role === 'content') {
          m.count = 0;
          m.itemsPlain = true;
          m.texts = [];
          m.types = [];
        }
        readArrayBody(role);
        if (role === 'content') {
          const kept = Math.min(m.count, SCAN_CONTENT_ITEMS);
          m.content = { count: m.count, plainKeys: m.itemsPlain, texts: Array.from({ length: kept }, (_, k) => m.texts[k]), types: Array.from({ length: kept }, (_, k) => m.types[k]) };
        }
      }
      depth--;
      return c;
    }
    const startsValue = c === 0x22 || c === 0x2d || isDigit(c) || c === 0x74 || c === 0x66 || c === 0x6e;
    if (!startsValue) syntax(i);
    if (nodes + 1 > limits.maxNodes) bound('json_nodes', i);
    nodes++;
    if (c === 0x22) {
      const s = readString(false);
      if (ofTextKey && (s.first === 0x7b || s.first === 0x20 || s.first === 0x5c)) textMay = true;
    } else if (c === 0x74) readLiteral('true');
    else if (c === 0x66) readLiteral('false');
    else if (c === 0x6e) readLiteral('null');
    else readNumber();
    return c;
  };

  let top: 'object' | 'array' | 'scalar' = 'scalar';
  try {
    skipWs();
    const c = peek();
    top = c === 0x7b ? 'object' : c === 0x5b ? 'array' : 'scalar';
    readValue('top', false);
    skipWs();
    if (i < n) syntax(i);
  } catch (e) {
    if (e instanceof Stop) return e.failure;
    throw e;
  }
  return {
    ok: true,
    depth: maxSeen,
    nodes,
    top,
    members:
      top === 'object'
        ? {
            jsonrpc: m.jsonrpc,
            id: m.id,
            hasResult: m.hasResult,
            hasError: m.hasError,
            hasMethod: m.hasMethod,
            method: m.method,
            params: m.params,
            plainKeys: m.plainKeys,
            structuredContent: m.resultEscaped ? undefined : m.sc,
            resultPlainKeys: m.hasResult && !m.resultEscaped,
            resultEnd: m.resultEnd,
            isError: m.isError,
            resultType: m.resultType,
            content: m.content,
          }
        : undefined,
    textMayHoldObject: textMay,
    numberMayBeLossy: lossy,
    repeatedName: m.repeatedName,
    namesDistinct: !m.repeatedName && !m.namesUnproved,
    messageKeys: m.messageKeys,
    mayHoldProtoKey: noteProtoKeys ? proto : undefined,
  };
}

// ---------------------------------------------------------------------------------------
// Cross-checks of the reference with the project's own references (on valid texts).

/** Checks the reference's unbounded answer against JSON.parse, checkJsonBounds, hasLossyNumber and the parsed value. */
function crossCheckReference(bytes: Buffer, ref: JsonScanResult, label: string, noted?: JsonScanResult): void {
  const parsed = parses(bytes);
  assert.equal(ref.ok, parsed.ok, `reference validity vs JSON.parse: ${label}`);
  if (!ref.ok || !parsed.ok) return;
  const bounds = checkJsonBounds(bytes, NO_LIMITS);
  assert.ok(bounds.ok);
  assert.equal(ref.nodes, bounds.nodes, `nodes: ${label}`);
  assert.equal(ref.depth, bounds.depth, `depth: ${label}`);
  if (textMembersHoldObject(parsed.value)) assert.equal(ref.textMayHoldObject, true, `text: ${label}`);
  if (hasLossyNumber(bytes)) assert.equal(ref.numberMayBeLossy, true, `lossy: ${label}`);
  if (holdsProtoKey(parsed.value)) assert.equal(((noted ?? reference(bytes, NO_LIMITS, true)) as { mayHoldProtoKey?: boolean }).mayHoldProtoKey, true, `__proto__: ${label}`);
  const v = parsed.value;
  const isObject = v !== null && typeof v === 'object' && !Array.isArray(v);
  assert.equal(ref.top, isObject ? 'object' : Array.isArray(v) ? 'array' : 'scalar', label);
  // The message objects' keys as written against the parsed ones: fewer parsed only with a repeat.
  const ownKeys = (x: unknown): number => (x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.keys(x).length : 0);
  const parsedKeys = Array.isArray(v) ? v.reduce((sum: number, e) => sum + ownKeys(e), 0) : ownKeys(v);
  assert.ok(parsedKeys <= ref.messageKeys, `message keys: ${label}`);
  if (ref.namesDistinct) assert.equal(parsedKeys, ref.messageKeys, `names distinct: ${label}`);
  if (!isObject || !ref.members!.plainKeys) return;
  const o = v as Record<string, unknown>;
  const slice = (range: ByteRange | undefined): unknown => (range === undefined ? undefined : JSON.parse(bytes.subarray(range[0], range[1]).toString('utf8')));
  assert.deepEqual(slice(ref.members!.jsonrpc), Object.hasOwn(o, 'jsonrpc') ? o.jsonrpc : undefined, label);
  assert.deepEqual(slice(ref.members!.id), Object.hasOwn(o, 'id') ? o.id : undefined, label);
  assert.equal(ref.members!.hasResult, Object.hasOwn(o, 'result'), label);
  assert.equal(ref.members!.hasError, Object.hasOwn(o, 'error'), label);
  assert.equal(ref.members!.hasMethod, Object.hasOwn(o, 'method'), label);
  assert.deepEqual(slice(ref.members!.method), Object.hasOwn(o, 'method') ? o.method : undefined, label);
  assert.deepEqual(slice(ref.members!.params), Object.hasOwn(o, 'params') ? o.params : undefined, label);
  const sc = ref.members!.structuredContent;
  const result = o.result as Record<string, unknown>;
  if (sc !== undefined) {
    assert.ok(result !== null && typeof result === 'object' && Object.hasOwn(result, 'structuredContent'), label);
    assert.deepEqual(slice(sc), result.structuredContent, label);
  }
  const ownOf = (x: unknown, key: string): unknown => (x !== null && typeof x === 'object' && !Array.isArray(x) && Object.hasOwn(x, key) ? (x as Record<string, unknown>)[key] : undefined);
  if (ref.members!.resultPlainKeys) {
    assert.deepEqual(slice(ref.members!.isError), ownOf(result, 'isError'), `isError: ${label}`);
    assert.deepEqual(slice(ref.members!.resultType), ownOf(result, 'resultType'), `resultType: ${label}`);
  }
  const content = ref.members!.content;
  if (ref.members!.resultPlainKeys && content !== undefined) {
    assert.ok(Array.isArray(result.content), label);
    assert.equal(content.count, result.content.length, label);
    assert.equal(bytes[ref.members!.resultEnd!], 0x7d, label);
    if (content.plainKeys) {
      content.texts.forEach((range, k) => {
        const item = (result.content as unknown[])[k] as Record<string, unknown> | null;
        const own = item !== null && typeof item === 'object' && !Array.isArray(item) && typeof item.text === 'string' ? item.text : undefined;
        assert.deepEqual(slice(range), own, label);
      });
      content.types.forEach((range, k) => {
        const type = ownOf((result.content as unknown[])[k], 'type');
        assert.deepEqual(slice(range), typeof type === 'string' ? type : undefined, `type ${k}: ${label}`);
      });
    }
  }
}

// ---------------------------------------------------------------------------------------
// Feeding.

function feedAll(bytes: Uint8Array, cuts: readonly number[], limits: JsonScanLimits | JsonScanOptions): JsonScanResult {
  const scanner = new JsonScanner(limits);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    const failed = scanner.feed(bytes.subarray(from, cut));
    if (failed !== undefined) {
      assert.equal(scanner.end(), failed, 'end() returns the failure feed() returned');
      return failed;
    }
    from = cut;
  }
  return scanner.end();
}

function byteByByte(bytes: Uint8Array, limits: JsonScanLimits): JsonScanResult {
  const scanner = new JsonScanner(limits);
  for (let k = 0; k < bytes.length; k++) if (scanner.feed(bytes.subarray(k, k + 1)) !== undefined) break;
  return scanner.end();
}

/** Random sorted cuts: a few random ones, 16-byte aligned ones, or many small chunks. */
function randomCuts(r: Rng, len: number): number[] {
  const kind = r();
  const cuts: number[] = [];
  if (kind < 0.5) for (let k = 1 + int(r, 4); k > 0; k--) cuts.push(int(r, len + 1));
  else if (kind < 0.75) for (let c = 16 * (1 + int(r, 3)) + int(r, 2) - int(r, 2); c < len && cuts.length < 64; c += 16 * (1 + int(r, 4))) cuts.push(c);
  else for (let c = int(r, 8); c < len && cuts.length < 400; c += 1 + int(r, 7)) cuts.push(c);
  return cuts.sort((a, b) => a - b);
}

const show = (b: Uint8Array): string => JSON.stringify(Buffer.from(b).toString('latin1').slice(0, 300));

/** The scan, whole and split, equals the reference. */
function check(bytes: Buffer, limits: JsonScanLimits, cutsList: readonly (readonly number[])[], label = show(bytes)): JsonScanResult {
  return checkBoth(bytes, limits, cutsList, label).ref;
}

/**
 * {@link check}, also giving the reference's answer noting `__proto__` keys; `known`: the
 * reference's answer for `limits`, if computed already (not computed again: on the 6 MiB body
 * and on each of the differential's texts the reference was the most of the CPU).
 */
function checkBoth(bytes: Buffer, limits: JsonScanLimits, cutsList: readonly (readonly number[])[], label = show(bytes), known?: JsonScanResult): { ref: JsonScanResult; noted: JsonScanResult } {
  const ref = known ?? reference(bytes, limits);
  assert.deepEqual(scanJson(bytes, limits), ref, `whole ${label} ${JSON.stringify(limits)}`);
  for (const cuts of cutsList) assert.deepEqual(feedAll(bytes, cuts, limits), ref, `cuts ${cuts.join(',')} of ${label} ${JSON.stringify(limits)}`);
  // Noting `__proto__` keys (the other compiled copy of the core's loop): whole, and at the first cuts.
  const noting = { ...limits, noteProtoKeys: true };
  const noted = reference(bytes, limits, true);
  assert.deepEqual(scanJson(bytes, noting), noted, `whole, noting keys: ${label} ${JSON.stringify(limits)}`);
  if (cutsList[0] !== undefined) assert.deepEqual(feedAll(bytes, cutsList[0], noting), noted, `cuts ${cutsList[0].join(',')}, noting keys: ${label}`);
  return { ref, noted };
}

// ---------------------------------------------------------------------------------------
// Generators.

const KEYS = ['text', 'id', 'jsonrpc', 'result', 'error', 'structuredContent', 'content', 'type', 'isError', 'a', '', 'tex', 'texts', 'Text', 'ids', 'structuredContentX', 'structuredconten', 'resul', 'errors', '__proto__', 'é', bin('日本')];
const VALID_NUMBERS = [
  '0', '-0', '1', '-1', '10', '0.5', '-0.0', '1.50', '1e5', '1E+5', '1e-5', '-1E-0', '123456789012345', '1234567890123456', '-12345678901234',
  '-123456789012345', '0.1234567890123', '0.12345678901234', '9007199254740993', '100000000000000000000000', '1.5e300', '1e400', '0.0000001',
];
const INVALID_NUMBERS = ['01', '1.', '1e', '1e+', '1E-', '-', '-a', '.5', '+1', '1.e5', '--1', '0x1', '1ee5', '00', '-01', '1.5.', '-.5', '1e5.5', '0-1'];
const LITERALS = ['true', 'false', 'null'];
const BAD_LITERALS = ['tru', 'nul', 'fals', 'trUe', 'nulll', 'tRue', 'fal se', 'True', 'n', 't', 'f', 'nan', 'undefined'];
/** Pieces of string content, as binary strings (escapes written as JSON escapes). */
const STRING_PIECES = [
  'x', 'hello', ' ', '{', '{\\"a\\":1}', '[1]', '\\"', '\\\\', '\\/', '\\n', '\\t', '\\u00e9', '\\u00E9', '\\uD83D\\uDE00', '\\u0000', '\\ud800',
  bin('é'), bin('☃'), bin('😀'), bin('\u00a0'), bin('\ufeff'), '\\u00a0', '\\ufeff', '\x7f', '\x80', '\xff', '\xc3', '\xed\xa0\x80', '\xf4\x90\x80\x80', '\xc0\xaf', '\xe2\x82', '\xf0\x9f\x98',
];
const WS = [' ', '', '', '\n', '\t', '\r\n  ', ' '.repeat(20)];

function genNumber(r: Rng): string {
  if (r() < 0.5) return pick(r, VALID_NUMBERS);
  let s = r() < 0.3 ? '-' : '';
  s += r() < 0.2 ? '0' : String(1 + int(r, 9)) + Array.from({ length: int(r, r() < 0.2 ? 22 : 8) }, () => String(int(r, 10))).join('');
  if (r() < 0.3) s += '.' + Array.from({ length: 1 + int(r, 18) }, () => String(int(r, 10))).join('');
  if (r() < 0.15) s += pick(r, ['e', 'E']) + pick(r, ['', '+', '-']) + String(int(r, 400));
  return s;
}

function genStringBody(r: Rng): string {
  const k = r();
  if (k < 0.15) return '';
  if (k < 0.2) return pick(r, ['{', ' ', '\\n', '\\u007b', '\\\\']) + 'x'.repeat(int(r, 40));
  if (k < 0.23) return 'y'.repeat(15 + int(r, 60)) + pick(r, STRING_PIECES) + 'z'.repeat(int(r, 20));
  if (k < 0.235) return 'L'.repeat(CORE_CHUNK - 40 + int(r, 80)) + pick(r, STRING_PIECES) + 'M'.repeat(int(r, 5));
  const parts: string[] = [];
  for (let c = int(r, 6); c > 0; c--) parts.push(pick(r, STRING_PIECES));
  return parts.join('');
}

function genKey(r: Rng): string {
  const key = pick(r, KEYS);
  if (r() < 0.1) {
    // Escape one or all characters.
    const chars = [...Buffer.from(key, 'latin1').toString('latin1')];
    const all = r() < 0.5;
    const at = int(r, Math.max(1, chars.length));
    return chars.map((c, k) => (all || k === at ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('');
  }
  return key;
}

function genScalar(r: Rng): string {
  const s = r();
  if (s < 0.5) return `"${genStringBody(r)}"`;
  if (s < 0.8) return genNumber(r);
  return pick(r, LITERALS);
}

/** A value whose container nesting goes to about `target` levels below `depth`. */
function genValue(r: Rng, depth: number, target: number): string {
  const ws = (): string => pick(r, WS);
  if (depth >= target || (depth > 0 && r() < 0.25)) return genScalar(r);
  const count = int(r, 4) + (depth < target - 1 ? 1 : 0);
  if (r() < 0.45) {
    const items = Array.from({ length: count }, () => ws() + genValue(r, depth + 1, target) + ws());
    return `[${items.join(',')}]`;
  }
  const members = Array.from({ length: count }, () => `${ws()}"${genKey(r)}"${ws()}:${ws()}${genValue(r, depth + 1, target)}${ws()}`);
  return `{${members.join(',')}}`;
}

/** A JSON-RPC envelope with the member keys of interest at depth 1 and 2 (and again deeper). */
function genEnvelope(r: Rng, target: number): string {
  const ws = (): string => pick(r, WS);
  const inner = (): string => genValue(r, 3, Math.max(3, target));
  const item = (): string => {
    const k = r();
    if (k < 0.1) return genScalar(r);
    if (k < 0.15) return `[{"text":"${genStringBody(r)}"}]`;
    const type = r() < 0.8 ? '"text"' : pick(r, ['"image"', '"t\\u0065xt"', '"Text"', '""', '1', 'null', '{"type":"text"}', '["text"]']);
    const members = [`"type":${type}`, `"text":${r() < 0.8 ? `"${genStringBody(r)}"` : genValue(r, 4, 6)}`];
    if (r() < 0.1) members.push(`"type":${pick(r, ['"text"', '"resource"', 'false', `"${genStringBody(r)}"`])}`);
    if (r() < 0.1) members.splice(0, 1); // no type
    if (r() < 0.2) members.push(`"text":${r() < 0.7 ? `"${genStringBody(r)}"` : genScalar(r)}`);
    if (r() < 0.1) members.push(`"meta":{"text":"${genStringBody(r)}"}`);
    if (r() < 0.05) members.push(`"${pick(r, ['t\\u0065xt', 'te\\u0078t', 'typ\\u0065'])}":"{}"`);
    return `{${members.sort(() => r() - 0.5).map((x) => ws() + x + ws()).join(',')}}`;
  };
  const items = (): string => `[${Array.from({ length: r() < 0.1 ? 14 + int(r, 6) : int(r, 4) }, () => ws() + item() + ws()).join(',')}]`;
  const resultMembers = [
    `"content"${ws()}:${ws()}${r() < 0.9 ? items() : genScalar(r)}`,
    `"structuredContent":${ws()}${r() < 0.7 ? `{"text":"${genStringBody(r)}","n":${genNumber(r)},"deep":${inner()}}` : genScalar(r)}`,
    `"${genKey(r)}":${inner()}`,
    `"isError":${r() < 0.7 ? pick(r, LITERALS) : pick(r, ['0', '-0', '1', '0.0', '""', '"x"', '[]', '{}', genValue(r, 3, 5)])}`,
  ];
  if (r() < 0.3) resultMembers.push(`"resultType":${pick(r, ['"complete"', '"partial"', '"compl\\u0065te"', 'null', '1', '{"a":"complete"}'])}`);
  if (r() < 0.1) resultMembers.push(`"isError":${pick(r, LITERALS)}`);
  if (r() < 0.05) resultMembers.push(`"is\\u0045rror":true`);
  if (r() < 0.2) resultMembers.push(`"structuredContent":${inner()}`);
  if (r() < 0.1) resultMembers.push(`"structured\\u0043ontent":{}`);
  if (r() < 0.1) resultMembers.push(`"content":${r() < 0.7 ? items() : genScalar(r)}`);
  if (r() < 0.05) resultMembers.push(`"c\\u006fntent":[]`);
  const result = `{${resultMembers.sort(() => r() - 0.5).map((x) => ws() + x + ws()).join(',')}}`;
  const top = [
    `"jsonrpc":${ws()}"2.0"`,
    `"id":${ws()}${pick(r, ['1', '"abc"', 'null', '{"x":[1]}', genNumber(r), '"i\\"d"'])}`,
    `"result":${ws()}${r() < 0.9 ? result : genScalar(r)}`,
  ];
  if (r() < 0.2) top.push(`"error":${genValue(r, 1, 3)}`);
  if (r() < 0.15) top.push(`"${pick(r, ['id', 'jsonrpc', 'result'])}":${genValue(r, 1, 3)}`);
  if (r() < 0.1) top.push(`"${genKey(r)}":${genValue(r, 1, 4)}`);
  return `${ws()}{${top.sort(() => r() - 0.5).map((x) => ws() + x + ws()).join(',')}}${ws()}`;
}

const MUTATIONS = ['{', '}', '[', ']', '"', ',', ':', '\\', 'u', '0', '-', '.', 'e', '+', 't', 'n', ' ', '\n', '\x01', '\x1f', '\x00', '\x80', '\xff', 'x', '\\x', '\\u12', '\\u12"'];

function mutate(r: Rng, s: string): string {
  const at = int(r, s.length + 1);
  const op = r();
  const ch = pick(r, MUTATIONS);
  if (op < 0.35) return s.slice(0, at) + ch + s.slice(at);
  if (op < 0.6) return s.slice(0, at) + ch + s.slice(at + 1);
  if (op < 0.85) return s.slice(0, at) + s.slice(at + 1);
  return s.slice(0, at);
}

/** Bounds around the text's own depth and node count (the reference's unbounded answer). */
function randomLimits(r: Rng, unbounded: JsonScanResult): JsonScanLimits {
  const depth = unbounded.ok ? unbounded.depth : 4;
  const nodes = unbounded.ok ? unbounded.nodes : 20;
  const d = pick(r, [0, 1, 2, 3, Math.max(0, depth - 1), depth, Infinity]);
  const n = pick(r, [0, 1, 2, Math.max(0, nodes - 1), nodes, int(r, nodes + 1), Infinity]);
  return { maxDepth: d, maxNodes: n };
}

// ---------------------------------------------------------------------------------------
// Tests.

test('reference self-check: agrees with JSON.parse / checkJsonBounds on handwritten cases', () => {
  for (const s of ['{"a":[1,2,{"b":null}]}', '[01]', '"\\x"', '"\\u12"', '-', '1e+', '[1,]', '{"a":1,}', '\ufeff{}', ' -0.5e+3 ']) {
    crossCheckReference(Buffer.from(s), reference(Buffer.from(s), NO_LIMITS), s);
  }
  assert.deepEqual(reference(Buffer.from('[01]'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 2 });
  assert.deepEqual(reference(Buffer.from('"\\x"'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 2 });
  assert.deepEqual(reference(Buffer.from('{"a":[[]]}'), { maxDepth: 2, maxNodes: 10 }), { ok: false, reason: 'json_depth', limit: 2, observed: 3, offset: 6 });
});

test('differential: 4,000 generated texts (depths 0..8, half mutated) equal the reference whole, split and bounded', () => {
  const r = rng(0x5eed_0001);
  let valid = 0;
  let bounded = 0;
  let withItemTexts = 0;
  let repeated = 0;
  let unproved = 0;
  let arrayMessageKeys = 0;
  let protoKeys = 0;
  const depthsSeen = new Set<number>();
  for (let k = 0; k < 4000; k++) {
    const target = k % 9;
    let text = r() < 0.4 ? genEnvelope(r, target) : genValue(r, 0, target);
    if (k % 2 === 1) {
      text = mutate(r, text);
      if (r() < 0.3) text = mutate(r, text);
    }
    const bytes = bytesOf(text);
    const label = `#${k} ${show(bytes)}`;
    const { ref, noted } = checkBoth(bytes, NO_LIMITS, [randomCuts(r, bytes.length), randomCuts(r, bytes.length)], label);
    if (bytes.length < 4096) crossCheckReference(bytes, ref, label, noted);
    if (ref.ok) {
      valid++;
      depthsSeen.add(ref.depth);
      if (ref.members?.content?.texts.some((t) => t !== undefined)) withItemTexts++;
      if (ref.repeatedName) repeated++;
      else if (!ref.namesDistinct) unproved++;
      if (ref.top === 'array' && ref.messageKeys > 0) arrayMessageKeys++;
      if ((noted as { mayHoldProtoKey?: boolean }).mayHoldProtoKey) protoKeys++;
    }
    const limits = randomLimits(r, ref);
    const lref = check(bytes, limits, [randomCuts(r, bytes.length)], label);
    if (!lref.ok && lref.reason !== 'syntax') bounded++;
  }
  assert.ok(valid > 1900, `valid: ${valid}`);
  assert.ok(bounded > 600, `bound failures: ${bounded}`);
  assert.ok(withItemTexts > 300, `valid texts with result.content item text ranges: ${withItemTexts}`);
  assert.ok(repeated > 100 && unproved > 100 && arrayMessageKeys > 100, `repeated names: ${repeated}, unproved: ${unproved}, arrays of objects: ${arrayMessageKeys}`);
  assert.ok(protoKeys > 100, `keys that are or may be __proto__: ${protoKeys}`);
  for (let d = 0; d <= 8; d++) assert.ok(depthsSeen.has(d), `depth ${d} generated`);
});

test('repeated member names: the cases of mcp/repeated-names.ts, whole and cut at every offset', () => {
  const R = '"result":{"content":[{"type":"text","text":"a"}]}';
  const cases: Array<[string, { repeatedName: boolean; namesDistinct: boolean; messageKeys: number }]> = [
    [`{"jsonrpc":"2.0","id":1,${R}}`, { repeatedName: false, namesDistinct: true, messageKeys: 3 }],
    [`{"jsonrpc":"2.0","id":999,"id":1,${R}}`, { repeatedName: true, namesDistinct: false, messageKeys: 4 }],
    [`{"jsonrpc":"2.0","id":1,${R},${R}}`, { repeatedName: true, namesDistinct: false, messageKeys: 4 }],
    [`{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m","params":{},"params":{}}`, { repeatedName: true, namesDistinct: false, messageKeys: 5 }],
    // An escaped key, or a second name outside the JSON-RPC members: the scan cannot tell.
    [`{"jsonrpc":"2.0","id":999,"\\u0069d":1,${R}}`, { repeatedName: false, namesDistinct: false, messageKeys: 4 }],
    [`{"jsonrpc":"2.0","id":1,"x":1,"y":2,${R}}`, { repeatedName: false, namesDistinct: false, messageKeys: 5 }],
    [`{"jsonrpc":"2.0","id":1,"x":1,${R}}`, { repeatedName: false, namesDistinct: true, messageKeys: 4 }],
    // Inside result and its content items; the same names elsewhere are not compared.
    ['{"id":1,"result":{"isError":false,"isError":true}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"content":[{"text":"a","text":"b"}]}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"content":[{"text":"a"},{"text":"b","type":"text"}]}}', { repeatedName: false, namesDistinct: true, messageKeys: 2 }],
    ['{"id":1,"result":{"a":1,"a":2,"structuredContent":{"b":1,"b":2}},"error":{"code":1,"code":2}}', { repeatedName: false, namesDistinct: true, messageKeys: 3 }],
    // A batch: each element's names apart.
    [`[{"jsonrpc":"2.0","id":1,${R}},{"jsonrpc":"2.0","id":2,${R}}]`, { repeatedName: false, namesDistinct: true, messageKeys: 6 }],
    [`[{"jsonrpc":"2.0","id":1,${R}},{"jsonrpc":"2.0","id":3,"id":2,${R}}]`, { repeatedName: true, namesDistinct: false, messageKeys: 7 }],
    ['[[{"id":1,"id":2}],{"x":1},{"x":2}]', { repeatedName: false, namesDistinct: true, messageKeys: 2 }],
    ['"id"', { repeatedName: false, namesDistinct: true, messageKeys: 0 }],
    // A told name in another ASCII case is a repeat of it, alone or beside it (Go's
    // encoding/json matches names case-insensitively: a new user's trial 8, F3).
    [`{"jsonrpc":"2.0","id":1,"ID":999,${R}}`, { repeatedName: true, namesDistinct: false, messageKeys: 4 }],
    [`{"jsonrpc":"2.0","ID":999,"Result":{}}`, { repeatedName: true, namesDistinct: false, messageKeys: 3 }],
    [`{"jsonrpc":"2.0","id":1,${R},"RESULT":{}}`, { repeatedName: true, namesDistinct: false, messageKeys: 4 }],
    [`{"JSONRPC":"2.0","id":1,${R}}`, { repeatedName: true, namesDistinct: false, messageKeys: 3 }],
    [`{"jsonrpc":"2.0","Method":"m"}`, { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    [`{"jsonrpc":"2.0","id":1,"eRROR":{"code":1,"message":"x"}}`, { repeatedName: true, namesDistinct: false, messageKeys: 3 }],
    ['{"id":1,"result":{"content":[],"Content":[]}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"StructuredContent":{},"ISERROR":true,"resulttype":"x"}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"content":[{"type":"text","Text":"b"}]}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    [`[{"jsonrpc":"2.0","Id":2,${R}}]`, { repeatedName: true, namesDistinct: false, messageKeys: 3 }],
    // Not a told name: `params` in another case, names of other lengths, other objects.
    [`{"jsonrpc":"2.0","id":1,"Params":{},${R}}`, { repeatedName: false, namesDistinct: true, messageKeys: 4 }],
    ['{"id":1,"result":{"Results":1,"contents":[],"structuredContent":{"ID":1,"Content":2}}}', { repeatedName: false, namesDistinct: true, messageKeys: 2 }],
    ['{"id":1,"method":"m","params":{"ID":1,"Result":2}}', { repeatedName: false, namesDistinct: true, messageKeys: 3 }],
    // Under Go's folding `ſ` (U+017F) is `s` too: a repeat wherever the ASCII variant is one
    // (a new user's trial 8, F3 (residual)); the 18 bytes of `ſtructuredContent` cut anywhere.
    [`{"jsonrpc":"2.0","id":1,${R},"re\u017fult":{}}`, { repeatedName: true, namesDistinct: false, messageKeys: 4 }],
    [`{"j\u017fonrpc":"2.0","id":1,${R}}`, { repeatedName: true, namesDistinct: false, messageKeys: 3 }],
    [`{"jsonrpc":"2.0","id":1,"RE\u017fULT":{}}`, { repeatedName: true, namesDistinct: false, messageKeys: 3 }],
    [`[{"jsonrpc":"2.0","id":2,"Re\u017fult":{}}]`, { repeatedName: true, namesDistinct: false, messageKeys: 3 }],
    ['{"id":1,"result":{"isError":false,"i\u017ferror":true}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"structuredContent":{},"\u017ftructuredContent":{}}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"\u017fTRUCTUREDcONTENT":{}}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"re\u017fultType":"task"}}', { repeatedName: true, namesDistinct: false, messageKeys: 2 }],
    // Not a told name under any folding: `ſ` elsewhere, other letters, other lengths, other objects.
    [`{"jsonrpc":"2.0","id":1,"re\u017fults":1,${R}}`, { repeatedName: false, namesDistinct: true, messageKeys: 4 }],
    [`{"jsonrpc":"2.0","id":1,"\u017fesult":1,${R}}`, { repeatedName: false, namesDistinct: true, messageKeys: 4 }],
    [`{"jsonrpc":"2.0","id":1,"re\u00dfult":1,${R}}`, { repeatedName: false, namesDistinct: true, messageKeys: 4 }],
    [`{"jsonrpc":"2.0","id":1,"\u212aind":1,${R}}`, { repeatedName: false, namesDistinct: true, messageKeys: 4 }],
    ['{"id":1,"result":{"i\u017fErrors":1,"\u017ftructuredContents":{},"structuredContent":{"re\u017fult":1}}}', { repeatedName: false, namesDistinct: true, messageKeys: 2 }],
    ['{"id":1,"result":{"content":[{"type":"text","te\u017ft":"b","\u212aext":1}]}}', { repeatedName: false, namesDistinct: true, messageKeys: 2 }],
    // An escaped key in the result or an item: the scan cannot tell (the parsed keys are read).
    ['{"id":1,"result":{"C\\u006fntent":[]}}', { repeatedName: false, namesDistinct: false, messageKeys: 2 }],
    ['{"id":1,"result":{"content":[{"T\\u0065xt":"b"}]}}', { repeatedName: false, namesDistinct: false, messageKeys: 2 }],
  ];
  for (const [text, expected] of cases) {
    const bytes = Buffer.from(text);
    const cuts = Array.from({ length: bytes.length + 1 }, (_, k) => [k]);
    const got = check(bytes, NO_LIMITS, cuts, text);
    crossCheckReference(bytes, got, text);
    assert.ok(got.ok, text);
    assert.deepEqual({ repeatedName: got.repeatedName, namesDistinct: got.namesDistinct, messageKeys: got.messageKeys }, expected, text);
  }
});

test('fast path (depth >= 3) and generic path agree: the same value wrapped in 0..6 arrays or objects', () => {
  const r = rng(0x5eed_0002);
  for (let k = 0; k < 600; k++) {
    let inner = r() < 0.5 ? genValue(r, 0, 1 + int(r, 3)) : `{"text":"${genStringBody(r)}","x":${genNumber(r)}}`;
    if (k % 3 === 0) inner = mutate(r, inner);
    const innerBytes = bytesOf(inner);
    const base = reference(innerBytes, NO_LIMITS);
    for (let w = 0; w <= 6; w++) {
      const viaObject = r() < 0.5;
      const open = viaObject ? '{"k":'.repeat(w) : '['.repeat(w);
      const close = viaObject ? '}'.repeat(w) : ']'.repeat(w);
      const bytes = bytesOf(open + inner + close);
      const got = check(bytes, NO_LIMITS, [randomCuts(r, bytes.length)]);
      if (base.ok) {
        assert.ok(got.ok, show(bytes));
        assert.equal(got.nodes, base.nodes + w);
        assert.equal(got.textMayHoldObject, base.textMayHoldObject, show(bytes));
        assert.equal(got.numberMayBeLossy, base.numberMayBeLossy, show(bytes));
      } else if (base.reason === 'syntax' && base.offset < innerBytes.length && ![0x2c, 0x5d, 0x7d].includes(innerBytes[base.offset]!)) {
        // (A `,` or closing bracket after a complete top-level value is fine once wrapped.)
        assert.deepEqual(got, { ok: false, reason: 'syntax', offset: base.offset + open.length }, show(bytes));
      }
    }
  }
});

/**
 * Each inner text inside each wrap (reaching depth >= 3, where scanChunk's inline paths run):
 * the scan equals the reference whole, byte by byte, cut at every offset and every adjacent
 * pair of offsets, under every node bound up to the text's count (40 for an invalid text),
 * and under depth bounds 3..7.
 */
function checkWrapped(inners: readonly string[], wraps: readonly (readonly [string, string])[]): void {
  for (const inner of inners) {
    for (const [open, close] of wraps) {
      const bytes = bytesOf(open + inner + close);
      const all = reference(bytes, NO_LIMITS);
      const maxNodes = all.ok ? all.nodes : 40;
      const cutsList: number[][] = [];
      for (let c = 1; c < bytes.length; c++) cutsList.push([c]);
      for (let c = 1; c + 1 < bytes.length; c++) cutsList.push([c, c + 1]);
      check(bytes, NO_LIMITS, cutsList);
      assert.deepEqual(byteByByte(bytes, NO_LIMITS), all, `bytewise ${show(bytes)}`);
      for (let nodes = 0; nodes <= maxNodes; nodes++) check(bytes, { maxDepth: Infinity, maxNodes: nodes }, [cutsList[nodes % cutsList.length]!, [nodes + 1, nodes + 2]]);
      for (let depth = 3; depth <= 7; depth++) check(bytes, { maxDepth: depth, maxNodes: Infinity }, [[depth * 3]]);
    }
  }
}

test('compact members at depth >= 3 (the inline `":"`, `","`, `{"`, `["`, `},"` paths): every node bound, every cut', () => {
  // Each transition scanChunk reads on inline (a key then `:` then a string; a string then `,`
  // then a key; an opening bracket then a key or a string; a close then `,` then a key), with
  // whitespace, a non-string value or another byte where the inline path must step aside.
  const inners = [
    '{"k1":"v1","k2":["s1","s2"],"k3":{"x":"y"},"k4":[{"t":"u"},{"t":"w"}],"k5":"z"}',
    '{"a":"b","text":"{x","c":["d",{"text":" y"},"e"],"f":{"g":{"h":"i"}},"j":[["k"],["l","m"]]}',
    '{"a" :"b","c": "d","e":"f" ,"g":"h", "i":"j","k":{ "l":"m"},"n":[ "o"],"p":{"q":1},"r":["s",2]}',
    '{"a":"b","c":1,"d":true,"e":null,"f":-2,"g":"h"}',
    '[{"a":"b"},{"c":"d"},"e",["f"],{}]',
    '{"a":"b","c":"d"x',
    '{"a":"b",x}',
    '{"a":"b""c":"d"}',
    '{"a":{"b":"c"},]}',
    '{"a":["b"],"c":{"d":"e"},}',
  ];
  checkWrapped(inners, [['{"a":{"b":{"c":', '}}}'], ['[[[', ']]]'], ['{"result":{"structuredContent":{"p":', '}}}']]);
});

test('escapes, control characters and high bytes at every offset around chunk cuts and 16-byte SIMD blocks', () => {
  const specials = ['\\"', '\\\\', '\\/', '\\u00e9', '\\uABCD', '\\x', '\\u12', '\\u12"', '\\u', '\\', '\x01', '\x1f', '\x00', '\x7f', '\x80', '\xff', '\xc3', bin('€'), '"'];
  const contexts: [string, string][] = [
    ['{"k":"', '"}'], // a value at depth 1
    ['{"', '":1}'], // a key at depth 1
    ['[[[{"k":"', '"}]]]'], // a value at depth 4 (fast path)
    ['[[[{"', '":1}]]]'], // a key at depth 4 (fast path)
    ['{"result":{"content":[{"text":"', '"}]}}'], // a text value at depth 4
    ['[[{"text":"', '"}]]'], // a text value at depth 3
  ];
  let scans = 0;
  for (const [before, after] of contexts) {
    for (const special of specials) {
      for (let at = 0; at <= 34; at++) {
        const text = before + 'a'.repeat(at) + special + 'b'.repeat(at % 5) + after;
        const bytes = bytesOf(text);
        const pos = before.length + at;
        const cutsList: number[][] = [];
        for (let c = pos - 2; c <= pos + special.length + 1; c++) if (c > 0 && c < bytes.length) cutsList.push([c]);
        cutsList.push([pos, pos + 1], [before.length, pos + 1]);
        check(bytes, NO_LIMITS, cutsList);
        assert.deepEqual(byteByByte(bytes, NO_LIMITS), reference(bytes, NO_LIMITS), `bytewise ${show(bytes)}`);
        scans += cutsList.length + 2;
      }
    }
  }
  assert.ok(scans > 10_000);
});

test('long strings (> 16 bytes, > 64 KiB) with an escape or bad byte right at the core\'s 64 KiB split', () => {
  const specials = ['\\"', '\\\\', '\\u00e9', '\\x', '\\u12"', '\x01', '\x80', '"'];
  for (const len of [15, 16, 17, 31, 32, 33, 100, CORE_CHUNK - 1, CORE_CHUNK, CORE_CHUNK + 1, 70_000, 140_000]) {
    const plain = bytesOf(`{"k":"${'s'.repeat(len)}"}`);
    check(plain, NO_LIMITS, [[7], [CORE_CHUNK], [len]]);
  }
  // The escape at every body offset around 65536 (the split json-scan.ts makes inside one feed).
  for (const before of ['{"text":"', '[[[{"a":"', '{"', '[[[["']) {
    for (const special of specials) {
      for (let pos = CORE_CHUNK - 7; pos <= CORE_CHUNK + 2; pos++) {
        const fill = pos - before.length;
        const text = before + 'q'.repeat(fill) + special + 'r'.repeat(20) + (before.endsWith('{"') ? '":1}' : before.startsWith('{"text') ? '"}' : before.startsWith('[[[{') ? '"}]]]' : '"]]]]');
        const bytes = bytesOf(text);
        check(bytes, NO_LIMITS, [[pos], [pos + 1], [CORE_CHUNK + 1]]);
      }
    }
  }
});

test('numbers of every grammar shape, in every context, cut at every offset', () => {
  const shapes = [...VALID_NUMBERS, ...INVALID_NUMBERS, '12345678901234567890123', '-0.000000000000000001', '1234567890.12345', '123456789012.3'];
  const contexts: [string, string][] = [
    ['', ''],
    [' ', ' '],
    ['[', ']'],
    ['[', ',1]'],
    ['{"id":', '}'],
    ['{"jsonrpc":"2.0","id":', ',"result":{}}'],
    ['[[[[', ',1]]]]'],
    ['{"a":[[[{"b":', '}]]]}'],
    ['[[[[', ' ]]]]'],
    ['[[[{"a":', '\r\n,"b":1}]]]'],
    ['{"result":{"structuredContent":', '}}'],
  ];
  for (const shape of shapes) {
    for (const [before, after] of contexts) {
      const bytes = Buffer.from(before + shape + after);
      const cutsList: number[][] = [];
      for (let c = 1; c < bytes.length; c++) cutsList.push([c]);
      check(bytes, NO_LIMITS, cutsList);
      check(bytes, { maxDepth: 4, maxNodes: 1 }, cutsList.slice(0, 4));
    }
  }
});

test('literals, whole and cut by chunk ends, at depths 0..5', () => {
  for (const lit of [...LITERALS, ...BAD_LITERALS]) {
    for (let w = 0; w <= 5; w++) {
      for (const [open, close] of [['[', ']'], ['{"text":', '}']] as const) {
        const bytes = Buffer.from(open.repeat(w) + lit + close.repeat(w));
        const cutsList: number[][] = [];
        for (let c = 1; c < bytes.length; c++) cutsList.push([c]);
        for (let c = 1; c + 1 < bytes.length; c++) cutsList.push([c, c + 1]);
        check(bytes, NO_LIMITS, cutsList);
      }
    }
  }
});

test('literals at depth >= 3 (the inline literal path of scanChunk): every kind and neighbour, bad spellings, every node bound, every cut', () => {
  // The inline path reads `true` / `null` / `fals` as one 4-byte word (and the `e` of
  // `false`); a literal cut by a chunk's end reads the zero bytes past it and goes generic.
  const inners = [
    '[true,false,null,true,false,null]',
    '[1,true,"s",false,{},null,[]]',
    '{"a":true,"b":false,"c":null,"text":true,"d":[null]}',
    '[true ,false\n,\tnull ]',
    '[truex]',
    '[falsee]',
    '[nulll]',
    '[tru]',
    '[fals,true]',
    '[nul]',
    '[trUe]',
    '[falsy]',
    '[null"x"]',
    '{"a":truefalse}',
    // A value string or an escaped key after `"text":<literal>`: only the literal path resets
    // valueOfTextKey there (the compact-member path resets it on its own; found by review).
    '[{"text":true}," {"]',
    '{"text":false,"\\u0061":1}',
  ];
  checkWrapped(inners, [['[[', ']]'], ['{"a":{"b":', '}}'], ['{"result":{"structuredContent":{"p":', '}}}']]);
});

test('member keys (text, id, jsonrpc, result, error, structuredContent) at depth 1, 2 and 3+, cut at every pair of offsets', () => {
  const texts = [
    '{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"text":"{x"},"content":[{"type":"text","text":" {}"}]},"error":null}',
    '{"id":"a","result":{"content":[{"text":"plain"}],"structuredContent":{"id":1,"jsonrpc":2,"result":3,"text":"no"}},"jsonrpc":"2.0"}',
    '{"result":{"structuredContent":1,"structured\\u0043ontent":2},"id":[1,{"id":2}],"jsonrpc":"1"}',
    '{"result":{"structuredContent":{"a":1}},"result":{"b":[1,2]},"id":1,"id":2,"\\u0069d":3}',
    '[{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{}}}]',
    '{"a":{"b":{"text":"{","c":{"text":"\\u007b","structuredContent":{"text":" x"}}}}}',
    '{"a":{"b":{"te\\u0078t":"{","tex":"{","texts":"{","text":"x"}}}',
    '{"error":{"code":1,"message":"x","data":{"text":"{"}},"id":null,"jsonrpc":"2.0"}',
    '{"structuredContentX":1,"result":{"structuredContentX":{},"structuredconten":2,"structuredContent":"sc"}}',
    '{"result":[{"structuredContent":1}],"id":1}',
    '{"result":{"x":{"structuredContent":1}},"jsonrpc":"2.0"}',
    '{"result":{"content":[{"type":"text","text":"a\\"b"},"x",{"text":1},{"text":"p","meta":{"text":"d"},"text":"q"}],"isError":false}}',
    '{"result":{"content":[{"text":"a"}],"content":[{"t\\u0065xt":"b","text":"c"},[{"text":"d"}]]},"result":{"content":[{"text":"{}"}]}}',
  ];
  for (const text of texts) {
    const bytes = Buffer.from(text);
    const cutsList: number[][] = [];
    for (let a = 1; a < bytes.length; a++) for (let b = a; b < bytes.length; b += 1) cutsList.push([a, b]);
    const ref = check(bytes, NO_LIMITS, cutsList);
    crossCheckReference(bytes, ref, text);
    assert.deepEqual(byteByByte(bytes, NO_LIMITS), ref);
  }
});

test('edge bounds: maxDepth 0/1/2 and maxNodes 0/1/2 on scalars, containers and invalid text, whole and byte by byte', () => {
  const inputs = [
    '', ' ', '1', '"a"', 'true', '[]', '{}', '[1]', '{"a":1}', '[[]]', '[{}]', '{"a":[]}', '[1,2]', ' [ 1 , [ ] ] ', '"\\u12"', 'tru', '01',
    '[1,]', '[1,x]', '{"a":}', ']', 'x', '<html>', '[1,2,]', '[[[[1,]]]]', '[[[[1,2,]]]]', '{"a":{"b":{"c":{"d":[1,}}}}', '[[[[1,\x80]]]]',
  ];
  for (const s of inputs) {
    const bytes = bytesOf(s);
    for (const maxDepth of [0, 1, 2, 4, Infinity]) {
      for (const maxNodes of [0, 1, 2, 3, 4, Infinity]) {
        const limits = { maxDepth, maxNodes };
        const ref = check(bytes, limits, []);
        assert.deepEqual(byteByByte(bytes, limits), ref, `${s} ${JSON.stringify(limits)}`);
      }
    }
  }
});

test('bug: a byte that cannot start a value is a syntax error, not a json_nodes breach (beginValue counted it first)', () => {
  const nodes = (s: string, maxNodes: number): JsonScanResult => scanJson(Buffer.from(s), { maxDepth: 64, maxNodes });
  // `[1,]` has 2 values; JSON.parse rejects it at the `]` (offset 3). It must not be "node 3 of 2".
  assert.deepEqual(nodes('[1,]', 2), { ok: false, reason: 'syntax', offset: 3 });
  assert.deepEqual(nodes('{"a":}', 1), { ok: false, reason: 'syntax', offset: 5 });
  assert.deepEqual(nodes('<html>', 0), { ok: false, reason: 'syntax', offset: 0 });
  assert.deepEqual(nodes('[[[[1,x]]]]', 5), { ok: false, reason: 'syntax', offset: 6 }, 'depth >= 3 (generic beginValue from the fast path)');
  // A value start that is valid still breaches at its first byte.
  assert.deepEqual(nodes('[1,t', 2), { ok: false, reason: 'json_nodes', limit: 2, observed: 3, offset: 3 });
});

test('interleaved scanners on the one core: 300 rounds of 5 scanners fed random chunks in turn', () => {
  const r = rng(0x5eed_0003);
  for (let round = 0; round < 300; round++) {
    const docs = Array.from({ length: 5 }, (_, k) => {
      let t = r() < 0.5 ? genEnvelope(r, 3 + int(r, 6)) : genValue(r, 0, int(r, 9));
      if (k === 4 && r() < 0.5) t = mutate(r, t);
      if (k === 3) t = '[{"a":'.repeat(40 + int(r, 300)) + t + '}]'.repeat(40 + int(r, 300));
      return bytesOf(t);
    });
    const limits = docs.map((d, k) => (k === 2 ? randomLimits(r, reference(d, NO_LIMITS)) : NO_LIMITS));
    const scanners = docs.map((_, k) => new JsonScanner(limits[k]!));
    const pos = docs.map(() => 0);
    const fed: (JsonScanFailure | undefined)[] = docs.map(() => undefined);
    for (let live = docs.length; live > 0; ) {
      live = 0;
      for (let k = 0; k < docs.length; k++) {
        const d = docs[k]!;
        if (pos[k]! >= d.length) continue;
        live++;
        const size = r() < 0.3 ? 1 : 1 + int(r, 200);
        const got = scanners[k]!.feed(d.subarray(pos[k], pos[k]! + size));
        if (got !== undefined) fed[k] ??= got;
        pos[k] = pos[k]! + size;
      }
    }
    for (let k = 0; k < docs.length; k++) {
      const ref = reference(docs[k]!, limits[k]!);
      const end = scanners[k]!.end();
      assert.deepEqual(end, ref, `round ${round} scanner ${k} ${show(docs[k]!)}`);
      if (fed[k] !== undefined) assert.equal(end, fed[k], 'the failure feed() returned');
    }
  }
});

test('feeding after a failure changes nothing (same object), and does not disturb another scanner', () => {
  const good = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"text":"{"}}}');
  for (const [bad, limits] of [
    ['[1,]', NO_LIMITS],
    ['"\x01"', NO_LIMITS],
    ['[[[', { maxDepth: 2, maxNodes: 10 }],
    ['[1,2,3]', { maxDepth: 2, maxNodes: 2 }],
  ] as const) {
    const other = new JsonScanner(NO_LIMITS);
    other.feed(good.subarray(0, 20));
    const s = new JsonScanner(limits);
    const first = s.feed(Buffer.from(bad));
    assert.ok(first !== undefined, bad);
    assert.deepEqual(first, reference(Buffer.from(bad), limits));
    for (const more of ['', ']', '{}', '"x"', ' ', '\x01']) assert.equal(s.feed(Buffer.from(more)), first);
    assert.equal(s.end(), first);
    assert.equal(s.end(), first);
    other.feed(good.subarray(20));
    assert.deepEqual(other.end(), reference(good, NO_LIMITS));
  }
  // A body that ended: end() again gives the same summary; more bytes are a caller's bug.
  const done = new JsonScanner(NO_LIMITS);
  done.feed(good);
  const summary = done.end();
  assert.ok(summary.ok);
  new JsonScanner(NO_LIMITS).feed(Buffer.from('[')); // another scanner holds the core now
  assert.equal(done.end(), summary);
  assert.throws(() => done.feed(Buffer.from(' ')), /feed after a successful end/);
  // A body that ends early: end() fails; end() again gives the same failure.
  const s = new JsonScanner(NO_LIMITS);
  assert.equal(s.feed(Buffer.from('{"a":[1')), undefined);
  const e = s.end();
  assert.deepEqual(e, { ok: false, reason: 'syntax', offset: 7 });
  assert.equal(s.end(), e);
});

test('1-byte chunks over a generated 40 KiB message equal the whole scan', () => {
  const r = rng(0x5eed_0004);
  const parts: string[] = [];
  while (parts.join(',').length < 40_000) parts.push(genEnvelope(r, 5));
  const bytes = bytesOf(`[${parts.join(',')}]`);
  const ref = reference(bytes, NO_LIMITS);
  assert.deepEqual(scanJson(bytes, NO_LIMITS), ref);
  assert.deepEqual(byteByByte(bytes, NO_LIMITS), ref);
});

test('one huge chunk (~6 MiB get_products-like result) equals the reference, and the same body in odd splits', () => {
  const r = rng(0x5eed_0005);
  const products: string[] = [];
  let size = 0;
  for (let k = 0; size < 6 * 1024 * 1024; k++) {
    const p = `{"product_id":"p${k}","name":"${genStringBody(r).replace(/["\\]/g, '')}x","price":${genNumber(r).replace(/^-/, '')},"tags":["a","b\\u00e9"],"text":"${k % 997 === 0 ? '{' : 'n'}","deep":{"a":[{"b":[${k}]}]}}`;
    products.push(p);
    size += p.length + 1;
  }
  const body = `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Found"}],"structuredContent":{"products":[${products.join(',')}]}}}`;
  const bytes = bytesOf(body);
  assert.ok(bytes.length > 6 * 1024 * 1024);
  const ref = reference(bytes, NO_LIMITS);
  assert.ok(ref.ok);
  assert.equal(ref.textMayHoldObject, true);
  crossCheckReference(bytes, ref, 'huge');
  checkBoth(bytes, NO_LIMITS, [[CORE_CHUNK * 3 + 7, CORE_CHUNK * 40 - 1], [1, bytes.length - 1]], 'huge', ref);
  // Over the node bound somewhere in the middle, and the first byte of a late failure.
  check(bytes, { maxDepth: 64, maxNodes: 100_000 }, [[12345]]);
  const broken = Buffer.from(bytes);
  broken[bytes.length - 100] = 0x01;
  const bref = reference(broken, NO_LIMITS);
  assert.ok(!bref.ok);
  assert.deepEqual(scanJson(broken, NO_LIMITS), bref);
});

test('very deep unbounded nesting (2,000,000 levels, mixed kinds) with a scanner fed in between', () => {
  const levels = 1_000_000;
  const open = Buffer.from('[{"a":'.repeat(levels)); // 2,000,000 levels
  const closeOk = Buffer.from('}]'.repeat(levels));
  const deep = new JsonScanner(NO_LIMITS);
  const side = new JsonScanner(NO_LIMITS);
  const sideBody = Buffer.from('[[[[{"text":"{"}]]]]');
  let sidePos = 0;
  const step = 100_003;
  for (let k = 0; k < open.length; k += step) {
    assert.equal(deep.feed(open.subarray(k, k + step)), undefined);
    side.feed(sideBody.subarray(sidePos, sidePos + 1));
    sidePos++;
  }
  // One level closed with the wrong bracket, deep down: the stack must remember each level's kind.
  const wrongAt = 2 * 777_777 + 1; // a `]` where `}` belongs
  const closeBad = Buffer.from(closeOk);
  closeBad[wrongAt] = 0x7d;
  closeBad[wrongAt - 1] = 0x5d;
  const bad = new JsonScanner(NO_LIMITS);
  assert.equal(bad.feed(open), undefined);
  assert.equal(bad.feed(Buffer.from('1')), undefined);
  assert.equal(deep.feed(Buffer.from('1')), undefined);
  for (let k = 0; k < closeOk.length; k += step) {
    deep.feed(closeOk.subarray(k, k + step));
    bad.feed(closeBad.subarray(k, k + step));
    side.feed(sideBody.subarray(sidePos, sidePos + 1));
    sidePos++;
  }
  side.feed(sideBody.subarray(sidePos));
  const d = deep.end();
  assert.ok(d.ok);
  assert.equal(d.depth, 2 * levels);
  assert.equal(d.nodes, 2 * levels + 1);
  assert.deepEqual(bad.end(), { ok: false, reason: 'syntax', offset: open.length + 1 + wrongAt - 1 });
  assert.deepEqual(side.end(), reference(sideBody, NO_LIMITS));
  // Bounded: stops at the first byte over the bound, however the brackets are split.
  assert.deepEqual(feedAll(open, [5, 999_999], { maxDepth: 1_000_000, maxNodes: Infinity }), {
    ok: false,
    reason: 'json_depth',
    limit: 1_000_000,
    observed: 1_000_001,
    offset: 6 * 500_000,
  });
});
