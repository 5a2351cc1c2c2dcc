/**
 * A host's `Mcp-Session-Id` that carries more than one value: refused 400 `invalid_request`
 * for the request's id (routing/handler.ts), as two `MCP-Protocol-Version` fields are
 * (mcp/revision.ts isRepeatedProtocolVersion), never forwarded.
 *
 * Reported failure (hostile trial 43, low): the header sent twice (two field lines, or
 * `a, b` in one) reached the seller as Node's join of the lines, `sid, sid`, which names no
 * session, and the seller answered 404 "Session not found": the host was told its session
 * had ended (MCP: it must then start a new one) when it had only sent its ID twice
 * (test/regressions/repeated-mcp-session-id-forwarded-joined.test.ts).
 *
 * What is refused:
 * - two or more field lines (counted in `rawHeaders`, which keeps each line as sent; Node's
 *   `headers` joins the lines of a name it does not know with ", "), whatever their values;
 * - one line whose value holds a comma beside a space or tab (`a, b`, `a ,b`): MCP
 *   (Streamable HTTP, Session Management: "The session ID MUST only contain visible ASCII
 *   characters (ranging from 0x21 to 0x7E)") has no space in a session ID, so such a value is
 *   no session ID a server issued, but the form a list of several takes: as Node joins the
 *   lines, and as RFC 9110 §5.3 lets an intermediary before the gateway combine them,
 *   "separated by a comma and optional whitespace".
 * A comma alone (`a,b`) is visible ASCII, so it may be part of a session ID: such a value is
 * forwarded as written, for the seller, which issued it, to judge (two lines an intermediary
 * combined without a space cannot be told from it). Other values a seller
 * cannot have issued (a space elsewhere, a control or non-ASCII byte) are left to the
 * seller too, as before: they are not several IDs.
 *
 * Cost on the common path (no header, or one without a comma): one `includes(',')`.
 */
import type { IncomingMessage } from 'node:http';
import { fieldLineCount } from './field-lines.js';

/** The refusal's message (docs/errors.md, invalid_request, "Gateway headers"). */
export const REPEATED_SESSION_ID_MESSAGE =
  'Invalid Mcp-Session-Id header: Mcp-Session-Id must be sent at most once, with one session ID (a session ID has no spaces, so "a, b" is a list of two); send the one the server returned';

/** A comma with a space or tab beside it (RFC 9110 OWS). */
const LISTED = /[ \t],|,[ \t]/;

/**
 * True when the `Mcp-Session-Id` of `request` (`value`: as Node's `headers` gives it) was
 * sent on two or more field lines, or is one value that reads as a list (see the module doc).
 */
export function isRepeatedSessionId(request: IncomingMessage, value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'string') return value.length > 1 || (value.length === 1 && isRepeatedSessionId(request, value[0]));
  if (!value.includes(',')) return false;
  return fieldLineCount(request.rawHeaders, 'mcp-session-id') > 1 || LISTED.test(value);
}
