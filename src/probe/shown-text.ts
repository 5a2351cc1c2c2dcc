/**
 * A seller's strings as the probe's reports show them. Pure.
 *
 * `probe` is what an operator runs against a seller before trusting it, and everything the
 * seller names in its answers (`serverInfo.name` and `version`, the negotiated revision, a
 * JSON-RPC error's or a tool error's text) reached the terminal as it was: ANSI escapes
 * (`ESC [31m`) coloured or moved the operator's terminal, and a CR or LF in a name forged report
 * lines such as `result: all within target` (a hostile trial, F5:
 * test/regressions/probe-prints-seller-terminal-escapes.test.ts).
 */

/** Longest value the text report shows, in UTF-16 code units after escaping (a longer one is cut: {@link shownText}). */
export const MAX_SHOWN_CHARS = 200;

/** Cut values end with this. */
const ELLIPSIS = '\u2026';

/**
 * What {@link shownText} escapes: the backslash (so an escape is never ambiguous), control
 * characters (`Cc`: C0, DEL, C1), format characters (`Cf`: bidi controls such as U+202E,
 * zero-width characters, the BOM, tag characters), U+2028 and U+2029 (`Zl`, `Zp`: line breaks)
 * and lone surrogates (`Cs`: JSON's `"\ud800"` parses to one).
 */
const UNSAFE = /[\\\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

const SHORT: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One code point (a lone surrogate is one) as the report shows it. */
function escaped(ch: string): string {
  if (!UNSAFE.test(ch)) return ch;
  const short = SHORT[ch];
  if (short !== undefined) return short;
  const cp = ch.codePointAt(0) ?? 0;
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\u{${cp.toString(16)}}`;
}

/**
 * `value` on one line and inert in a terminal: `\` as `\\`; LF, CR and TAB as `\n`, `\r`,
 * `\t`; any other {@link UNSAFE} character up to U+00FF as `\xhh` (ESC `\x1b`, DEL `\x7f`, CSI
 * `\x9b`), up to U+FFFF as `\uhhhh` (`\u202e`, a lone surrogate `\ud800`), above as `\u{hhhhh}`;
 * everything else (`é`, `日本`) as it is. At most `max` code units: a longer result is cut
 * before the escape or character that would pass `max - 1` and ends with `…`, so an escape is
 * never cut in half. The work is bounded by `max`, whatever the value's length.
 *
 * The `--json` report carries the exact strings instead (report.ts formatProbeJson).
 */
export function shownText(value: string, max: number = MAX_SHOWN_CHARS): string {
  if (value.length <= max && !UNSAFE.test(value)) return value;
  const pieces: string[] = [];
  let length = 0;
  for (const ch of value) {
    const piece = escaped(ch);
    pieces.push(piece);
    length += piece.length;
    if (length > max) break;
  }
  if (length <= max) return pieces.join('');
  let out = '';
  for (const piece of pieces) {
    if (out.length + piece.length > max - ELLIPSIS.length) break;
    out += piece;
  }
  return out + ELLIPSIS;
}
