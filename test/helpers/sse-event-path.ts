/**
 * The SSE stage's handling of one event on a request's stream (src/response/sse-stage.ts
 * `deliver`), for the differential fuzz (test/unit/rewrite-paths-differential-fuzz.test.ts):
 * the stage's own judge (sse-event-judge.ts SseEventJudge.judge: the sniff, the structure
 * bounds, sse-message.ts inspectEventData), then what `deliver` does with a response verdict:
 * the room check of a rewrite (rewrite-room.ts eventRewriteOverBound, recordLiftSkippedForRoom)
 * and the exchange's actions and saved bytes. Not run: the event's framing, resume tokens,
 * the cumulative count of the bytes before the event (the stream's count is modelled as this
 * event's data alone: see {@link runSseEvent}) and the host's writes.
 *
 * Keep in step with `deliver` there.
 */
import type { ServerResponse } from 'node:http';
import type { Exchange } from '../../src/exchange.js';
import type { LocalErrorInput } from '../../src/errors/local-reply.js';
import { ByteBudget } from '../../src/response/byte-budget.js';
import { eventRewriteOverBound, recordLiftSkippedForRoom } from '../../src/response/rewrite-room.js';
import { dataLineCount } from '../../src/response/sse-encoded-size.js';
import { EVENT_REFUSED, SseEventJudge } from '../../src/response/sse-event-judge.js';

/** What the stage did with the event. */
export type SseAnswer =
  /** Refused through the stage's `fail`: the request's error (`json_depth`, `json_nodes`, `upstream_not_mcp`...), the stream ends. */
  | { readonly kind: 'failed'; readonly input: LocalErrorInput }
  /** Dropped through the stage's `drop` (`message_without_kind`...): the stream goes on. */
  | { readonly kind: 'dropped'; readonly reason: string }
  /** Forwarded as the seller sent it, not as the response (a request, a notification, text): the stream goes on. */
  | { readonly kind: 'forwarded' }
  /** The response to the request: the event's data sent, and the stream ends. */
  | {
      readonly kind: 'answered';
      readonly bytes: Buffer;
      readonly outcome: 'ok' | 'rewritten';
      readonly action: string | undefined;
      readonly textNotLifted: string | undefined;
      readonly bytesSaved: number;
    };

export interface SseEventInput {
  /** The event's data as eventsource-parser gives it (text), or undefined when only `bytes` is given (an event held as bytes: sse-held-block.ts). */
  readonly data: string | undefined;
  /** Its UTF-8 bytes when the stage has them, else undefined. */
  readonly bytes: Buffer | undefined;
  /** PipelineHooks.wantsResponseMessage. */
  readonly wantsMessage: boolean;
}

/**
 * Runs the stage's judgement of one unnamed event (`event:` absent) on a fresh copy of
 * `exchange` (`makeExchange`; `rpc.kind` 'request', `limits.max_sse_event_bytes` at least the
 * data's length: the stage checks that bound before judging). The stream's cumulative count
 * is the event's data alone (a bound of `max_response_bytes`), so that the room a rewrite
 * has is the JSON stage's (bodyRewriteFits on the same bytes); the real stream counts its
 * framing and earlier events too (sse-stage.ts module doc, Bounds: cumulative).
 */
export function runSseEvent(makeExchange: () => Exchange, input: SseEventInput): SseAnswer {
  const exchange = makeExchange();
  const { limits } = exchange;
  let refused: SseAnswer | undefined;
  const judge = new SseEventJudge(
    exchange,
    { answerable: exchange.rpc.kind === 'request', standalone: exchange.rpc.kind === 'none', answersNoRequest: exchange.rpc.kind === 'none' || exchange.rpc.kind === 'notification' },
    200,
    {} as ServerResponse,
    undefined,
    input.wantsMessage,
    (failed) => void (refused ??= { kind: 'failed', input: failed }),
    (reason) => void (refused ??= { kind: 'dropped', reason }),
  );
  const verdict = judge.judge(undefined, input.data, input.bytes);
  if (verdict === EVENT_REFUSED) return refused!;
  if (verdict?.kind !== 'response') return { kind: 'forwarded' };
  const cumulative = new ByteBudget(limits.max_response_bytes, 'sse_cumulative', verdict.dataBytes);
  let out = verdict.out;
  let outcome: 'ok' | 'rewritten' = 'ok';
  if (verdict.changed) {
    // As the stage frames them (sse-stage.ts): the data's bytes and its `data:` lines.
    const rewritten = { bytes: out.length, lines: dataLineCount(out) };
    const seller = { bytes: verdict.dataBytes, lines: dataLineCount(verdict.bytes) };
    const overBound = eventRewriteOverBound(rewritten, seller, limits.max_sse_event_bytes, cumulative, 0);
    if (overBound !== undefined) {
      out = verdict.bytes;
      recordLiftSkippedForRoom(exchange, verdict.action, overBound);
    } else {
      exchange.bytesSaved += verdict.dataBytes - out.length;
      exchange.actions.push(verdict.action);
      outcome = 'rewritten';
    }
  }
  return { kind: 'answered', bytes: out, outcome, action: exchange.actions[0], textNotLifted: exchange.textNotLifted, bytesSaved: exchange.bytesSaved };
}
