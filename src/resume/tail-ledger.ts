/**
 * The counts of streams that went on past their last resume token (ARCHITECTURE §4 keeps the
 * count in the token; this is the one thing a token cannot carry).
 *
 * A token carries its stream's count through its own event. What the host receives after the
 * last event with a token (events and comments without an id, an id-only block's token, which
 * the MCP SDK clients and eventsource-parser 3 never take as their Last-Event-ID) is in no
 * token the host resumes from, so a resume from that token counted from its older count. A
 * seller that sends one small event with an id, then bulk without ids, then drops the
 * connection, and answers every resume the same way, had the host receive its bulk again and
 * again while the count barely moved: a real SDK client's one call got 20 resumes and
 * 1,802,397 bytes through an agent with `max_response_bytes: 100000`, 18x the bound (hostile
 * trial 24, F1: test/regressions/resume-untokenized-bytes-escape-cumulative-bound.test.ts).
 *
 * So when a bounded stream ends (whatever ended it) with bytes sent to the host after the
 * last token it gave with an event, the SSE stage notes that token and the stream's count at
 * its end here (sse-event-ids.ts `noteTail`), and a resume from that token starts from the larger
 * of the token's count and this one (routing/handler.ts resumedCount). The bound then trips at
 * the byte where one unbroken stream holding the same events would.
 *
 * Why not in the token: the host keeps the last id it took, and no token goes out after the
 * tail that a host takes as one without an event of the gateway's own (an empty-data event,
 * which MCP 2025-11-25 calls a priming event; the MCP SDK's server sends one only to clients
 * of 2025-11-25 or later, older ones cannot handle it). A fresh token on every event without
 * an id was 20x the seller's bytes on short events (a new user's trial 9, F3) and an HMAC per
 * event.
 *
 * Per process: a resume that reaches another replica, or this one after a restart, or after
 * the entry was evicted, counts from the token only, as before (documented in
 * docs/configuration.md, "The resume secret"). Bounded: at most {@link RESUME_TAIL_ENTRIES}
 * entries (the least recently noted go first), each kept for the resume token lifetime
 * (`resume.ttl_ms`) from when it was noted, which outlives its token (minted before). An entry
 * is a token's signature (43 characters) and two numbers: ~150 bytes, ~1.5 MB when full.
 * Streams that end with their response, or right after an event with a token, note nothing.
 *
 * No I/O; the clock is injected.
 */

/** Most entries the ledger holds: the least recently noted is dropped for a new one. */
export const RESUME_TAIL_ENTRIES = 10_000;

/** HMAC-SHA256, base64url: the last 43 characters of every token (resume/token.ts). */
const SIGNATURE_CHARS = 43;

interface TailEntry {
  /** The stream's count at its end (bytes), at most its limit. */
  readonly usedBytes: number;
  /** Unix ms after which the entry is dropped. */
  readonly expiresAt: number;
}

export class ResumeTailLedger {
  /** By token signature, least recently noted first (Map keeps insertion order). */
  private readonly entries = new Map<string, TailEntry>();

  /**
   * @param ttlMs      how long an entry lives (ms): the resume token lifetime (`resume.ttl_ms`)
   * @param maxEntries at most this many entries ({@link RESUME_TAIL_ENTRIES})
   * @param now        the clock (Unix ms)
   */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number = RESUME_TAIL_ENTRIES,
    private readonly now: () => number = Date.now,
  ) {}

  /** Entries held (expired ones not yet dropped included). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Notes that the stream whose last event token (for its host) is `token` ended with a count
   * of `usedBytes`. A larger count noted before for the same token is kept.
   */
  note(token: string, usedBytes: number): void {
    const key = keyOf(token);
    const nowMs = this.now();
    const before = this.entries.get(key);
    if (before !== undefined) {
      this.entries.delete(key);
      if (before.expiresAt >= nowMs) usedBytes = Math.max(usedBytes, before.usedBytes);
    }
    this.entries.set(key, { usedBytes, expiresAt: nowMs + this.ttlMs });
    // Oldest first: drop the expired, then the least recently noted beyond the bound.
    for (const [k, e] of this.entries) {
      if (e.expiresAt >= nowMs && this.entries.size <= this.maxEntries) break;
      this.entries.delete(k);
    }
  }

  /** The count noted for `token` (bytes), or undefined when none is held (or it expired). */
  usedBytesFor(token: string): number | undefined {
    const key = keyOf(token);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt < this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.usedBytes;
  }
}

/** A token's signature: unique per token, and all of it that is needed as a key. */
function keyOf(token: string): string {
  return token.length > SIGNATURE_CHARS ? token.slice(-SIGNATURE_CHARS) : token;
}
