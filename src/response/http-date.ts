/**
 * An HTTP-date read exactly as RFC 9110 §5.6.7 writes it (case-sensitive), in the three forms a
 * recipient must accept:
 *
 * - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
 * - rfc850-date (obsolete): `Sunday, 06-Nov-94 08:49:37 GMT`; the two-digit year is the latest
 *   year with those digits that puts the timestamp no more than 50 years after now (a timestamp
 *   that would be more than 50 years ahead is the most recent past year with those digits).
 *   The timestamp is compared, not the year: at 2026-12-05 14:40:00, `05-Dec-76 14:41:00` is
 *   1976, 50 years and a minute ahead as 2076 (hostile trial 30, L2: it was read as 2076, so a
 *   seller's `Retry-After` gave 3600 s, not none:
 *   test/regressions/retry-after-rfc850-year-past-fifty-years.test.ts)
 * - asctime-date (obsolete): `Sun Nov  6 08:49:37 1994` (a one-digit day after a space)
 *
 * Nothing else: no other spacing or case, no other zone, no ISO 8601. The day must exist in its
 * month; an hour is 00-23, a minute 00-59, a second 00-60 (60 a leap second, read as the next
 * minute's first). The day name is not checked against the date (§5.6.7 asks for none).
 *
 * Why (hostile trial 28, L2): `Date.parse` read `in 2099`, `Z 2099` and `abc 99999` as dates,
 * so a seller's `Retry-After: in 2099` became `"retry_after":3600` where docs/errors.md
 * promises none for an unreadable value (test/regressions/retry-after-not-http-date-read.test.ts).
 */

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d\\d):(\\d\\d):(\\d\\d)';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Groups: day, month, year, hour, minute, second. */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d\\d) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** Groups: day, month, two-digit year, hour, minute, second. */
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d\\d)-${MONTH}-(\\d\\d) ${TIME} GMT$`);
/** Groups: month, day (` 6` or `16`), hour, minute, second, year. */
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d\\d) ${TIME} (\\d{4})$`);

/** Milliseconds since the epoch of the HTTP-date `text`, or undefined when it is none. `nowMs` places an rfc850 two-digit year. */
export function parseHttpDate(text: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m !== null) return utc(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = RFC850_DATE.exec(text);
  if (m !== null) {
    const day = Number(m[1]);
    return utc(rfc850Year(Number(m[3]), m[2]!, day, m[4]!, m[5]!, m[6]!, nowMs), m[2]!, day, m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME_DATE.exec(text);
  if (m !== null) return utc(Number(m[6]), m[1]!, Number(m[2]!.trimStart()), m[3]!, m[4]!, m[5]!);
  return undefined;
}

/**
 * The year of an rfc850-date with the two-digit year `yy` read at `nowMs` (RFC 9110 §5.6.7): the
 * latest year ending in `yy` whose timestamp is not after now + 50 years (now's date and time,
 * the year 50 on; 29 Feb then is 1 Mar).
 */
function rfc850Year(yy: number, monthName: string, day: number, hh: string, mm: string, ss: string, nowMs: number): number {
  const limit = new Date(nowMs);
  limit.setUTCFullYear(limit.getUTCFullYear() + 50);
  const top = limit.getUTCFullYear();
  // The latest year ending in yy not after the limit's year.
  const year = top - ((top - yy) % 100);
  // Unchecked here (31 Feb rolls over; utc() refuses it): only its place in time counts.
  const at = new Date(0);
  at.setUTCFullYear(year, MONTHS.indexOf(monthName), day);
  at.setUTCHours(Number(hh), Number(mm), Number(ss), 0);
  return at.getTime() > limit.getTime() ? year - 100 : year;
}

function utc(year: number, monthName: string, day: number, hh: string, mm: string, ss: string): number | undefined {
  const month = MONTHS.indexOf(monthName);
  const hour = Number(hh);
  const minute = Number(mm);
  const second = Number(ss);
  if (hour > 23 || minute > 59 || second > 60 || day < 1) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  // A day past its month's end (31 Feb) rolls over: no such date.
  if (date.getUTCDate() !== day) return undefined;
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}
