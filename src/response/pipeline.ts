/**
 * The response pipeline, seller -> host: the ORDER of the stages is written here once
 * (ARCHITECTURE §2). Each stage lives in its own file.
 *
 *   0. wire          before any of this, on the seller's connection, before undici parses
 *                    the bytes (routing/wire-meter.ts): a response's wire bytes (1xx heads,
 *                    head, chunk framing and extensions, body) within 6 x max_response_bytes
 *                    + 64 KiB -> `raw_bytes` (observed_bytes the wire bytes); on a stream
 *                    without a total, its framing within 128 KiB + 5 x its body bytes -> a plain
 *                    end, `sse_wire_overhead` (sse-stage.ts); the connection closed either way
 *   1. status        5xx -> SERVICE_UNAVAILABLE `upstream_status`
 *   2. encoding      Content-Encoding parsed; an unknown coding, or more than one on a stream
 *                    without a total (exchange.ts maxStackedCodings) -> `unsupported_encoding`;
 *                    the body is then read through bounded decoders (decode.ts), raw and
 *                    decoded bytes both counted (body-source.ts); a coded answer loses the
 *                    seller's digests and ETag (headers.ts SELLER_BYTES_HEADERS)
 *   3. head size     the host's head over 16 KiB (MAX_HOST_HEAD_BYTES: the seller's lines
 *                    after the filter and Set-Cookie scoping, with the gateway's and Node's)
 *                    or over 99 header lines (MAX_HOST_HEAD_LINES, counted alike)
 *                    -> `upstream_headers_too_large` (head-size.ts), on a 2xx or 4xx (whose
 *                    headers pass); judged once an SSE answer to a DELETE is refused
 *   4. body kind     by Content-Type essence, never substring; a repeated Content-Type
 *                    with differing values -> `upstream_not_mcp` (equivalent ones, RFC 9110
 *                    §8.3.1, are one)
 *      - 2xx text/event-stream  -> sse-stage: event decode -> per-event + cumulative budget
 *                                  -> structure bounds -> rewrite -> encode; to a DELETE ->
 *                                  `upstream_not_mcp` (below)
 *      - 2xx to a GET, not SSE  -> `upstream_not_mcp` (MCP: SSE or 405; below)
 *      - 2xx to a DELETE, not SSE -> passed through as a 4xx is (below), whatever its
 *                                  Content-Type (none added: json-stage.ts sendUnlabelled):
 *                                  bounded, never judged as JSON-RPC (no host reads it)
 *      - 2xx application/json   -> json-stage: bounded buffer (raw bytes) -> structure bounds
 *                                  -> parse -> rewrite -> original bytes or re-serialized
 *      - a 202 (JSON or SSE) answering a POST that holds a request goes out as 200, its body as
 *                                  above, with a warning (accepted-answer.ts; MCP reserves 202
 *                                  for POSTs without a request; the SDK client drops its body)
 *      - 2xx, no Content-Type   -> passed through when empty (202 for a notification);
 *                                  to a POST without a request, a body that is no
 *                                  JSON-RPC message is dropped: 202, no body (ack-body.ts);
 *                                  any other body there -> `upstream_not_mcp`
 *      - other 2xx (HTML, ...)  -> SERVICE_UNAVAILABLE `upstream_not_mcp`; to a POST without
 *                                  a request, read and judged as with no Content-Type
 *      - 4xx                    -> passed through as it is, body bounded (a JSON body also by
 *                                  depth/nodes; none labelled when the seller sent no
 *                                  Content-Type); to a resumed request stream -> `upstream_status`
 *      - 1xx/3xx                -> SERVICE_UNAVAILABLE `upstream_not_mcp`
 *   A status outside 100-599 never gets here: the dispatcher refuses it as the head arrives,
 *   `upstream_not_mcp` too (routing/undefined-status.ts).
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { carriesRequest, hasCumulativeBound, isRequestStream, maxStackedCodings, offeredCodings, type Exchange } from '../exchange.js';
import { answerWithLocalError } from '../errors/local-reply.js';
import { bodyKind, repeatedContentType } from './content-type.js';
import { handleJsonBody, handlePassThroughBody, type UpstreamBody, type UpstreamResponse } from './json-stage.js';
import { acceptedAnswer } from './accepted-answer.js';
import { handleSseBody } from './sse-stage.js';
import { parseContentEncoding, releaseBody, type DecodeOptions } from './decode.js';
import { openBodySource } from './body-source.js';
import { retryAfterSeconds } from './retry-after.js';
import { dropSellerBytesHeaders } from './headers.js';
import { hostHeadOverLimit } from './head-size.js';
import { shownLocation } from '../observability/upstream-location.js';
import type { BeforeResponse } from '../mcp/discovery-size.js';

/** Slack over the response limit for the decoded bytes of a compressed SSE request stream (see above); >= DECODER_CHUNK_BYTES. */
export const SSE_DECODED_SLACK_BYTES = 64 * 1024;

