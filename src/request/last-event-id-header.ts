/**
 * `Last-Event-ID` sent more than once: two or more field lines (counted as sent, whatever
 * their values), or one value that reads as a list (a comma beside a space or tab: the form
 * two lines take once joined, by Node or by a proxy in front, RFC 9110 §5.3). A resume names
 * one event (WHATWG HTML §9.2: the id of the last event received), and a gateway token has no
 * comma (resume/token.ts: its alphabet is `[A-Za-z0-9_.-]`), so such a value is never a token.
 * Refused `resume_token_invalid` (400, no seller contacted) with a message of its own, as
 * MCP-Protocol-Version and Mcp-Session-Id sent twice are (`invalid_request`; the reason stays
 * that of every other unusable Last-Event-ID). Reported failure (hostile trial 54, F5b: two
 * Last-Event-ID lines got the generic "not a well-formed resume token":
 * test/regressions/repeated-last-event-id-generic-message.test.ts).
 */
import type { IncomingMessage } from 'node:http';
import { fieldLineCount } from './field-lines.js';

/** The message of the refusal of a `Last-Event-ID` sent more than once. */
export const REPEATED_LAST_EVENT_ID_MESSAGE =
  'Last-Event-ID must be sent at most once, with one resume token (the id of the last event received): this request carries several (two field lines, or a list "a, b"); send the last one only.';

/** A comma with a space or tab beside it (RFC 9110 OWS). */
const LISTED = /[ \t],|,[ \t]/;

/** Whether the `Last-Event-ID` of `request` (`value`: as Node's `headers` gives it) was sent more than once (see file comment). */
export function isRepeatedLastEventId(request: IncomingMessage, value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'string') return value.length > 1;
  if (!value.includes(',')) return false;
  return fieldLineCount(request.rawHeaders, 'last-event-id') > 1 || LISTED.test(value);
}
