/**
 * The size of the response head the gateway writes to a host, and its bound.
 *
 * A seller's headers pass to the host (response/headers.ts filterResponseHeaders), with the
 * gateway's rewrites: each `Set-Cookie` is rebuilt with `; Path=/agents/<name>/mcp` (up to
 * 94 bytes more per cookie with a 64-character agent name, and a space after each `;` the
 * seller left out: response/set-cookie.ts), and the gateway's and Node's own lines are
 * added (`Content-Length` or `Transfer-Encoding`, `Date`, `Connection`, `Keep-Alive`, the SSE
 * headers). A head the seller kept under the 16 KiB its own HTTP stack and undici read could
 * so reach the host over the 16 KiB its HTTP client reads: Node's http parser
 * (HPE_HEADER_OVERFLOW), undici and fetch (UND_ERR_HEADERS_OVERFLOW, `fetch failed`: the MCP
 * SDK client's transport) and most clients stop at 16 KiB (`--max-http-header-size`'s
 * default). The host's call then failed as a network error while the exchange line said
 * `ok`. Reported failure (a hostile new user's trial 15, M1): 650 cookies `cN=1` (12.9 KB
 * from the seller) through agent `hdr`, or 200 (about 3.6 KB) through a 64-character agent
 * name, and a seller head of about 16,300 bytes that its host read directly
 * (test/regressions/set-cookie-path-overflows-host-headers.test.ts).
 *
 * The bound: {@link MAX_HOST_HEAD_BYTES}, counted as the bytes Node writes (the status line,
 * each `name: value` line with its CRLF, the blank line). The pipeline judges it once, when the
 * seller's head arrives and before the host's head is written or the body read (pipeline.ts):
 * from the seller's header lines as filtered and rewritten, which the handler sums
 * ({@link headerLinesBytes}, stored in `Exchange.hostHeaderBytes`), the status line, and
 * {@link ADDED_HEAD_BYTES} for every line written after that. Over it, the host gets
 * `upstream_headers_too_large` for its request's id (docs/errors.md), not a head it cannot
 * read. The estimate never under-counts; it over-counts by the seller's lines that a line of
 * the gateway or Node replaces (its `Content-Type`, `Date`, `Cache-Control`) and by the
 * reserve's lines a path does not write (a JSON answer has no SSE headers and a shorter
 * `Content-Length`): measured 114 bytes on a JSON answer and 44 on an SSE one with 10 cookies
 * (the regression test checks at most 200), so a head that close to the bound may be refused
 * though Node would have written it just under.
 * Hosts' parsers count less than this (undici and Node count header names and values, and
 * Node the status text, not the separators), so a head under the bound is read by all of them.
 *
 * Cost per answer: {@link headerLinesBytes}, a sum of the lengths of the seller's header
 * names and values the filter has just copied (a handful), and one comparison
 * ({@link hostHeadOverLimit}: the status line is looked up only for seller lines near the bound).
 */
import { STATUS_CODES } from 'node:http';
import { SSE_RESPONSE_HEADERS } from './sse-headers.js';

/**
 * The largest response head the gateway writes to a host, in bytes: 16 KiB, the default of
 * Node's `--max-http-header-size` (`http.maxHeaderSize`), which undici (fetch, the MCP SDK
 * clients' transport) and Node's http client read by default. Fixed, not configured: the
 * limit is the host's HTTP client's, not the gateway's to raise, and the gateway reads a
 * seller's head with undici's limit of the same figure (a seller's head over it is
 * `upstream_headers_too_large` too: routing/handler.ts).
 */
export const MAX_HOST_HEAD_BYTES = 16 * 1024;

/** Bytes of one header line as Node writes it: `name: value\r\n` (Latin-1: one byte a character, as undici reads the seller's). */
function lineBytes(name: string, value: string): number {
  return name.length + value.length + 4;
}

