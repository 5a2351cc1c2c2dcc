/**
 * How many resume tokens a stream may carry for the bytes its seller sends (sse-stage.ts
 * `deliver`): every SSE stream, the standalone GET stream, long-lived streams and the streams
 * answering a POST (a request's, a batch's, a notification's) alike.
 *
 * Why: a token is some 160-310 characters however short the seller's id, and it costs an
 * HMAC. A seller's events with short ids and no data to speak of (`id:N`, `data`, the blank
 * line: 11 bytes) made the host receive 14.3x the seller's bytes on the standalone GET stream,
 * which has no cumulative bound, without end, and minting their tokens slowed other agents'
 * calls (measured with a new user's trial 9, F3 repro: another agent's tools/call took ~23 ms,
 * then 256-277 ms). Id-only blocks, the trial's own case (20.4x), mint no token of their own
 * any more (sse-stage.ts `onIdOnly`). On a stream answering a POST the cumulative bound counts
 * what tokens add (sse-event-ids.ts chargeToken), so the host never receives more than
 * `max_response_bytes`; but within it the same events still became tokens: ~18x the seller's
 * bytes for `id:N` + `data`, 6.2x for `id:N` + a 30-byte notification, all up to the bound,
 * an HMAC per event (hostile trials:
 * test/regressions/request-stream-short-id-token-amplification.test.ts). So the budget is
 * every stream's.
 *
 * Rule: a budget in bytes of what tokens add to the host's stream (a token's length over the
 * seller id's). It starts at {@link TOKEN_CREDIT_START_BYTES}; every byte of the seller the
 * stage takes adds {@link TOKEN_CREDIT_PER_SELLER_BYTE}, up to {@link TOKEN_CREDIT_MAX_BYTES}.
 * A token may be minted while the budget is above zero, and its addition is then spent (the
 * budget may go below zero by that one token: its length is known only once it is minted,
 * and a refused token is never minted). So tokens add at most twice the seller's bytes, plus
 * the start, plus one token: the host receives at most about three times the seller's bytes
 * (2.7x for the events above, 2 MB of them in the trial's repro; 2.9x for the notifications;
 * re-encoding adds its own on top at most, U+FFFD for invalid UTF-8 being the most, 3 bytes for
 * 1), and the gateway mints at most one HMAC per ~80 seller bytes (a token adds some 160 bytes
 * or more). Two tokens are minted whatever the budget, at most one of each per stream: the one
 * on the event carrying the request's response (it ends the stream, and says so: resume/token.ts
 * `final`), and the one of an id still pending at the stream's end (sse-stage.ts
 * writePendingId); each spends its addition all the same.
 *
 * An MCP server's events are not refused: a notification with the SDK's ~40-character event
 * id is some 110 bytes or more, and earns ~220 bytes against its token's ~175 (a request's
 * token, which carries the request's id, method and limit, ~225: a progress notification of
 * ~150 bytes earns ~300); the start pays for a first event of any kind (the priming event of
 * MCP 2025-11-25, `id` and empty data). An event refused a token goes out without an id; its
 * id is the stream's pending id, which the next event without an id of its own carries, or the
 * stream's end (sse-stage.ts). On a bounded stream the refused id's line is still counted with
 * its block (its frame, as the seller's bytes), so the count stays at or above what the host
 * received, and a resume from the last token the host got counts from it as before.
 *
 * Earned per range of seller bytes the stage takes (sse-chunk-taker.ts `take`, a raw run, held
 * bytes): an event with an id of its own is taken through its own block's end (its token's
 * exact count needs that), so which of those get tokens does not depend on how the seller's
 * bytes were cut; an event that carries an earlier id may have earned up to the end of its
 * chunk.
 *
 * Cost: a multiply-add and a comparison per range the stage takes; one comparison per event
 * with an id; a subtraction per token.
 */

/** Bytes of token addition each seller byte earns. */
export const TOKEN_CREDIT_PER_SELLER_BYTE = 2;
/** The budget at the start of a stream: a first event's token whatever its bytes (about five tokens of 200 characters). */
export const TOKEN_CREDIT_START_BYTES = 1024;
/** The most the budget holds: what a long run of events without ids earns is not kept for a burst of tokens. */
export const TOKEN_CREDIT_MAX_BYTES = 64 * 1024;

/** One stream's token budget (module doc). */
export class TokenCredit {
  private credit = TOKEN_CREDIT_START_BYTES;

  /** `bytes` of the seller's stream were taken. */
  earn(bytes: number): void {
    const c = this.credit + TOKEN_CREDIT_PER_SELLER_BYTE * bytes;
    this.credit = c < TOKEN_CREDIT_MAX_BYTES ? c : TOKEN_CREDIT_MAX_BYTES;
  }

  /** Whether a token may be minted now. */
  get available(): boolean {
    return this.credit > 0;
  }

  /** A token was minted: `added` is its length over the seller id's (bytes; <= 0 spends nothing). */
  spend(added: number): void {
    if (added > 0) this.credit -= added;
  }
}
