/**
 * The warnings for the seller event ids of one SSE stream that could not be turned into resume
 * tokens (sse-event-ids.ts `hostEventId`: an id a Last-Event-ID header cannot carry back, such as
 * `\x01` or a non-ASCII one, or a token that would be over 4096 characters), throttled per
 * stream as the drop warnings are (stream-warning-throttle.ts, the same throttle):
 *
 * - the stream's first such id is logged at once, as before: `warn`,
 *   `SSE event id could not be turned into a resume token: <what> (<why>)` (`what`:
 *   `forwarded without an id`, or `id-only block dropped` for a pending id at the stream's end;
 *   `why`: {@link tokenRefusalCause}), `{ agent }`;
 * - every later one is only counted; {@link WARNING_SUMMARY_INTERVAL_MS} after the first one
 *   not yet logged, one summary: `warn`, {@link IDS_NOT_TOKENIZED_SUMMARY_MSG},
 *   `{ agent, not_tokenized, not_tokenized_total, stream_ended: false }` (`not_tokenized`:
 *   how many since the previous line; `not_tokenized_total`: over the stream so far, the first
 *   included);
 * - when the stream ends ({@link SseIdTokenLog.end}), those not yet logged get a last summary,
 *   `stream_ended: true`; none when every one was logged already.
 *
 * The exact total goes on the exchange (`Exchange.eventIdsNotTokenized`: the exchange line's
 * `event_ids_not_tokenized`); the metric `adcp_gateway_sse_event_ids_not_tokenized_total{agent}`
 * counts every one as it comes (the caller's hook).
 *
 * Reported failure (a hostile new user's trial 10, F2): one warning line per such event,
 * unthrottled: a seller's 11-byte events (`id:\x01`, `data`, a blank line) on the standalone
 * GET stream each made a 176-byte line; 300,000 of them filled the 16 MiB log buffer
 * (observability/log-destination.ts) and lines were lost, that stream's exchange line and 8 of
 * another agent's 10 among them
 * (test/regressions/untokenizable-id-warning-flood-log.test.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Exchange } from '../exchange.js';
import { isResumableEventId } from '../request/headers.js';
import { MAX_RESUME_TOKEN_LENGTH, tokenPartCosts, type TokenPartCost } from '../resume/token.js';
import { StreamWarningThrottle, WARNING_SUMMARY_INTERVAL_MS } from './stream-warning-throttle.js';

/** The first line's message, before what happened to the event (`forwarded without an id`...). */
export const FIRST_ID_NOT_TOKENIZED_MSG = 'SSE event id could not be turned into a resume token: ';
/** A summary line of the ids not turned into tokens since the previous line. */
export const IDS_NOT_TOKENIZED_SUMMARY_MSG = 'SSE event ids could not be turned into resume tokens';

/** The untokenizable-id warnings of one stream (module doc). Made at the stream's first such id. */
export class SseIdTokenLog {
  private readonly throttle: StreamWarningThrottle;
  /** No id was counted yet: the next is logged, with its cause. */
  private first = true;

  constructor(
    private readonly exchange: Exchange,
    log: FastifyBaseLogger,
    intervalMs: number = WARNING_SUMMARY_INTERVAL_MS,
  ) {
    const agent = exchange.agent.name;
    this.throttle = new StreamWarningThrottle(
      {
        first: (what) => log.warn({ agent }, FIRST_ID_NOT_TOKENIZED_MSG + what),
        summary: (counts, _maxObservedBytes, streamEnded) => {
          let since = 0;
          for (const n of Object.values(counts)) since += n;
          log.warn({ agent, not_tokenized: since, not_tokenized_total: exchange.eventIdsNotTokenized, stream_ended: streamEnded }, IDS_NOT_TOKENIZED_SUMMARY_MSG);
        },
      },
      intervalMs,
    );
  }

  /**
   * Counts one seller id not turned into a token (`what`: what happened to its event); logs it
   * if it is the stream's first, with why no token was made (`why`, asked only then:
   * {@link tokenRefusalCause}).
   */
  notTokenized(what: string, why: () => string): void {
    this.exchange.eventIdsNotTokenized = (this.exchange.eventIdsNotTokenized ?? 0) + 1;
    if (this.first) {
      this.first = false;
      this.throttle.count(`${what} (${why()})`, undefined);
      return;
    }
    this.throttle.count(what, undefined);
  }

  /** The stream is over: the ids not yet logged get their summary now. Idempotent. */
  end(): void {
    this.throttle.end();
  }
}

