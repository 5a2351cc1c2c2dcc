/**
 * The SSE stage's byte-level fast path (sse-stage.ts): which event blocks of a chunk can go
 * to the host as the seller's bytes, without decoding, parsing (eventsource-parser) and
 * re-encoding them, because the gateway neither reads nor changes them and the bytes are
 * exactly what the parse + encode path would write.
 *
 * Why (issue 5, bench/README.md "SSE events/s"): on a stream of small progress notifications,
 * decode + parse + encode of each event cost the gateway ~1.7 CPU µs per event against
 * ~0.4 for a plain proxy.
 *
 * A block (from an event boundary through its blank line) is forwarded raw only when all of
 * this holds, each an exact consequence of what the slow path would do with it:
 *
 * - Canonical form, so the bytes equal what sse-encode.ts writes for the parsed event: an
 *   optional first line `event: <non-empty type>`, then one or more `data: ` lines (a space
 *   after each colon), then the blank line; LF line endings only (the caller sends chunks
 *   holding a CR down the slow path); the block is valid UTF-8 (decoding would turn invalid
 *   bytes into U+FFFD). No `id` field (its resume token is minted from the count: slow path),
 *   no `retry`, no comment, no other field.
 * - Size: the block's bytes bound the event's data bytes (`max_sse_event_bytes`) and its
 *   UTF-16 length (`max_json_nodes`, the first test of json-bounds.ts withinJsonBounds).
 * - Structure: at most `max_json_depth` `{` and `[` in the block (withinJsonBounds' second
 *   test), so the depth/node bounds provably hold without a scan.
 * - Not the response: on a stream that answers a request, a block holding `id"` or a
 *   backslash anywhere may be it: the response carries the request's id in an `id` member
 *   (JSON-RPC 2.0 §5; rewrite.ts isResponseToExchange), whose key is the bytes `"id"` unless
 *   written with escapes (RFC 8259 §7; UTF-8 decoding never turns other bytes into ASCII).
 *
 * Anything else (and any doubt) is the slow path: eventsource-parser stays the parser of
 * every event whose content the gateway reads or changes.
 */
import { isAscii, isUtf8 } from 'node:buffer';

const LF = 0x0a;
const LF_LF = Buffer.from('\n\n', 'latin1');
/** `{` and `[`: a value nests at most as deep as the brackets it holds. */
const BRACKETS = [0x7b, 0x5b];
/**
 * Patterns without which a block cannot be the response to a request (see module doc): the
 * end of its `id` key written without escapes, or a backslash (any escape). Searched with
 * memchr on the first byte: `i` is rarer in JSON than the `r`/`e` of `result`/`error`
 * (measured: ~2x the instructions for those two).
 */
const RESPONSE_HINTS = [Buffer.from('id"', 'latin1'), 0x5c];

/** The bounds a raw block must provably respect (the exchange's limits). */
export interface RawEventLimits {
  /** `max_sse_event_bytes`. */
  readonly maxEventBytes: number;
  /** `max_json_depth`. */
  readonly maxDepth: number;
  /** `max_json_nodes`. */
  readonly maxNodes: number;
  /** The stream answers a request: blocks that may be its response stay on the slow path. */
  readonly answerable: boolean;
}

/** The complete event blocks of a chunk range, in order: block k is `[ends[k-1] or from, ends[k])`. */
export interface RawEventPlan {
  /** Exclusive end of each complete block (just past its blank line), ascending. */
  readonly ends: number[];
  /** Whether block k may be forwarded as the seller's bytes. */
  readonly raw: boolean[];
}

/**
 * Splits `chunk[from, chunk.length)` into its complete event blocks and tells which ones may
 * be forwarded raw (module doc). The bytes after the last block (an incomplete event) are
 * not part of the plan.
 *
 * Preconditions (the caller's): `from` is an event start (a boundary, or the stream's start
 * with no BOM), and the chunk holds no CR, so every blank line is LF LF and every line ends
 * with LF.
 *
 * Cost (measured in instructions with callgrind: a JavaScript loop over the bytes cost ~5x
 * more): native searches, one per line of a block that may be raw (its start checked), one
 * to the blank line of any other block, one per bracket and per response hint in the chunk
 * plus one per pattern; and an ASCII (else UTF-8) validity check of the planned bytes.
 */
