/**
 * The exchange-line check shared by the regressions on a lift the gateway skips
 * (lift-exceeds-json-depth-and-nodes, lift-skipped-for-room-silent).
 */
import assert from 'node:assert/strict';
import type { LogLine } from '../support/hostile-seller.js';

/**
 * Checks `line`: `outcome`, no reason, `bytes` to the host, and `text_not_lifted` = `reason`
 * (absent when undefined). A skip is counted in `counted` under its metric labels
 * (`agent="…",reason="…"`), for the test of /metrics.
 */
export function assertTextNotLifted(line: LogLine, agent: string, expected: { outcome: string; bytes: number; reason: string | undefined }, counted: Map<string, number>): void {
  const { outcome, bytes, reason } = expected;
  assert.deepEqual(
    { outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host, text_not_lifted: line.text_not_lifted },
    { outcome, reason: null, bytes_to_host: bytes, text_not_lifted: reason },
  );
  if (reason === undefined) assert.equal(Object.hasOwn(line, 'text_not_lifted'), false, `no text_not_lifted: ${JSON.stringify(line)}`);
  else {
    const key = `agent="${agent}",reason="${reason}"`;
    counted.set(key, (counted.get(key) ?? 0) + 1);
  }
}
