/**
 * Counting a request's field lines of one name, as sent: Node's `headers` keeps the first
 * `Host` and joins the lines of a name it does not know with ", ", so only `rawHeaders` (name,
 * value, name, value..., each line as sent) tells how many lines there were. Used for the
 * `Host` count (request/head-refusal.ts: several are a 400, RFC 9112 §3.2) and the
 * `Mcp-Session-Id` count (request/session-id-header.ts: several are refused).
 */

/**
 * How many field lines named `lowerName` (lower-case), in any case, `rawHeaders` holds. One
 * length comparison per field line on the common path (a name of another length).
 */
export function fieldLineCount(rawHeaders: readonly string[], lowerName: string): number {
  const length = lowerName.length;
  let lines = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === length && name.toLowerCase() === lowerName) lines++;
  }
  return lines;
}
