/**
 * Whether a number of the config file is the number its YAML text writes. yaml reads a number
 * as the nearest double, so `64.0000000000000001` was read as 64 and accepted for an integer
 * key, and `-0` as the port 0 (a hostile trial:
 * test/regressions/config-integer-written-as-rounded-float-accepted.test.ts). Every number
 * setting is an integer (config/schema.ts), and docs/configuration.md lets a float whose
 * written value is an integer count as one (`16.0`, `4.194304e6`): that value is exact. One
 * that only rounds to an integer is not the number the file says, and neither is a negative
 * zero, which no setting has.
 *
 * Read from the scalar's own text (yaml's `Scalar.source`: what the resolved number was read
 * from), never from the file around it.
 */

/**
 * A YAML 1.2 core schema decimal number (YAML 1.2.2 §10.3.2: `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`,
 * integers included): the integer digits, the fraction digits and the exponent.
 */
const DECIMAL = /^[-+]?([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]+))?$/;

/** The longest number text a problem shows; a longer one is cut, with `…` (as load.ts `describe`). */
const SHOWN_NUMBER_CHARS = 40;

/**
 * Why `value` (a number yaml read from the scalar text `source`) is not the number `source`
 * writes, as a problem shows what was found; or undefined when it is, or when it is no
 * integer at all (the schema refuses those, showing the text).
 *
 * - An integer double from a decimal text whose value is not an integer (`64.0000000000000001`,
 *   `1e-400`, `-1e-400`): the text itself. `16.0`, `1.6e1` and `1600e-2` are 16 exactly: undefined.
 * - A negative zero (`-0`, `-0.0`, `-0e3`): `-0 (a negative zero)`.
 * - Hexadecimal and octal texts (`0x40`, `0o100`) are integers as written: undefined.
 *
 * Cost: one regular expression match and a scan of the digits, for a number whose double is
 * an integer.
 */
export function inexactNumber(value: number, source: string): string | undefined {
  const shown = source.length > SHOWN_NUMBER_CHARS ? `${source.slice(0, SHOWN_NUMBER_CHARS)}…` : source;
  if (!Number.isInteger(value)) return undefined;
  const m = DECIMAL.exec(source);
  if (m !== null && !isIntegralDecimal(m[1] ?? '', m[2] ?? '', m[3] ?? '0')) return shown;
  return Object.is(value, -0) ? `${shown} (a negative zero)` : undefined;
}

/**
 * Whether `int.frac` times 10^`exponent` (decimal digit strings, the exponent signed) is an
 * integer: its digits, trailing zeros dropped, end at or before the units place.
 */
function isIntegralDecimal(int: string, frac: string, exponent: string): boolean {
  const digits = `${int}${frac}`;
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30) end--;
  if (end === 0) return true; // zero
  // The last nonzero digit's place: 10^(exponent - frac.length + trailing zeros). An exponent
  // too long for a double's integers is far past any digit count (a file is at most 1 MiB).
  return Number(exponent) - frac.length + (digits.length - end) >= 0;
}
