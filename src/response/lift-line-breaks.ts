/**
 * The line breaks of a lifted text, as the lift writes them: each raw CR (0x0D) and LF (0x0A)
 * of the text's JSON goes into `structuredContent` as a space (0x20). Both rewrite paths do it
 * (lift-splice.ts, splice.ts), so a JSON body and an SSE event carry the same bytes.
 *
 * Why (a read-only review, H1 and M1): the lift wrote the text's JSON bytes as written, and a
 * pretty-printed text's line breaks are raw bytes there (JSON whitespace). Harmless in a JSON
 * body; in an SSE event a CR stayed inside a `data:` line (the encoder splits on LF only,
 * sse-encode.ts), and the host's parser, which ends a line at CR, LF or CR LF (WHATWG HTML
 * §9.2.6), cut the JSON there: the MCP SDK client timed out
 * (test/regressions/sse-lift-with-cr-loses-answer.test.ts). And each LF, 2 bytes in the text's
 * JSON string (`\n`) and 1 lifted, became a `data: ` line of its own on the host's stream,
 * 6 bytes the room check did not count: 100,000 of them took an answer bounded at 300,000 bytes
 * to 700,209 (test/regressions/sse-lift-newlines-exceed-max-response-bytes.test.ts).
 *
 * The value is the same: a lifted text is valid JSON, where a raw CR or LF can only be
 * whitespace between tokens (inside a string a raw control character is invalid, and such a
 * text is never lifted), as a space is. So a rewrite adds no line break to what the seller
 * sent: the summary is a JSON string, and a splice keeps the seller's other bytes.
 *
 * Cost: two native searches when the text has no line break (the common compact text); else
 * one pass over the bytes from the first one.
 */
import { CR, LF, SPACE } from '../mcp/json-bytes.js';

/** Writes each CR and LF of `out[start, end)` (the lifted text's JSON, just spliced into `out`) as a space. */
export function liftedLineBreaksAsSpaces(out: Buffer, start: number, end: number): void {
  const text = out.subarray(start, end);
  const lf = text.indexOf(LF);
  const cr = text.indexOf(CR);
  if (lf === -1 && cr === -1) return;
  for (let i = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr); i < text.length; i++) {
    const b = text[i];
    if (b === LF || b === CR) text[i] = SPACE;
  }
}
