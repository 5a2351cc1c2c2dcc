/**
 * Number precision guard for rewrites: does a JSON text hold a number that would change if it
 * went through JavaScript numbers (`JSON.parse`, then `JSON.stringify`)?
 *
 * Why: a rewrite (dedupe or lift, `normalize.ts` / `src/response/rewrite.ts`) re-serializes
 * the whole message from parsed values, and replaces a `content[].text` item (which may hold
 * the only exact copy of the data) with a summary. A seller's
 * `"structuredContent":{"media_buy_id":9007199254740993}` reached the host as
 * `9007199254740992`; a lifted text lost the same digit; `0.1000000000000000055511151231257827`
 * became `0.1`; and a text `12345678901234567890` was "deep-equal" to a structuredContent
 * `12345678901234567000` once both were doubles, so the more precise text was dropped as a
 * copy (test/regressions/big-number-precision.test.ts). The fix is conservative: what can't
 * round-trip is never rewritten, the seller's bytes go out as they are.
 */
import { closingQuote, QUOTE, PLUS, MINUS, DOT, DIGIT_0, DIGIT_9, UPPER_E, LOWER_E } from './json-bytes.js';


/**
 * Any decimal with at most 15 significant digits survives decimal -> double -> shortest
 * decimal with its value intact (DBL_DIG), as long as the double is normal (not subnormal,
 * not infinite).
 */
const SAFE_SIGNIFICANT_DIGITS = 15;
/**
 * Decimal exponents of the first significant digit for which every value is a normal double:
 * 1e-307 > 2.2250738585072014e-308 (smallest normal) and 9.99...e307 < 1.7976931348623157e308
 * (largest finite). Outside this band the exact check decides.
 */
const MIN_SAFE_EXPONENT = -307;
const MAX_SAFE_EXPONENT = 307;
/**
 * Past these decimal exponents of the first significant digit `Number` reads no nonzero finite
 * double: from 1e309 up it is `Infinity` (the largest double is 1.7976931348623157e308), below
 * 1e-324 it is 0 (under half the smallest, 5e-324).
 */
const MAX_FINITE_EXPONENT = 308;
const MIN_NONZERO_EXPONENT = -324;
/** The shortest round-trip form of a double has at most 17 significant digits. */
const MAX_SHORTEST_DIGITS = 17;
/** `String(x)` writes an integer in full only below 1e21 (at most 21 digits), exponential above. */
const MAX_FULL_INTEGER_DIGITS = 21;

/**
 * Whether a JSON text has a number token, outside strings, that `JSON.parse` followed by
 * `JSON.stringify` would not reproduce with its exact value. Numbers inside strings (a
 * `content[].text` holding JSON, an id written as `"9007199254740993"`) are never looked at:
 * callers scan such an inner text separately.
 *
 * A token is lossless when:
 * 1. it is an integer (no `.`, `e`, `E`) of at most 15 digits (below 2^53, exact); or
 * 2. it has a fraction or exponent, at most 15 significant digits (leading and trailing zeros
 *    not counted), and its value is zero or a normal double (decided from the decimal
 *    exponent, without converting: no overflow to `Infinity`, no underflow to 0 or to a
 *    subnormal); `1.50` -> `1.5`, `1E5` -> `100000`, `-0.0` -> `0` keep their value; or
 * 3. otherwise it is already the shortest round-trip form of its double: for an integer,
 *    `String(Number(token)) === token` (`9007199254740992`, `12345678901234567000`: re-emitted
 *    byte for byte, still an integer); for a token with a fraction or exponent, the exact
 *    decimal value of `String(Number(token))` equals the token's (`0.30000000000000004`,
 *    `1e-320`, and other writers' spellings of a shortest form such as `3.4458332855285927e43`
 *    or `1.2345678901234568E+16`, which only change notation).
 *
 * Everything else is lossy: `9007199254740993`, `12345678901234567890`, `1e400` (Infinity,
 * emitted as `null`), `1e-400` (0), `0.1000000000000000055511151231257827`, anything with more
 * than 17 significant digits, and integers whose shortest form is exponential
 * (`1000000000000000000000` -> `1e+21`: an integer must stay an integer). `-0` counts as
 * lossless (it becomes `0`, an equal value).
 *
 * Input: the JSON text as a string, or its UTF-8 bytes (read directly, no decoding: bytes
 * >= 0x80 are never `"`, `\`, a digit or a sign). Syntax is not validated (the text has
 * been, or will be, parsed); for invalid JSON the answer is whatever the scan saw.
 *
 * Complexity: one forward pass, O(n) time: each character read once (`charCodeAt` or an
 * index, a tight loop per part of a number token), no copy; no allocation except the rare
 * rule-3 check, a few strings of at most ~25 characters whatever the token's length (for
 * tokens of 16-21 integer digits or 16-17 significant digits, or near the edges of the double
 * range; a value past them is lossy without converting). Strings are skipped with
 * {@link closingQuote} like `checkJsonBounds`. Returns at the first lossy token. Before (a
 * follow-up of hostile trial 56), a rule-3 token was copied whole and read by `Number` twice:
 * a seller's `1e-` and 4M digits cost ~0.1-0.2 s of the event loop
 * (test/regressions/huge-number-lossy-check-stalls-gateway.test.ts).
 */
