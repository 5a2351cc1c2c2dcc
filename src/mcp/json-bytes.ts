/**
 * Byte values of the JSON grammar (RFC 8259), shared by the byte scanners: json-bounds.ts,
 * json-numbers.ts, json-scan.ts; and the one walk of a JSON text's bytes the gateway's readers
 * share ({@link skipJsonSpace}, {@link jsonValueEnd}, {@link JsonMemberWalk}: the peek's wide
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
 * each visited), keeping nothing: a cursor, so a caller's loop pays no callback nor object per
 * member.
 *
 * ```ts
 * const walk = new JsonMemberWalk(bytes, open); // `open`: the offset of the object's `{`
 * while (walk.next()) {
 *   // walk.keyStart, walk.keyEnd: the key's JSON string [keyStart, keyEnd), quotes included;
 *   // walk.valueStart: the value's first byte. walk.valueEnd() finds where it ends, or
 *   // walk.resumeAt(end) says the caller read it itself, up to `end`.
 * }
 * walk.end; // the offset of the `}` that closes the object
 * ```
 *
 * A value neither ended by the caller is skipped with {@link jsonValueEnd}. Whitespace
 * anywhere between the tokens is JSON's ({@link skipJsonSpace}).
 *
 * Nothing is validated beyond the bytes the walk steps on: on a valid JSON object the members
 * and `end` are exact. On another, the walk never throws nor loops, and ends (next() false)
 * where it cannot go on: after a value not followed by `,` (`end`: the offset of the byte
 * there, whatever it is; `bytes.length` at the end), at a member that does not start with `"`
 * (`end`: its offset, e.g. the `}` after a trailing comma), or at an unterminated key (`end`:
 * `bytes.length`). The `:` is not looked at: a member missing it is visited with `valueStart`
 * one byte past where it should be.
 */
export class JsonMemberWalk {
  /** The current member's key, its opening quote's offset. */
  keyStart = -1;
  /** The current member's key: the offset past its closing quote. */
  keyEnd = -1;
  /** The current member's value: its first byte's offset. */
  valueStart = -1;
  /** Once {@link next} returned false: the offset of the `}` that closes the object (on invalid input, see the class doc); -1 before. */
  end = -1;
  /** Past the current member's value, once known ({@link valueEnd}, {@link resumeAt}); -1 until then. */
  private valueEndAt = -1;
  /** Where {@link next} reads the first member: past the `{` and its whitespace. */
  private readonly first: number;

  constructor(
    private readonly bytes: Uint8Array,
    open: number,
  ) {
    this.first = skipJsonSpace(bytes, open + 1);
  }

  /** Moves to the next member (the first, on the first call): true, or false once the object ends (then {@link end} is set; later calls stay false). */
  next(): boolean {
    if (this.end >= 0) return false;
    const b = this.bytes;
    let at: number;
    if (this.keyStart < 0) {
      at = this.first;
      if (b[at] === RBRACE) return this.finish(at);
    } else {
      at = skipJsonSpace(b, this.valueEnd());
      if (b[at] !== COMMA) return this.finish(at);
      at = skipJsonSpace(b, at + 1);
    }
    if (b[at] !== QUOTE) return this.finish(at);
    const close = closingQuote(b, at);
    if (close < 0) return this.finish(b.length);
    this.keyStart = at;
    this.keyEnd = close + 1;
    // Past the `:` (not checked) and its whitespace.
    this.valueStart = skipJsonSpace(b, skipJsonSpace(b, close + 1) + 1);
    this.valueEndAt = -1;
    return true;
  }

  /** The offset past the current member's value: as the caller gave it ({@link resumeAt}), else {@link jsonValueEnd} (found once). */
  valueEnd(): number {
    if (this.valueEndAt < 0) this.valueEndAt = jsonValueEnd(this.bytes, this.valueStart);
    return this.valueEndAt;
  }

  /** The caller read the current member's value itself, up to `end` (the offset past it): {@link next} goes on from there. */
  resumeAt(end: number): void {
    this.valueEndAt = end;
  }

  private finish(at: number): false {
    this.end = at < this.bytes.length ? at : this.bytes.length;
    return false;
  }
}
