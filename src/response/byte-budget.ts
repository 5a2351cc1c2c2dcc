/**
 * A byte budget: counts actual bytes where they are (ARCHITECTURE §2: "a stage is given a
 * budget object, not a bare number, so the same budget can outlive one HTTP response").
 * The SSE cumulative budget of one request is seeded from its resume token, so the count
 * survives `Last-Event-ID` reconnects (spec: mcp-response-extraction.md, Size Limits).
 */
export type BudgetReason = 'raw_bytes' | 'decoded_bytes' | 'sse_cumulative';

export class ByteBudget {
  /** Bytes counted so far (including the bytes of the chunk that broke the limit). */
  used: number;

  /**
   * @param limit   bytes allowed in total (inclusive: exactly `limit` bytes pass)
   * @param reason  the `details.reason` reported when the limit is broken
   * @param used    bytes already spent (a resumed stream's count)
   */
  constructor(
    readonly limit: number,
    readonly reason: BudgetReason,
    used = 0,
  ) {
    this.used = used;
  }

  /**
   * Spends `n` bytes. Returns how many of them fit within the limit: `n` while within,
   * fewer (possibly 0) when this chunk crosses it. `exceeded` is true from then on.
   */
  take(n: number): number {
    const room = Math.max(0, this.limit - this.used);
    this.used += n;
    return n <= room ? n : room;
  }

  get exceeded(): boolean {
    return this.used > this.limit;
  }
}
