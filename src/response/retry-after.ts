/**
 * A seller's `Retry-After` (RFC 9110 §10.2.3) read as the `retry_after` of the error the
 * gateway mints for its 5xx answer (`upstream_status`, docs/errors.md).
 *
 * Why (a new user's hostile trial 12, L6): a seller's `503` with `Retry-After: 120` reached the
 * host as a `transient` error with no `retry_after`, so a host retried at once, against the
 * seller's word (test/regressions/seller-retry-after-dropped.test.ts).
 */
import { parseHttpDate } from './http-date.js';
import { trimOws } from './ows.js';

/** Most seconds passed on: beyond an hour a host is better off asking again (and getting the seller's newer word). */
export const MAX_RETRY_AFTER_S = 3600;

/**
 * Whole seconds (1 to {@link MAX_RETRY_AFTER_S}) the field `value` asks a client to wait, or
 * undefined when it asks nothing readable: absent, repeated with differing values, neither
 * `delay-seconds` (1*DIGIT) nor an HTTP-date in one of its three forms, exactly
 * (http-date.ts), or a date not after `nowMs` (ms since the epoch).
 * `0` asks for no wait: undefined. A longer wait is clamped to the maximum. Only SP and HTAB
 * around the value are dropped (RFC 9110 §5.5's OWS), not all JS `trim()` drops: U+00A0 (a
 * seller's byte 0xA0) before a date made `\xa0Sat, 05 Dec 2026 14:41:00 GMT` readable (hostile
 * trial 30, L1: test/regressions/retry-after-nbsp-trimmed.test.ts).
 */
export function retryAfterSeconds(value: string | string[] | undefined, nowMs: number): number | undefined {
  const field = Array.isArray(value) ? (value.every((v) => trimOws(v) === trimOws(value[0]!)) ? value[0] : undefined) : value;
  if (field === undefined) return undefined;
  const text = trimOws(field);
  let seconds: number;
  if (/^\d+$/.test(text)) seconds = Number(text);
  else {
    // IMF-fixdate and the obsolete forms RFC 9110 §5.6.7 has recipients accept, exactly
    // (http-date.ts): Date.parse read `in 2099` as a date (hostile trial 28, L2).
    const at = parseHttpDate(text, nowMs);
    if (at === undefined) return undefined;
    seconds = Math.ceil((at - nowMs) / 1000);
  }
  if (!(seconds >= 1)) return undefined;
  return Math.min(seconds, MAX_RETRY_AFTER_S);
}