export function hasLossyNumber(input: string | Uint8Array): boolean {
  const str = typeof input === 'string' ? input : undefined;
  const bytes = str === undefined ? (input as Uint8Array) : undefined;
  const n = input.length;
  for (let i = 0; i < n; i++) {
    let c = str !== undefined ? str.charCodeAt(i) : bytes![i]!;
    if (c === QUOTE) {
      const close = closingQuote(input, i);
      if (close === -1) return false; // unterminated string: no number after it
      i = close;
      continue;
    }
    if (c !== MINUS && (c < DIGIT_0 || c > DIGIT_9)) continue;

    // A number token: -?int(.frac)?([eE]exp)?, each part read by a loop of its own.
    const start = i;
    if (c === MINUS) i++;
    const mantissaStart = i;
    /** Offsets of the `.` (-1 when none), and of the first and last nonzero mantissa digit (-1 while all zero). */
    let dot = -1;
    let first = -1;
    let last = -1;
    for (;;) {
      if (str !== undefined) {
        for (; i < n; i++) {
          c = str.charCodeAt(i);
          if (c < DIGIT_0 || c > DIGIT_9) break;
          if (c !== DIGIT_0) {
            if (first === -1) first = i;
            last = i;
          }
        }
      } else {
        for (; i < n; i++) {
          c = bytes![i]!;
          if (c < DIGIT_0 || c > DIGIT_9) break;
          if (c !== DIGIT_0) {
            if (first === -1) first = i;
            last = i;
          }
        }
      }
      if (i < n && c === DOT && dot === -1) {
        dot = i++;
        continue; // the fraction's digits
      }
      break;
    }
    const intDigits = (dot === -1 ? i : dot) - mantissaStart;
    let fractionOrExponent = dot !== -1;
    // The exponent: digits, `+` and `-` in any order (a `-` anywhere makes it negative), as
    // the scan always read it; `Number` reads only `[eE][+-]?\d+` (well formed). Its value is
    // kept a small integer (below 10^9): the interpreter, which runs this loop until it is
    // optimized (a check seldom called runs cold), boxes each new double, and a 4M-digit
    // exponent cost 4M allocations. Past it, {@link exponentPast} decides.
    let exponent = 0;
    let exponentStart = -1;
    let exponentOverflow = false;
    let wellFormed = true;
    if (i < n && (c === LOWER_E || c === UPPER_E)) {
      fractionOrExponent = true;
      exponentStart = i + 1;
      let negative = false;
      let digits = 0;
      let signs = 0;
      let signAfterDigit = false;
      for (i++; i < n; i++) {
        const from = i;
        if (str !== undefined) {
          for (; i < n; i++) {
            c = str.charCodeAt(i);
            if (c < DIGIT_0 || c > DIGIT_9) break;
            if (exponent < EXPONENT_CAP) exponent = exponent * 10 + (c - DIGIT_0);
            else exponentOverflow = true;
          }
        } else {
          for (; i < n; i++) {
            c = bytes![i]!;
            if (c < DIGIT_0 || c > DIGIT_9) break;
            if (exponent < EXPONENT_CAP) exponent = exponent * 10 + (c - DIGIT_0);
            else exponentOverflow = true;
          }
        }
        digits += i - from;
        if (i === n || (c !== PLUS && c !== MINUS)) break;
        if (c === MINUS) negative = true;
        if (digits > 0) signAfterDigit = true;
        signs++;
      }
      if (negative) exponent = -exponent;
      wellFormed = digits > 0 && signs <= 1 && !signAfterDigit;
    }
    const end = i;
    i--; // the loop's i++ lands on the character after the token

    if (!fractionOrExponent && intDigits <= SAFE_SIGNIFICANT_DIGITS) continue; // rule 1, the common case
    // The first significant digit's index and the significant digits (from the first to the
    // last nonzero one; 0 for a zero).
    const firstIndex = first === -1 ? 0 : digitIndex(mantissaStart, dot, first);
    const significant = first === -1 ? 0 : digitIndex(mantissaStart, dot, last) - firstIndex + 1;
    if (!fractionOrExponent) {
      if (intDigits > MAX_FULL_INTEGER_DIGITS || significant > MAX_SHORTEST_DIGITS) return true;
      if (!integerRoundTrips(tokenText(input, start, end))) return true;
      continue;
    }
    if (first === -1) continue; // zero: stays an exact 0
    // Decimal exponent of the first significant digit: the value is in [10^e, 10^(e+1)).
    const base = intDigits - 1 - firstIndex;
    const e = base + (exponentOverflow ? exponentPast(str, bytes, exponentStart, end, base, exponent < 0) : exponent);
    if (significant <= SAFE_SIGNIFICANT_DIGITS) {
      if (e >= MIN_SAFE_EXPONENT && e <= MAX_SAFE_EXPONENT) continue;
    } else if (significant > MAX_SHORTEST_DIGITS) {
      return true;
    }
    // Rule 3, decided without converting when `Number` would give NaN (an exponent it does
    // not read, `1e5-3`), `Infinity` (written `null`) or 0: lossy.
    if (!wellFormed || e > MAX_FINITE_EXPONENT || e < MIN_NONZERO_EXPONENT) return true;
    const token = end - start <= MAX_DOUBLE_TEXT ? tokenText(input, start, end) : shortSpelling(input, start, first, last, dot, e - significant + 1);
    if (!decimalRoundTrips(token)) return true;
  }
  return false;
}

