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
 */
const REASON_CODES: ReadonlyMap<string, string> = new Map([
  ['Invalid character in chunk size', 'HPE_INVALID_CHUNK_SIZE'],
  ['Chunk size overflow', 'HPE_INVALID_CHUNK_SIZE'],
  ["Content-Length can't be present with Transfer-Encoding", 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  ['Duplicate Content-Length', 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  ['Invalid character in Content-Length', 'HPE_INVALID_CONTENT_LENGTH'],
  ['Content-Length overflow', 'HPE_INVALID_CONTENT_LENGTH'],
  ['Empty Content-Length', 'HPE_INVALID_CONTENT_LENGTH'],
  ["Transfer-Encoding can't be present with Content-Length", 'HPE_INVALID_TRANSFER_ENCODING'],
  ['Invalid `Transfer-Encoding` header value', 'HPE_INVALID_TRANSFER_ENCODING'],
  ['Invalid header value char', 'HPE_INVALID_HEADER_TOKEN'],
  ['Invalid header field char', 'HPE_INVALID_HEADER_TOKEN'],
  ['Invalid header token', 'HPE_INVALID_HEADER_TOKEN'],
  ['Invalid status code', 'HPE_INVALID_STATUS'],
  ['Invalid response status', 'HPE_INVALID_STATUS'],
  ['Invalid HTTP version', 'HPE_INVALID_VERSION'],
  ['Invalid major version', 'HPE_INVALID_VERSION'],
  ['Invalid minor version', 'HPE_INVALID_VERSION'],
  ['Expected HTTP/', 'HPE_INVALID_CONSTANT'],
  ['Expected HTTP/, RTSP/ or ICE/', 'HPE_INVALID_CONSTANT'],
  ['Invalid EOF state', 'HPE_INVALID_EOF_STATE'],
  ['Data after `Connection: close`', 'HPE_CLOSED_CONNECTION'],
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
