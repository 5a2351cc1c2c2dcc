/**
 * The most header fields a request may carry: {@link MAX_HEADER_FIELDS}, refused past it from
 * the head, on every path of both listeners (app.ts: an onRequest hook, and no
 * `100 Continue`): 431 `request_header_too_large`, id null, `Connection: close`, its body
 * not read, nothing forwarded (docs/errors.md).
 *
 * Why: Node's HTTP server (measured on Node 20.20; lib/_http_common.js MAX_HEADER_PAIRS) keeps only the first 1,000 header fields of a request in
 * `req.headers` (its parser's default `maxHeaderPairs`, 2,000 entries of the flat
 * name/value list, when `server.maxHeadersCount` is unset) and silently drops the others;
 * its maximum header size (16,384) counts only the request target and the bytes of each field
 * name and value, so 4,000 `X-a: 1` lines (32 KB on the wire, 16,000 counted) pass it. Such a
 * head was served and forwarded truncated: an `Origin`, a second `Host`, a `Sec-Fetch-Site` or
 * an `Mcp-Session-Id` after 1,000 padding fields was seen by no check and never reached the
 * seller (hostile trial 54, F5a:
 * test/regressions/header-fields-past-node-count-dropped-forwarded.test.ts).
 *
 * How it is told: the listener's `maxHeadersCount` is set one over the bound
 * ({@link capHeaderFields}), so Node keeps up to {@link MAX_HEADER_FIELDS} + 1 fields, and
 * `rawHeaders` (every batch of fields Node's parser handed over before the count was reached,
 * at least that many) holds more than {@link MAX_HEADER_FIELDS} exactly when the host sent
 * more ({@link overHeaderFieldCap}: one property read and a comparison per request).
 */
import type { IncomingMessage } from 'node:http';

/** The most header fields a request may carry: 1,000, what Node kept by default (see file comment). */
export const MAX_HEADER_FIELDS = 1000;

/** The message of the `request_header_too_large` refusal of a head with too many fields. */
export const TOO_MANY_HEADER_FIELDS_MESSAGE = `Request header fields too large: the request has more than ${MAX_HEADER_FIELDS} header fields (Node keeps no more, and the rest would be dropped unseen): send fewer.`;

/** Makes `server` (a listener of the gateway) keep one field over the bound, so that {@link overHeaderFieldCap} can tell a head over it. */
export function capHeaderFields(server: { maxHeadersCount: number | null }): void {
  server.maxHeadersCount = MAX_HEADER_FIELDS + 1;
}

/** Whether `req`, read by a server {@link capHeaderFields} set up, carried more than {@link MAX_HEADER_FIELDS} header fields. */
export function overHeaderFieldCap(req: IncomingMessage): boolean {
  return req.rawHeaders.length > 2 * MAX_HEADER_FIELDS;
}
