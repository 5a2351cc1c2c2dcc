/**
 * Where a JSON-RPC message's `id` is written in its JSON text: the bytes of the id as the
 * sender wrote them, which a parsed number may no longer match (`JSON.parse` reads
 * `9007199254740993` and `9007199254740992` as one double). Read by a walk over the text, for
 * the paths that hold only the parsed message: a response whose keys are written with escapes
 * (the scan's member table then cannot name its `id`: json-scan.ts TopMembers.plainKeys), a
 * batch (json-scan.ts records no members for an array), a host request read with `JSON.parse`
 * (request/peek.ts).
 *
 * Source: JSON-RPC 2.0 §5 (the response id "MUST be the same as the value of the id member in
 * the Request Object"); a new user's trial (a seller's id 9007199254740992 was accepted as the
 * answer to request 9007199254740993:
 * test/regressions/response-id-compared-as-double.test.ts).
 */
import type { ByteRange } from './json-scan.js';
import { BACKSLASH, closingQuote, COLON, COMMA, DIGIT_0, DIGIT_9, LBRACE, LBRACKET, MINUS, QUOTE, RBRACE, RBRACKET } from './json-bytes.js';

const LOWER_I = 0x69;
const LOWER_D = 0x64;

/**
 * The `id` of each message in the JSON text `bytes`, as `JSON.parse` would keep it: for a
 * top-level object, one entry; for a top-level array (a batch), one entry per element, in
 * order; for anything else, none. An entry is the byte range `[start, end)` of the value of
 * the object's last `id` member (duplicate keys: the last wins; keys are compared after
 * unescaping, so `"\u0069d"` is `id`) when that value is a number or a string (quotes
 * included), or undefined: no `id` member, another kind of value, an element that is not an
 * object.
 *
 * `bytes` must be a valid JSON text (scanned or parsed before): the walk does not validate
 * it, and what it returns for invalid JSON is unspecified (it never throws nor loops). Time:
 * one pass, linear in `bytes` (strings skipped with the native search of
 * json-bytes.ts closingQuote), no recursion; allocation: the result and, for a key written
 * with escapes, its decoding.
 */
export function writtenIdRanges(bytes: Uint8Array): (ByteRange | undefined)[] {
  const out: (ByteRange | undefined)[] = [];
  const n = bytes.length;
  /** Containers open at this point (0 outside the top-level value). */
  let depth = 0;
  /** Depth at which the members of a message are read: 1 for a message, 2 for a batch's elements. */
  let memberDepth = 1;
  /** The container open at memberDepth is an object whose members are read (a message). */
  let inMessage = false;
  /** Next string at memberDepth in a message is a key (after `{` or `,`). */
  let expectKey = false;
  /** The last key read at memberDepth is `id`: the value that follows is recorded. */
  let idValueNext = false;
  /** The top-level array (a batch) expects an element (after `[` or `,`). */
  let expectElement = false;
  for (let i = 0; i < n; i++) {
    const c = bytes[i]!;
    // A batch's element that is not an object or array still has its entry.
    if (expectElement && depth === 1 && c !== LBRACE && c !== LBRACKET && c > 0x20 && c !== RBRACKET) {
      out.push(undefined);
      expectElement = false;
    }
    if (c === QUOTE) {
      const close = closingQuote(bytes, i);
      if (close === -1) return out;
      if (inMessage && depth === memberDepth) {
        if (expectKey) {
          idValueNext = isIdKey(bytes, i, close);
          expectKey = false;
        } else if (idValueNext) {
          out[out.length - 1] = [i, close + 1];
          idValueNext = false;
        }
      }
      i = close;
    } else if (c === LBRACE || c === LBRACKET) {
      if (inMessage && depth === memberDepth && idValueNext) {
        out[out.length - 1] = undefined; // an object or array id: no valid id
        idValueNext = false;
      }
      depth++;
      if (depth === 1) {
        if (c === LBRACE) {
          out.push(undefined);
          inMessage = true;
          expectKey = true;
        } else {
          memberDepth = 2;
          expectElement = true;
        }
      } else if (depth === 2 && memberDepth === 2) {
        out.push(undefined);
        expectElement = false;
        inMessage = c === LBRACE;
        expectKey = inMessage;
      }
    } else if (c === RBRACE || c === RBRACKET) {
      depth--;
      if (depth < memberDepth) inMessage = false; // the message (or the batch's element) is closed
    } else if (c === COMMA) {
      if (inMessage && depth === memberDepth) expectKey = true;
      else if (depth === 1 && memberDepth === 2) expectElement = true;
    } else if (c !== COLON && inMessage && depth === memberDepth && idValueNext && c > 0x20) {
      // A number (or true, false, null) as the id's value: its token runs to the next delimiter.
      let end = i + 1;
      while (end < n && !isDelimiter(bytes[end]!)) end++;
      out[out.length - 1] = c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9) ? [i, end] : undefined;
      idValueNext = false;
      i = end - 1;
    }
  }
  return out;
}

/** A byte that ends a number or literal token: whitespace, `,`, `}`, `]`. */
function isDelimiter(c: number): boolean {
  return c <= 0x20 || c === COMMA || c === RBRACE || c === RBRACKET;
}

/** Whether the JSON string `bytes[open, close]` (its quotes) is the key `id`, written plain or with escapes. */
function isIdKey(bytes: Uint8Array, open: number, close: number): boolean {
  if (close - open === 3) return bytes[open + 1] === LOWER_I && bytes[open + 2] === LOWER_D;
  for (let k = open + 1; k < close; k++) {
    if (bytes[k] === BACKSLASH) return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + open, close + 1 - open).toString('utf8')) === 'id';
  }
  return false;
}
