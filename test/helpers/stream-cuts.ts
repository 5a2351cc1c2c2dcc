/**
 * Where to cut a seller's stream in two for tests that a result does not depend on the
 * chunking (the `sse_undelivered` count: test/unit/sse-undelivered-cuts.test.ts and the
 * GET-stream regressions): every byte, except inside long padding runs (`pads`, [from, to)
 * byte ranges), where only the 4 bytes at each edge and every 4,099th byte are cut (the pads'
 * middles are alike, and cutting each of their bytes would take minutes).
 */
export function cutPoints(length: number, pads: ReadonlyArray<readonly [number, number]>): number[] {
  const out: number[] = [];
  for (let at = 1; at < length; at++) {
    const inPad = pads.find(([from, to]) => at > from + 4 && at < to - 4);
    if (inPad === undefined || (at - inPad[0]) % 4099 === 0) out.push(at);
  }
  return out;
}
