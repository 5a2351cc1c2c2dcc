/**
 * Byte lengths of what sse-encode.ts writes for a parsed event, from lengths the SSE stage
 * already has, so that the stage can charge what the re-encoding adds to the host's stream
 * over the seller's bytes (sse-encoding-charge.ts `charge`) without encoding twice.
 *
 * Why: the encoder writes normalized framing (`data: `, `id: `, `event: ` with a space, LF
 * line endings, a blank line after each event, `retry:` on its own block with its value
 * clamped: sse-encode.ts clampSseRetryMs; its frame is measured as written). A seller that
 * writes `data:x` (no space) made each such line one byte longer on the host's stream than
 * the bytes the cumulative bound counted (reported failure: 922 seller bytes with the limit at
 * 922 reached the host as 943; test/regressions/sse-reencoding-past-limit.test.ts).
 */

const LF = 0x0a;

/**
 * The number of `data:` lines the encoder writes for `data`: one per LF-separated line
 * (sse-encode.ts encodeSseEvent, SseFrameBatch.eventBytes). One native search when the data
 * is one line (the usual event); the encoder is then told so and does not search again.
 */
export function dataLineCount(data: string | Buffer): number {
  let lines = 1;
  if (typeof data === 'string') for (let at = data.indexOf('\n'); at !== -1; at = data.indexOf('\n', at + 1)) lines++;
  else for (let at = data.indexOf(LF); at !== -1; at = data.indexOf(LF, at + 1)) lines++;
  return lines;
}

/**
 * UTF-8 bytes of an event as the encoder writes it:
 * `[id line][event line]` then `data: <line>\n` per data line, then the blank line.
 *
 * @param idBytes    UTF-8 length of the id written (-1: no id line; 0 writes `id`, 3 bytes
 *                   with its LF; otherwise `id: <id>\n`)
 * @param eventBytes UTF-8 length of the event type (-1: no event line; else `event: <type>\n`)
 * @param dataLines  {@link dataLineCount} of the data
 * @param dataBytes  UTF-8 length of the data (its LFs included: each becomes a line's LF)
 */
export function encodedEventBytes(idBytes: number, eventBytes: number, dataLines: number, dataBytes: number): number {
  // `data: ` (6) per line; the data's LFs end all lines but the last, which gets its own LF,
  // then the blank line: dataBytes + 2.
  return idLineBytes(idBytes) + (eventBytes < 0 ? 0 : 8 + eventBytes) + 6 * dataLines + dataBytes + 2;
}

/** UTF-8 bytes of an id field alone and its blank line (sse-encode.ts encodeSseIdOnly). */
export function encodedIdOnlyBytes(idBytes: number): number {
  return idLineBytes(idBytes) + 1;
}

/** `id\n` for an empty id, `id: <id>\n` otherwise, nothing for -1. */
function idLineBytes(idBytes: number): number {
  return idBytes < 0 ? 0 : idBytes === 0 ? 3 : 5 + idBytes;
}
