/**
 * The drops of one SSE stream on their way to `adcp_gateway_sse_events_dropped_total{agent,reason}`
 * (sse-stage.ts `drop`; the hook PipelineHooks.onSseEventDropped, observability/metrics.ts):
 * counted here as runs of one reason, in order, and added to the counter one run at a time,
 * when the stage has taken a chunk (its read loop) and when the stream ends, instead of one
 * increment per drop.
 *
 * Why (hostile trial 52, F2): each increment is a prom-client label lookup; 400,000 dropped
 * `data: {}` events (4 MB) cost ~1.2 s of the gateway, part of it in those increments. Now a
 * chunk of the seller's bytes costs one increment per run of a reason in it (a flood of one
 * kind: one per chunk). The counter is exact whenever the stage is not in the middle of a
 * chunk, which is whenever a scrape of /metrics can run (it runs on the same event loop);
 * the order of reasons is kept, so a test hook that expands the runs sees every drop in order.
 */
export class SseDropMetric {
  /** The reason of the run not yet added, undefined when none. */
  private reason: string | undefined = undefined;
  /** Drops in that run (0 when none). */
  private count = 0;

  /** @param add adds `n` (>= 1) drops of `reason` to the counter (PipelineHooks.onSseEventDropped) */
  constructor(private readonly add: (reason: string, n: number) => void) {}

  /** One event dropped for `reason` (a DropReason: errors/codes.ts). */
  drop(reason: string): void {
    if (reason !== this.reason) {
      this.flush();
      this.reason = reason;
    }
    this.count++;
  }

  /** Adds the run not yet added, if any. Idempotent. */
  flush(): void {
    if (this.count === 0) return;
    const n = this.count;
    this.count = 0;
    this.add(this.reason!, n);
  }
}
