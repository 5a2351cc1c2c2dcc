/**
 * A seller's `Location` on a 3xx answer as the exchange line shows it (`upstream_location`).
 * The gateway never follows a redirect (the host gets `upstream_not_mcp` with its
 * `upstream_status`: docs/errors.md), so this field is where the operator sees where the
 * seller says it moved. Reported failure: a new user's trial 50, finding 3 (a 308 to
 * `https://new.example/mcp`: the new URL appeared nowhere;
 * test/regressions/seller-redirect-target-not-logged.test.ts).
 *
 * The value is the seller's text, so it is shaped before it reaches the log (pure, bounded):
 * - its query, if any, is `?[redacted]`, as the logs show an agent URL's query
 *   (url-query-redaction.ts) and `--check-config` writes one (config/display-url.ts); its
 *   userinfo is `[redacted]@` and its fragment `#[redacted]`, as there: a seller moving its
 *   endpoint may put a key in any of them;
 * - any character outside printable ASCII (controls, spaces, DEL, the C1 controls a header
 *   value decoded as latin1 may hold, bidi marks) is percent-encoded, byte by byte of its
 *   UTF-8, so the value is inert for a terminal whatever writes the line (inert-json.ts is
 *   the logger's own guard);
 * - its first {@link MAX_LOCATION_CHARS} (256) characters, an escape never cut in two.
 */
import { REDACTED } from './redacted.js';

/** Characters of `upstream_location` at most. */
export const MAX_LOCATION_CHARS = 256;

/** A Location value this long or longer is cut before it is shaped (a head is at most 16 KiB anyway). */
const MAX_INPUT_CHARS = 16 * 1024;

/** `scheme://` or `//` and the authority up to its last `@` (the userinfo). */
const USERINFO = /^((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/)([^/?#]*)@/;

/** Any character a log line should not carry raw: outside `!`..`~`. */
const NOT_PRINTABLE = /[^\x21-\x7e]/gu;

/** The Location of a response's headers as the exchange line shows it, or undefined when it has none. */
export function shownLocation(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return undefined;
  return shapeLocation(first);
}

/** `location` redacted, made printable ASCII and cut (module docs). */
export function shapeLocation(location: string): string {
  let s = location.length > MAX_INPUT_CHARS ? location.slice(0, MAX_INPUT_CHARS) : location;
  const hash = s.indexOf('#');
  const fragment = hash < 0 ? '' : hash === s.length - 1 ? '#' : `#${REDACTED}`;
  if (hash >= 0) s = s.slice(0, hash);
  const mark = s.indexOf('?');
  const query = mark < 0 ? '' : mark === s.length - 1 ? '?' : `?${REDACTED}`;
  if (mark >= 0) s = s.slice(0, mark);
  s = s.replace(USERINFO, (_all, prefix: string) => `${prefix}${REDACTED}@`);
  const shown = `${s}${query}${fragment}`.replace(NOT_PRINTABLE, percentEncoded);
  return cut(shown);
}

/** `ch` as `%XX` escapes of its UTF-8 bytes; a character decoded from latin1 (U+0080..U+00FF) as its one byte. */
function percentEncoded(ch: string): string {
  const code = ch.codePointAt(0)!;
  const bytes = code <= 0xff ? [code] : [...Buffer.from(ch, 'utf8')];
  return bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** The first {@link MAX_LOCATION_CHARS} characters of `s`, less a `%` escape the cut would split. */
function cut(s: string): string {
  if (s.length <= MAX_LOCATION_CHARS) return s;
  const head = s.slice(0, MAX_LOCATION_CHARS);
  const pct = head.lastIndexOf('%');
  return pct >= 0 && pct > MAX_LOCATION_CHARS - 3 ? head.slice(0, pct) : head;
}
