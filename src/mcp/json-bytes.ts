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
