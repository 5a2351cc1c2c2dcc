/**
 * Event blocks of one short ASCII line that the SSE stage (sse-chunk-taker.ts `takeSimple`) reads
 * from the seller's bytes itself, without decoding them, eventsource-parser or
 * sse-id-only.ts: an id-only block (`id:` and its value, then the blank line) and a
 * comment-only block (`:` and its text, then the blank line). Both dispatch no event: the
 * first only sets the last event ID (the stage's pending id), the second goes out as a comment
 * frame (sse-encode.ts encodeSseComment). What the parser path does with such a block is
 * fixed by its bytes: the id is the value after `id:` and one optional space (WHATWG HTML
 * §9.2.6, as eventsource-parser reads it), the comment the text after `:` and one optional
 * space.
 *
 * Why (issue 5, a hostile trial): floods of such blocks (`id: 5` and a blank line, 7 bytes;
 * `: keepalive`) cost the stage ~0.5 µs each (bench/sse-loop.ts `idonly`, `comment`): one
 * decoded string, a line scan object and two slices in sse-id-only.ts, the parser's pass and
 * its callbacks, ~40 ns per seller byte against ~1 for the progress notifications the
 * planner forwards raw, so one seller's tiny blocks took event-loop time from other agents.
 *
 * Only the canonical case: one line of at most {@link SIMPLE_BLOCK_MAX_LINE} bytes, every
 * byte of it ASCII and not NUL (the parser ignores an id holding NUL), LF line endings (the
 * stage plans only chunks without CR). Anything else, and a block the stage is not at the
 * start of, takes the parser path as before.
 */

import { COLON, CR, LF, SPACE } from '../mcp/json-bytes.js';

const LOWER_I = 0x69;
const LOWER_D = 0x64;

/** Not a block of {@link simpleBlock}'s kinds: the parser path takes it. */
export const NOT_SIMPLE = 0;
/** `id:` and a value, then the blank line. */
export const ID_ONLY = 1;
/** `:` and a text, then the blank line. */
export const COMMENT_ONLY = 2;
export type SimpleBlockKind = typeof NOT_SIMPLE | typeof ID_ONLY | typeof COMMENT_ONLY;

/** Longest line (bytes, its LF excluded) {@link simpleBlock} looks at: a longer one costs the parser per byte what it costs here. */
export const SIMPLE_BLOCK_MAX_LINE = 256;

/**
 * The kind of the event block `chunk[start, end)`: `end` just past a blank line `\n\n` (a
 * segment of sse-raw-events.ts planRawEvents), `start` an event start. {@link ID_ONLY} or
 * {@link COMMENT_ONLY} when the block is one such line as the module doc says; else
 * {@link NOT_SIMPLE}. Reads the line's bytes once.
 */
export function simpleBlock(chunk: Buffer, start: number, end: number): SimpleBlockKind {
  const lineEnd = end - 2;
  const length = lineEnd - start;
  if (length < 1 || length > SIMPLE_BLOCK_MAX_LINE) return NOT_SIMPLE;
  let kind: SimpleBlockKind;
  let from = start + 1;
  if (chunk[start] === COLON) kind = COMMENT_ONLY;
  else if (chunk[start] === LOWER_I && length >= 3 && chunk[start + 1] === LOWER_D && chunk[start + 2] === COLON) {
    kind = ID_ONLY;
    from = start + 3;
  } else return NOT_SIMPLE;
  for (let i = from; i < lineEnd; i++) {
    const b = chunk[i]!;
    if (b === 0 || b >= 0x80 || b === LF || b === CR) return NOT_SIMPLE;
  }
  return kind;
}

/**
 * Where the value of the simple block's field starts (after `id:` or `:` and one optional
 * space): the line's text from there to `end - 2` is the id, or the comment.
 */
export function simpleValueStart(chunk: Buffer, start: number, end: number, kind: SimpleBlockKind): number {
  const at = kind === ID_ONLY ? start + 3 : start + 1;
  return at < end - 2 && chunk[at] === SPACE ? at + 1 : at;
}