/**
 * The index among a number's mantissa digits (the `.` not counted) of the digit at offset `at`,
 * the mantissa starting at `mantissaStart` with its `.` at offset `dot` (-1 when none). With the
 * first and last nonzero digits' offsets, as {@link hasLossyNumber} and
 * {@link exactDecimalLengthRange} read a mantissa: its first significant digit's index
 * (`firstIndex`) and its significant digits (`digitIndex(last) - firstIndex + 1`); the value is
 * then the significant digits as an integer times 10^(exponent + intDigits - firstIndex -
 * significant), intDigits being the digits before the `.`. Pure arithmetic on the offsets: how
 * they are found stays each caller's (hasLossyNumber walks every digit forward, as it must to
 * find where the token ends; exactDecimalLengthRange knows the end and walks only the zeros at
 * either end, so a 4 MB mantissa costs it a few reads). A return value, not module scratch
 * outputs as before (a re-read of 7767818, L4).
 */
function digitIndex(mantissaStart: number, dot: number, at: number): number {
  return at - mantissaStart - (dot !== -1 && at > dot ? 1 : 0);
}

/** Below this an exponent's value times 10 plus a digit is still a small integer (under 2^30). */
const EXPONENT_CAP = 100_000_000;

/**
 * The value of an exponent of 10^9 or more (`input[from, end)`, its digits and signs as
 * {@link hasLossyNumber} read them; `negative` its sign), added to `base` (the mantissa's part of
 * the decimal exponent, |base| below the mantissa's length): `Infinity` with its sign when the
 * sum is outside any band whatever its exact value (always but for a mantissa of about 10^9
 * characters); else the double the scan always read, digit by digit.
 */
