/**
 * JSON text made inert for a terminal: the same JSON value, with nothing in its bytes a
 * terminal acts on.
 *
 * `JSON.stringify` and pino escape C0 controls (`\u001b`) and lone surrogates, but write DEL,
 * the C1 controls (U+0080..U+009F: U+009B is CSI, U+009D is OSC), format characters (bidi
 * controls such as U+202E, U+2066..U+2069, zero-width characters) and U+2028/U+2029 as they
 * are: valid in a JSON string, but a terminal showing the line may reorder it (a tool name
 * holding U+202E shows another name) or act on a control. Strings a host or seller chose reach
 * the log (a tool name, an SSE event's name, a parser's complaint about a seller's line).
 *
 * Source: a team note (probe --verbose: test/regressions/probe-verbose-log-bidi-raw.test.ts);
 * a new user's hostile trial 12, L1 (the serving gateway's exchange lines wrote a seller's
 * event name and a host's tool name with U+202E, U+2028, U+0085 and U+009B raw:
 * test/regressions/serving-log-bidi-raw.test.ts).
 */

/**
 * The characters written `\uhhhh`: DEL, the C1 controls, format characters (`Cf`) and
 * U+2028/U+2029. Inside a JSON string only (the JSON's own syntax is ASCII); astral ones
 * match as their two code units.
 */
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029]|\p{Cf}/gu;
/** Any character from DEL up: a line with none (nearly every line) is returned as it is. */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e\n]/;

/**
 * `json` (a JSON text, or several on lines, as pino writes them) with each {@link JSON_UNSAFE}
 * character written as `\uhhhh` (an astral one as its surrogate pair): the same JSON value,
 * every string exact for a reader that parses it. Cost: one native search for a line of
 * printable ASCII (~0.1-0.3 µs for a 400-byte exchange line); a replace pass otherwise.
 */
export function inertJson(json: string): string {
  if (!NOT_PRINTABLE_ASCII.test(json)) return json;
  return json.replace(JSON_UNSAFE, (ch) => {
    let out = '';
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}
