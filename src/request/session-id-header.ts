/**
 * A host's `Mcp-Session-Id` no server can have issued, refused 400 `invalid_request` for the
 * request's id (routing/handler.ts), never forwarded: one that carries more than one value,
 * as two `MCP-Protocol-Version` fields are (mcp/revision.ts isRepeatedProtocolVersion), and
 * one that breaks MCP's rule for a session ID (Streamable HTTP, Session Management: "The
 * session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)").
 *
 * Reported failures:
 * - hostile trial 43, low: the header sent twice (two field lines, or `a, b` in one) reached
 *   the seller as Node's join of the lines, `sid, sid`, which names no session, and the
 *   seller answered 404 "Session not found": the host was told its session had ended (MCP: it
 *   must then start a new one) when it had only sent its ID twice
 *   (test/regressions/repeated-mcp-session-id-forwarded-joined.test.ts);
 * - a follow-up: an empty value, or one holding a space, a tab or a byte over 0x7E (Latin-1
 *   obs-text, which Node's HTTP parser lets through as one character per byte) went to the
 *   seller as written (test/regressions/session-id-not-visible-ascii-forwarded.test.ts).
 *
 * What is refused as repeated ({@link isRepeatedSessionId}, judged first: its message says
 * what the host most likely did):
 * - two or more field lines (counted in `rawHeaders`, which keeps each line as sent; Node's
 *   `headers` joins the lines of a name it does not know with ", "), whatever their values;
 * - one line whose value holds a comma beside a space or tab (`a, b`, `a ,b`): the form a list
 *   of several takes, as Node joins the lines, and as RFC 9110 §5.3 lets an intermediary
 *   before the gateway combine them, "separated by a comma and optional whitespace".
 * What is refused as no session ID ({@link sessionIdFault}): an empty value (`Mcp-Session-Id:`,
 * or only spaces: RFC 9110 §5.5 has the spaces around a value be no part of it, so Node gives
 * ''), and any character outside 0x21-0x7E (a space or tab inside, obs-text 0x80-0xFF; the
 * parser already refuses the other control bytes, `malformed_http`). A comma alone (`a,b`) is
 * visible ASCII, so it may be part of a session ID: forwarded as written, for the seller,
 * which issued it, to judge.
 *
 * No MCP client is refused: the SDK clients (TypeScript 1.x and 2.x) send the ID the server
 * returned, and none when that was empty (`if (sessionId)`); the SDK servers issue UUIDs by
 * default and check no characters (a stateful one answers an empty ID 400 "Mcp-Session-Id
 * header is required" and any ID not its own 404; a stateless one ignores the header). A
 * seller that issues an ID breaking the rule has it passed to the host as sent (the gateway
 * does not rewrite a seller's headers: response/headers.ts); the host that sends it back is
 * refused, with a message saying a server that returned it breaks the rule.
 *
 * Cost on the common path (no header, or a valid one): one `includes(',')` and one regular
 * expression test of the value.
 */
import type { IncomingMessage } from 'node:http';
import { fieldLineCount } from './field-lines.js';

/** The refusal's message (docs/errors.md, invalid_request, "Gateway headers"). */
export const REPEATED_SESSION_ID_MESSAGE =
  'Invalid Mcp-Session-Id header: Mcp-Session-Id must be sent at most once, with one session ID (a session ID has no spaces, so "a, b" is a list of two); send the one the server returned';

/**
 * The refusal's message for a value that breaks MCP's rule (docs/errors.md, invalid_request,
 * "Gateway headers"); `fault` is {@link sessionIdFault}'s. The value itself is not shown: a
 * session ID is a secret (logs redact it).
 */
export function notVisibleAsciiMessage(fault: string): string {
  return `Invalid Mcp-Session-Id header: a session ID must only contain visible ASCII characters, 0x21 to 0x7E (MCP, Streamable HTTP, Session Management), and this one ${fault}; send the session ID the server returned (a server that returned this one breaks that rule)`;
}

/** A character outside 0x21-0x7E (visible ASCII). */
const NOT_VISIBLE = /[^\x21-\x7e]/;

/**
 * What makes the `Mcp-Session-Id` value `value` (as Node's `headers` gives it: one character
 * per byte) no session ID, for {@link notVisibleAsciiMessage}: `is empty`, or `has byte 0xHH at
 * position N` (the first character outside 0x21-0x7E, N from 1); undefined for a valid one or
 * none. An array (never given for this name: Node joins its lines) is judged by its first.
 */
export function sessionIdFault(value: string | string[] | undefined): string | undefined {
  const text = typeof value === 'string' ? value : value?.[0];
  if (text === undefined) return undefined;
  if (text === '') return 'is empty';
  const at = text.search(NOT_VISIBLE);
  if (at < 0) return undefined;
  const hex = text.charCodeAt(at).toString(16).toUpperCase().padStart(2, '0');
  return `has byte 0x${hex} at position ${at + 1}`;
}

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
