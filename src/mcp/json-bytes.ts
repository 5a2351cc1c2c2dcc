/**
 * Byte values of the JSON grammar (RFC 8259), shared by the byte scanners: json-bounds.ts,
 * json-numbers.ts, json-scan.ts; and the one walk of a JSON text's bytes the gateway's readers
 * share ({@link skipJsonSpace}, {@link jsonValueEnd}, {@link firstJsonMember}: the peek's wide
 * objects, request/message-members.ts; the repeated-name check, request/repeated-request-names.ts;
 * the tool result's ranges, tool-result-ranges.ts). Before, each of those had a copy of its own
 * (a re-read after trial 54, which found three).
 */
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const QUOTE = 0x22;
export const PLUS = 0x2b;
export const COMMA = 0x2c;
export const MINUS = 0x2d;
export const DOT = 0x2e;
export const SLASH = 0x2f;
export const DIGIT_0 = 0x30;
export const DIGIT_9 = 0x39;
export const COLON = 0x3a;
export const UPPER_E = 0x45;
export const LBRACKET = 0x5b;
export const BACKSLASH = 0x5c;
export const RBRACKET = 0x5d;
export const LOWER_E = 0x65;
export const LOWER_F = 0x66;
export const LOWER_N = 0x6e;
export const LOWER_T = 0x74;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;

/**
 * Checks one structure bound (max depth or max nodes): a non-negative integer or `Infinity`.
 * Throws `RangeError` naming `owner` and `name` otherwise.
 */
export function assertBoundLimit(owner: string, name: string, value: number): void {
  if (!(value === Infinity || (Number.isInteger(value) && value >= 0))) {
    throw new RangeError(`${owner}: ${name} must be a non-negative integer or Infinity, got ${String(value)}`);
  }
}

/**
 * Index of the `"` that closes the string opened at `open` (a `"` in `input`): the next `"`
 * not preceded by an odd run of backslashes; -1 when the string is unterminated. Found with
 * the native `indexOf` (memchr); each backslash run before a candidate is walked once, so
 * escapes keep it linear. `input` is a JSON text as a string or as UTF-8 bytes (bytes >= 0x80
 * are never `"` or `\`).
 */
export function closingQuote(input: string | Uint8Array, open: number): number {
  const str = typeof input === 'string' ? input : undefined;
  const bytes = typeof input === 'string' ? undefined : input;
  let from = open + 1;
  for (;;) {
    const q = str !== undefined ? str.indexOf('"', from) : (bytes as Uint8Array).indexOf(QUOTE, from);
    if (q === -1) return -1;
    let b = q - 1;
    while (b > open && (str !== undefined ? str.charCodeAt(b) : (bytes as Uint8Array)[b]) === BACKSLASH) b--;
    if (((q - 1 - b) & 1) === 0) return q;
    from = q + 1;
  }
}

/** JSON's insignificant whitespace (RFC 8259 §2): space, tab, LF, CR. */
export function isJsonWhitespace(c: number): boolean {
  return c === SPACE || c === TAB || c === LF || c === CR;
}

/**
 * The first offset at or after `at` in `bytes` that is not JSON whitespace
 * ({@link isJsonWhitespace}): `bytes.length` when only whitespace follows; `at` itself when it
 * is at or past the end. Any other byte (a control byte, a byte >= 0x80) stops it.
 */
export function skipJsonSpace(bytes: Uint8Array, at: number): number {
  while (at < bytes.length && isJsonWhitespace(bytes[at]!)) at++;
  return at;
}

/**
 * The offset just past the JSON value whose first byte is at `start` in `bytes` (UTF-8 JSON
 * text, as a Buffer or a Uint8Array). Read by the value's first byte:
 * - `"`: past the quote that closes the string ({@link closingQuote}: escapes, `\"` and runs
 *   of backslashes, kept linear);
 * - `{` or `[`: past the bracket that closes it, nesting counted (an explicit counter: no
 *   recursion, any depth), every string inside skipped whole, so a bracket in a string is not
 *   counted;
 * - anything else (a number, `true`, `false`, `null`): up to the first byte that ends a scalar,
 *   a byte <= 0x20 (JSON whitespace, or a control byte no valid text has there), `,`, `}` or
 *   `]`; or the end.
 *
 * Nothing is validated: on a valid JSON text the answer is exact. On another it is never
 * thrown nor looped, and lies in [start, bytes.length] (`start` when `start` is at or past the
 * end): an unterminated string, or an unterminated string or unclosed bracket inside an object
 * or array, gives `bytes.length`; brackets are matched by count, not kind (`[1}` ends at `}`).
 * Cost: one pass over the value's bytes outside strings; strings by the native search.
 *
 * (The three copies this replaces agreed on every valid text. On invalid ones they differed:
 * request/message-members.ts gave 0 for an unterminated string value and did not stop on one
 * inside an object or array; it and request/repeated-request-names.ts ended a scalar at JSON
 * whitespace only. Their callers read only texts scanned or parsed before.)
 */
