/**
 * Small JSON values read straight from a scanned message's bytes (json-scan.ts ranges): the
 * `jsonrpc`, `id` and `method` members, a tool result's `isError` and `resultType`, an item's `type`.
 * Shared by the JSON stage, the SSE stage and the scan-based rewrites (scanned-result.ts).
 */
import type { ByteRange } from '../mcp/json-scan.js';
import { exactDecimal, exactDecimalLengthRange } from '../mcp/json-numbers.js';
import type { RpcPeek } from '../exchange.js';

/** The JSON value at `range` of `bytes` (a small member such as `jsonrpc` or `id`), or undefined. */
export function valueAt(bytes: Buffer, range: ByteRange | undefined): unknown {
  if (range === undefined) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8', range[0], range[1]));
  } catch {
    return undefined; // not reached after a successful scan (json-scan.ts checks the whole grammar); no throw if it were
  }
}

/**
 * Whether the JSON value at `range` of `bytes` is `expected`: exactly `valueAt(bytes, range)
 * === expected`. Read from the bytes, without decoding or `JSON.parse`, when the value is an
 * integer of up to 15 digits, `null`, or a string written as `JSON.stringify` writes a
 * printable ASCII string (no escape): the `"2.0"` and ids of real answers. Otherwise (an
 * escape, a fraction, a long number, a mismatch that an escape might explain) parsed as
 * before. Why (issue 5, 1 KiB results): two `toString` + `JSON.parse` per response were a
 * measurable part of its fixed cost.
 */
export function jsonValueIs(bytes: Buffer, range: ByteRange | undefined, expected: string | number | null): boolean {
  if (range === undefined) return false;
  // Indexed, not destructured: destructuring runs the array iterator (an allocation per call in the allocation profile).
  const start = range[0];
  const end = range[1];
  if (typeof expected === 'string') {
    if (end - start === expected.length + 2 && bytes[start] === 0x22) {
      let k = 0;
      while (k < expected.length) {
        const c = expected.charCodeAt(k);
        if (c !== bytes[start + 1 + k] || c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) break;
        k++;
      }
      // Every byte between the quotes is that character, unescaped: the string is `expected`.
      if (k === expected.length) return true;
    }
  } else if (typeof expected === 'number') {
    // An integer below 10^15: exactly the number JSON.parse reads.
    const value = smallIntegerAt(bytes, start, end);
    if (value !== undefined) return value === expected;
  } else if (end - start === 4 && bytes[start] === 0x6e) {
    return true; // `null` (the only valid 4-byte value starting with `n`)
  }
  return valueAt(bytes, range) === expected;
}

/**
 * Whether the JSON value at `range` of `bytes` (a message's `method`: json-scan.ts
 * TopMembers.method, undefined when there is none) names a method: a non-empty string
 * (rewrite.ts namesMethod, its parsed form: `""`, `null`, a number or an object name none).
 * A scanned string is its quotes and at least one character between them (an escape is one),
 * so two bytes read, no decoding. Source: a review
 * (test/regressions/seller-message-without-kind-forwarded.test.ts).
 */
export function isMethodName(bytes: Buffer, range: ByteRange | undefined): boolean {
  return range !== undefined && bytes[range[0]] === 0x22 && range[1] - range[0] > 2;
}

/**
 * Whether the JSON value at `range` of `bytes` (a seller's response id) is the request's id
 * `rpc` exactly, as JSON-RPC 2.0 §5 requires ("the same as the value of the id member in the
 * Request Object"): a string the same string, null null, a number the same mathematical value
 * (json-numbers.ts sameJsonNumber: `1.0` and `1e0` are `1`; `9007199254740993` is not
 * `9007199254740992`). Not by `JSON.parse`: a double cannot tell such numbers apart, and a
 * host with exact integers (Python, Go's json.Number) would never match the answer to its
 * request (a new user's trial: test/regressions/response-id-compared-as-double.test.ts).
 *
 * The request's number is `rpc.idText` when the peek kept it (a number `JSON.stringify` writes
 * otherwise: request/peek.ts), else the value of `rpc.id` as `JSON.stringify` writes it (the
 * two are equal then). False when `range` is undefined (no id member).
 *
 * Cost: for a string, null, or a number written as an integer of up to 15 digits against a
 * request id without `idText` (every real answer), {@link jsonValueIs}'s byte fast path, no
 * allocation; a string id of 1 KiB or more whose bytes the peek kept (RpcPeek.idWritten) first
 * by one native compare of bytes ({@link writtenIdIs}). Any other number is first measured in place (json-numbers.ts
 * exactDecimalLengthRange: the lengths its canonical text can have, nothing copied) against the
 * request's canonical text ({@link canonicalRequestId}, kept per request when it has an
 * `idText`); only when the lengths may agree is it copied out and canonicalized for the exact
 * comparison. Before, a seller's 4 MB numeric id (`1e` and 4M nines) was copied and
 * canonicalized against a request `1` at every check, 40-120 ms each (now under 0.3 ms; a review of the
 * cancellation's length pre-check, which {@link requestIdMatcher} already had:
 * test/regressions/seller-response-huge-id-canonicalized.test.ts).
 */