/** decode.ts DecodeOptions for a coded 2xx answer to a request: an empty body is invalid. */
const EMPTY_IS_INVALID: DecodeOptions = Object.freeze({ emptyIsInvalid: true });

/**
 * How far a graceful shutdown is, for the open SSE streams (src/shutdown-streams.ts):
 * - `grace`: `shutdown_grace_ms` runs and a request (or a batch) is still in flight: every
 *   stream is left running.
 * - `no_requests`: the grace runs, and nothing but streams answering no request is left (the
 *   process would exit but for them): those end now.
 * - `final`: the grace is nearly over (src/shutdown-streams.ts shutdownAnswerMarginMs), a
 *   second signal came, or the process exits: every stream ends. A reload's end of a
 *   reconfigured agent's stream (routing/open-streams.ts) and an already-answered resume's
 *   own timer use it too.
 */
export type SseShutdownPhase = 'grace' | 'no_requests' | 'final';

/**
 * Ends a host's SSE stream at a graceful shutdown (response/sse-stage.ts), as `phase`
 * ({@link SseShutdownPhase}) allows. `tokensOutlive`: the resume tokens this process minted
 * verify after it exits, in its successor or another replica (a resume secret is configured:
 * `resume.secret` or `ADCP_GATEWAY_RESUME_SECRET`); false with the random per-process secret.
 * - A request's (a batch's) stream is left running until `final` (returns false): the seller's
 *   answer reaches the host on this process, as a JSON answer does. Then one that can be
 *   resumed (`tokensOutlive`, and an event id sent to the host, or one pending, which goes out
 *   then) ends plainly, so the client resumes with its last token on the successor; any other
 *   is answered `gateway_shutdown` (a hostile new user's trial 13, M1: a plain end sent the
 *   SDK client into resume refusals). Reported failures: a hostile trial 47, F1 (answered
 *   `gateway_shutdown` at the signal although the seller answered within the grace); a hostile
 *   operator's trial 49, finding 1 (with a configured secret, ended at the signal: on a
 *   same-port restart the client's resume met 503 `draining`, then a refused connection, and
 *   it gave up, its call unanswered).
 * - A stream answering no request (the standalone GET stream, a long-lived one, a POSTed
 *   notification's) is left running during `grace` and ends plainly at `no_requests` or
 *   `final`; with no id pending minted when the tokens die with the process. Reported failure
 *   (trial 49, finding 2): ended at the signal, its client reconnected into 503 `draining` and
 *   gave up for good.
 * `retryMs`: the config's `shutdown_sse_retry_ms` (a shutdown's call, app.ts `endStreams`): a
 * stream ended plainly gets the frame `retry: <ms>` just before its end, so the host's client
 * waits that long before it reconnects to the successor (response/shutdown-retry.ts; a hostile
 * operator's trial 53, F1); undefined or 0 (a reload's end, an already-answered resume's
 * timer): none.
 * Returns true when this call ended the stream; false when it is left running or was already
 * over (not yet out of `streams`): the callers count the streams ended (app.ts `endStreams`,
 * the `sse_streams_ended` of the shutdown's lines). Reported failure (review 34, item 4): an
 * already finished stream counted as ended, and a `nothing in flight` line could repeat.
 */
export type SseShutdownEnd = (tokensOutlive: boolean, phase: SseShutdownPhase, retryMs?: number) => boolean;

