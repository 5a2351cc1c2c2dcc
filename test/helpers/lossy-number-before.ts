/**
 * json-numbers.ts `hasLossyNumber` as it was before the follow-up of hostile trial 56 (commit
 * 11be185), kept as the reference of test/unit/json-numbers-differential.test.ts: the scan
 * was rewritten (a loop per part of a number token, and rule 3 reading a long token spelled
 * short, test/regressions/huge-number-lossy-check-stalls-gateway.test.ts) and must give the
 * same answer on every input. Only its name changed; do not edit it to follow the source.
 */
import { closingQuote, TAB, LF, CR, SPACE, QUOTE, PLUS, MINUS, DOT, DIGIT_0, DIGIT_9, UPPER_E, LOWER_E } from '../../src/mcp/json-bytes.js';

const SAFE_SIGNIFICANT_DIGITS = 15;
const MIN_SAFE_EXPONENT = -307;
const MAX_SAFE_EXPONENT = 307;
const MAX_SHORTEST_DIGITS = 17;
const MAX_FULL_INTEGER_DIGITS = 21;

/** The reference: `hasLossyNumber` before (module doc). */
export function hasLossyNumberBefore(input: string | Uint8Array): boolean {
  const str = typeof input === 'string' ? input : undefined;
  const bytes = typeof input === 'string' ? undefined : input;
  const n = input.length;

  for (let i = 0; i < n; i++) {
    let c = str !== undefined ? str.charCodeAt(i) : (bytes as Uint8Array)[i] as number;
    if (c === SPACE || c === LF || c === CR || c === TAB) continue;

    if (c === QUOTE) {
      const close = closingQuote(input, i);
      if (close === -1) return false; // unterminated string: no number after it
      i = close;
      continue;
    }

    if (c !== MINUS && (c < DIGIT_0 || c > DIGIT_9)) continue;

    // A number token: -?int(.frac)?([eE][+-]?exp)?
    const start = i;
    if (c === MINUS) {
      i++;
      c = i < n ? (str !== undefined ? str.charCodeAt(i) : (bytes as Uint8Array)[i] as number) : -1;
    }
    /** Mantissa digits seen (integer and fraction parts). */
    let digits = 0;
    let intDigits = 0;
    /** Mantissa index of the first and last nonzero digit; -1 while all zero. */
    let firstNonZero = -1;
    let lastNonZero = -1;
    let fractionOrExponent = false;
    let exponent = 0;
    let exponentNegative = false;
    let part = 0; // 0 integer, 1 fraction, 2 exponent
    for (; i < n; i++) {
      c = str !== undefined ? str.charCodeAt(i) : (bytes as Uint8Array)[i] as number;
      if (c >= DIGIT_0 && c <= DIGIT_9) {
        if (part === 2) {
          // A double, never clamped (a clamp could let leading zeros cancel a huge exponent):
          // past 2^53 it is inexact, past 309 digits Infinity, both far outside the band below.
          exponent = exponent * 10 + (c - DIGIT_0);
        } else {
          if (c !== DIGIT_0) {
            if (firstNonZero === -1) firstNonZero = digits;
            lastNonZero = digits;
          }
          digits++;
          if (part === 0) intDigits++;
        }
      } else if (c === DOT && part === 0) {
        part = 1;
        fractionOrExponent = true;
      } else if ((c === LOWER_E || c === UPPER_E) && part !== 2) {
        part = 2;
        fractionOrExponent = true;
      } else if ((c === PLUS || c === MINUS) && part === 2) {
        if (c === MINUS) exponentNegative = true;
      } else {
        break;
      }
    }
    const end = i;
    i--; // the loop's i++ lands on the character after the token

    const significant = firstNonZero === -1 ? 0 : lastNonZero - firstNonZero + 1;
    if (!fractionOrExponent) {
      if (digits <= SAFE_SIGNIFICANT_DIGITS) continue;
      if (digits > MAX_FULL_INTEGER_DIGITS || significant > MAX_SHORTEST_DIGITS) return true;
      if (!integerRoundTrips(tokenText(input, start, end))) return true;
    } else {
      if (significant === 0) continue; // zero: stays an exact 0
      if (significant <= SAFE_SIGNIFICANT_DIGITS) {
        // Decimal exponent of the first significant digit: the value is in [10^e, 10^(e+1)).
        const e = intDigits - 1 - firstNonZero + (exponentNegative ? -exponent : exponent);
        if (e >= MIN_SAFE_EXPONENT && e <= MAX_SAFE_EXPONENT) continue;
      } else if (significant > MAX_SHORTEST_DIGITS) {
        return true;
      }
      if (!decimalRoundTrips(tokenText(input, start, end))) return true;
    }
  }
  return false;
}

