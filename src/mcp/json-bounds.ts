/**
 * JSON structure bounds: nesting depth and node count, checked on the raw text before
 * `JSON.parse` ever sees it.
 *
 * Why: the AdCP security page's response-size bounds (summarized in
 * `mcp-response-extraction.md` §Size Limits) require a client to "bound JSON depth and node
 * count after the cap passes". A body can be under the byte cap and still be 4 MiB of `[`
 * (V8's recursive parser then throws `RangeError: Maximum call stack size exceeded`, or
 * builds millions of tiny objects). ARCHITECTURE §5: a `content[].text` item over these
 * bounds is simply not lifted, so the same scan guards the text fallback too.
 */
import { assertBoundLimit, closingQuote, TAB, LF, CR, SPACE, QUOTE, COMMA, MINUS, DIGIT_0, DIGIT_9, COLON, LBRACKET, RBRACKET, LOWER_F, LOWER_N, LOWER_T, LBRACE, RBRACE } from './json-bytes.js';

/** The bounds; `Infinity` disables one. Both must be non-negative integers or `Infinity`. */
export interface JsonBoundsLimits {
  /** Maximum nesting of arrays/objects; `{}` alone is depth 1, a bare scalar depth 0. */
  readonly maxDepth: number;
  /** Maximum number of JSON values (each object, array, string, number, true/false/null; object keys do not count). */
  readonly maxNodes: number;
}

/** The outcome of {@link checkJsonBounds}. */
export type JsonBoundsResult =
  | { readonly ok: true; readonly depth: number; readonly nodes: number }
  | {
      readonly ok: false;
      /** Same strings as the `details.reason` values of `src/errors/codes.ts`. */
      readonly reason: 'json_depth' | 'json_nodes';
      readonly limit: number;
      /** Always `limit + 1`: the scan stops at the first breach. */
      readonly observed: number;
    };

/** `prev` before the first significant character. */
const START = 0;


/**
 * Measures the nesting depth and node count of a JSON text, failing fast at the first
 * breach of either limit.
 *
 * - Input: the JSON text as a string (read with `charCodeAt`) or as UTF-8 bytes (read
 *   directly, no decoding: bytes >= 0x80 are never `"`, `\`, brackets or commas, so
 *   multi-byte characters need no special case).
 * - Counting: every value is one node (object, array, string, number, `true`, `false`,
 *   `null`); object keys are not nodes. Depth is the maximum nesting of arrays/objects.
 * - Syntax is NOT validated: the text still goes through `JSON.parse` afterwards. For valid
 *   JSON the counts are exact; for invalid JSON they are whatever the scan saw (harmless,
 *   since the parse rejects it).
 * - Result: `{ ok: true, depth, nodes }`, or `{ ok: false, reason, limit, observed }` with
 *   `observed === limit + 1`. When one character breaks both bounds (an opening bracket),
 *   `json_depth` is reported.
 * - Errors: `RangeError` when a limit is negative, fractional or NaN.
 *
 * Complexity: one forward pass, O(n) time, O(1) memory (no recursion, no per-token
 * allocation). String bodies are skipped with {@link closingQuote} (native `indexOf`,
 * linear with escapes). Outside strings each character costs a few comparisons.
 * Hostile input stops early: 4 MiB of `[` or of `{"a":` stops after `maxDepth + 1`
 * brackets; a flat array stops at node `maxNodes + 1`.
 *
 * How keys are told from values without a container stack: a string after `{` is a key,
 * after `:` / `[` / start a value; after `,` it is a key only if the next significant
 * character is `:`, so its count is settled at that character (or at the end).
 */
