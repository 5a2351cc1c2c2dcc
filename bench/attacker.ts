/**
 * The fairness case's attack load, in its own process so its work does not disturb the
 * latency figures taken in the parent: keeps one request in flight per URL it is given
 * (each URL an attacking seller behind the gateway), re-issuing each as soon as it ends,
 * until told to stop or until its count or time bound is reached.
 *
 * IPC: `{ type: 'start', urls, maxRequests, maxMs, requestTimeoutMs }` -> `{ type: 'started' }`;
 * `{ type: 'stop' }` (or a bound reached) -> waits for in-flight requests (bounded) ->
 * `{ type: 'result', result: AttackSummary }`, then exits.
 */
import { callOnce, keepAliveAgent } from './http-client.js';

export interface AttackSummary {
  completed: number;
  failed: number;
  elapsedMs: number;
  /** Completed requests by the `details.reason` of the gateway's answer (or `other`). */
  reasons: Record<string, number>;
}

interface StartMessage {
  type: 'start';
  urls: string[];
  maxRequests: number;
  maxMs: number;
  requestTimeoutMs: number;
}

process.on('message', (raw: unknown) => {
  const msg = raw as StartMessage | { type: 'stop' };
  if (msg.type === 'start') void run(msg);
  else if (msg.type === 'stop') stopping = true;
});
process.on('disconnect', () => process.exit(0));

let stopping = false;

async function run(opts: StartMessage): Promise<void> {
  const agent = keepAliveAgent(opts.urls.length);
  const summary: AttackSummary = { completed: 0, failed: 0, elapsedMs: 0, reasons: {} };
  const start = performance.now();
  let issued = 0;
  const deadline = setTimeout(() => {
    stopping = true;
  }, opts.maxMs);
  const loop = async (url: string): Promise<void> => {
    while (!stopping && issued < opts.maxRequests) {
      issued++;
      try {
        const r = await callOnce(url, agent, opts.requestTimeoutMs);
        summary.completed++;
        const reason = /"reason":"([a-z_]+)"/.exec(r.body.subarray(0, 4096).toString('utf8'))?.[1] ?? 'other';
        summary.reasons[reason] = (summary.reasons[reason] ?? 0) + 1;
      } catch {
        summary.failed++;
      }
    }
  };
  process.send!({ type: 'started' });
  await Promise.all(opts.urls.map((u) => loop(u)));
  clearTimeout(deadline);
  summary.elapsedMs = performance.now() - start;
  agent.destroy();
  process.send!({ type: 'result', result: summary }, () => process.exit(0));
}