function exponentPast(str: string | undefined, bytes: Uint8Array | undefined, from: number, end: number, base: number, negative: boolean): number {
  if (Math.abs(base) + 1000 < 10 * EXPONENT_CAP) return negative ? -Infinity : Infinity;
  let exponent = 0;
  for (let k = from; k < end; k++) {
    const c = str !== undefined ? str.charCodeAt(k) : bytes![k]!;
    if (c >= DIGIT_0 && c <= DIGIT_9) exponent = exponent * 10 + (c - DIGIT_0);
  }
  return negative ? -exponent : exponent;
}

/**
 * The longest `String(number)`: 25 characters (`-0.0000012345678901234567`). A token longer than
 * this is never its double's text, and rule 3 reads it spelled short ({@link shortSpelling}).
 */
const MAX_DOUBLE_TEXT = 25;

/**
 * The value of a longer number token of `input` (at `start`) spelled short for rule 3:
 * `[-]<digits>e<exponent>`, its significant digits (from its first nonzero digit at `first` to
 * its last at `last`, the `.` at `dot` left out: at most 17) as an integer, scaled by
 * 10^`exponent`. The same exact value as the token, so `Number` reads the same double and
 * {@link decimalRoundTrips} gives the same answer; at most ~25 characters however long the
 * token is. Before, the token itself was copied and read by `Number` twice: a seller's `1e-`
 * and 4M digits cost ~0.1-0.2 s of the event loop (a follow-up of hostile trial 56;
 * test/regressions/huge-number-lossy-check-stalls-gateway.test.ts).
 */
function shortSpelling(input: string | Uint8Array, start: number, first: number, last: number, dot: number, exponent: number): string {
  const str = typeof input === 'string' ? input : undefined;
  const at = (k: number): number => (str !== undefined ? str.charCodeAt(k) : (input as Uint8Array)[k]!);
  let digits = at(start) === MINUS ? '-' : '';
  for (let k = first; k <= last; k++) if (k !== dot) digits += String.fromCharCode(at(k));
  return `${digits}e${exponent}`;
}

/** The token `input[start, end)` as a string (number tokens are ASCII; in rule 3 an integer's, at most 22 characters). */
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

/**
 * Whether two JSON number texts have the same mathematical value, exactly (no double is
 * involved): `1`, `1.0`, `1e0`, `10E-1` and `0.1e1` are equal, and `0` equals `-0`; but
 * `9007199254740993` is not `9007199254740992`, nor `12345678901234567890123`
 * `1.2345678901234568e+22`, though `JSON.parse` reads each pair as one double. Also reads the
 * `e+` that `String(number)` writes (`1e+21`).
 *
 * Input: number tokens (the JSON grammar; not validated: a text that is not a number is equal
 * only to the same text). Exponents of any length compare exactly. Allocates a few short
 * strings: for the rare ids that are not small integers (response/json-value-at.ts
 * isRequestId; JSON-RPC 2.0 §5, the response id "MUST be the same as the value of the id
 * member in the Request Object"; test/regressions/response-id-compared-as-double.test.ts).
 */
export function sameJsonNumber(a: string, b: string): boolean {
  return a === b || exactDecimal(a) === exactDecimal(b);
}

const EXPONENT = /^[+-]?\d+$/;

/**
 * A canonical text of the exact value of the number text `text`: `0` for any zero, else
 * `[-]<digits>e<exponent>`, the significant digits (no leading or trailing zero) as an integer
 * and the power of ten it is scaled by (`1.50` -> `15e-1`, `1e+21` -> `1e21`). A text that
 * is not a number is returned as it is, with a leading `?` (never a canonical text). Two
 * number texts have the same value exactly when their canonical texts are equal
 * ({@link sameJsonNumber}), so it keys a lookup of ids by value (response/batch-answers.ts).
 *
 * Linear in the text, whatever the exponent's length (no `BigInt` of it: {@link addToInteger}).
 */