/**
 * Bytes of the header lines of `headers` as Node writes them: each value of an array on a
 * line of its own (Set-Cookie, a repeated header), an undefined one left out (as
 * hijackAndWriteHead and Fastify do).
 */
export function headerLinesBytes(headers: Readonly<Record<string, string | readonly string[] | undefined>>): number {
  let bytes = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === 'string') bytes += lineBytes(name, value);
    else bytes += fieldLinesBytes(name, value);
  }
  return bytes;
}

/** Bytes of the lines of header `name` with `value` (an array: a line each) as Node writes them. */
export function fieldLinesBytes(name: string, value: string | readonly string[]): number {
  if (typeof value === 'string') return lineBytes(name, value);
  let bytes = 0;
  for (const line of value) bytes += lineBytes(name, line);
  return bytes;
}

/** Bytes of the status line Node writes for `status`: `HTTP/1.1 200 OK\r\n` (its reason phrase, `unknown` for an unnamed code). */
export function statusLineBytes(status: number): number {
  return 'HTTP/1.1 200 \r\n'.length + (STATUS_CODES[status] ?? 'unknown').length;
}

/**
 * The lines written after the seller's head is judged, at their longest (each counted whole,
 * whether it replaces a seller's line or not): the gateway's labels (the SSE headers; a JSON
 * answer's `Content-Type: application/json` is shorter than the SSE one), the framing
 * (`Content-Length` of up to 16 digits, longer than `Transfer-Encoding: chunked`), and Node's
 * own (`Date`; `Connection: keep-alive`, longer than a reply's `connection: close`; `Keep-Alive`
 * with a timeout of up to 7 digits, in seconds: Fastify's default is 72), and the blank line
 * ending the head.
 */
const ADDED_LINES: Readonly<Record<string, string>> = {
  ...SSE_RESPONSE_HEADERS,
  'content-length': '9007199254740991',
  date: 'Thu, 01 Jan 1970 00:00:00 GMT',
  connection: 'keep-alive',
  'keep-alive': 'timeout=2147483',
};

/** Bytes of {@link ADDED_LINES} and the head's closing CRLF. */
export const ADDED_HEAD_BYTES = headerLinesBytes(ADDED_LINES) + 2;

/**
 * The bytes of the head the host would get for an answer with this status whose seller header
 * lines (filtered and rewritten) come to `headerBytes`: an estimate that never under-counts
 * (module doc).
 */
export function hostHeadBytes(status: number, headerBytes: number): number {
  return statusLineBytes(status) + headerBytes + ADDED_HEAD_BYTES;
}

/** The longest status line Node writes (a code it names; `unknown` for the rest). */
const LONGEST_STATUS_LINE_BYTES = Math.max(statusLineBytes(0), ...Object.keys(STATUS_CODES).map((code) => statusLineBytes(Number(code))));

/**
 * Seller header lines of at most this many bytes fit the bound whatever the status: the one
 * comparison an ordinary answer pays ({@link hostHeadOverLimit}): 16,117 bytes (the longest
 * status line, `HTTP/1.1 511 Network Authentication Required`, is 46).
 */
export const HEADER_BYTES_ALWAYS_FIT = MAX_HOST_HEAD_BYTES - ADDED_HEAD_BYTES - LONGEST_STATUS_LINE_BYTES;

/**
 * The host's head bytes ({@link hostHeadBytes}) when they are over {@link MAX_HOST_HEAD_BYTES},
 * else undefined. Seller lines of up to {@link HEADER_BYTES_ALWAYS_FIT} bytes (every ordinary
 * answer) cost one comparison; only larger ones look up their status line.
 */
export function hostHeadOverLimit(status: number, headerBytes: number): number | undefined {
  if (headerBytes <= HEADER_BYTES_ALWAYS_FIT) return undefined;
  const bytes = hostHeadBytes(status, headerBytes);
  return bytes > MAX_HOST_HEAD_BYTES ? bytes : undefined;
}
