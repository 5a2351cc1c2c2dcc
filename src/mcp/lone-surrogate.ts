/**
 * Whether a `content[].text`'s JSON object holds a lone surrogate (a UTF-16 code unit
 * U+D800-U+DFFF not part of a pair) in a string or a key, at any depth: such a text is never
 * lifted into `structuredContent` (normalize.ts on the parse path, response/lift-splice.ts on
 * the scan path; `text_not_lifted: "lone_surrogate"`).
 *
 * Why (a hostile trial 29, M1): a text `{"s": "\ud800x", …}` (it holds the six characters
 * `\ud800`; the message writes them `\\ud800`) reads fine in every client. Lifted, its bytes
 * went out as `"structuredContent":{"s": "\ud800x", …}`, a lone-surrogate escape at the
 * message level, which strict parsers refuse (RFC 8259 §8.2 leaves such strings
 * unpredictable): the MCP Python SDK's call_tool (pydantic/jiter) raised "Invalid JSON:
 * unexpected end of hex escape" and the host lost the whole result. A text that is itself
 * not well-formed (the message writes `"text":"{\"s\":\"\ud800\"}"`) would be lifted by
 * `JSON.stringify` of its object (response/splice.ts), which writes `\ud800` the same way.
 * (test/regressions/lift-lone-surrogate-breaks-python-host.test.ts.)
 *
 * A summary never holds one (summary.ts shows an ASCII `status` and keys of letters and
 * digits), so the dedupe, which leaves `structuredContent` as the seller wrote it, needs no check.
 */
import { BACKSLASH } from './json-bytes.js';

const U = 0x75; // `u`

/** `Buffer#indexOf`, for a plain Uint8Array too (the scan's bytes are one). */
const indexOf = Buffer.prototype.indexOf as (this: Uint8Array, value: number, from: number) => number;

/**
 * Whether `bytes`, the UTF-8 of a valid JSON text (a lifted text as the scan decoded it:
 * json-scan.ts scanObjectText, which leaves a text with a lone surrogate of its own to the
 * parse path, so none is in `bytes` raw), writes a `\u` escape of a surrogate that is not one
 * of a pair: a high one (`\uD800`-`\uDBFF`) not followed at once by an escaped low one
 * (`\uDC00`-`\uDFFF`), or a low one not after a high one: exactly whether a string or key as
 * written decodes to one that is not well-formed (in a member `JSON.parse` drops for a repeated
 * key too: a spliced lift writes the text's bytes, that member included).
 *
 * Cost (issue 5, the 1 KiB lift): one native search for a backslash (`Buffer#indexOf` of a
 * number, ~12 ns for 1 KiB; `Uint8Array#indexOf` is ~25 times slower on Node 20) when the text
 * has none, the common case; else one more search per escape.
 */
export function escapesLoneSurrogate(bytes: Uint8Array): boolean {
  // In a valid JSON text a backslash is only in a string, each one found so the first of an escape.
  for (let i = indexOf.call(bytes, BACKSLASH, 0); i !== -1; i = indexOf.call(bytes, BACKSLASH, i)) {
    if (bytes[i + 1] !== U) {
      i += 2;
      continue;
    }
    const unit = hex4(bytes[i + 2]!, bytes[i + 3]!, bytes[i + 4]!, bytes[i + 5]!);
    i += 6;
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit >= 0xdc00 || bytes[i] !== BACKSLASH || bytes[i + 1] !== U) return true;
    const low = hex4(bytes[i + 2]!, bytes[i + 3]!, bytes[i + 4]!, bytes[i + 5]!);
    if (low < 0xdc00 || low > 0xdfff) return true;
    i += 6;
  }
  return false;
}

/**
 * Whether the lifted `text` (which `JSON.parse` read as `value`) holds a lone surrogate in a
 * string or key of its object: from its escapes ({@link escapesLoneSurrogateText}) when the
 * text is well-formed (then a lone code unit can only come from an escape, and an escape pairs
 * only with an escape; and the lift may be spliced, its bytes written), else from the strings
 * and keys of `value` (rare: the message itself wrote a lone surrogate escape inside the text,
 * or a code unit beside an escape that pairs with it; such a lift goes out as `JSON.stringify`
 * of `value`, response/splice.ts, which writes a lone surrogate only where `value` holds one).
 *
 * Cost: `isWellFormed` (native; constant for a one-byte string) and one native search for a
 * backslash; more only for a text with escapes.
 */
export function holdsLoneSurrogate(text: string, value: unknown): boolean {
  return text.isWellFormed() ? escapesLoneSurrogateText(text) : !valueWellFormed(value);
}

/** {@link escapesLoneSurrogate} of a JSON text held as a JavaScript string. */
export function escapesLoneSurrogateText(text: string): boolean {
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i)) {
    if (text.charCodeAt(i + 1) !== U) {
      i += 2;
      continue;
    }
    const unit = hex4(text.charCodeAt(i + 2), text.charCodeAt(i + 3), text.charCodeAt(i + 4), text.charCodeAt(i + 5));
    i += 6;
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit >= 0xdc00 || text.charCodeAt(i) !== BACKSLASH || text.charCodeAt(i + 1) !== U) return true;
    const low = hex4(text.charCodeAt(i + 2), text.charCodeAt(i + 3), text.charCodeAt(i + 4), text.charCodeAt(i + 5));
    if (low < 0xdc00 || low > 0xdfff) return true;
    i += 6;
  }
  return false;
}

/** Whether every string and key in `value` (what `JSON.parse` made) is well-formed. Iterative. */
function valueWellFormed(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return false;
    } else if (Array.isArray(v)) {
      for (const e of v as unknown[]) stack.push(e);
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, e] of Object.entries(v)) {
        if (!k.isWellFormed()) return false;
        stack.push(e);
      }
    }
  }
  return true;
}

/** The value of four hex digit character codes, or -1 when one is not a hex digit. */
function hex4(a: number, b: number, c: number, d: number): number {
  const n = (hexDigit(a) << 12) | (hexDigit(b) << 8) | (hexDigit(c) << 4) | hexDigit(d);
  return n < 0 ? -1 : n;
}

/** A hex digit's value; any digit that is none makes {@link hex4} negative. */
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  return l >= 0x61 && l <= 0x66 ? l - 0x57 : -0x10000;
}