export function exactDecimal(text: string): string {
  const negative = text.charCodeAt(0) === MINUS;
  let e = text.indexOf('e');
  if (e === -1) e = text.indexOf('E');
  const mantissa = text.slice(negative ? 1 : 0, e === -1 ? text.length : e);
  const exponentText = e === -1 ? '0' : text.slice(e + 1);
  const dot = mantissa.indexOf('.');
  const digits = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  if (!EXPONENT.test(exponentText) || !/^\d+$/.test(digits)) return `?${text}`;
  const intDigits = dot === -1 ? mantissa.length : dot;
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === DIGIT_0) first++;
  if (first === digits.length) return '0';
  let last = digits.length;
  while (digits.charCodeAt(last - 1) === DIGIT_0) last--;
  // value = digits[first, last) as an integer x 10^(exponent + intDigits - last)
  return `${negative ? '-' : ''}${digits.slice(first, last)}e${addToInteger(exponentText, intDigits - last)}`;
}

/**
 * The least and the greatest length `exactDecimal(text)` can have, for `text` the latin1 text of
 * `bytes[start, end)`, a number as exactDecimal reads one (`-?`, digits with at most one `.`,
 * at least one digit; then optionally `e` or `E`, a sign and digits: a JSON number, as a
 * scanned body's value is). Equal, the exact length, unless the exponent has more than 15
 * digits after its leading zeros; then it is within one of it either way (a carry or a borrow
 * in {@link addToInteger} may add or take a digit). Not validated: for another text the range
 * means nothing (exactDecimal gives it `?` and the text, which no number's canonical text
 * equals, so a caller comparing canonical texts loses nothing).
 *
 * Cost: no string made (no copy of the text, no canonical text); the `e` and the `.` found by
 * the native `indexOf`, and only the zeros around the significant digits and before the
 * exponent's first nonzero digit walked (`1e` and 4M nines: a few bytes read; `0.000…01`:
 * each zero once).
 *
 * Why: a canonical text of a number written long is as long (`1e` and 4M nines: a 4 MB
 * exponent), and making it for a cancellation's `requestId` (response/json-value-at.ts
 * requestIdMatcher) cost a 4 MB latin1 copy, regular expressions over it and another copy
 * when the exponent was added to, ~0.1 s of the event loop per cancellation, to compare it with
 * request ids a few characters long (a follow-up of hostile trial 56;
 * test/regressions/cancel-huge-number-id-canonicalized.test.ts). Two numbers whose canonical
 * lengths differ are not equal: the lengths decide most comparisons.
 */
export function exactDecimalLengthRange(bytes: Uint8Array, start: number, end: number): readonly [number, number] {
  const text = bytes.subarray(start, end); // a view, no copy
  // exactDecimal's `e`: the first `e`, else the first `E`.
  let e = text.indexOf(LOWER_E);
  if (e === -1) e = text.indexOf(UPPER_E);
  const mantissaEnd = e === -1 ? end : start + e;
  const negative = bytes[start] === MINUS;
  const mantissaStart = negative ? start + 1 : start;
  const dotAt = text.subarray(mantissaStart - start, mantissaEnd - start).indexOf(DOT);
  const dot = dotAt === -1 ? -1 : mantissaStart + dotAt;
  // The first and the last nonzero digit.
  let first = mantissaStart;
  while (first < mantissaEnd && (bytes[first] === DIGIT_0 || first === dot)) first++;
  if (first === mantissaEnd) return [1, 1]; // `0`
  let last = mantissaEnd - 1;
  while (bytes[last] === DIGIT_0 || last === dot) last--;
  const intDigits = (dot === -1 ? mantissaEnd : dot) - mantissaStart;
  const firstIndex = digitIndex(mantissaStart, dot, first);
  const significant = digitIndex(mantissaStart, dot, last) - firstIndex + 1;
  const shift = intDigits - (firstIndex + significant);
  const head = (negative ? 1 : 0) + significant + 1; // [-]<digits>e
  // The exponent (none reads as `0`): its sign, and its digits after leading zeros (one kept).
  let exponentNegative = false;
  let from = end;
  if (e !== -1) {
    from = mantissaEnd + 1;
    const sign = bytes[from];
    if (sign === PLUS || sign === MINUS) {
      exponentNegative = sign === MINUS;
      from++;
    }
    while (from < end - 1 && bytes[from] === DIGIT_0) from++;
  }
  const exponentDigits = end - from;
  if (exponentDigits > EXACT_EXPONENT_DIGITS) {
    const sign = exponentNegative ? 1 : 0;
    return [head + sign + exponentDigits - 1, head + sign + exponentDigits + 1];
  }
  // As addToInteger writes it: exact in doubles.
  let value = 0;
  for (let k = from; k < end; k++) value = value * 10 + (bytes[k]! - DIGIT_0);
  const length = head + String(value * (exponentNegative ? -1 : 1) + shift).length;
  return [length, length];
}

