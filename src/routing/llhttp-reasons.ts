/**
 * llhttp's error code for the reason text of undici's `HTTPParserError`, where undici leaves
 * the error without a code.
 *
 * undici 7 builds that error as `new HTTPParserError(message, constants.ERROR[ret], data)`
 * (dispatcher/client-h1.js createError), but `constants.ERROR` maps names to numbers, not
 * numbers to names, so `code` is undefined for every llhttp error; its message keeps llhttp's
 * reason: `Response does not match the HTTP/1.1 protocol (Invalid character in chunk size)`.
 * llhttp's reasons are fixed texts of its source (src/llhttp/http.ts, `p.error(ERROR.X,
 * '...')`), so a reason listed here maps to the code llhttp gives it; any other text (an
 * unlisted reason, anything else) maps to nothing: no text of the error itself reaches the
 * log. Found by a new user's trial 50, finding 2 (an invalid chunk size logged as a plain
 * `upstream_reset`: test/regressions/malformed-seller-response-logged-as-reset.test.ts).
 *
 * Every pair is proven by test/unit/llhttp-reasons.test.ts: a raw server writes the malformed
 * response, Node's http client gives the code and reason, undici the same reason; the table
 * holds only reasons undici carries on a response. Node 20.20 links llhttp 9.3.1
 * (`process.versions.llhttp`); undici 7 ships its own WebAssembly build of llhttp, whose
 * version its package does not record (its reason strings are the same set, and the test
 * checks each pair on both). Where a Content-Length was read and differs from the bytes read
 * (so always on `Content-Length overflow`, left out) undici reports its own
 * `UND_ERR_RES_CONTENT_LENGTH_MISMATCH` instead of the parser's reason. Also left out, as undici
 * never reports them on a response: ``Data after `Connection: close` `` (undici
 * ends the message first); request-only reasons (`Invalid \`Transfer-Encoding\` header
 * value`). `Invalid EOF state` (a body cut inside a chunk after `Connection: close`) is
 * undici's alone: Node's client reports that as an abort, `ECONNRESET`.
 */
const REASON_CODES: ReadonlyMap<string, string> = new Map([
  ['Invalid character in chunk size', 'HPE_INVALID_CHUNK_SIZE'],
  ['Chunk size overflow', 'HPE_INVALID_CHUNK_SIZE'],
  ["Content-Length can't be present with Transfer-Encoding", 'HPE_INVALID_CONTENT_LENGTH'],
  ["Transfer-Encoding can't be present with Content-Length", 'HPE_INVALID_TRANSFER_ENCODING'],
  ['Duplicate Content-Length', 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  ['Invalid character in Content-Length', 'HPE_INVALID_CONTENT_LENGTH'],
  ['Empty Content-Length', 'HPE_INVALID_CONTENT_LENGTH'],
  ['Invalid header token', 'HPE_INVALID_HEADER_TOKEN'],
  ['Invalid header field char', 'HPE_INVALID_HEADER_TOKEN'],
  ['Invalid header value char', 'HPE_INVALID_HEADER_TOKEN'],
  ['Invalid status code', 'HPE_INVALID_STATUS'],
  ['Invalid response status', 'HPE_INVALID_STATUS'],
  ['Invalid HTTP version', 'HPE_INVALID_VERSION'],
  ['Invalid major version', 'HPE_INVALID_VERSION'],
  ['Invalid minor version', 'HPE_INVALID_VERSION'],
  ['Expected HTTP/, RTSP/ or ICE/', 'HPE_INVALID_CONSTANT'],
  ['Missing expected CR after response line', 'HPE_CR_EXPECTED'],
  ['Missing expected LF after header value', 'HPE_LF_EXPECTED'],
  ['Expected LF after chunk data', 'HPE_STRICT'],
  ['Invalid character in chunk extensions name', 'HPE_STRICT'],
  ['Invalid EOF state', 'HPE_INVALID_EOF_STATE'],
]);

/** Every code {@link llhttpCodeOfMessage} gives (observability/log-vocabulary.ts). */
export const LLHTTP_REASON_CODES: readonly string[] = [...new Set(REASON_CODES.values())];

/** The `(reason)` undici ends the message with. */
const REASON = /\(([^()]{1,100})\)$/;

/** The llhttp code of `message`'s reason (module docs), or undefined. */
export function llhttpCodeOfMessage(message: unknown): string | undefined {
  if (typeof message !== 'string') return undefined;
  const reason = REASON.exec(message)?.[1];
  return reason === undefined ? undefined : REASON_CODES.get(reason);
}
