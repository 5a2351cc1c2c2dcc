/**
 * Regression (hostile trial 30, L2): with the clock at 2026-12-05 14:40:00 GMT, a seller's
 * `Retry-After: Saturday, 05-Dec-76 14:41:00 GMT` was read as 2076 and gave the host
 * `"retry_after":3600`. RFC 9110 §5.6.7: a recipient of an rfc850-date "MUST interpret a
 * timestamp that appears to be more than 50 years in the future as representing the most recent
 * year in the past that had the same last two digits". The gateway applied the rule to the year
 * (2076 - 2026 = 50: not more), not to the timestamp: 2076-12-05 14:41:00 is 50 years and one
 * minute ahead, so it is 1976, a past date, and a past date gives no `retry_after`
 * (docs/errors.md). Now the timestamp is compared with now + 50 years (src/response/http-date.ts).
 *
 * Input: rfc850 dates read by `parseHttpDate` / `retryAfterSeconds` at a fixed clock (the
 * gateway passes `Date.now()`). Expected: the exact instant, and retry_after (or none).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseHttpDate } from '../../src/response/http-date.js';
import { retryAfterSeconds } from '../../src/response/retry-after.js';

const NOW = Date.parse('2026-12-05T14:40:00Z');

describe('retry-after-rfc850-year-past-fifty-years', () => {
  test('the trial: 05-Dec-76 14:41:00 is more than 50 years ahead of 2026-12-05 14:40:00, so 1976: no retry_after', () => {
    const value = 'Saturday, 05-Dec-76 14:41:00 GMT';
    assert.equal(parseHttpDate(value, NOW), Date.parse('1976-12-05T14:41:00Z'));
    assert.equal(retryAfterSeconds(value, NOW), undefined);
  });

  // [rfc850 date, the instant it is at NOW]
  const cases: [string, string][] = [
    // Exactly 50 years ahead: not more than 50, so 2076.
    ['Saturday, 05-Dec-76 14:40:00 GMT', '2076-12-05T14:40:00Z'],
    // The same instant as a leap second (14:39:60 is 14:40:00).
    ['Saturday, 05-Dec-76 14:39:60 GMT', '2076-12-05T14:40:00Z'],
    // Just under: 2076.
    ['Saturday, 05-Dec-76 14:39:59 GMT', '2076-12-05T14:39:59Z'],
    ['Friday, 04-Dec-76 23:59:59 GMT', '2076-12-04T23:59:59Z'],
    ['Sunday, 01-Jan-76 00:00:00 GMT', '2076-01-01T00:00:00Z'],
    // Just over: 1976.
    ['Saturday, 05-Dec-76 14:40:01 GMT', '1976-12-05T14:40:01Z'],
    ['Sunday, 06-Dec-76 00:00:00 GMT', '1976-12-06T00:00:00Z'],
    ['Friday, 31-Dec-76 23:59:59 GMT', '1976-12-31T23:59:59Z'],
    // Other years, as before: within 50 years ahead this century, else the last one.
    ['Thursday, 31-Dec-75 23:59:59 GMT', '2075-12-31T23:59:59Z'],
    ['Saturday, 05-Dec-26 14:41:00 GMT', '2026-12-05T14:41:00Z'],
    ['Saturday, 01-Jan-77 00:00:00 GMT', '1977-01-01T00:00:00Z'],
    ['Friday, 31-Dec-99 23:59:59 GMT', '1999-12-31T23:59:59Z'],
    ['Saturday, 01-Jan-00 00:00:00 GMT', '2000-01-01T00:00:00Z'],
  ];
  for (const [value, iso] of cases) {
    test(`${value} at 2026-12-05T14:40:00Z is ${iso}`, () => {
      assert.equal(parseHttpDate(value, NOW), Date.parse(iso));
      assert.equal(retryAfterSeconds(value, NOW), Date.parse(iso) > NOW ? Math.min(3600, Math.ceil((Date.parse(iso) - NOW) / 1000)) : undefined);
    });
  }

  test('a clock with milliseconds: now + 50 years is 14:40:00.500, so 14:40:00 is 2076 and 14:40:01 is 1976', () => {
    const now = NOW + 500;
    assert.equal(parseHttpDate('Saturday, 05-Dec-76 14:40:00 GMT', now), Date.parse('2076-12-05T14:40:00Z'));
    assert.equal(parseHttpDate('Saturday, 05-Dec-76 14:40:01 GMT', now), Date.parse('1976-12-05T14:40:01Z'));
  });

  test('across a century: at 2099-12-31T23:59:59Z, 01-Jan-00 is 2100 (a second ahead): retry_after 1', () => {
    const now = Date.parse('2099-12-31T23:59:59Z');
    assert.equal(parseHttpDate('Friday, 01-Jan-00 00:00:00 GMT', now), Date.parse('2100-01-01T00:00:00Z'));
    assert.equal(retryAfterSeconds('Friday, 01-Jan-00 00:00:00 GMT', now), 1);
    // 50 years ahead is 2149-12-31T23:59:59Z: 31-Dec-49 23:59:59 is 2149, a second later 2050.
    assert.equal(parseHttpDate('Friday, 31-Dec-49 23:59:59 GMT', now), Date.parse('2149-12-31T23:59:59Z'));
    assert.equal(parseHttpDate('Saturday, 01-Jan-50 00:00:00 GMT', now), Date.parse('2050-01-01T00:00:00Z'));
  });
});