/** Exponents of at most this many digits (after leading zeros) are exact as doubles, and so is their sum with a shift. */
const EXACT_EXPONENT_DIGITS = 15;
/** 10^{@link EXACT_EXPONENT_DIGITS}: the base of the low part in {@link addToInteger}. */
const LOW_BASE = 10 ** EXACT_EXPONENT_DIGITS;

/**
 * `integer + shift` written as `String(BigInt)` writes it (`-` for a negative, no leading zero,
 * `0` for zero), where `integer` is a decimal integer text (`/^[+-]?\d+$/`, any length, leading
 * zeros allowed) and `shift` an integer with |shift| < 2^31 (a text's digit count).
 *
 * Linear in the text: never `BigInt(integer)`, whose parse is quadratic in the digits
 * (`BigInt('9'.repeat(4e6))` took ~1.15 s; a host's `notifications/cancelled` with
 * `{"requestId":1e999…9}` stalled the gateway 3.7-14 s: hostile trial 56, F1;
 * test/regressions/huge-exponent-number-stalls-gateway.test.ts). Up to 15 digits the sum is
 * done in doubles (exact: below 2^53). Past that |integer| >= 10^15 > |shift|, so the sum has
 * the sign of `integer`, and its magnitude is |integer| +- |shift| done on the last 15 digits
 * with one carry or borrow rippling into the rest.
 */
function addToInteger(integer: string, shift: number): string {
  const sign = integer.charCodeAt(0);
  const negative = sign === MINUS;
  let from = sign === MINUS || sign === PLUS ? 1 : 0;
  while (from < integer.length - 1 && integer.charCodeAt(from) === DIGIT_0) from++;
  const length = integer.length - from;
  if (length <= EXACT_EXPONENT_DIGITS) return String(Number(integer.slice(from)) * (negative ? -1 : 1) + shift);
  // |integer| + delta, delta of either sign, |delta| < LOW_BASE <= |integer|: positive.
  const delta = negative ? -shift : shift;
  const cut = integer.length - EXACT_EXPONENT_DIGITS;
  let low = Number(integer.slice(cut)) + delta;
  let high = integer.slice(from, cut);
  if (low >= LOW_BASE) {
    low -= LOW_BASE;
    high = stepDigits(high, 1);
  } else if (low < 0) {
    low += LOW_BASE;
    high = stepDigits(high, -1);
  }
  let magnitude = high + String(low).padStart(EXACT_EXPONENT_DIGITS, '0');
  let zeros = 0;
  while (zeros < magnitude.length - 1 && magnitude.charCodeAt(zeros) === DIGIT_0) zeros++;
  if (zeros > 0) magnitude = magnitude.slice(zeros);
  return negative ? `-${magnitude}` : magnitude;
}

/**
 * The decimal digit text `digits` (no sign, nonzero when `step` is -1) plus `step` (1 or -1), as
 * digits of the same length, or one more on a carry out (`99` + 1 -> `100`; `10` - 1 -> `09`).
 * Linear: only the run of trailing 9s (or 0s) changes.
 */
function stepDigits(digits: string, step: 1 | -1): string {
  const wrap = step === 1 ? 0x39 : DIGIT_0; // the digit that carries or borrows
  let k = digits.length - 1;
  while (k >= 0 && digits.charCodeAt(k) === wrap) k--;
  const tail = (step === 1 ? '0' : '9').repeat(digits.length - 1 - k);
  if (k < 0) return `1${tail}`; // only 9s, plus one (a borrow past the first digit cannot happen: nonzero)
  return digits.slice(0, k) + String.fromCharCode(digits.charCodeAt(k) + step) + tail;
}
