/**
 * A seller cookie's `Expires` value read as browsers read it, and written back as an
 * IMF-fixdate (`Sat, 05 Dec 2026 15:00:00 GMT`), the one date form every cookie parser reads
 * (RFC 6265 §4.1.1 sane-cookie-date): set-cookie.ts rebuilds each seller cookie from what it
 * reads strictly, and a date it passed only as an IMF-fixdate dropped the `Expires` of real
 * sellers (Cloudflare writes `expires=Sat, 05-Dec-26 15:00:00 GMT`, old Netscape form; many
 * servers `Sat, 05-Dec-2026 ...`), turning their persistent cookies into session cookies.
 *
 * The reading is RFC 6265 §5.1.1's cookie-date algorithm (what browsers implement, RFC 6265bis
 * §5.1.1 the same): the value is split into date-tokens at the delimiters; in order, the first
 * token that is a time (`h:m:s`, 1-2 digits each, anything after a non-digit ignored), then
 * a day of month (1-2 digits), a month (its first three letters, any case) and a year (2-4
 * digits) is taken for each; a year 70-99 is 19xx, 0-69 20xx; the date fails without all four,
 * with a day outside 1-31, a year before 1601, an hour over 23, a minute or second over 59,
 * or a day its month does not have. A date that fails is no `Expires` (the attribute is
 * dropped, as a browser ignores it). Nothing of the seller's value goes out: only the date
 * read, written by `Date.prototype.toUTCString` (an IMF-fixdate for years 1601-9999).
 */

/** The cookie date `value` as an IMF-fixdate, or undefined when RFC 6265 §5.1.1 fails to read one. */
export function cookieExpires(value: string): string | undefined {
  let time: [number, number, number] | undefined;
  let day: number | undefined;
  let month: number | undefined;
  let year: number | undefined;
  for (const token of dateTokens(value)) {
    if (time === undefined) {
      const t = TIME.exec(token);
      if (t !== null) {
        time = [Number(t[1]), Number(t[2]), Number(t[3])];
        continue;
      }
    }
    if (day === undefined) {
      const d = DAY.exec(token);
      if (d !== null) {
        day = Number(d[1]);
        continue;
      }
    }
    if (month === undefined) {
      const m = MONTHS.indexOf(token.slice(0, 3).toLowerCase());
      if (m !== -1 && token.length >= 3) {
        month = m;
        continue;
      }
    }
    if (year === undefined) {
      const y = YEAR.exec(token);
      if (y !== null) year = Number(y[1]);
    }
  }
  if (time === undefined || day === undefined || month === undefined || year === undefined) return undefined;
  if (year >= 70 && year <= 99) year += 1900;
  else if (year >= 0 && year <= 69) year += 2000;
  const [hour, minute, second] = time;
  if (day < 1 || day > 31 || year < 1601 || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  if (date.getUTCDate() !== day) return undefined; // 31 Feb: no such date
  date.setUTCHours(hour, minute, second, 0);
  return date.toUTCString();
}

/** RFC 6265 §5.1.1 delimiter: %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E. */
const DELIMITERS = /[\t\x20-\x2f\x3b-\x40\x5b-\x60\x7b-\x7e]+/;

function dateTokens(value: string): string[] {
  return value.split(DELIMITERS).filter((token) => token !== '');
}

/** time = hms-time ( non-digit *OCTET ); hms-time = 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT. (`:` is no delimiter.) */
const TIME = /^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\D.*)?$/s;
/** day-of-month = 1*2DIGIT ( non-digit *OCTET ). */
const DAY = /^(\d{1,2})(?:\D.*)?$/s;
/** year = 2*4DIGIT ( non-digit *OCTET ). */
const YEAR = /^(\d{2,4})(?:\D.*)?$/s;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