export function checkJsonBounds(input: string | Uint8Array, limits: JsonBoundsLimits): JsonBoundsResult {
  const { maxDepth, maxNodes } = limits;
  assertBoundLimit('checkJsonBounds', 'maxDepth', maxDepth);
  assertBoundLimit('checkJsonBounds', 'maxNodes', maxNodes);

  const str = typeof input === 'string' ? input : undefined;
  const bytes = typeof input === 'string' ? undefined : input;
  const n = input.length;

  let depth = 0;
  let maxSeenDepth = 0;
  let nodes = 0;
  /** Last significant character outside strings (whitespace skipped). */
  let prev = START;
  /** A string after `,` whose role (key or value) is settled by the next significant character. */
  let pendingString = false;

  for (let i = 0; i < n; i++) {
    const c = str !== undefined ? str.charCodeAt(i) : (bytes as Uint8Array)[i] as number;
    if (c === SPACE || c === LF || c === CR || c === TAB) continue;

    if (pendingString) {
      pendingString = false;
      if (c !== COLON && ++nodes > maxNodes) return { ok: false, reason: 'json_nodes', limit: maxNodes, observed: nodes };
    }

    if (c === QUOTE) {
      const close = closingQuote(input, i);
      i = close === -1 ? n : close; // unterminated: the parse will reject it
      if (prev === COMMA) pendingString = true;
      else if (prev !== LBRACE && ++nodes > maxNodes) {
        return { ok: false, reason: 'json_nodes', limit: maxNodes, observed: nodes };
      }
      prev = QUOTE;
      continue;
    }

    if (c === LBRACKET || c === LBRACE) {
      if (++depth > maxDepth) return { ok: false, reason: 'json_depth', limit: maxDepth, observed: depth };
      if (depth > maxSeenDepth) maxSeenDepth = depth;
      if (++nodes > maxNodes) return { ok: false, reason: 'json_nodes', limit: maxNodes, observed: nodes };
    } else if (c === RBRACKET || c === RBRACE) {
      if (depth > 0) depth--;
    } else if (
      (prev === START || prev === LBRACKET || prev === COMMA || prev === COLON) &&
      ((c >= DIGIT_0 && c <= DIGIT_9) || c === MINUS || c === LOWER_T || c === LOWER_F || c === LOWER_N)
    ) {
      // First character of a number or literal; its later characters have prev = a scalar char.
      if (++nodes > maxNodes) return { ok: false, reason: 'json_nodes', limit: maxNodes, observed: nodes };
    }
    prev = c;
  }

  if (pendingString && ++nodes > maxNodes) return { ok: false, reason: 'json_nodes', limit: maxNodes, observed: nodes };
  return { ok: true, depth: maxSeenDepth, nodes };
}

/**
 * True when {@link checkJsonBounds}`(text, limits)` cannot fail, proved
 * without its scan: it counts at most one node per character (a value's first character, a
 * string's opening quote) and one depth level per `[` or `{`, so a text no longer than
 * `maxNodes` characters with at most `maxDepth` of those brackets anywhere (strings
 * included) is within both bounds. False means "not proved": run the check. Costs a few
 * native `indexOf` calls (it stops counting past `maxDepth`), against a character loop.
 * `text` may be the UTF-8 bytes instead: their length is at least the text's (UTF-16) length,
 * and a bracket's byte comes only from that bracket, so true still proves it.
 */
export function withinJsonBounds(text: string | Buffer, limits: JsonBoundsLimits): boolean {
  if (text.length > limits.maxNodes) return false;
  const max = limits.maxDepth;
  let brackets = 0;
  if (typeof text === 'string') {
    for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++brackets > max) return false;
    for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++brackets > max) return false;
    return true;
  }
  // Number needles: on Node 20 `Buffer.indexOf` with a string needle costs ~110-400 ns per
  // call, with a number ~20 ns (bench/README.md, the SSE stage per event).
  for (let i = text.indexOf(LBRACE); i !== -1; i = text.indexOf(LBRACE, i + 1)) if (++brackets > max) return false;
  for (let i = text.indexOf(LBRACKET); i !== -1; i = text.indexOf(LBRACKET, i + 1)) if (++brackets > max) return false;
  return true;
}