/** The token `input[start, end)` as a string (number tokens are ASCII). */
function tokenText(input: string | Uint8Array, start: number, end: number): string {
  if (typeof input === 'string') return input.slice(start, end);
  if (Buffer.isBuffer(input)) return input.toString('latin1', start, end);
  return Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('latin1', start, end);
}

/** Rule 3 for an integer token: re-emitted byte for byte. */
function integerRoundTrips(token: string): boolean {
  return String(Number(token)) === token;
}

/** Rule 3 for a token with a fraction or exponent: `JSON.stringify(JSON.parse(token))` has the same exact value. */
function decimalRoundTrips(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return false; // JSON.stringify writes null
  const out = String(value);
  return out === token || sameDecimalValue(out, token);
}

/**
 * Whether two decimal literals (JSON number grammar, plus the `e+` that `String(number)`
 * writes) have the same exact value: same sign, same significant digits (leading and trailing
 * zeros aside) and the same decimal exponent of the first one. No allocation.
 */
function sameDecimalValue(a: string, b: string): boolean {
  const ea = shape(a);
  const na = shapeNegative;
  const fa = shapeFirst;
  const ca = shapeCount;
  const eb = shape(b);
  if (ca === 0 || shapeCount === 0) return ca === shapeCount; // zeros are equal whatever their sign
  if (na !== shapeNegative || ca !== shapeCount || ea !== eb) return false;
  let i = fa;
  let j = shapeFirst;
  for (let k = 0; k < ca; k++, i++, j++) {
    if (a.charCodeAt(i) === DOT) i++;
    if (b.charCodeAt(j) === DOT) j++;
    if (a.charCodeAt(i) !== b.charCodeAt(j)) return false;
  }
  return true;
}

/** Outputs of {@link shape} besides its return value (module scratch: no allocation per call). */
let shapeNegative = false;
/** Index of the first nonzero mantissa digit. */
let shapeFirst = 0;
/** Significant digits, from the first to the last nonzero mantissa digit; 0 for a zero. */
let shapeCount = 0;

/** Reads a decimal literal's sign, first significant digit and count; returns the decimal exponent of that digit. */
function shape(literal: string): number {
  const n = literal.length;
  let i = 0;
  shapeNegative = literal.charCodeAt(0) === MINUS;
  if (shapeNegative) i++;
  let intDigits = 0;
  let digits = 0;
  let first = -1;
  let firstDigit = -1;
  let last = -1;
  let inFraction = false;
  for (; i < n; i++) {
    const c = literal.charCodeAt(i);
    if (c === DOT) {
      inFraction = true;
      continue;
    }
    if (c === LOWER_E || c === UPPER_E) break;
    if (c !== DIGIT_0) {
      if (first === -1) {
        first = i;
        firstDigit = digits;
      }
      last = digits;
    }
    digits++;
    if (!inFraction) intDigits++;
  }
  shapeFirst = first;
  shapeCount = first === -1 ? 0 : last - firstDigit + 1;
  const explicit = i < n ? Number(literal.slice(i + 1)) : 0;
  return intDigits - 1 - firstDigit + explicit;
}
