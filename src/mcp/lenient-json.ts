/**
 * What a lenient JSON reader makes of a text that `JSON.parse` refuses for its non-finite
 * number literals: `NaN`, `Infinity` and `-Infinity` outside strings. Python's `json` and
 * pydantic (`pydantic_core.from_json`, `BaseModel.model_validate_json`: the MCP Python SDK
 * client parses every SSE event with `JSONRPCMessage.model_validate_json(sse.data)`) read them
 * as numbers, so such a text is a JSON-RPC message to those hosts though it is no JSON text
 * (RFC 8259 §6: "Numeric values that cannot be represented ... (such as Infinity and NaN) are
 * not permitted").
 *
 * Used where the gateway forwards data it cannot parse as the seller sent it (an SSE event's
 * data: docs/errors.md "data is not required to be JSON"), to judge that data as such a host
 * reads it. Reported failure (a new user's trial 8, F2): a response carrying `"score":NaN`
 * for another id, or on the standalone GET stream, reached the host unread, and one for the
 * call's own id went out un-normalized, then the gateway's `upstream_reset` for the same id
 * (test/regressions/sse-nan-response-forwarded.test.ts).
 */
import { closingQuote, MINUS, QUOTE } from './json-bytes.js';

/** What {@link parseWithNonFiniteLiterals} returns for a text that even a lenient reader cannot read. */
export const NOT_LENIENT_JSON: unique symbol = Symbol('not lenient JSON');

/**
 * Whether `data` (an event's data, as text or UTF-8 bytes) holds `NaN` or `Infinity` anywhere:
 * the cheap test before {@link parseWithNonFiniteLiterals} (two native searches; an ASCII
 * letter's byte comes only from that letter in UTF-8).
 */
export function mayHoldNonFiniteLiteral(data: string | Buffer): boolean {
  return data.indexOf('NaN') !== -1 || data.indexOf('Infinity') !== -1;
}

/**
 * `text` read as a lenient reader reads it: each `NaN`, `Infinity`, `-Infinity` (and `-NaN`)
 * outside strings taken as a number, here `null` (only the structure is judged, never the
 * value), the rest by `JSON.parse`. {@link NOT_LENIENT_JSON} when the text holds no such
 * literal outside strings (it is then JSON or not as it is: nothing lenient about it), or is
 * still no JSON text with them replaced (`1NaN`, `NaNx`, an unterminated string).
 *
 * A small tokenizer: strings are skipped whole (a `\` escapes the next character, so `"\"NaN"`
 * holds no literal), everything else is compared at each position. Cost: one pass over the
 * text and one `JSON.parse` of the copy; the caller runs it only for data that failed the
 * scan and holds `NaN` or `Infinity` ({@link mayHoldNonFiniteLiteral}).
 */
export function parseWithNonFiniteLiterals(text: string): unknown {
  const n = text.length;
  const parts: string[] = [];
  /** Start of the text not yet copied to `parts`. */
  let copied = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = closingQuote(text, i);
      if (close < 0) return NOT_LENIENT_JSON; // an unterminated string: no JSON text, however read
      i = close + 1;
      continue;
    }
    const length = literalLength(text, i);
    if (length === 0) {
      i++;
      continue;
    }
    parts.push(text.slice(copied, i), 'null');
    i += length;
    copied = i;
  }
  if (parts.length === 0) return NOT_LENIENT_JSON;
  parts.push(text.slice(copied));
  try {
    return JSON.parse(parts.join('')) as unknown;
  } catch {
    return NOT_LENIENT_JSON;
  }
}

/** The length of the non-finite literal at `at` (`NaN`, `Infinity`, with an optional `-`), or 0. */
function literalLength(text: string, at: number): number {
  const sign = text.charCodeAt(at) === MINUS ? 1 : 0;
  if (text.startsWith('NaN', at + sign)) return sign + 3;
  if (text.startsWith('Infinity', at + sign)) return sign + 8;
  return 0;
}