export function jsonValueEnd(bytes: Uint8Array, start: number): number {
  const first = bytes[start];
  if (first === QUOTE) {
    const close = closingQuote(bytes, start);
    return close < 0 ? bytes.length : close + 1;
  }
  if (first !== LBRACE && first !== LBRACKET) {
    let at = start;
    while (at < bytes.length && !isScalarEnd(bytes[at]!)) at++;
    return at;
  }
  let depth = 0;
  for (let at = start; at < bytes.length; at++) {
    const b = bytes[at]!;
    if (b === QUOTE) {
      const close = closingQuote(bytes, at);
      if (close < 0) return bytes.length;
      at = close;
    } else if (b === LBRACE || b === LBRACKET) depth++;
    else if ((b === RBRACE || b === RBRACKET) && --depth === 0) return at + 1;
  }
  return bytes.length;
}

/** A byte that ends a number or a literal: <= 0x20 (whitespace), `,`, `}`, `]`. */
function isScalarEnd(c: number): boolean {
  return c <= SPACE || c === COMMA || c === RBRACE || c === RBRACKET;
}

/**
 * A walk over the members of one JSON object in `bytes`, in the order written (repeated keys
 * each visited), in steps the caller's loop takes: {@link firstJsonMember}, then per member
 * the key's closing quote ({@link closingQuote}), {@link jsonMemberValue}, the value's end
 * ({@link jsonValueEnd}, or where the caller read the value to), and {@link nextJsonMember}:
 *
 * ```ts
 * let key = firstJsonMember(bytes, open); // `open`: the offset of the object's `{`
 * while (key >= 0) {
 *   const close = closingQuote(bytes, key); // the key is [key, close + 1), quotes included
 *   if (close < 0) break; // an unterminated key (invalid JSON): the walk ends at bytes.length
 *   const valueStart = jsonMemberValue(bytes, close + 1);
 *   const valueEnd = jsonValueEnd(bytes, valueStart);
 *   key = nextJsonMember(bytes, valueEnd);
 * }
 * // Here `~key` (key < 0) is the offset of the `}` that closes the object.
 * ```
 *
 * Steps, not an object or a callback: the walk's state is the caller's locals. A cursor object
 * holding it cost ~12-16% more over 99,993 members (its fields are memory V8 did not keep in
 * registers), a callback ~12% (measured when the three copies were unified).
 *
 * Nothing is validated beyond the bytes the walk steps on: on a valid JSON object every
 * member and the end are exact. On another, it never throws nor loops, and ends where it
 * cannot go on: after a value not followed by `,` (at the byte there, whatever it is, or at
 * `bytes.length`), at a member that does not start with `"` (at its offset, e.g. the `}` after
 * a trailing comma), or at an unterminated key (the caller's break, above). The `:` is not
 * looked at: a member missing it has its value read one byte past where it should be.
 *
 * Whitespace anywhere between the tokens is JSON's ({@link skipJsonSpace}).
 *
 * This step: the first member of the object whose `{` is at `open`, as the offset of its
 * key's opening `"`; or, when it has none, `~end` (negative; `end` is the offset of the `}` on
 * valid JSON).
 */
export function firstJsonMember(bytes: Uint8Array, open: number): number {
  const at = skipJsonSpace(bytes, open + 1);
  if (bytes[at] === QUOTE) return at;
  return ~(at < bytes.length ? at : bytes.length);
}

/**
 * The walk's next member ({@link firstJsonMember}), after the one whose value ends at
 * `valueEnd` (the offset past it): the offset of its key's opening `"`, or, when the object
 * ends there, `~end` (negative; `end` is the offset of the `}` on valid JSON, else see
 * firstJsonMember).
 */
export function nextJsonMember(bytes: Uint8Array, valueEnd: number): number {
  let at = skipJsonSpace(bytes, valueEnd);
  if (bytes[at] !== COMMA) return ~(at < bytes.length ? at : bytes.length);
  at = skipJsonSpace(bytes, at + 1);
  return bytes[at] === QUOTE ? at : ~at;
}

/**
 * The offset of a member's value (its first byte), for the member whose key ends at `keyEnd`
 * (the offset past its closing quote): past the whitespace, the `:` (not checked) and the
 * whitespace after it ({@link firstJsonMember}).
 */
export function jsonMemberValue(bytes: Uint8Array, keyEnd: number): number {
  return skipJsonSpace(bytes, skipJsonSpace(bytes, keyEnd) + 1);
}
