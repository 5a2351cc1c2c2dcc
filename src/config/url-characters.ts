/**
 * Whitespace and control characters in an agent `url` (after `${VAR}` expansion), which a URL
 * parser quietly removes or rewrites: WHATWG URL parsing trims leading and trailing C0
 * controls and spaces, removes every tab and newline wherever it is, and percent-encodes the
 * other controls and spaces in a path or query. So `http://127.0.0.\n1:3001/mcp` was read as
 * `http://127.0.0.1:3001/mcp`, `…/mc\tp` as `/mcp`, `…/mc\u0000p` as `/mc%00p`, and a trailing
 * NUL or trailing spaces were dropped, all passing `--check-config` (a hostile new operator's
 * trial 45, L3: test/regressions/agent-url-control-characters-quietly-rewritten.test.ts). A
 * url the operator wrote (or a variable filled in) with such a character is a mistake to
 * report, not a url to guess at.
 *
 * Any other non-ASCII character likewise (hostile trial 46, item 4): the parser maps a host's
 * by IDNA, which drops some (`exam\u00adple.com`, a soft hyphen: `example.com`) and turns others
 * into ASCII ones (a full-width `１２７.0.0.1`: `127.0.0.1`; `EXAMPLE.com\u3002evil.com`, an
 * ideographic full stop: `example.com.evil.com`), and percent-encodes a path's or query's; all
 * passed `--check-config` (test/regressions/agent-url-non-ascii-quietly-rewritten.test.ts). The
 * problem says to write an internationalized host in its punycode (`xn--`) form and to
 * percent-encode a path's or query's non-ASCII bytes: the url then means what it says. When
 * the host holds one, the problem names the host the parser reads (`example.com`, or the
 * punycode form: review 31, finding 8). Written percent-encoded in the host, such a character
 * is refused by url-authority.ts `urlAuthorityPercentProblem`.
 *
 * And a backslash ({@link urlBackslashProblem}; review 36, F1): WHATWG URL parsing reads `\` in
 * an `http:`/`https:` url as `/`, where RFC 3986 readers (an operator, curl, Python's `urlsplit`)
 * read it as a character of the userinfo, host or path. `http://evil.example\@seller.example/mcp`
 * passed `--check-config` and sent the agent's configured headers to evil.example (path
 * `/@seller.example/mcp`), while its reader saw host seller.example; `https://s/a\b` went to
 * `/a/b` (test/regressions/agent-url-backslash-sends-headers-to-other-host.test.ts).
 */

import { parsedHost, writtenHost } from './url-authority.js';

/** Any character above U+007F. */
const NON_ASCII = /[\u0080-\u{10ffff}]/u;

/** Every character JavaScript's `\s` takes as whitespace (space, tab, line breaks, NBSP, U+2028, BOM, ...). */
const WHITESPACE = /\s/u;

/** Whether `code` is a C0 control, DEL or a C1 control. */
const isControl = (code: number): boolean => code <= 0x1f || (code >= 0x7f && code <= 0x9f);

/** Names of the characters an operator is likely to meet; the others are "a control character" or "whitespace". */
const NAMES: ReadonlyMap<number, string> = new Map([
  [0x00, 'NUL'],
  [0x09, 'tab'],
  [0x0a, 'line feed'],
  [0x0d, 'carriage return'],
  [0x20, 'space'],
  [0x7f, 'DEL'],
  [0xa0, 'no-break space'],
]);

/** Names of the non-ASCII characters (not whitespace) likely to hide in a host; the others are "a non-ASCII character". */
const NON_ASCII_NAMES: ReadonlyMap<number, string> = new Map([
  [0x00ad, 'soft hyphen'],
  [0x200b, 'zero width space'],
  [0x200c, 'zero width non-joiner'],
  [0x200d, 'zero width joiner'],
  [0x2060, 'word joiner'],
  [0x3002, 'ideographic full stop'],
  [0xff0e, 'fullwidth full stop'],
  [0xff0f, 'fullwidth solidus'],
  [0xff1a, 'fullwidth colon'],
  [0xff61, 'halfwidth ideographic full stop'],
]);

const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** The name of a non-ASCII character in {@link NON_ASCII_NAMES} or a full-width digit or Latin letter, else `a non-ASCII character`. */
function nonAsciiName(code: number): string {
  const known = NON_ASCII_NAMES.get(code);
  if (known !== undefined) return known;
  if (code >= 0xff10 && code <= 0xff19) return `fullwidth digit ${DIGITS[code - 0xff10]}`;
  if (code >= 0xff21 && code <= 0xff3a) return `fullwidth latin capital letter ${String.fromCharCode(code - 0xff21 + 0x41)}`;
  if (code >= 0xff41 && code <= 0xff5a) return `fullwidth latin small letter ${String.fromCharCode(code - 0xff41 + 0x61)}`;
  return 'a non-ASCII character';
}