export function isRequestId(bytes: Buffer, range: ByteRange | undefined, rpc: Pick<RpcPeek, 'id' | 'idText' | 'idWritten'>): boolean {
  const id = rpc.id;
  if (typeof id !== 'number') return writtenIdIs(bytes, range, rpc.idWritten) || jsonValueIs(bytes, range, id);
  if (range === undefined) return false;
  const first = bytes[range[0]]!;
  if (first !== 0x2d && (first < 0x30 || first > 0x39)) return false; // not a number
  return writtenNumberIs(bytes, range, rpc, id, true, undefined);
}

/**
 * Whether the JSON value at `range` of `bytes` is a string written with exactly the bytes
 * `written` between its quotes (RpcPeek.idWritten: a long string id as the host wrote it), by
 * one native compare. True means the same string (the same bytes decode alike, escapes or
 * not); false says nothing (an escape written otherwise, invalid UTF-8 read as U+FFFD), and
 * the caller compares as before. Before, a 4.1 MB id echoed by the seller was compared
 * character by character (jsonValueIs), ~21 ms of gateway CPU per response (hostile trial 58,
 * F5: test/regressions/huge-string-id-compared-char-by-char.test.ts).
 */
function writtenIdIs(bytes: Buffer, range: ByteRange | undefined, written: Buffer | undefined): boolean {
  if (written === undefined || range === undefined) return false;
  const start = range[0] + 1;
  const end = range[1] - 1;
  if (end - start !== written.length || bytes[range[0]] !== 0x22) return false;
  const same = bytes.compare(written, 0, written.length, start, end) === 0;
  if (same) idByteCompares++;
  return same;
}

let idByteCompares = 0;

/** How many ids {@link isRequestId} or {@link requestIdMatcher} found equal by their written bytes since the process started (a plain counter): a seam for tests. */
export function idByteCompareCount(): number {
  return idByteCompares;
}

/** What {@link writtenNumberIs} has read of one written number id, kept across requests ({@link requestIdMatcher}). */
interface WrittenNumberReading {
  /** Whether `small` has been read. */
  smallRead?: boolean;
  /** {@link smallIntegerAt} of the id. */
  small?: number | undefined;
  /** json-numbers.ts exactDecimalLengthRange of the id. */
  lengths?: readonly [number, number];
  /** {@link canonicalWrittenId} of the id. */
  canonical?: string;
}

/**
 * Whether the number written at `bytes[range]` (its first byte `-` or a digit) is the number
 * id `id` of `rpc`: the steps of {@link isRequestId} and {@link requestIdMatcher} for a number,
 * once. `echo`: before the canonical comparison, compare the bytes in place with the request's
 * own text (`idText`, else String(id)). `kept`: what is read of the written id (its small
 * integer value, the lengths of its canonical text, that text) is kept there for the next
 * request; undefined: read for this comparison only (nothing allocated on the fast path).
 */
function writtenNumberIs(
  bytes: Buffer,
  range: ByteRange,
  rpc: Pick<RpcPeek, 'id' | 'idText'>,
  id: number,
  echo: boolean,
  kept: WrittenNumberReading | undefined,
): boolean {
  const start = range[0];
  const end = range[1];
  if (rpc.idText === undefined) {
    // An integer below 10^15 (exact as a double) against an id whose exact value is the double's.
    let small: number | undefined;
    if (kept === undefined) small = smallIntegerAt(bytes, start, end);
    else {
      if (kept.smallRead !== true) {
        kept.small = smallIntegerAt(bytes, start, end);
        kept.smallRead = true;
      }
      small = kept.small;
    }
    if (small !== undefined) return small === id;
  }
  // The id written as the request's own text (an echo, `1.5` for `1.5`): compared in place
  // first, nothing copied or canonicalized (String(id) is not canonicalized for every check).
  if (echo && writtenAs(bytes, start, end, rpc.idText ?? String(id))) return true;
  // Canonical texts of different lengths differ: the id is copied out only when the lengths may agree.
  const theirs = canonicalRequestId(rpc)!; // `n` and the exact value's text: a number id
  const lengths =
    kept === undefined ? exactDecimalLengthRange(bytes, start, end) : (kept.lengths ??= exactDecimalLengthRange(bytes, start, end));
  if (theirs.length - 1 < lengths[0] || theirs.length - 1 > lengths[1]) return false;
  const mine = kept === undefined ? canonicalWrittenId(bytes, range) : (kept.canonical ??= canonicalWrittenId(bytes, range));
  return mine === theirs;
}

