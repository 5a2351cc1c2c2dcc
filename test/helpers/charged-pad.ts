/**
 * Pads of unknown-field (`x:`) lines for the undelivered-count regressions of streams without a
 * total: since hostile trial 52, F2, each such line counts SSE_IGNORED_LINE_CHARGE_BYTES more
 * than its bytes (src/response/sse-ignored-lines.ts), so a pad that must bring the count to an
 * exact point is sized by its bytes and its lines together.
 */
import assert from 'node:assert/strict';
import { SSE_IGNORED_LINE_CHARGE_BYTES as CHARGE } from '../../src/response/sse-ignored-lines.js';

/** The `x:` lines of `pad` (any line breaks). */
export function xLines(pad: string): number {
  return pad.split(/\r\n|\n|\r/).filter((line) => line.startsWith('x:')).length;
}

/** What `pad` counts: its UTF-8 bytes and the charge of each `x:` line. */
export function padCount(pad: string): number {
  return Buffer.byteLength(pad) + CHARGE * xLines(pad);
}

/**
 * A block of `lines` (>= 1) lines `x: aaa…` with `eol` line endings, then its blank line (one
 * more `eol`), of exactly `bytes` bytes: the lines' lengths differ by one byte at most.
 */
export function xPad(bytes: number, lines: number, eol: string): string {
  const filler = bytes - lines * ('x: '.length + eol.length) - eol.length;
  assert.ok(filler >= 0, `no pad of ${lines} lines in ${bytes} bytes`);
  const base = Math.floor(filler / lines);
  let text = '';
  for (let k = 0; k < lines; k++) text += `x: ${'a'.repeat(base + (k < filler % lines ? 1 : 0))}${eol}`;
  text += eol;
  assert.equal(text.length, bytes);
  return text;
}

/**
 * A pad ({@link xPad}) that counts exactly `target` ({@link padCount}): its bytes, `target`
 * less the charge of its lines. Its lines are short (`x: ` and 4 to ~8 bytes; one longer line
 * where `target` is under two lines' charge): the charges make the count, so a pad that brings
 * a GET stream's count to its ~65 KB limit is ~0.3-1.3 KB, not ~33 KB (lines of ~1,000 bytes, as
 * it was: the stage then read ~30 times the bytes in each of the tests' thousands of runs).
 */
export function padCounting(target: number, eol: string): string {
  const lines = Math.max(1, Math.floor((target - eol.length) / (CHARGE + 'x: '.length + eol.length + 4)));
  const pad = xPad(target - lines * CHARGE, lines, eol);
  assert.equal(padCount(pad), target);
  return pad;
}