export interface PipelineHooks {
  /**
   * Called when an SSE stream to the host starts (the JSON response deadline stops applying).
   * `end` is what graceful shutdown calls (app.ts `endStreams`): see {@link SseShutdownEnd}.
   */
  onSseStart(end: SseShutdownEnd): void;
  /** Called once when that SSE stream is over, whatever ended it. */
  onSseEnd(): void;
  /**
   * While shutting down, whether this process's resume tokens outlive it (a configured
   * secret); undefined before (routing/draining.ts DrainState.tokensOutlive). Read when the
   * seller ends an SSE stream the shutdown's `end` has not looked at yet (one that started
   * after the signal): without it such a stream, its head, an event id and its end in one
   * packet, ended plainly into a token no process verifies (review 34, item 1:
   * test/regressions/stream-started-after-signal-ends-into-dead-token.test.ts).
   */
  shutdownTokensOutlive?(): boolean | undefined;
  /**
   * `count` (>= 1) events were dropped for `reason`, one after the other (sse-stage.ts `drop`):
   * a run of drops of one reason, added once the stage has taken its chunk, or at the
   * stream's end (sse-drop-metric.ts).
   */
  onSseEventDropped(reason: string, count: number): void;
  /** A seller's event id could not be turned into a resume token (sse-event-ids.ts `hostEventId`). */
  onSseEventIdNotTokenized(): void;
  /**
   * A seller's 202 answering a POST that holds a request went to the host as 200 (its head
   * written: accepted-answer.ts); once per exchange.
   */
  onSeller202Answer(): void;
  /**
   * True when {@link onResponseMessage} observes anything for this exchange (a discovery
   * request, `isDiscoveryRequest`): otherwise a stage may skip parsing a body it forwards
   * unchanged, and need not call it.
   */
  readonly wantsResponseMessage: boolean;
  /**
   * The seller's response to the exchange's request, as forwarded: the parsed message (after
   * any rewrite), `bytes`, every UTF-8 byte of the answer the host receives through it (the
   * JSON body; on SSE the stream through the response's event, the events before it
   * included), and on SSE `before`, what came before the response's event
   * (mcp/discovery-size.ts DiscoveryInput: the same as `probe` measures; hostile trial 57, F2).
   * For observation only (discovery sizes); must not throw or change anything.
   */
  onResponseMessage(message: unknown, bytes: number, before?: BeforeResponse): void;
}

