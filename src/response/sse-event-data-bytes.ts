/**
 * The UTF-8 bytes of a parsed SSE event's `data`, when they are exactly the bytes of the one
 * data line the line feeder (sse-boundaries.ts SseLineFeeder) held over chunk edges and
 * handed over whole: the SSE stage (sse-stage.ts `onEvent`) then judges and writes those
 * bytes instead of encoding the parser's text again (sse-boundaries.ts takeCompletedLine).
 */
import type { CompletedLine } from './sse-boundaries.js';

/**
 * The UTF-8 bytes of an event's `data` taken from `line`, the event's data line that the line
 * feeder handed over whole after holding it (sse-boundaries.ts takeCompletedLine), or
 * undefined when they cannot be proved to be exactly those bytes. The parser dispatches an
 * event at its blank line, so the first event after that line was handed over is the one it
 * belongs to; `data` is then that line's value (after `data:` and one optional space) when
 * their lengths match (a second data line would add its text and an LF), and the line's
 * valid UTF-8 bytes are the encoding of that text.
 */
export function dataBytesOf(data: string, line: CompletedLine | undefined): Buffer | undefined {
  if (line === undefined || !line.utf8) return undefined;
  const valueStart = line.bytes[DATA_FIELD_LENGTH] === SPACE ? DATA_FIELD_LENGTH + 1 : DATA_FIELD_LENGTH;
  return data.length === line.textLength - valueStart ? line.bytes.subarray(valueStart) : undefined;
}
/** `data:`; the bytes of the line are ASCII up to and including its optional space. */
const DATA_FIELD_LENGTH = 5;
const SPACE = 0x20;
