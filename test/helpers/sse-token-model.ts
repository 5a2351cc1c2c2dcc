/**
 * A reference model of what the host should get for a seller's SSE bytes
 * (WHATWG HTML §9.2.6 line/field rules, eventsource-parser 3 per-block ids), with each token's
 * exact count, in the tokens the unit kit mints (test/unit/sse-stage-kit.ts: `tok(<id>,<count>)`).
 * At the end of the stream a block without its blank line is discarded, with data or not
 * (WHATWG HTML §9.2.6: the incomplete event is not dispatched, and sets no last event ID;
 * before a hostile new user's trial 10, F5, one with data and a last line ended by LF was
 * dispatched: sse-stage.ts `onEvent`).
 * Written in a review of the id-only fix (2026-12-02); test/unit/sse-token-*.test.ts use it.
 *
 * A block with an id and no data writes nothing: its id is pending (the stage's `pendingId`),
 * carried by the next event without an id of its own (`id: <token>` first, the token's count
 * through that event's block), superseded by an event's own id or a later id-only block, and
 * written at the stream's end as its own block (`id: <token>` and a blank line, the count
 * through the stream's last byte) when still pending (a new user's trial 9, F3: each id-only
 * block went out as its own token, 20.4x the seller's bytes). Its frame (`id: <seller id>` and
 * the blank line) is charged against the id-only block's own bytes, wherever the id goes out;
 * the carrying event's growth is its own (without the carried id line).
 *
 * A token's count (src/response/sse-event-ids.ts tokenCount, chargeToken; sse-encoding-charge.ts
 * charge) is the request's count through its block: `usedBase` + the byte offset just
 * past the block's blank line (CR LF counted whole) + what every earlier token added to the
 * host's stream (its text's length minus its seller id's) + what the encoding of every block so far, its own included,
 * added over the block's bytes (the frames written for it, with seller ids in place of tokens,
 * minus the block's bytes, when positive: `data:x` goes out as `data: x`, `retry: 5` as
 * `retry: 500`), at most `limit`.
 * Its own length is not in it: the next token's count includes it.
 *
 * With a `limit` (max_response_bytes), the model stops where the stage answers
 * `sse_cumulative` (`over`): at a block whose blank line's last byte (its LF with CR LF:
 * sse-chunk-taker.ts `heldCr`; review 33, item 1) lies past the limit, or whose encoding's growth or token's added length
 * takes the count through the block past it (that block is not delivered). The growth is
 * taken per block at its blank line: the stage charges a comment or `retry:` frame as it is
 * parsed, against the block's bytes received by then, which is the same unless such a frame
 * outgrows the block's bytes before it (none of the model tests' inputs). `tokens` and `over` are then exact for LF
 * and CR LF endings; `body` is compared only when the stream stays within the limit.
 */
import { SSE_RETRY_MAX_MS, SSE_RETRY_MIN_MS } from '../../src/response/sse-encode.js';

export interface ModelOut {
  body: string;
  tokens: Array<[string, number]>;
  /** The stream goes over `limit`: the stage answers sse_cumulative after the tokens listed. */
  over: boolean;
  /** What the blocks' encoding added over their bytes, in all (counted: sse-encoding-charge.ts charge). */
  grown: number;
}

/** The kit's token for a seller id and a count (test/unit/sse-stage-kit.ts). */
export const kitToken = (id: string, count: number): string => `tok(${id},${count})`;
/** What a kit token adds to the host's stream over the seller id it replaces (ASCII ids). */
export const kitTokenAdded = (id: string, count: number): number => kitToken(id, count).length - id.length;

