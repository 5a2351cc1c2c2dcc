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
 * ({@link measureHeaderLines}, stored in `Exchange.hostHeaderBytes`), the status line, and
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
 * The lines: {@link MAX_HOST_HEAD_LINES} header lines, counted as Node writes them (each
 * `Set-Cookie`, each line of a repeated header), with {@link ADDED_HEAD_LINES} for the
 * gateway's and Node's, judged at the same point. A head of many short lines passes the byte
 * bound: 2,500 lines `x: 1` are 15 KB. Python's http.client (which `requests`, `urllib` and
 * urllib3 read with) raises `HTTPException: got more than 100 headers`, and Node's http client
 * keeps 2,000 lines and drops the rest without a word; the host got no answer, or a head cut
 * short, while the exchange line said `ok`. Reported failure: a hostile new user's trial 42
 * (Medium; test/regressions/seller-header-lines-break-python-host.test.ts). The same
 * over-count as the bytes': the reserve's lines a path does not write (the SSE lines on JSON,
 * Keep-Alive to a `Connection: close` host) and the seller's lines a gateway line replaces
 * (its Date and Content-Type) count too: up to 5 lines over what
 * Node writes on a JSON answer, 3 on an SSE one (hostile trial 44 measured 5 and 3 with a
 * `Connection: close` host).
 * Over both bounds, the bytes are reported (`limit_bytes`, `observed_bytes`); over the lines
 * alone, `limit_lines` and `observed_lines` (docs/errors.md).
 *
 * Cost per answer: {@link measureHeaderLines}, a sum of the lengths of the seller's header
 * names and values the filter has just copied (a handful) and of their lines, and two
 * comparisons ({@link hostHeadOverLimit}: the status line is looked up only for seller lines
 * near the byte bound).
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

/**
 * The most header lines the gateway writes to a host: 99, the status line and the blank line
 * ending the head not counted. The fewest a mainstream HTTP client reads: Python's http.client
 * (`requests`, `urllib`, urllib3: none of them sets it) reads at most `_MAXHEADERS` = 100 lines
 * after the status line and, through Python 3.14, counts the closing blank line among them
 * (Lib/http/client.py `_read_headers`; checked with 3.11: 99 header lines read, 100 raise
 * `got more than 100 headers`; 3.15 adds `HTTPConnection(max_response_headers=)`, 100 by
 * default). Rust's hyper (reqwest) reads 100 by default, and Envoy's `max_headers_count` is
 * 100 unless configured. Others bound the bytes, or far more lines: Node's http client keeps
 * 2,000 (`maxHeadersCount`) and drops the rest; curl refuses over 5,000 (lib/headers.c
 * MAX_HTTP_RESP_HEADER_COUNT); undici and fetch (`maxHeaderSize`), Go's net/http, Java's and
 * .NET's HttpClient count bytes only. Fixed, not configured, as {@link MAX_HOST_HEAD_BYTES}:
 * the limit is the host's.
 */
export const MAX_HOST_HEAD_LINES = 99;

/** Where {@link measureHeaderLines} writes its sums (the exchange: `Exchange.hostHeaderBytes`, `hostHeaderLines`). */
export interface HeaderLinesMeasure {
  hostHeaderBytes: number;
  hostHeaderLines: number;
}

/** Bytes of one header line as Node writes it: `name: value\r\n` (Latin-1: one byte a character, as undici reads the seller's). */
function lineBytes(name: string, value: string): number {
  return name.length + value.length + 4;
}

/**
 * The bytes and the number of the header lines of `headers` as Node writes them, into
 * `into.hostHeaderBytes` and `into.hostHeaderLines`: each value of an array on a line of its
 * own (Set-Cookie, a repeated header), an undefined one left out (as hijackAndWriteHead and
 * Fastify do).
 */
export function measureHeaderLines(headers: Readonly<Record<string, string | readonly string[] | undefined>>, into: HeaderLinesMeasure): void {
  let bytes = 0;
  let lines = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === 'string') {
      bytes += lineBytes(name, value);
      lines++;
    } else {
      bytes += fieldLinesBytes(name, value);
      lines += value.length;
    }
  }
  into.hostHeaderBytes = bytes;
  into.hostHeaderLines = lines;
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

/** {@link ADDED_LINES} measured as the seller's lines are ({@link measureHeaderLines}). */
const ADDED: HeaderLinesMeasure = { hostHeaderBytes: 0, hostHeaderLines: 0 };
measureHeaderLines(ADDED_LINES, ADDED);

/** Bytes of {@link ADDED_LINES} and the head's closing CRLF. */
export const ADDED_HEAD_BYTES = ADDED.hostHeaderBytes + 2;

/** Lines of {@link ADDED_LINES}: 7 (the three SSE headers, Content-Length, Date, Connection, Keep-Alive). */
export const ADDED_HEAD_LINES = ADDED.hostHeaderLines;

/** Seller header lines of at most this many fit {@link MAX_HOST_HEAD_LINES} with the reserve: 92. */
export const HEADER_LINES_ALWAYS_FIT = MAX_HOST_HEAD_LINES - ADDED_HEAD_LINES;

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

/** Why a host's head is over its bounds ({@link hostHeadOverLimit}): its bytes, or its header lines. */
export type HostHeadOverLimit = { limitBytes: number; observedBytes: number } | { limit: number; observed: number };

/**
 * The host's head over a bound, else undefined: over {@link MAX_HOST_HEAD_BYTES}, its bytes
 * ({@link hostHeadBytes}: `limitBytes`, `observedBytes`), else over {@link MAX_HOST_HEAD_LINES},
 * its header lines, the seller's `headerLines` and {@link ADDED_HEAD_LINES} (`limit`,
 * `observed`: `limit_lines`, `observed_lines` in the error). Seller lines of up to
 * {@link HEADER_BYTES_ALWAYS_FIT} bytes and {@link HEADER_LINES_ALWAYS_FIT} lines (every
 * ordinary answer) cost two comparisons; only larger ones look up their status line.
 */
export function hostHeadOverLimit(status: number, headerBytes: number, headerLines: number): HostHeadOverLimit | undefined {
  if (headerBytes > HEADER_BYTES_ALWAYS_FIT) {
    const bytes = hostHeadBytes(status, headerBytes);
    if (bytes > MAX_HOST_HEAD_BYTES) return { limitBytes: MAX_HOST_HEAD_BYTES, observedBytes: bytes };
  }
  if (headerLines > HEADER_LINES_ALWAYS_FIT) return { limit: MAX_HOST_HEAD_LINES, observed: headerLines + ADDED_HEAD_LINES };
  return undefined;
}
