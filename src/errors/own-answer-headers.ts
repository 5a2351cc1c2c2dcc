/**
 * The header fields of every answer the gateway writes itself, as opposed to a seller's answer
 * it forwards: its JSON-RPC refusals (local-reply.ts `refuse`: the routes', the not-found
 * handler's, the head refusals), the refusals it writes on the socket (client-error.ts: Node's
 * parser rejections, CONNECT, the 417), its minted local errors (local-reply.ts), its own SSE
 * streams (a resume answered locally) and the ops endpoints (ops/routes.ts). Each writer takes
 * its fields from here, so `X-Content-Type-Options: nosniff` is set in one place.
 *
 * Why nosniff: a page may load any of these answers with `<script src>` (or `<link>`); without
 * it a browser sniffs a body whose type is not a script's and may run it. With it, Fetch blocks
 * a response of a non-script type as a script. Reported failures: hostile trial 33, F4
 * (`/metrics` loaded as a script: ops/routes.ts); hostile trial 35, leftover 1 (the ops
 * listener's 404 and 405, and every other answer above, had none:
 * test/regressions/own-answers-without-nosniff.test.ts).
 */
import { SSE_RESPONSE_HEADERS } from '../response/sse-headers.js';

/** `X-Content-Type-Options`, lower case as the gateway writes its fields. */
export const NOSNIFF_NAME = 'x-content-type-options';
export const NOSNIFF_VALUE = 'nosniff';

/** The fields of a JSON answer the gateway writes itself (a refusal, a minted error), before its framing. */
export const OWN_JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  'cache-control': 'no-store',
  [NOSNIFF_NAME]: NOSNIFF_VALUE,
});

/** {@link OWN_JSON_HEADERS} as header lines of a head written on the socket (each ends with CRLF). */
export const OWN_JSON_HEAD_LINES = Object.entries(OWN_JSON_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/** The fields of an SSE stream the gateway makes itself (a resume it answers without the seller): the stream's, and nosniff. */
export const OWN_SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ ...SSE_RESPONSE_HEADERS, [NOSNIFF_NAME]: NOSNIFF_VALUE });
