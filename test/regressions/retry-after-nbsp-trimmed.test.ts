/**
 * Regression (hostile trial 30, L1): a seller's `Retry-After: \xa0Sat, 05 Dec 2026 14:41:00 GMT`
 * (the byte 0xA0 before the date, which reaches the gateway as U+00A0) gave the host
 * `"retry_after":60`, and `Retry-After: \xa0120` gave 120, where docs/errors.md promises none
 * for a value off the grammar: the value was trimmed with JS `trim()`, which strips U+00A0,
 * U+FEFF, U+2028, U+3000, VT, FF and more, while RFC 9110 §5.5 trims a field value of its
 * optional whitespace only (`OWS = *( SP / HTAB )`). Now only SP and HTAB are trimmed
 * (src/response/retry-after.ts).
 *
 * Input: the values, read by `retryAfterSeconds` at a fixed clock, and sent by a raw seller
 * answering 503 through agent `acme`. Expected: no `retry_after` for anything but SP/HTAB
 * around the value; the host's error exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { retryAfterSeconds } from '../../src/response/retry-after.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { useRetryAfterStack } from '../helpers/retry-after-stack.js';

const NOW = Date.parse('2026-12-05T14:40:00Z');
const DATE = 'Sat, 05 Dec 2026 14:41:00 GMT';
/** Whitespace to JS `trim()` that is not HTTP's OWS. */
const NOT_OWS = ['\u00a0', '\ufeff', '\u2028', '\u3000', '\v', '\f', '\r', '\n'];

describe('retry-after-nbsp-trimmed', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const ws of NOT_OWS) {
    test(`U+${ws.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} before or after the value (or among SP/HTAB) makes it unreadable: undefined`, () => {
      const values = [`${ws}${DATE}`, `${DATE}${ws}`, `${ws}120`, `120${ws}`, ` ${ws}\t120`];
      const read = (value: string | string[]): [string, number | undefined] => [JSON.stringify(value), retryAfterSeconds(value, NOW)];
      const readings = [...values.map((v) => read(v)), ...values.map((v) => read([v, v])), read(['120', `${ws}120`])];
      assert.deepEqual(readings, readings.map(([value]) => [value, undefined]));
    });
  }

  test('SP and HTAB around the value are trimmed (OWS)', () => {
    assert.equal(retryAfterSeconds(` \t${DATE}\t `, NOW), 60);
    assert.equal(retryAfterSeconds('\t120 ', NOW), 120);
    assert.equal(retryAfterSeconds(['120', ' 120\t'], NOW), 120);
  });

  describe('through the gateway: the byte 0xA0 from a seller', () => {
    const { call, expected } = useRetryAfterStack();

    for (const [name, value] of [
      ['0xA0 before a future date', (soon: string) => `\u00a0${soon}`],
      ['0xA0 after a future date', (soon: string) => `${soon}\u00a0`],
      ['0xA0 before seconds', () => '\u00a0120'],
      ['0xA0 after seconds', () => '120\u00a0'],
    ] as const) {
      test(`${name}: no retry_after`, async () => {
        const field = value(new Date(Date.now() + 90_000).toUTCString());
        assert.equal(await call(field), expected(undefined), JSON.stringify(field));
      });
    }

    test('HTAB before the seconds: read', async () => {
      assert.equal(await call('\t120'), expected(120));
    });
  });
});
