/**
 * AdCP data extraction from MCP messages: success data (`extractAdcpResponse`, the
 * normative algorithm of `mcp-response-extraction.md` §Extraction Algorithm) and AdCP
 * errors (`extractAdcpError`, the transport-errors page's MCP detection order as summarized
 * in ARCHITECTURE §3).
 *
 * The text-fallback walk over `content[]` is written once here (`findTextObject`) and shared
 * by extraction, error extraction and normalization (`normalize.ts`), so the size and
 * structure bounds apply identically everywhere.
 *
 * Prototype safety (mcp-response-extraction §Prototype Pollution): objects returned here are
 * the seller's own objects (as `JSON.parse` built them, where `"__proto__"` is a plain own
 * key); nothing is merged or assigned, and only own properties are read.
 */
import { checkJsonBounds } from './json-bounds.js';
import { scanJson } from './json-scan.js';
import type { AdcpError, TextBoundReason, TextJsonBounds } from './types.js';

/** 4 MiB: the spec's recommended client limit, and the default bound on one `content[].text` item (mcp-response-extraction §Size Limits). */
export const DEFAULT_MAX_TEXT_BYTES = 4_194_304;

/** Bounds of a valid extracted AdCP error (transport-errors page, `validate()`). */
export const ADCP_ERROR_MAX_CODE_LENGTH = 64;
export const ADCP_ERROR_MAX_BYTES = 4096;

/** A JSON object: non-null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * JSON-RPC 2.0 §5.1: an error object has an integer `code` and a string `message` (a parsed
 * value). The one test of a host's responses (request/peek.ts) and of a seller's
 * (response/rewrite.ts isWellFormedResponse).
 */
export function isJsonRpcErrorObject(e: unknown): boolean {
  if (!isJsonObject(e)) return false;
  return Number.isInteger(ownValue(e, 'code')) && typeof ownValue(e, 'message') === 'string';
}

/** Reads an own property only (never the prototype chain). */
export function ownValue(obj: object, key: string): unknown {
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** True when the object's only own key is `adcp_error` (an error response missing `isError`). */
export function isAdcpErrorOnly(obj: Record<string, unknown>): boolean {
  if (!Object.hasOwn(obj, 'adcp_error')) return false;
  const keys = Object.keys(obj);
  return keys.length === 1;
}

/**
 * Whether `text` encodes to more than `maxBytes` UTF-8 bytes. O(1) for most inputs: one
 * UTF-16 unit is at most 3 UTF-8 bytes and at least one, so `length * 3 <= max` is always
 * within and `length > max` always over; only the band between is measured.
 */
export function utf8LengthExceeds(text: string, maxBytes: number): boolean {
  if (text.length * 3 <= maxBytes) return false;
  if (text.length > maxBytes) return true;
  return Buffer.byteLength(text, 'utf8') > maxBytes;
}

/** Index of the first character that is not JSON whitespace (RFC 8259 §2), or -1. */
export function firstSignificant(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
  }
  return -1;
}

/**
 * Parses one `content[].text` value as a JSON object, under bounds. Returns the parsed
 * object, or `undefined` when the value is not a non-empty string, is over
 * `bounds.maxTextBytes` UTF-8 bytes (default 4 MiB), does not start (after JSON
 * whitespace) with `{`, breaks `bounds.maxDepth` / `bounds.maxNodes` (checked only when
 * given, before parsing), is not valid JSON, or parses to anything but a non-array object.
 * Never throws on seller input. {@link readTextObject} gives the same answer and also says
 * which bound, when one decided.
 *
 * Rules: size check before `JSON.parse` (mcp-response-extraction §Size Limits); only
 * non-array objects are accepted (§Client Library Requirements 3); structure bounds before
 * parsing, over-bound text simply not lifted (ARCHITECTURE §5). The `{` pre-check only
 * skips texts `JSON.parse` could never turn into an object.
 *
 * lift-text.ts judgeStringText gives the same verdict from the bytes of the text's JSON string
 * (the lift and the dedupe without parsing: response/lift-splice.ts, response/dedupe-splice.ts):
 * a change of rule here is a change there too (test/unit/lift-splice.test.ts and
 * test/unit/dedupe-splice.test.ts compare the paths' output).
 */