/** `U+000A (line feed)`. */
function describeCharacter(code: number): string {
  const name = NAMES.get(code) ?? (isControl(code) ? 'a control character' : WHITESPACE.test(String.fromCodePoint(code)) ? 'whitespace' : nonAsciiName(code));
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} (${name})`;
}

/** The first character (code point) of `text` that `bad` takes, its 1-based position in code points, and how many there are; undefined when none. */
function findCharacters(text: string, bad: (character: string, code: number) => boolean): { code: number; at: number; count: number } | undefined {
  let found: { code: number; at: number } | undefined;
  let count = 0;
  let at = 0;
  for (const character of text) {
    at++;
    const code = character.codePointAt(0) as number;
    if (!bad(character, code)) continue;
    found ??= { code, at };
    count++;
  }
  return found === undefined ? undefined : { ...found, count };
}

/**
 * The problem of a url holding whitespace or a control character, or else any other non-ASCII
 * character, or undefined when it holds none: the first one by code point, name and 1-based
 * position (in characters), and how many more there are. Never echoes the url (it may hold a
 * credential, or come from a variable). Never throws.
 */
export function urlCharactersProblem(text: string): string | undefined {
  const blank = findCharacters(text, (character, code) => isControl(code) || WHITESPACE.test(character));
  if (blank !== undefined) {
    return (
      'must not contain whitespace or control characters, which a URL parser quietly drops or percent-encodes ' +
      `(the requests would go to another url than the one written): ${found(blank)}`
    );
  }
  const nonAscii = findCharacters(text, (_character, code) => code > 0x7f);
  if (nonAscii === undefined) return undefined;
  // The host (no secret) as the parser maps it, when the written host holds one: `example.com` for `exam\u00adple.com`, the punycode of `s\u00e4les.example`.
  const host = NON_ASCII.test(writtenHost(text) ?? '') ? parsedHost(text) : undefined;
  return (
    "must be ASCII: a URL parser quietly rewrites any other character (a host's are mapped by IDNA, which drops some and turns others into ASCII ones; " +
    `a path's or query's are percent-encoded), so the requests could go to another url than the one written: ${found(nonAscii)}` +
    `${host === undefined ? '' : `; a URL parser reads this host as ${host}`}; ` +
    'write an internationalized host in its punycode form (xn--...), and percent-encode the UTF-8 bytes of a non-ASCII character in the path or query'
  );
}

/** `U+000A (line feed) at character 16, and 2 more`. */
function found(first: { code: number; at: number; count: number }): string {
  return `${describeCharacter(first.code)} at character ${first.at}${first.count > 1 ? `, and ${first.count - 1} more` : ''}`;
}

/** What ends an authority for an RFC 3986 reader (a `\` does not): the next `/`, `?` or `#`. */
const RFC3986_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The problem of a url holding a backslash before its query, or undefined when it holds none
 * there: the first one's 1-based position, how many more there are, and, when it lies where an
 * RFC 3986 reader still reads the authority (before the first `/`, `?` or `#` after `//`), the
 * host a URL parser reads instead, unless that authority holds an `@`: what precedes it is then
 * userinfo to such a reader, a credential perhaps, and is not echoed (a re-read of review 36's
 * fix: `https://ghp_S3cretT0ken\@seller.example/mcp` printed the token as the host). A
 * backslash in the query (after the first `?`) is sent as written by the URL parser, so it is
 * allowed (a re-read: `?q=a\b` was refused with a reason that did not hold there). Never
 * echoes the url. Never throws.
 *
 * @param text the url as the config gives it, after `${VAR}` expansion, ASCII with no
 *   whitespace or control character ({@link urlCharactersProblem} refuses those first: a
 *   position is then both a character's and a UTF-16 unit's).
 */
export function urlBackslashProblem(text: string): string | undefined {
  const queryAt = text.indexOf('?');
  const beforeQuery = queryAt === -1 ? text : text.slice(0, queryAt);
  const first = beforeQuery.indexOf('\\');
  if (first === -1) return undefined;
  const count = beforeQuery.split('\\').length - 1;
  const authority = RFC3986_AUTHORITY.exec(text);
  const inAuthority = authority !== null && first < authority[0].length;
  const host = inAuthority && !authority[0].includes('@') ? parsedHost(text) : undefined;
  const hostNote = host !== undefined ? `; a URL parser reads this host as ${host}` : inAuthority ? '; a URL parser reads what precedes it as the host (not shown: other readers take it for userinfo)' : '';
  return (
    'must not contain `\\` in its host or path: a URL parser (WHATWG, as Node and its HTTP client) reads it as `/`, which ends the host where other readers ' +
    '(RFC 3986: an operator, curl, Python) read on, so the requests could go to another host or path than the one written: ' +
    `\`\\\` at character ${first + 1}${count > 1 ? `, and ${count - 1} more` : ''}${hostNote}; ` +
    'write `/` to separate path segments, and percent-encode a backslash the path needs as %5C'
  );
}
