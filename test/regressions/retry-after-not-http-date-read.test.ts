/**
 * Regression (hostile trial 28, L2): a seller's 503 with `Retry-After: in 2099` gave the host
 * `"retry_after":3600`: the value was read with `Date.parse`, which takes nearly anything with
 * a year in it (`Z 2099`, `abc 99999` too), while docs/errors.md says an unreadable value gives
 * none. RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`; §5.6.7: an HTTP-date is an
 * IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and a recipient accepts the obsolete rfc850
 * (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms too;
 * HTTP-date is case-sensitive. Now those three forms are read exactly
 * (src/response/retry-after.ts), and nothing else.
 *
 * Input: a raw seller answering 503 with each `Retry-After` value, through agent `acme`.
 * Expected: the host's error exactly, with `retry_after` only for a readable future date.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { useRetryAfterStack } from '../helpers/retry-after-stack.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number): string => String(n).padStart(2, '0');
const time = (d: Date): string => `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
const rfc850 = (d: Date): string =>
  `${LONG_DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${two(d.getUTCFullYear() % 100)} ${time(d)} GMT`;
const asctime = (d: Date): string =>
  `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${time(d)} ${d.getUTCFullYear()}`;

describe("a seller's Retry-After that is no HTTP-date", { timeout: TEST_TIMEOUT_MS }, () => {
  const { call, expected } = useRetryAfterStack();
  const secondsOf = (text: string): number => {
    const m = /"retry_after":(\d+)/.exec(text);
    assert.ok(m !== null, text);
    return Number(m[1]);
  };

  test('text Date.parse reads as a date, and HTTP-dates off the grammar: no retry_after', async () => {
    const soon = new Date(Date.now() + 90_000);
    const imf = soon.toUTCString();
    for (const value of [
      'in 2099',
      'Z 2099',
      'abc 99999',
      'Thursday 2099',
      '2099-01-01T00:00:00Z',
      'Sun, 06 Nov 2099 08:49:37 UTC',
      'Sun, 6 Nov 2099 08:49:37 GMT',
      'Sun, 31 Feb 2099 08:49:37 GMT',
      'Sun, 06 Nov 2099 24:00:00 GMT',
      `${imf} x`,
      imf.toLowerCase(),
      imf.toUpperCase(),
      imf.replace(/ /g, '  '),
    ]) {
      assert.equal(await call(value), expected(undefined), value);
    }
  });

  test('IMF-fixdate, rfc850 and asctime, each a future date: the seconds until it', async () => {
    const soon = new Date(Date.now() + 90_000);
    for (const value of [soon.toUTCString(), rfc850(soon), asctime(soon)]) {
      const text = await call(value);
      const s = secondsOf(text);
      assert.ok(s >= 85 && s <= 91, `${value}: retry_after ${s}`);
      assert.equal(text, expected(s), value);
    }
  });

  test('an rfc850 year more than 50 years ahead is the past one with those digits (RFC 9110 §5.6.7): no retry_after', async () => {
    // Two digits of the year 60 years from now: read as 40 years ago, a past date.
    const later = new Date(Date.now() + 90_000);
    later.setUTCFullYear(later.getUTCFullYear() + 60);
    assert.equal(await call(rfc850(later)), expected(undefined));
  });
});