export function parseTextObject(text: unknown, bounds: TextJsonBounds = {}): Record<string, unknown> | undefined {
  const read = readTextObject(text, bounds);
  return typeof read === 'string' ? undefined : read;
}

/**
 * {@link parseTextObject}, saying why when a bound, not the text's content, kept it from being
 * read: the parsed object; a {@link TextBoundReason} for a text that may hold a JSON object and
 * was skipped for a bound; `undefined` for every other text (not a non-empty string, not
 * starting with `{` after JSON whitespace, not JSON, not an object). Never throws on seller
 * input.
 *
 * A reason is given only for a text whose first character after JSON whitespace is `{`, in
 * the order the rules apply:
 * - `text_bytes`: over `bounds.maxTextBytes` UTF-8 bytes (default 4 MiB). Nothing more of it
 *   is read (the size is checked before anything else, mcp-response-extraction §Size Limits),
 *   so it is named whatever the rest holds: not JSON, or over a structure bound too;
 * - `json_depth` / `json_nodes`: within the size, over that bound (when both break at one
 *   bracket, `json_depth`), and valid JSON throughout, as the validating scan (json-scan.ts)
 *   reads it with no bound: a text `JSON.parse` would read as an object, were it not for the
 *   bound. It may be `adcp_error`-only (callers cannot tell, and need not: the lift's walk
 *   ends there, findLiftableTextOrBound). A text that is not JSON (`{"a": oops [[[[…`, or
 *   invalid only past the value that broke the bound: `{"a":[[[…]]],}`) is no JSON, not over
 *   a bound: `JSON.parse` refuses it, so the spec's algorithm passes over it, and so does the
 *   walk (hostile trial 40, F2: such a text had ended the lift's walk).
 *
 * Cost: none over parseTextObject for a text that is read or is no JSON (no allocation: a
 * reason is a string constant); a text over a structure bound is scanned once more with no
 * bound (its validity), and once more before that when it is shorter than 16 Ki characters
 * (the bound check of those texts, `checkJsonBounds`, counts on past a syntax error).
 *
 * `counted`, when given, gets the text's depth and values as the bounds check counted them
 * ({@link TextJsonCount}; no pass of its own).
 *
 * Source: a reviewer, "a text over the bounds was silently not lifted": normalize.ts reports
 * the reason (`NormalizeOutcome.textNotLifted`), the gateway logs and counts it
 * (test/regressions/text-over-bounds-not-lifted-silently.test.ts).
 */
