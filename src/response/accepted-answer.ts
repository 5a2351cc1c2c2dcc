/**
 * A seller's `202 Accepted` answering a POST that holds a request: sent to the host as `200`.
 *
 * MCP Streamable HTTP (2025-06-18, "Sending Messages to the Server"; 2025-03-26 alike): the
 * server answers a POST of only notifications and responses "202 Accepted with no body", and a
 * POST holding a request with `Content-Type: text/event-stream` or `application/json`. A seller
 * that answers a request 202 with its response anyway (`application/json`, or SSE with
 * `data: {"jsonrpc":"2.0","id":2,"result":...}`) broke that rule, and the MCP SDK client
 * (TypeScript, 1.32.2: its transport returns at `status === 202`, the body cancelled unread)
 * never reads the answer: `callTool` waits to its own timeout, though the call ran (a
 * `create_media_buy`, perhaps). So such an answer goes to the host as 200, its body through the
 * pipeline as any 2xx answer's (bounds, rewrite: json-stage.ts, sse-stage.ts), with a warning
 * ({@link SELLER_202_ANSWER_MSG}, `warn`, `{ agent, method, body }`: `method` the exchange's
 * metric label, metrics.ts methodLabel, `batch` for a batch; `body` `json` or `sse`) and
 * `adcp_gateway_seller_202_answers_total{agent}`, once per exchange, when the host's 200 head
 * is written ({@link AcceptedAnswer.headWritten}): for JSON as the answer is sent on (a body
 * refused, answered with the gateway's error, is not counted); for SSE with the body's first
 * byte (after decoding), or 1,000 ms (sse-host-writer.ts ACCEPTED_HEAD_WAIT_MS) after the stream's stage starts
 * without one, or with the error for the request's id when the stream breaks before either
 * (sse-host-writer.ts, Deferred head): the stream is the host's from its head, and one that
 * carries no response (the seller ends it, goes idle, breaks a bound, sends only comments or
 * a cut-off event) ends with that error on that 200, so it is counted too: what is counted is
 * the 202 the gateway rewrote, not a response. pipeline.ts decides whether
 * (`UpstreamResponse.accepted`), the stages read the head's status from that
 * ({@link hostStatusOf}) and report where they commit the head; reading the status does nothing
 * else (a review Nit: the status read logged as a side effect).
 *
 * Which answers: status 202, a POST holding a request (exchange.ts carriesRequest: a request,
 * or a 2025-03-26 batch holding one), answered with JSON the JSON stage sends on, or with SSE
 * (the stream's head is written before any event: a stream with bytes but no event ends with
 * the error for the request's id, which a 200 lets the host read). Not:
 * - a 202 with no body: no byte at all after decoding (`Content-Length: 0`, an empty chunked
 *   body, a coding with no byte), any Content-Type (pipeline.ts; for SSE, a body that ends so
 *   within that 1,000 ms: sse-stage.ts onUpstreamEnd), or one that is no
 *   response to the request (no Content-Type, a JSON body refused): `upstream_not_mcp` for its
 *   id, as before ("A request's answer is never an acknowledgement"), no warning: the host gets
 *   the gateway's error, not the seller's 202 (the empty SSE 202 went out as 200 with
 *   `upstream_reset`, warned and counted: hostile trial 59, F1,
 *   test/regressions/seller-empty-202-sse-answer-sent-as-200.test.ts). An SSE 202 with any byte
 *   (comments only, a cut-off event, a `retry:` line) is no empty 202: sent on as 200 (review
 *   of that fix, Low);
 * - a POST of only notifications and responses: its 202 is MCP's (ack-body.ts);
 * - a GET, the standalone stream or a resume of a request's stream with `Last-Event-ID` (whose
 *   exchange has the request's kind): MCP has a GET answered SSE or 405, and the SDK client
 *   reads a GET's stream whatever its 2xx status, so its 202 passes as before;
 * - a DELETE (no request).
 *
 * Reported failure: hostile trial 57, F1 (the 202 passed on, logged `ok`, the SDK client's
 * call hung: test/regressions/seller-202-answer-hangs-sdk-client.test.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import { carriesRequest, type Exchange } from '../exchange.js';
import { methodLabel } from '../observability/metrics.js';

/** The warning's message (module doc). */
export const SELLER_202_ANSWER_MSG = 'seller answered a request 202 Accepted with a body: sent to the host as 200';

/**
 * A seller's 202 answering a POST that holds a request, sent on as 200 (module doc): made by
 * {@link acceptedAnswer}; the stage that writes the host's head calls {@link headWritten}.
 */
export class AcceptedAnswer {
  private reported = false;

  constructor(
    private readonly exchange: Exchange,
    /** How the answer came: `json` or `sse` (the warning's `body`). */
    readonly body: 'json' | 'sse',
    private readonly log: FastifyBaseLogger,
    private readonly hooks: { onSeller202Answer(): void },
  ) {}

  /**
   * The host's head (status 200) was just written for this answer: the warning on the
   * exchange's log and `hooks.onSeller202Answer` (the metric: pipeline.ts PipelineHooks), once
   * per exchange, whatever number of calls.
   */
  headWritten(): void {
    if (this.reported) return;
    this.reported = true;
    const exchange = this.exchange;
    this.log.warn({ agent: exchange.agent.name, method: methodLabel(exchange.rpc), body: this.body }, SELLER_202_ANSWER_MSG);
    this.hooks.onSeller202Answer();
  }
}

/**
 * For a seller's 2xx `status` answering `exchange` with a body of `body` kind: undefined when the
 * answer keeps the seller's status; for a 202 answering a POST that holds a request (module
 * doc), the {@link AcceptedAnswer} whose head goes out as 200 (pipeline.ts hands it on as
 * `UpstreamResponse.accepted`; {@link hostStatusOf}). Reports nothing itself. Cost on any other
 * answer: one comparison, nothing allocated.
 */
export function acceptedAnswer(
  exchange: Exchange,
  status: number,
  body: 'json' | 'sse',
  log: FastifyBaseLogger,
  hooks: { onSeller202Answer(): void },
): AcceptedAnswer | undefined {
  if (status !== 202 || exchange.opensStream || exchange.stream.resumeFrom !== undefined || !carriesRequest(exchange.rpc)) return undefined;
  return new AcceptedAnswer(exchange, body, log, hooks);
}

/**
 * The status of the host's head for a seller's answer sent on: the seller's `statusCode`, but
 * 200 when it is a 202 answering a POST that holds a request (`accepted`: {@link acceptedAnswer};
 * hostile trial 57, F1). Derived, not stored beside `accepted` (a re-read, L3: the two could
 * only agree). Reports nothing: the stage that writes the head calls `accepted.headWritten()`.
 */
export function hostStatusOf(res: { readonly statusCode: number; readonly accepted?: AcceptedAnswer | undefined }): number {
  return res.accepted === undefined ? res.statusCode : 200;
}