export function planRawEvents(chunk: Buffer, from: number, limits: RawEventLimits): RawEventPlan {
  const n = chunk.length;
  const ends: number[] = [];
  const raw: boolean[] = [];
  const maxBytes = Math.min(limits.maxEventBytes, limits.maxNodes);
  const hints = limits.answerable ? new NextOccurrence(chunk, RESPONSE_HINTS) : undefined;
  const brackets = new NextOccurrence(chunk, BRACKETS);
  let pos = from;
  let anyRaw = false;
  while (pos < n) {
    const start = pos;
    let end = -1;
    let ok = chunk[pos] !== LF; // a lone blank line: the parser writes nothing for it
    let sawData = false;
    // Line by line while the block may be raw (each line start checked), then to the blank line.
    for (let line = 0, at = pos; ok; line++) {
      if (isDataField(chunk, at)) sawData = true;
      else if (!(line === 0 && isEventField(chunk, at))) ok = false;
      const lf = chunk.indexOf(LF, at);
      if (lf === -1 || lf + 1 >= n) break; // incomplete
      if (chunk[lf + 1] === LF) {
        end = lf + 2;
        break;
      }
      at = lf + 1;
    }
    if (!ok) {
      // The first blank line at or after the block's first line (itself non-empty unless the block is one LF).
      const blank = chunk[pos] === LF ? pos - 1 : chunk.indexOf(LF_LF, pos);
      end = blank === -1 ? -1 : blank + 2;
    }
    if (end === -1) break; // incomplete: not part of the plan
    ok &&= sawData && end - start <= maxBytes && brackets.count(start, end, limits.maxDepth) <= limits.maxDepth && !(hints && hints.count(start, end, 0) > 0);
    ends.push(end);
    raw.push(ok);
    anyRaw ||= ok;
    pos = end;
  }
  // Decoding would replace invalid UTF-8 (U+FFFD): such bytes are not what the slow path writes.
  if (anyRaw && !isAscii(chunk.subarray(from, ends[ends.length - 1])) && !isUtf8(chunk.subarray(from, ends[ends.length - 1]))) raw.fill(false);
  return { ends, raw };
}

/** `data: ` at `at`. */
function isDataField(b: Buffer, at: number): boolean {
  return at + 6 <= b.length && b[at] === 0x64 && b[at + 1] === 0x61 && b[at + 2] === 0x74 && b[at + 3] === 0x61 && b[at + 4] === 0x3a && b[at + 5] === 0x20;
}

/** `event: ` at `at`, then a byte of a non-empty type. */
function isEventField(b: Buffer, at: number): boolean {
  return (
    at + 8 <= b.length &&
    b[at] === 0x65 &&
    b[at + 1] === 0x76 &&
    b[at + 2] === 0x65 &&
    b[at + 3] === 0x6e &&
    b[at + 4] === 0x74 &&
    b[at + 5] === 0x3a &&
    b[at + 6] === 0x20 &&
    b[at + 7] !== LF
  );
}

/**
 * Counts occurrences of some patterns in ranges of one chunk, asked in ascending,
 * non-overlapping order: each occurrence is found once by a native search (the next one
 * after a range is kept for the next range), so a chunk costs one search per occurrence
 * plus one per pattern.
 */
class NextOccurrence {
  /** Next occurrence of each pattern at or after the last range asked about (-1: none; -2: not searched yet). */
  private readonly next: number[];

  constructor(
    private readonly chunk: Buffer,
    private readonly patterns: readonly (Buffer | number)[],
  ) {
    this.next = patterns.map(() => -2);
  }

  /** Occurrences starting in `[start, end)`, all patterns together; counting stops past `limit`. */
  count(start: number, end: number, limit: number): number {
    let total = 0;
    for (let k = 0; k < this.patterns.length; k++) {
      const pattern = this.patterns[k]!;
      let at = this.next[k]!;
      if (at !== -1 && at < start) at = this.chunk.indexOf(pattern, start);
      while (at !== -1 && at < end) {
        if (++total > limit) {
          at = this.chunk.indexOf(pattern, end);
          break;
        }
        at = this.chunk.indexOf(pattern, at + 1);
      }
      this.next[k] = at;
      if (total > limit) return total;
    }
    return total;
  }
}
