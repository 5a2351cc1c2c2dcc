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
 */

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

/** `U+000A (line feed)`. */
function describeCharacter(code: number): string {
  const name = NAMES.get(code) ?? (code <= 0x1f || (code >= 0x7f && code <= 0x9f) ? 'a control character' : 'whitespace');
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} (${name})`;
}

/**
 * The problem of a url holding whitespace or a control character, or undefined when it holds
 * none: the first one by code point, name and 1-based position, and how many more there are.
 * Never echoes the url (it may hold a credential, or come from a variable). Never throws.
 */
export function urlCharactersProblem(text: string): string | undefined {
  let first = -1;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isControl(code) && !WHITESPACE.test(text[i] as string)) continue;
    if (first < 0) first = i;
    count++;
  }
  if (first < 0) return undefined;
  const more = count > 1 ? `, and ${count - 1} more` : '';
  return (
    'must not contain whitespace or control characters, which a URL parser quietly drops or percent-encodes ' +
    `(the requests would go to another url than the one written): ${describeCharacter(text.charCodeAt(first))} at character ${first + 1}${more}`
  );
}