export async function handleUpstreamResponse(
  exchange: Exchange,
  reply: FastifyReply,
  res: UpstreamBody,
  log: FastifyBaseLogger,
  hooks: PipelineHooks,
): Promise<void> {
  exchange.upstreamStatus = res.statusCode;
  // A redirect is never followed (upstream_not_mcp): where it points goes to the exchange line
  // (`upstream_location`), redacted and bounded (trial 50, finding 3). One range test otherwise.
  if (res.statusCode >= 300 && res.statusCode < 400) exchange.upstreamLocation = shownLocation(res.headers.location);
  if (exchange.finished) {
    releaseBody(res.stream);
    return;
  }
  const status = res.statusCode;
  const limitBytes = exchange.limits.max_response_bytes;
  const fail = (reason: 'upstream_status' | 'unsupported_encoding' | 'upstream_not_mcp'): void => {
    releaseBody(res.stream);
    // The seller's own `Retry-After` on the status it refused with (retry-after.ts).
    const retryAfterS = reason === 'upstream_status' ? retryAfterSeconds(res.headers['retry-after'], Date.now()) : undefined;
    answerWithLocalError(exchange, reply, { reason, limitBytes, observedBytes: 0, upstreamStatus: status, ...(retryAfterS !== undefined ? { retryAfterS } : {}) });
  };

  // A repeated Content-Type with differing values is no valid answer, whatever its status
  // (content-type.ts repeatedContentType; equivalent values, RFC 9110 §8.3.1, are one, and
  // the host gets the first: headers.ts), so it is judged first, before the status, the
  // coding and the body: a 5xx with differing lines was `upstream_status` where a 4xx or 3xx
  // was `upstream_not_mcp` (a new user's trial 6, Finding 5:
  // test/regressions/differing-repeated-content-type-on-5xx-upstream-status.test.ts). One
  // type check on the common path (a string).
  const contentType = res.headers['content-type'];
  if (Array.isArray(contentType) && repeatedContentType(contentType) === undefined) return fail('upstream_not_mcp');

  const requestStream = isRequestStream(exchange.rpc);
  if (status >= 500) return fail('upstream_status');
  // A resumed request stream the seller refuses (405, 404, ...) would leave the host's request
  // unanswered forever: answer its id instead (found by a new user: the SDK client hung).
  if (status >= 400 && requestStream && exchange.stream.resumeFrom !== undefined) return fail('upstream_status');
  const encoding = parseContentEncoding(res.headers['content-encoding']);
  // Only codings the gateway asked this agent for (`accept_encoding`, less `br` on a stream
  // without end: exchange.ts offeredCodings): anything else is refused, not decoded. On such
  // a stream, one coding at most (exchange.ts maxStackedCodings): it has no raw or decoded
  // total (below), so an intermediate layer was unbounded and its output seen by no count or
  // timer (`gzip, gzip` whose outer layer inflated endless empty stored blocks: a core pinned;
  // review 30, finding 1: test/regressions/get-stream-stacked-codings-unbounded-cpu.test.ts).
  if (!encoding.ok) return fail('unsupported_encoding');
  if (encoding.codings.length > 0) {
    if (encoding.codings.length > maxStackedCodings(exchange.rpc)) return fail('unsupported_encoding');
    const offered = offeredCodings(exchange.agent.accept_encoding, exchange.rpc);
    if (!encoding.codings.every((c) => offered.includes(c))) return fail('unsupported_encoding');
  }
  // A coded body reaches the host decoded: the seller's digests and ETag describe its coded
  // bytes (headers.ts SELLER_BYTES_HEADERS; trial 12, M4). One length test on an uncoded answer.
  if (encoding.codings.length > 0) dropSellerBytesHeaders(reply);

  const kind = bodyKind(contentType);
  const sse = kind === 'sse' && status >= 200 && status < 300;
  // A DELETE ends the session (MCP Streamable HTTP, Session Management: the client "SHOULD
  // send an HTTP DELETE ... to explicitly terminate the session"; the server answers it or
  // 405). The spec opens SSE streams only on a POST (a request's answer) and on the GET
  // that listens or resumes: a stream on a DELETE would carry messages for a session being
  // ended, has no request to end it and no host to read it (the SDK client cancels the
  // DELETE's body unread). Not MCP, so not forwarded: it was an unbounded stream (a new
  // user's trial, test/regressions/sse-notification-answer-unbounded.test.ts).
  if (sse && exchange.endsSession) return fail('upstream_not_mcp');
  // The head the host would get, the seller's lines as filtered and rewritten (Set-Cookie's
  // Path) with the gateway's and Node's: over what a host's HTTP client reads (16 KiB), the
  // host got a head it could not read (`fetch failed`) and the line said `ok` (a hostile new
  // user's trial 15, M1: head-size.ts); over 99 lines, Python's http.client raised `got more
  // than 100 headers` and Node's kept 2,000 of 2,507 (trial 42). Judged before the host's head
  // is written (SSE) and the body read (JSON, and the pass-through answers below); a local
  // error drops the seller's headers. Only where those pass (a 2xx, a 4xx): a 1xx or 3xx is
  // refused below, its headers dropped. Cost: two comparisons (head-size.ts hostHeadOverLimit).
  const overHead = hostHeadOverLimit(status, exchange.hostHeaderBytes, exchange.hostHeaderLines);
  if (overHead !== undefined && (status >= 400 || (status >= 200 && status < 300))) {
    releaseBody(res.stream);
    answerWithLocalError(exchange, reply, { reason: 'upstream_headers_too_large', ...overHead });
    return;
  }
  // Every non-SSE body is bounded raw and decoded by the response limit. SSE is bounded per
  // event and cumulatively per stream by its own stage, on the decoded bytes it parses (the
  // standalone GET stream and long-lived streams have no total: hasCumulativeBound). That
  // count sees nothing of compressed data that decodes to little or nothing (a flood of empty
  // deflate blocks, an outer layer inflating into one), so a bounded compressed stream is
  // also bounded where those bytes are: wire bytes at the limit, each decoding layer at the limit + SSE_DECODED_SLACK_BYTES, slack
  // that lets the cumulative bound trip first on real output (it counts the final layer's
  // chunks, which are at most DECODER_CHUNK_BYTES each). test/regressions/compressed-flood.test.ts
  // A stream without a total is opened with no raw or decoded limit: it has one coding at
  // most (above), whose output is what the stage parses, counted by sse_undelivered and seen
  // by the idle timer; its work per wire byte is one inflate's.
  // An empty body under a coding is no data in it where a body is needed: a 2xx answering a
  // request, 204 and 205 aside (no content by definition, RFC 9110 §15.3.5, §15.3.6):
  // upstream_encoding_invalid, not upstream_not_mcp (decode.ts DecodeOptions; a hostile trial
  // 26, L4 b: test/regressions/empty-coded-body-reported-not-mcp.test.ts). Elsewhere (a 202 to
  // a notification, a 4xx) an empty coded body is empty, as before; so is a 202's answering a
  // request: an empty 202 is `upstream_not_mcp` for its id, whatever its Content-Type or coding
  // (nothing to decode; accepted-answer.ts; hostile trial 59, F1:
  // test/regressions/seller-empty-202-sse-answer-sent-as-200.test.ts).
  const decodeOptions =
    encoding.codings.length > 0 && status >= 200 && status < 300 && status !== 202 && status !== 204 && status !== 205 && carriesRequest(exchange.rpc) ? EMPTY_IS_INVALID : undefined;
  const body = !sse
    ? openBodySource(res.stream, encoding.codings, limitBytes, limitBytes, decodeOptions)
    : hasCumulativeBound(exchange.rpc) && encoding.codings.length > 0
      ? openBodySource(res.stream, encoding.codings, limitBytes, limitBytes + SSE_DECODED_SLACK_BYTES, decodeOptions)
      : openBodySource(res.stream, encoding.codings, Infinity, Infinity, decodeOptions);
  exchange.bodySource = body;
  // A 202 answering a POST that holds a request goes out as 200 when its answer is sent on
  // (accepted-answer.ts: the MCP SDK client drops a 202's body; hostile trial 57, F1). Decided
  // here; the stage that writes the head reports it (`accepted.headWritten`).
  const accepted = sse || kind === 'json' ? acceptedAnswer(exchange, status, sse ? 'sse' : 'json', log, hooks) : undefined;
  const upstream: UpstreamResponse = { statusCode: status, headers: res.headers, body, accepted };
  if (status >= 200 && status < 300) {
    if (sse) return handleSseBody(exchange, reply, upstream, log, hooks);
    // A GET is answered with SSE or 405 (MCP Streamable HTTP, "Listening for Messages from the
    // Server": "The server MUST either return Content-Type: text/event-stream in response to
    // this HTTP GET, or else return HTTP 405"; the GET that resumes gets the stream's events):
    // any other 2xx is not MCP. A JSON body answering a resume would reach the host outside the
    // request's cumulative count (reported by a new user: 293 bytes after 161 of a 300-byte
    // limit); one answering the standalone GET may hold a response, which MCP forbids there
    // and a client would route to a pending call by its id (the SSE path drops one:
    // get_stream_response). Reported failure (a reviewer, 2026-12-03): a 200 JSON body holding
    // a response answered the standalone GET, passed through, logged ok
    // (test/regressions/get-answered-with-json-response.test.ts). A resume is a GET.
    if (exchange.opensStream || exchange.stream.resumeFrom !== undefined) return fail('upstream_not_mcp');
    // A DELETE ends the session and no MCP host reads its answer's body (the SDK client cancels
    // it unread): passed through as a 4xx is, whatever its Content-Type, never judged as a
    // JSON-RPC message (a carried defect: `text/plain` and HTML were refused upstream_not_mcp
    // where no Content-Type passed, `{"ok":true}` was refused where a JSON-RPC response passed:
    // test/regressions/delete-answer-text-plain-refused.test.ts). Its SSE is refused above.
    if (exchange.endsSession) return handlePassThroughBody(exchange, reply, upstream, { jsonBounds: kind === 'json' });
    if (kind === 'json') return handleJsonBody(exchange, reply, upstream, hooks);
    // No Content-Type: fine for an empty 202/204 answer to a notification or response; a body there is not MCP.
    // Any other type answering a POST without a request (`text/plain` `OK`, `Accepted`) likewise:
    // an empty body passes, an acknowledgement body is dropped, the host answered 202 with no body
    // (ack-body.ts: the MCP SDK client discards such a body; a new user's hostile trial 12, M2,
    // test/regressions/notification-ack-body-breaks-sdk-connect.test.ts). A request's host waits
    // for JSON or SSE: anything else is refused unread.
    if (kind === 'none' || !carriesRequest(exchange.rpc)) return handlePassThroughBody(exchange, reply, upstream, { emptyOnly: true });
    return fail('upstream_not_mcp');
  }
  if (status >= 400) return handlePassThroughBody(exchange, reply, upstream, { jsonBounds: kind === 'json' });
  return fail('upstream_not_mcp');
}
