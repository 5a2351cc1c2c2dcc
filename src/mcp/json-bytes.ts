/**
 * Byte values of the JSON grammar (RFC 8259), shared by the byte scanners: json-bounds.ts,
 * json-numbers.ts, json-scan.ts.
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