/** Whether `bytes[start, end)` (a JSON number's text: ASCII) is `text`, compared in place. */
function writtenAs(bytes: Buffer, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * {@link isRequestId} for one id against many requests: a function giving, for a request `rpc`,
 * exactly `isRequestId(bytes, range, rpc)`, with the id's own reading done once (its small
 * integer value, or its canonical text, {@link canonicalWrittenId}, computed at the first
 * request that needs it) rather than once per request. For a cancellation, compared with each
 * request in flight in its session (routing/in-flight-requests.ts cancel): a `requestId` of
 * 4 MB was read once per request in flight (hostile trial 56, F1;
 * test/regressions/huge-exponent-number-stalls-gateway.test.ts). A number is compared by
 * {@link canonicalRequestId}, the key routing/cancelled-requests.ts remembers it by, so the
 * two agree on every pair of ids (test/unit/canonical-request-id.test.ts). And the id's own
 * canonical text is made only for a request whose own has a length it may have
 * (json-numbers.ts exactDecimalLengthRange: one pass over the bytes, nothing copied): a
 * `requestId` `1e` and 4M nines was copied (4 MB) and canonicalized to be compared with ids
 * like `1`, ~0.1 s per cancellation (a follow-up of trial 56;
 * test/regressions/cancel-huge-number-id-canonicalized.test.ts).
 */
export function requestIdMatcher(bytes: Buffer, range: ByteRange): (rpc: Pick<RpcPeek, 'id' | 'idText' | 'idWritten'>) => boolean {
  const first = bytes[range[0]]!;
  const isNumber = first === 0x2d || (first >= 0x30 && first <= 0x39);
  const kept: WrittenNumberReading = {};
  return (rpc) => {
    const id = rpc.id;
    if (typeof id !== 'number') return writtenIdIs(bytes, range, rpc.idWritten) || jsonValueIs(bytes, range, id);
    if (!isNumber) return false;
    return writtenNumberIs(bytes, range, rpc, id, false, kept);
  };
}

/**
 * The canonical text of a request's id, one for every way of writing it: `s` and the string
 * (escapes decoded: `"a\u0062"` is `sab`), or `n` and the exact value of the number as the
 * host wrote it (`rpc.idText` when the peek kept it, else `String(id)`; mcp/json-numbers.ts
 * exactDecimal: `1.0` and `1E+0` are `n1e0`, `-0` is `n0`, `1e-400` stays apart from `0` and
 * `9007199254740993` from `9007199254740992`); undefined for a null id. Two ids are one id
 * exactly when their canonical texts are equal; never a string for a number (`s` / `n`).
 *
 * The one rule for both the registry of requests in flight (its cancellation matching:
 * {@link requestIdMatcher}) and the cancellations remembered for resumes (their keys:
 * routing/cancelled-requests.ts). A number's is computed once per request object (RpcPeek is
 * never changed once peeked) when it has an `idText`, and kept while the request lives: a
 * request whose id the host wrote long (`0.000…01` with 3.9M zeros) was canonicalized again at
 * every cancellation in its session, ~130 ms each, and once more by the cancellation memory
 * at its end, at a new request's open and at a resume (reviews;
 * test/regressions/cancel-against-huge-id-text-recomputed.test.ts). A number without `idText`
 * (at most 24 characters as `String` writes it) is computed when asked.
 */
export function canonicalRequestId(rpc: Pick<RpcPeek, 'id' | 'idText'>): string | undefined {
  const id = rpc.id;
  if (typeof id === 'string') return `s${id}`;
  if (typeof id !== 'number') return undefined;
  const idText = rpc.idText;
  if (idText === undefined) return `n${exactDecimal(String(id))}`;
  let canonical = canonicalIds.get(rpc);
  if (canonical === undefined) {
    idTextCanonicalizations++;
    canonical = `n${exactDecimal(idText)}`;
    canonicalIds.set(rpc, canonical);
  }
  return canonical;
}

/**
 * {@link canonicalRequestId} of an id as written at `range` of `bytes` (a JSON string or
 * number: a cancellation's `requestId`, mcp/cancelled-id.ts): `s` and the string as
 * `JSON.parse` reads it, or `n` and the number's exact value.
 */
export function canonicalWrittenId(bytes: Buffer, range: ByteRange): string {
  if (bytes[range[0]] === 0x22) return `s${JSON.parse(bytes.toString('utf8', range[0], range[1])) as string}`;
  return `n${exactDecimal(bytes.toString('latin1', range[0], range[1]))}`;
}

/** {@link canonicalRequestId} of each request with an `idText`, per request object. Weak: an entry goes with its request. */
const canonicalIds = new WeakMap<object, string>();
let idTextCanonicalizations = 0;

/** How many `idText`s {@link canonicalRequestId} has canonicalized (exactDecimal) since the process started: a seam for tests. */
export function idTextCanonicalizationCount(): number {
  return idTextCanonicalizations;
}

/**
 * The value of `bytes[start, end)` when it is written as an integer of 1 to 15 digits with an
 * optional `-` (below 10^15: exact as a double, and the number `JSON.parse` reads), else
 * undefined (a fraction, an exponent, more digits, not a number). No allocation.
 */
function smallIntegerAt(bytes: Buffer, start: number, end: number): number | undefined {
  const negative = bytes[start] === 0x2d;
  let k = negative ? start + 1 : start;
  if (end - k < 1 || end - k > 15) return undefined;
  let value = 0;
  for (; k < end; k++) {
    const digit = bytes[k]! - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}