export function readTextObject(text: unknown, bounds: TextJsonBounds = {}, counted?: TextJsonCount): Record<string, unknown> | TextBoundReason | undefined {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  if (utf8LengthExceeds(text, bounds.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES)) return startsAsObject(text) ? 'text_bytes' : undefined;
  if (!startsAsObject(text)) return undefined;
  let facts: ParsedTextFacts | undefined;
  if (bounds.maxDepth !== undefined || bounds.maxNodes !== undefined) {
    const limits = { maxDepth: bounds.maxDepth ?? Infinity, maxNodes: bounds.maxNodes ?? Infinity };
    if (text.length >= SCAN_TEXT_CHARS) {
      // One validating pass over the UTF-8 bytes: the bounds, and whether a number may lose
      // precision (the callers' next check). Invalid JSON fails here instead of in JSON.parse.
      const bytes = Buffer.from(text, 'utf8');
      const scan = scanJson(bytes, { ...limits, noteProtoKeys: true });
      if (!scan.ok) return scan.reason === 'syntax' || !scanJson(bytes, NO_BOUNDS).ok ? undefined : scan.reason;
      facts = { bytes, numbersRoundTrip: !scan.numberMayBeLossy, mayHoldProtoKey: scan.mayHoldProtoKey !== false };
      if (counted !== undefined) setCount(counted, scan.depth, scan.nodes);
    } else {
      const checked = checkJsonBounds(text, limits);
      if (!checked.ok) return scannedBoundReason(Buffer.from(text, 'utf8'), limits);
      if (counted !== undefined) setCount(counted, checked.depth, checked.nodes);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(parsed)) return undefined;
  if (facts !== undefined) textFacts.set(parsed, facts);
  return parsed;
}

/**
 * A text's JSON nesting and value count, as {@link readTextObject}'s bounds check counted them
 * (written when it returns an object and `bounds` had `maxDepth` or `maxNodes`; else left as
 * they were): for the lift's check of the message it writes (response/rewrite-room.ts
 * liftOverJsonBound).
 */
export interface TextJsonCount {
  /** Nesting of arrays and objects (`{}` alone: 1); -1 until counted. */
  depth: number;
  /** JSON values, the top-level one included; -1 until counted. */
  nodes: number;
}

function setCount(counted: TextJsonCount, depth: number, nodes: number): void {
  counted.depth = depth;
  counted.nodes = nodes;
}

/**
 * The bound `bytes` (a whole JSON text) breaks as the validating scan reads it (json-scan.ts):
 * `json_depth` / `json_nodes`, or undefined when it is invalid anywhere, or is within both
 * (checkJsonBounds, which does not validate, said otherwise).
 */
function scannedBoundReason(bytes: Uint8Array, limits: { maxDepth: number; maxNodes: number }): TextBoundReason | undefined {
  const scan = scanJson(bytes, limits);
  return scan.ok || scan.reason === 'syntax' || !scanJson(bytes, NO_BOUNDS).ok ? undefined : scan.reason;
}

/** The validating scan with no structure bound: whether a text over a bound is JSON at all ({@link readTextObject}). */
const NO_BOUNDS = { maxDepth: Infinity, maxNodes: Infinity };

/** The text's first character after JSON whitespace is `{`: the only texts `JSON.parse` can make an object of. */
function startsAsObject(text: string): boolean {
  const start = firstSignificant(text);
  return start !== -1 && text.charCodeAt(start) === 0x7b /* { */;
}

/**
 * Texts at least this long (UTF-16 units) are bounds-checked by the WebAssembly scan of their
 * UTF-8 bytes (json-scan.ts) instead of `checkJsonBounds`: one pass that also proves whether
 * every number round-trips, and whose bytes a lift writes out as `structuredContent`
 * (response/splice.ts). Issue 5: on a 1 MiB legacy text, checkJsonBounds + hasLossyNumber cost
 * ~2.6 ms, the scan ~0.5 ms (plus ~1 ms of encoding the splice needs anyway).
 */
const SCAN_TEXT_CHARS = 16 * 1024;

/** What the scan of a text proved, for the object {@link parseTextObject} parsed it into. */
export interface ParsedTextFacts {
  /** The text's UTF-8 bytes. */
  readonly bytes: Buffer;
  /** No number in the text can lose precision through a double (json-scan.ts `numberMayBeLossy: false`). */
  readonly numbersRoundTrip: boolean;
  /** A key of the text is or may be `__proto__` (json-scan.ts `mayHoldProtoKey`; false proves none is: normalize.ts). */
  readonly mayHoldProtoKey: boolean;
}

const textFacts = new WeakMap<object, ParsedTextFacts>();

/** The scan facts of a long text that {@link parseTextObject} parsed into `value` (undefined for other objects). */
export function parsedTextFacts(value: object): ParsedTextFacts | undefined {
  return textFacts.get(value);
}

/** A `content[]` item whose text parsed to an accepted JSON object. */
export interface TextObjectMatch {
  /** Position of the item in `content`. */
  index: number;
  /** The parsed object (a fresh object from `JSON.parse`). */
  value: Record<string, unknown>;
  /**
   * The text's JSON depth and values as its bounds check counted them (as written: a repeated
   * member name counts each time); undefined when the walk had no `maxDepth` / `maxNodes`.
   */
  json?: { readonly depth: number; readonly nodes: number };
}

/**
 * The text-fallback walk (mcp-response-extraction §Extraction Algorithm step 3), written
 * once: iterates `content` in array order, considers items with own `type === 'text'`,
 * parses each text with {@link parseTextObject} under `bounds`, and returns the first
 * parsed object `accept` keeps. `null` when `content` is not an array or nothing matches,
 * and when a text over `bounds.maxDepth` / `bounds.maxNodes` comes first: the walk ends
 * there, as the lift's does ({@link findLiftableTextOrBound}); a text over
 * `bounds.maxTextBytes` is passed over.
 */
export function findTextObject(
  content: unknown,
  bounds: TextJsonBounds,
  accept: (value: Record<string, unknown>) => boolean,
): TextObjectMatch | null {
  const found = walkTextObjects(content, bounds, accept);
  return typeof found === 'string' ? null : found;
}

/**
 * {@link findTextObject}, and when nothing matches, why the walk may have missed one: the
 * {@link TextBoundReason} of the first text item skipped for a bound ({@link readTextObject}),
 * else `null`. No allocation for the reason (a string constant).
 *
 * A text over `json_depth` or `json_nodes` ends the walk with that reason, whatever follows
 * (the spec's algorithm, which bounds neither, would read that text's object: hostile trial
 * 38, F1); one over `text_bytes`, the one per-item bound the spec names, is skipped and a
 * later match wins. The one walk of the lift (findLiftableTextOrBound) and of the error's
 * text fallback (extractAdcpError).
 */
function walkTextObjects(content: unknown, bounds: TextJsonBounds, accept: (value: Record<string, unknown>) => boolean): TextObjectMatch | TextBoundReason | null {
  if (!Array.isArray(content)) return null;
  let skipped: TextBoundReason | null = null;
  const counted: TextJsonCount = { depth: -1, nodes: -1 };
  for (let index = 0; index < content.length; index++) {
    const item: unknown = content[index];
    if (!isJsonObject(item) || ownValue(item, 'type') !== 'text') continue;
    const value = readTextObject(ownValue(item, 'text'), bounds, counted);
    if (typeof value === 'string') {
      if (value !== 'text_bytes') return value;
      skipped ??= value;
    } else if (value !== undefined && accept(value)) return counted.depth < 0 ? { index, value } : { index, value, json: { depth: counted.depth, nodes: counted.nodes } };
  }
  return skipped;
}

/**
 * The first `content[]` text item of a tool result whose text is liftable success data:
 * within `bounds` (size always, default 4 MiB; depth/nodes when given), a JSON non-array
 * object, and not `adcp_error`-only. This is step 3 of the extraction algorithm only:
 * callers apply the `isError` and `structuredContent` steps first.
 *
 * `result`: anything; non-objects and results without a `content` array give `null`.
 */
export function findLiftableTextItem(result: unknown, bounds: TextJsonBounds = {}): TextObjectMatch | null {
  const found = findLiftableTextOrBound(result, bounds);
  return typeof found === 'string' ? null : found;
}

/**
 * {@link findLiftableTextItem}, saying why when it finds nothing and a bound may be the cause:
 * the match; else the {@link TextBoundReason} of the first text item that may hold a JSON
 * object and was skipped for a bound ({@link readTextObject}); else `null` (no item, or none
 * but texts that are not JSON objects or are `adcp_error`-only).
 *
 * A text over `maxTextBytes` before the match is skipped and the match found (the spec's
 * step 3 enforces the response-size limit on each item, then skips it). A text over
 * `maxDepth` or `maxNodes` is not: the walk ends there with its reason, and nothing is found.
 * The spec's algorithm, which bounds no depth or count, returns that text's object; finding a
 * later item would hand the host other data than the seller's result gives it (the lift is
 * then the one the host reads first: structuredContent), where finding none leaves the
 * result as the seller wrote it, for the host to extract as the spec says. Source: hostile
 * trial 38, F1 (test/regressions/over-bound-text-passed-over-for-later-text.test.ts): a first
 * text of 100,002 values, then `{"products":[…"SECOND"…]}`: the gateway lifted SECOND, the
 * spec's algorithm on the seller's result returns the first.
 *
 * Source of the reason: a reviewer, "a text over the bounds was silently not lifted"
 * (normalize.ts `NormalizeOutcome.textNotLifted`).
 */
export function findLiftableTextOrBound(result: unknown, bounds: TextJsonBounds = {}): TextObjectMatch | TextBoundReason | null {
  if (!isJsonObject(result)) return null;
  return walkTextObjects(ownValue(result, 'content'), bounds, (value) => !isAdcpErrorOnly(value));
}

/**
 * Extracts AdCP success data from an MCP tool result (`CallToolResult`), exactly as
 * mcp-response-extraction §Extraction Algorithm:
 * 1. `isError` truthy -> `null` (error path is separate).
 * 2. `structuredContent` a non-array object -> it (the same object), or `null` if its only
 *    key is `adcp_error`.
 * 3. Text fallback: the first `content[]` text item within `opts.maxTextBytes` UTF-8 bytes
 *    (default 4 MiB) that parses to a non-array object which is not `adcp_error`-only. With
 *    `maxDepth`/`maxNodes` given, a text over them that would be that item ends the walk
 *    with `null` (no later item is taken for it: {@link findLiftableTextOrBound}).
 * 4. Otherwise `null`.
 *
 * Never throws on seller input. The returned object may hold an own `"__proto__"` key: copy
 * own keys, never `Object.assign` it onto state (§Prototype Pollution).
 */
export function extractAdcpResponse(result: unknown, opts: TextJsonBounds = {}): Record<string, unknown> | null {
  if (!isJsonObject(result)) return null;
  if (ownValue(result, 'isError')) return null;
  const structured = ownValue(result, 'structuredContent');
  if (isJsonObject(structured)) return isAdcpErrorOnly(structured) ? null : structured;
  return findLiftableTextItem(result, opts)?.value ?? null;
}

/**
 * Validates an `adcp_error` candidate (transport-errors page, `validate()`; ARCHITECTURE §3):
 * a non-array object whose `code` is a string of 1–64 characters and whose
 * `JSON.stringify` is at most 4096 UTF-8 bytes. Returns it unchanged, or `null`.
 */
export function validateAdcpError(candidate: unknown): AdcpError | null {
  if (!isJsonObject(candidate)) return null;
  const code = ownValue(candidate, 'code');
  if (typeof code !== 'string' || code.length === 0 || code.length > ADCP_ERROR_MAX_CODE_LENGTH) return null;
  let serialized: string;
  try {
    serialized = JSON.stringify(candidate);
  } catch {
    return null; // not JSON data (cycle, BigInt): no structured error
  }
  if (utf8LengthExceeds(serialized, ADCP_ERROR_MAX_BYTES)) return null;
  return candidate as AdcpError;
}

/**
 * Extracts an AdCP error from an MCP message: a tool result (`CallToolResult`) or a
 * JSON-RPC response envelope (`{jsonrpc, id, result}` whose `result` is the tool result, or
 * `{jsonrpc, id, error}`), as the transport-error-mapping vectors do.
 *
 * Detection order (ARCHITECTURE §3, from the transport-errors page):
 * 1. `structuredContent.adcp_error`, only when `isError === true`;
 * 2. JSON-RPC `error.data.adcp_error`;
 * 3. the first `content[].text` item parsing to an object with a truthy `adcp_error` key,
 *    only when `isError === true` (the success fallback's walk and bounds, {@link findTextObject};
 *    `bounds` as in {@link parseTextObject}): a text over the byte bound is passed over, but
 *    one over `maxDepth` / `maxNodes` ends the walk, and no error is extracted. The page's
 *    algorithm, bounding neither, would parse that text and return its `adcp_error` if it has
 *    one; a later text's would be another error than the seller's result holds (a review of
 *    hostile trial 38, F1: test/regressions/adcp-error-walk-passes-over-over-bound-text.test.ts).
 * The first candidate found decides: it is returned unchanged if {@link validateAdcpError}
 * accepts it (raw values kept, e.g. an out-of-range `retry_after`), else `null`.
 */
export function extractAdcpError(message: unknown, bounds: TextJsonBounds = {}): AdcpError | null {
  if (!isJsonObject(message)) return null;
  const envelopeResult = ownValue(message, 'result');
  const toolResult = isJsonObject(envelopeResult) ? envelopeResult : message;
  const isError = ownValue(toolResult, 'isError') === true;

  if (isError) {
    const structured = ownValue(toolResult, 'structuredContent');
    if (isJsonObject(structured)) {
      const candidate = ownValue(structured, 'adcp_error');
      if (candidate) return validateAdcpError(candidate);
    }
  }

  const rpcError = ownValue(message, 'error');
  if (isJsonObject(rpcError)) {
    const data = ownValue(rpcError, 'data');
    if (isJsonObject(data)) {
      const candidate = ownValue(data, 'adcp_error');
      if (candidate) return validateAdcpError(candidate);
    }
  }

  if (isError) {
    const match = findTextObject(ownValue(toolResult, 'content'), bounds, (value) => Boolean(ownValue(value, 'adcp_error')));
    if (match) return validateAdcpError(ownValue(match.value, 'adcp_error'));
  }
  return null;
}
