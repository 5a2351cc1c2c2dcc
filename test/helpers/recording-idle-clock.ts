/**
 * An idle clock (src/routing/host-answer-waits.ts IdleClock) that records its calls in `calls`:
 * `p` when paused (a request the seller sent awaits the host's answer), `r` when restarted.
 * Shared by the HostAnswerWaits unit test and the registry-driven elicitation regressions.
 */
import type { IdleClock } from '../../src/routing/host-answer-waits.js';

export function clock(): IdleClock & { calls: string } {
  const c = { calls: '', awaitHostAnswer: () => void (c.calls += 'p'), hostAnswered: () => void (c.calls += 'r') };
  return c;
}