/**
 * Why a seller's event id `sellerId` got no resume token (the first warning's parenthesis;
 * `undefined`: an id over {@link MAX_RESUME_TOKEN_LENGTH} characters, whose text a pending id
 * does not keep: sse-event-ids.ts pendingIdFor):
 * - `the seller's event id cannot be sent back in a Last-Event-ID header (printable ASCII only)`
 *   (request/headers.ts isResumableEventId);
 * - `the token would be over 4096 characters: <part> takes <n> characters of the token; <part> <n>...`: what
 *   the refused token carries of variable length (Exchange.tokenRefusal's `state`, as it was
 *   given to the codec), each part measured as the token encodes it (resume/token.ts
 *   tokenPartCosts: the characters of the token its JSON value takes, escapes, UTF-8 and
 *   base64url included; `over <n>` past 65,536), biggest first: the request's id (`i`, and
 *   `x`), the tool name (`t`; a batch's: the levels its limits came from), the method (`m`),
 *   the seller's event id (`u`), the agent's name (`a`), the protocol version (`v`), a batch's
 *   awaited ids (`w`); the seller's id is always named, the others when over
 *   {@link NAMED_PART_CHARS} characters. The session's hash (about 39 characters), the counts,
 *   the keys, the prefix and the signature are fixed and not named. Reported failures: hostile
 *   trial 55, F4 (a 3,000-character string request id pushed every token of its stream over the
 *   limit, and the warning, naming only the seller's id `ev1`, read as the seller's fault:
 *   test/regressions/long-request-id-token-warning-blames-seller.test.ts); hostile trial 56, F4
 *   (a 3,100-character `MCP-Protocol-Version` was not named, and the seller's id was blamed; a
 *   string id was measured by its UTF-16 length, 700 U+0001 characters as 702 though the token
 *   carries `\u0001` for each, and a shorter tool name was named first:
 *   test/regressions/token-warning-misnames-protocol-version.test.ts).
 * - otherwise the refusal the codec reported (Exchange.tokenRefusal): `the resume token could
 *   not be minted: <code>, <message>` (`resume_state_invalid` and the field it names), never
 *   "over 4096" when the length was not the cause (review of trial 55, F4's fix, Nit).
 * Computed once per stream, for its first such id: at most 49,152 characters of each part read
 * (tokenPartCosts), never a `JSON.stringify` of a host's id, which can be megabytes
 * (resume-token-refused-after-serializing-huge-host-id counts such calls).
 */
export function tokenRefusalCause(exchange: Exchange, sellerId: string | undefined): string {
  if (sellerId === undefined) return `the token would be over ${MAX_RESUME_TOKEN_LENGTH} characters: the seller's event id is over ${MAX_RESUME_TOKEN_LENGTH} characters`;
  if (!isResumableEventId(sellerId)) return "the seller's event id cannot be sent back in a Last-Event-ID header (printable ASCII only)";
  const refusal = exchange.tokenRefusal;
  if (refusal?.code !== 'resume_token_too_long') return `the resume token could not be minted: ${refusal === undefined ? 'no cause reported' : `${refusal.code}, ${refusal.message}`}`;
  // Stable sort: equal parts keep the payload's order.
  const named = tokenPartCosts(refusal.state)
    .filter(({ key, chars }) => key === 'u' || chars > NAMED_PART_CHARS)
    .sort((a, b) => b.chars - a.chars);
  const size = ({ chars, over }: TokenPartCost): string => `${over ? 'over ' : ''}${chars}`;
  const [lead, ...rest] = named as [TokenPartCost, ...TokenPartCost[]];
  const others = rest.map((p) => `; ${PART_NAMES[p.key]} ${size(p)}`).join('');
  return `the token would be over ${MAX_RESUME_TOKEN_LENGTH} characters: ${PART_NAMES[lead.key]} takes ${size(lead)} characters of the token${others}`;
}

/** How the warning names each part of a token (resume/token.ts TokenPartCost `key`). */
const PART_NAMES: Readonly<Record<TokenPartCost['key'], string>> = {
  i: "the request's id",
  t: 'the tool name',
  m: 'the method',
  u: "the seller's event id",
  a: "the agent's name",
  v: 'the protocol version',
  w: "the batch's awaited ids",
};

/** A token part {@link tokenRefusalCause} names besides the seller's id: taking more than this of the token (characters). */
const NAMED_PART_CHARS = 64;
