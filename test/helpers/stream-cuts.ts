/**
 * Where to cut a seller's stream in two for tests that a result does not depend on the
 * chunking (the `sse_undelivered` count: test/unit/sse-undelivered-cuts.test.ts and the
 * GET-stream regressions): every byte, except inside padding runs (`pads`, [from, to) byte
 * ranges), where only the 4 bytes at each edge and every `stride`th byte are cut (the pads'
 * middles are alike, and cutting each of their bytes would take minutes). The default stride
 * suits pads of ~1,000-byte lines; pads of short lines (test/helpers/charged-pad.ts
 * `padCounting`) take one shorter than their lines are alike for (16: a cut every line or so).
 */
export function cutPoints(length: number, pads: ReadonlyArray<readonly [number, number]>, stride = 4099): number[] {
  const out: number[] = [];
  for (let at = 1; at < length; at++) {
    const inPad = pads.find(([from, to]) => at > from + 4 && at < to - 4);
    if (inPad === undefined || (at - inPad[0]) % stride === 0) out.push(at);
  }
  return out;
}
