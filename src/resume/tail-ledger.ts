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
 * of the token's count and this one (routing/resumed-stream.ts resumedCount). The bound then trips at
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
 * entries, all agents together, each kept for the resume token lifetime (`resume.ttl_ms`)
 * from when it was noted, which outlives its token (minted before). Per agent as to who gives
 * an entry up: when full, the oldest entry of the agent holding the most goes (the noting
 * agent's own on a tie), so one agent's streams never take an entry from an agent holding
 * fewer; with k agents noting, each keeps at least its 10,000 / k (rounded down) most recent.
 * It was one LRU for all, and ~10,000 tails of agent B dropped agent A's entry before A's
 * resume, which then counted from its token's older count (review 35, F5:
 * test/regressions/other-agent-evicts-tail-ledger-entry.test.ts). An entry is a copy of a
 * token's signature (43 characters) and two numbers, in its agent's Map: measured 130-180
 * bytes, 1.2-1.8 MB when full (a key sliced from its token kept the whole token alive: ~390
 * bytes, 3.7 MB). Cost of a note: one look at each agent's oldest entry (the agents holding
 * entries: at most the configured ones and those removed within `resume.ttl_ms`); of a
 * resume's look-up, one Map look-up per such agent.
 * Streams that end with their response, or right after an event with a token, note nothing.
 *
 * No I/O; the clock is injected.
 */

/** Most entries the ledger holds, all agents together ({@link ResumeTailLedger.note}: who gives one up for a new one). */
export const RESUME_TAIL_ENTRIES = 10_000;

/** HMAC-SHA256, base64url: the last 43 characters of every token (resume/token.ts). */
const SIGNATURE_CHARS = 43;

interface TailEntry {
  /** The stream's count at its end (bytes), at most its limit. */
  readonly usedBytes: number;
  /** Unix ms after which the entry is dropped. */
  readonly expiresAt: number;
}

/** One agent's entries by token signature, least recently noted first (a Map keeps insertion order; every entry lives `ttlMs`, so the first expires first). */
type AgentTails = Map<string, TailEntry>;

export class ResumeTailLedger {
  /** By agent name: that agent's entries. An agent holding none has no place. */
  private readonly byAgent = new Map<string, AgentTails>();
  /** Entries held, all agents together. */
  private count = 0;

  /**
   * @param ttlMs      how long an entry lives (ms): the resume token lifetime (`resume.ttl_ms`)
   * @param maxEntries at most this many entries, all agents together ({@link RESUME_TAIL_ENTRIES})
   * @param now        the clock (Unix ms)
   */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number = RESUME_TAIL_ENTRIES,
    private readonly now: () => number = Date.now,
  ) {}

  /** Entries held, all agents together (expired ones not yet dropped included). */
  get size(): number {
    return this.count;
  }

  /**
   * Notes that the stream of `agent` (its name) whose last event token (for its host) is
   * `token` ended with a count of `usedBytes`. A larger count noted before for the same token
   * is kept. Drops the expired entries; then, over {@link maxEntries}, the oldest entry of the
   * agent holding the most (`agent` itself on a tie), so that one agent's streams never take
   * an entry from an agent holding fewer than it (review 35, F5).
   */
  note(token: string, usedBytes: number, agent: string): void {
    const key = ownCopy(keyOf(token));
    const nowMs = this.now();
    for (const [name, tails] of this.byAgent) {
      const before = tails.get(key);
      if (before !== undefined) {
        if (before.expiresAt >= nowMs) usedBytes = Math.max(usedBytes, before.usedBytes);
        this.drop(name, tails, key); // noted again: it goes last
      }
      this.dropExpired(name, tails, nowMs);
    }
    let own = this.byAgent.get(agent);
    if (own === undefined) this.byAgent.set(agent, (own = new Map()));
    own.set(key, { usedBytes, expiresAt: nowMs + this.ttlMs });
    this.count++;
    while (this.count > this.maxEntries) this.dropOldestOfLargest(agent, own);
  }

  /** The count noted for `token` (bytes), or undefined when none is held (or it expired). */
  usedBytesFor(token: string): number | undefined {
    const key = keyOf(token);
    for (const [name, tails] of this.byAgent) {
      const entry = tails.get(key);
      if (entry === undefined) continue;
      if (entry.expiresAt >= this.now()) return entry.usedBytes;
      this.drop(name, tails, key);
      return undefined;
    }
    return undefined;
  }

  /** Drops `tails`' expired entries (the first ones). */
  private dropExpired(name: string, tails: AgentTails, nowMs: number): void {
    for (const [key, entry] of tails) {
      if (entry.expiresAt >= nowMs) return;
      this.drop(name, tails, key);
    }
  }

  /** Drops the oldest entry of the agent holding the most entries (`agent`, holding `own`, on a tie). */
  private dropOldestOfLargest(agent: string, own: AgentTails): void {
    let name = agent;
    let largest = own;
    for (const [other, tails] of this.byAgent) {
      if (tails.size > largest.size) {
        name = other;
        largest = tails;
      }
    }
    const oldest = largest.keys().next();
    if (oldest.done !== true) this.drop(name, largest, oldest.value);
  }

  /** Drops `key` from `name`'s `tails`, and the agent's place once it holds none. */
  private drop(name: string, tails: AgentTails, key: string): void {
    if (!tails.delete(key)) return;
    this.count--;
    if (tails.size === 0) this.byAgent.delete(name);
  }
}

/** A token's signature: unique per token, and all of it that is needed as a key. */
function keyOf(token: string): string {
  return token.length > SIGNATURE_CHARS ? token.slice(-SIGNATURE_CHARS) : token;
}

/**
 * A copy of `key` (ASCII: a token is base64url) that holds only its own characters: V8 makes a
 * slice of 13 characters or more a view of the whole token (~230 bytes), which a kept key
 * would keep alive (measured: 387 bytes an entry, not the ~150 the doc said).
 */
function ownCopy(key: string): string {
  return Buffer.from(key, 'latin1').toString('latin1');
}
