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
 * A pad ({@link xPad}, lines of ~1,000 bytes) that counts exactly `target` ({@link padCount}):
 * its bytes, `target` less the charge of its lines.
 */
export function padCounting(target: number, eol: string): string {
  const lines = Math.max(1, Math.ceil(target / (1000 + CHARGE)));
  const pad = xPad(target - lines * CHARGE, lines, eol);
  assert.equal(padCount(pad), target);
  return pad;
}