export function model(bytes: Buffer, usedBase = 0, limit = Infinity): ModelOut {
  const text = bytes.toString('latin1'); // ASCII inputs only
  let body = '';
  const tokens: Array<[string, number]> = [];
  let id: string | undefined;
  let event: string | undefined;
  let data: string[] = [];
  /** What the tokens and the blocks' encoding so far added to the host's stream (counted like the seller's bytes). */
  let added = 0;
  /** Where the block being read starts (stream offset), and the bytes of the frames written for it so far (comments, `retry:`). */
  let blockStart = 0;
  let blockOut = 0;
  let grown = 0;
  let over = false;
  /** The id of the last id-only block not yet written (carried by the next event without an id). */
  let pending: string | undefined;
  /** Mints the token for `tokenId` with `count`; false when its addition takes the stream over the limit. */
  const token = (tokenId: string, count: number, through: number): string | false => {
    if (tokenId === '') return 'id\n';
    const more = kitTokenAdded(tokenId, count);
    if (through + more > limit) return false;
    added += more;
    tokens.push([tokenId, count]);
    return `id: ${kitToken(tokenId, count)}\n`;
  };
  /**
   * The block's blank line ends at `end` (a stream offset): an event with data, or an id
   * alone. False when the stream goes over the limit here.
   */
  const dispatch = (end: number): boolean => {
    // The blank line must be within the limit, the LF of a CR LF included (before review 33,
    // item 1, the CR that dispatches it was enough).
    if (usedBase + end + added > limit) return false;
    // The block's frames as written, seller id in place of a token, over the block's bytes.
    const idLine = id === undefined ? '' : id === '' ? 'id\n' : `id: ${id}\n`;
    const out = blockOut + (data.length > 0 ? idLine.length + (event === undefined ? 0 : `event: ${event}\n`.length) + data.reduce((n, d) => n + `data: ${d}\n`.length, 0) + 1 : id !== undefined ? idLine.length + 1 : 0);
    const grow = out - (end - blockStart);
    if (grow > 0) {
      if (usedBase + end + added + grow > limit) return false;
      added += grow;
      grown += grow;
    }
    if (data.length === 0) {
      // An id-only block: its id waits for the next event (or the end).
      if (id !== undefined) pending = id;
      return true;
    }
    const tokenId = id ?? pending;
    pending = undefined;
    if (tokenId !== undefined) {
      const line = token(tokenId, Math.min(usedBase + end + added, limit), usedBase + end + added);
      if (line === false) return false;
      body += line;
    }
    if (event !== undefined) body += `event: ${event}\n`;
    for (const d of data) body += `data: ${d}\n`;
    body += '\n';
    return true;
  };
  let i = 0;
  const n = text.length;
  while (i < n) {
    let j = i;
    while (j < n && text[j] !== '\n' && text[j] !== '\r') j++;
    if (j === n) break; // incomplete last line: never dispatched (the stage is lenient only at the end with LF)
    const line = text.slice(i, j);
    let next = j + 1;
    if (text[j] === '\r' && text[j + 1] === '\n') next = j + 2;
    if (line === '') {
      if (!dispatch(next)) {
        over = true;
        break;
      }
      id = undefined;
      event = undefined;
      data = [];
      blockStart = next;
      blockOut = 0;
    } else if (line[0] === ':') {
      const c = line.slice(line[1] === ' ' ? 2 : 1);
      const frame = c === '' ? ':\n' : `: ${c}\n`;
      body += frame;
      blockOut += frame.length;
    } else {
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
      if (field === 'id') {
        if (!value.includes('\0')) id = value;
      } else if (field === 'data') data.push(value);
      else if (field === 'event') event = value || undefined;
      else if (field === 'retry' && /^\d+$/.test(value)) {
        // Clamped to [SSE_RETRY_MIN_MS, SSE_RETRY_MAX_MS] (src/response/sse-encode.ts clampSseRetryMs).
        const frame = `retry: ${Math.min(SSE_RETRY_MAX_MS, Math.max(SSE_RETRY_MIN_MS, Number(value)))}\n\n`;
        body += frame;
        blockOut += frame.length;
      }
    }
    i = next;
  }
  // A last block without its blank line is discarded, with data or not (WHATWG HTML §9.2.6:
  // no blank line, no event, no last event ID).
  // Within the limit so far: the stream goes over it only if its last bytes (an incomplete block) do.
  if (!over && usedBase + n + added > limit) over = true;
  // A pending id goes out at the end, its token's count through the stream's last byte.
  if (!over && pending !== undefined) {
    const line = token(pending, Math.min(usedBase + n + added, limit), usedBase + n + added);
    if (line === false) over = true;
    else body += line + '\n';
  }
  return { body, tokens, over, grown };
}

/** Every way to cut `bytes` into two or three chunks (three: the second is one byte). */
export function cutsWithOneByteMiddle(bytes: Buffer): Buffer[][] {
  const out: Buffer[][] = [[bytes]];
  for (let a = 1; a < bytes.length; a++) {
    out.push([bytes.subarray(0, a), bytes.subarray(a)]);
    if (a + 1 < bytes.length) out.push([bytes.subarray(0, a), bytes.subarray(a, a + 1), bytes.subarray(a + 1)]);
  }
  return out;
}

/** Every way to cut `bytes` into two chunks, and into three. */
export function* allCuts(bytes: Buffer, three: boolean): Generator<Buffer[]> {
  yield [bytes];
  for (let a = 1; a < bytes.length; a++) {
    yield [bytes.subarray(0, a), bytes.subarray(a)];
    if (three) for (let b = a + 1; b < bytes.length; b++) yield [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)];
  }
}

/** Deterministic pseudo-random chunkings. */
export function* randomCuts(bytes: Buffer, count: number, seed = 1): Generator<Buffer[]> {
  let s = seed >>> 0;
  const rnd = (): number => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  for (let k = 0; k < count; k++) {
    const out: Buffer[] = [];
    let at = 0;
    const maxLen = 1 + Math.floor(rnd() * 12);
    while (at < bytes.length) {
      const len = 1 + Math.floor(rnd() * maxLen);
      out.push(bytes.subarray(at, at + len));
      at += len;
    }
    yield out;
  }
}
