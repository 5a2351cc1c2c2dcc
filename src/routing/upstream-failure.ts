/**
 * Failures of an upstream request before its response head: which ones the exchange line
 * explains by itself.
 *
 * The exchange line names such a failure by its reason only (`upstream_unreachable`: not
 * delivered; `upstream_reset`: delivered, then cut; `upstream_headers_too_large`: a response
 * head over undici's limit; routing/handler.ts). That is the whole
 * story for a transport failure (connection refused or reset, a timeout, a name that does
 * not resolve, a response head undici cannot parse): nothing more is logged for it (a new
 * user's trial: @fastify/reply-from's `response errored` warning with a stack repeated each
 * one, test/regressions/response-errored-duplicate-warning.test.ts). Any other error (a TLS
 * certificate or protocol failure, an error of undici or of the gateway itself) also gets a
 * warning naming it: the reason alone would hide what to fix.
 *
 * The reason alone does not tell which transport failure it was, though: a typo'd host
 * (`ENOTFOUND`) from a seller that is down (`ECONNREFUSED`), a seller's malformed HTTP
 * (`HPE_INVALID_CHUNK_SIZE`) from a network reset (`ECONNRESET`). The exchange line's
 * `upstream_error` names it ({@link transportErrorCode}; a new user's trial 50, findings 1
 * and 2: test/regressions/upstream-unreachable-cause-not-logged.test.ts,
 * test/regressions/malformed-seller-response-logged-as-reset.test.ts).
 */
import { llhttpCodeOfMessage } from './llhttp-reasons.js';

/**
 * System and undici error codes of transport failures (Node `net`/`dns` errno codes; undici
 * `UND_ERR_*` socket, client and unreadable-response codes). Parser errors of a response head (`HPE_*`, llhttp)
 * are matched by their prefix.
 */
export const TRANSPORT_FAILURE_CODES: ReadonlySet<string> = new Set([
  // Connecting, or the connection cut.
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENETRESET',
  'EADDRNOTAVAIL',
  // Name resolution.
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'ENODATA',
  // undici: the other side closed the socket, connect timeout, a response head over its
  // size limit (reason `upstream_headers_too_large`: routing/handler.ts), a request on a
  // client closed or destroyed (the gateway shutting down).
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_OVERFLOW',
  // A response head undici cannot read because its length is contradictory (two different
  // Content-Length values: undici reports the length mismatch instead of llhttp's HPE_ error;
  // a new user's trial logged it as unexpected, with undici's stack).
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
]);

/** Bound on the `cause` chain walked (a cycle must not loop). */
const MAX_CAUSE_DEPTH = 8;

/** `err` and its `cause` chain, outermost first, at most {@link MAX_CAUSE_DEPTH} deep. */
function* causeChain(err: unknown): Generator<{ code?: unknown; name?: unknown }> {
  for (let e: unknown = err, i = 0; e && i < MAX_CAUSE_DEPTH; e = (e as { cause?: unknown }).cause, i++) yield e as { code?: unknown; name?: unknown };
}

/** The innermost string `code` along `err.cause` (undici and reply-from wrap the system error), or undefined. */
export function rootCode(err: unknown): string | undefined {
  let code: string | undefined;
  for (const e of causeChain(err)) if (typeof e.code === 'string') code = e.code;
  return code;
}

/**
 * Whether `err` is a transport failure the exchange line's reason fully explains (see the
 * module docs): a code of {@link TRANSPORT_FAILURE_CODES}, an llhttp `HPE_*` code, or an
 * undici `HTTPParserError` that carries no code (undici 7 throws one without a code when the
 * bytes after an interim 1xx answer are no response head: a `199` with a body, which RFC 9110
 * §15.2 does not allow; hostile trial 28, seen: logged as unexpected with undici's stack).
 */
export function isTransportFailure(err: unknown): boolean {
  const code = rootCode(err);
  if (code === undefined) return findParserError(err) !== undefined;
  return isTransportCode(code);
}

/** Whether `code` names a transport failure: one of {@link TRANSPORT_FAILURE_CODES}, or an llhttp `HPE_*` code. */
function isTransportCode(code: string): boolean {
  return TRANSPORT_FAILURE_CODES.has(code) || code.startsWith('HPE_');
}

/** The shape of a code the exchange line shows: upper-case letters, digits and `_`, as Node, undici and llhttp write theirs. */
const SAFE_CODE = /^[A-Z][A-Z0-9_]{1,63}$/;

/**
 * The exchange line's `upstream_error` for a failure of the upstream request: the transport
 * failure's code as Node or undici names it ({@link rootCode}: `ECONNREFUSED`, `ENOTFOUND`,
 * `UND_ERR_CONNECT_TIMEOUT`, `ECONNRESET`, `UND_ERR_SOCKET`, an llhttp `HPE_*` code: for
 * undici's parser error, which carries none, the code of its reason, llhttp-reasons.ts), or
 * `HTTPParserError` for a parser error whose reason is not listed there; undefined for any
 * other error (one the gateway warns about: module docs) and for a code not of the shape of
 * such codes ({@link SAFE_CODE}), so no free text reaches the line this way.
 */
export function transportErrorCode(err: unknown): string | undefined {
  const code = rootCode(err);
  if (code === undefined) {
    // Undici's code-less parser error: the llhttp code of its reason (llhttp-reasons.ts).
    const parser = findParserError(err);
    return parser === undefined ? undefined : (llhttpCodeOfMessage((parser as { message?: unknown }).message) ?? 'HTTPParserError');
  }
  return isTransportCode(code) && SAFE_CODE.test(code) ? code : undefined;
}

/** The error along `err.cause` named `HTTPParserError` (undici's, by name: any copy of undici), if any. */
function findParserError(err: unknown): object | undefined {
  for (const e of causeChain(err)) if (e.name === 'HTTPParserError') return e;
  return undefined;
}
