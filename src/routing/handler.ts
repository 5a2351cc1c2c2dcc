/**
 * The `/agents/<agent>/mcp` handler: refuses what must be refused before any seller is
 * contacted, builds the exchange, forwards through @fastify/reply-from, and hands the
 * seller's answer to the response pipeline.
 */
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.js';
import { observedMs } from '../errors/elapsed.js';
import { agentKeyOf } from '../config/agent-url-key.js';
import { parseMaxResponseBytesHeader } from '../config/resolve.js';
import { createExchange, hasCumulativeBound, isRequestStream, offeredCodings, type Exchange } from '../exchange.js';
import { answerCancelledUnsent, answerStreamOver, answerWithLocalError, refuse, shownInMessage } from '../errors/local-reply.js';
import { GATEWAY_FINISHED, GatewayAbortError, findGatewayAbort } from '../errors/abort.js';
import { exchangeLogFields, plainLineWriter } from '../observability/logger.js';
import { exchangeLineLevel } from '../observability/exchange-level.js';
import { applyRequestHeaderPolicy, isResumableEventId } from '../request/headers.js';
import { createOwnVia, viaCarries } from '../request/via.js';
import { isRepeatedSessionId, notVisibleAsciiMessage, REPEATED_SESSION_ID_MESSAGE, sessionIdFault } from '../request/session-id-header.js';
import { mirroredHeaderProblem } from '../request/mirrored-headers.js';
import { answerHeadRefusal, headRefusal } from '../request/head-refusal.js';
import { isRepeatedLastEventId, REPEATED_LAST_EVENT_ID_MESSAGE } from '../request/last-event-id-header.js';
import { NO_BODY, peekRequest, refusalIdOf } from '../request/peek.js';
import { requestJsonBounds } from '../request/request-json-bounds.js';
import { withoutLeadingBom } from '../mcp/utf8-bom.js';
import { hasBatches, hostReadsStructuredContent, isRepeatedProtocolVersion, NO_BATCHES_SINCE, protocolVersionOf } from '../mcp/revision.js';
import { filterResponseHeaders } from '../response/headers.js';
import { measureHeaderLines } from '../response/head-size.js';
import { recordCounts } from '../response/body-source.js';
import { STREAM_WIRE_RULE, totalWireRule, wireBreach } from './wire-meter.js';
import { handleUpstreamResponse, type SseShutdownEnd } from '../response/pipeline.js';
import { sseRetryCeilingMs } from '../response/sse-encode.js';
import { awaitedFitsToken, RESUME_SIGNATURE_MESSAGE, ResumeMintError, type ResumeCodec, type ResumeState } from '../resume/token.js';
import type { ResumeTailLedger } from '../resume/tail-ledger.js';
import { resumedPastDeadline } from '../resume/resume-past-deadline.js';
import type { PreviousAgentUrls } from '../resume/previous-urls.js';
import { mergeQuery } from './query.js';
import { withUpstreamHooks, type UpstreamDispatcher, type UpstreamHooks } from './dispatcher.js';
import { isTransportFailure } from './upstream-failure.js';
import { answerUndefinedStatus, UndefinedStatusError } from './undefined-status.js';
import type { InFlightTable } from '../inflight-table.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { isDiscoveryRequest, type BeforeResponse } from '../mcp/discovery-size.js';
import { callKind, type AgentGuard, type HostHold } from '../admission/agent-guard.js';
import { hostLeftMidAnswer } from './answer-cut.js';
import { answerUnreached, connectionBytesWritten } from './unreached-answer.js';
import { resetHostConnection } from '../response/host-reset.js';
import { isResume, refuseDraining, type DrainState } from './draining.js';
import { refuseUnknownAgent } from './unrouted.js';
import type { PipelinedTurns } from './pipelined-turn.js';
import { InFlightRequests } from './in-flight-requests.js';
import { HostAnswerWaits } from './host-answer-waits.js';
import { answerCancelledResume, CancelledRequests } from './cancelled-requests.js';
import { cancelledRequestIdOf } from '../mcp/cancelled-id.js';
import type { OpenStream, OpenStreams } from './open-streams.js';
import { createTurnWaiter, queuedTurn, type QueuedAt } from './pipelined-wait.js';
import { awaitBackoffTurn } from './backoff-wait.js';
import { guardOutcome, limitsOf, type McpRequest } from './request-limits.js';
import { BATCH_METHOD, batchLevelsText, resumedCount, rpcOfResumedStream } from './resumed-stream.js';
import { internalError, onUpstreamError, upstreamFailureReason } from './upstream-errors.js';
import { observeDiscovery } from './discovery-warning.js';
import { acceptEncoding, namesCoding } from './request-codings.js';

export interface HandlerDeps {
  getConfig(): GatewayConfig;
  /**
   * Whether the gateway listens on a loopback address (`listen.host` at start-up:
   * src/request/browser-guard.ts `isLoopbackListenHost`): then `Host` is always checked.
   */
  loopbackListen: boolean;
  /** The listen address itself, when a loopback one the loopback names do not cover (browser-guard.ts ownListenHosts). */
  ownHosts: readonly string[];
  upstream: UpstreamDispatcher;
  resume: ResumeCodec;
  /**
   * The counts of bounded streams that ended past their last event token, by that token
   * (resume/tail-ledger.ts): a resume from one starts from the larger count.
   */
  resumeTails: ResumeTailLedger;
  /**
   * The urls each agent had before the reloads that moved it (resume/previous-urls.ts): a
   * standalone GET stream's token signed for one of them opens a fresh GET stream.
   */
  previousUrls: Pick<PreviousAgentUrls, 'of'>;
  /** The app's pino logger (the exchange line, discovery warnings, pipeline failures). */
  log: Logger;
  /** Open SSE streams to hosts, each with its exchange and the function a graceful shutdown or a reload ends it with (routing/open-streams.ts). */
  streams: OpenStreams;
  /**
   * Exchanges whose host answer is still open, each as its end function:
   * called with `true` (app.ts `cutOpenExchanges`, just before a shutdown's forced exit) it
   * ends the exchange as `shutdown_cut` and writes its line at once.
   */
  openExchanges: InFlightTable<OpenExchangeEnd>;
  /**
   * How many of `openExchanges` are SSE streams that answer no request (the standalone GET
   * stream, a long-lived one, a POSTed notification's or response's, an already-answered
   * resume's: exchange.ts isRequestStream false), counted from their stream's start to their
   * exchange's end. `openExchanges.size` less this is what a graceful shutdown waits for
   * (app.ts `requestsInFlight`, src/shutdown-streams.ts).
   */
  quietStreams: { count: number };
  metrics: GatewayMetrics;
  /** Set once the gateway shuts down: every request is then refused 503 `draining` (routing/draining.ts). */
  drain: DrainState;
  /** Requests pipelined behind another answer on their connection, waiting for their turn (routing/pipelined-turn.ts). */
  turns: PipelinedTurns;
  /** Per-agent backoff after bound breaches and buffered-bytes cap. */
  guard: AgentGuard;
  /**
   * Called once per exchange when the host's response is over, or when a shutdown cut it
   * first (`openExchanges`), for metrics. After the log line.
   * `hostStatus`: the HTTP status sent to the host, or null when no response head was sent
   * or none of the answer reached the host's connection (unreached-answer.ts).
   */
  onExchangeEnd?: (exchange: Exchange, hostStatus: number | null) => void;
}

/**
 * Ends an exchange's record once: its exchange line, then the `onExchangeEnd` listeners.
 * No argument when the host's answer closes (Node's `close` event passes none); `true` when a
 * shutdown's forced exit cuts the exchange first (its connection is left to the exit).
 */
export type OpenExchangeEnd = (cutByShutdown?: true) => void;

export function createMcpHandler(deps: HandlerDeps) {
  const logLine = plainLineWriter(deps.log);
  const loopbackListen = deps.loopbackListen;
  const ownHosts = deps.ownHosts;
  // The `retry:` ceiling of every stream: from the resume token lifetime, once (the codec,
  // its `ttlMs` with it, lives as long as the app: `resume` takes effect at start-up only).
  const sseRetryMaxMs = sseRetryCeilingMs(deps.resume.ttlMs);
  const drain = deps.drain;
  // This app's Via pseudonym and entries (request/via.ts): random, made once, kept across reloads.
  const ownVia = createOwnVia();
  // The requests in flight per seller url (the agent's `url`) and session: a POSTed request
  // reusing an id held there is refused, and a host's `notifications/cancelled` marks the one
  // it names (routing/in-flight-requests.ts).
  const inFlight = new InFlightRequests();
  // The cancellations of requests, per seller url, session and id, for as long as their resume
  // tokens are honoured (the codec's ttl, fixed at start-up): a resume of one is answered 405,
  // not sent (routing/cancelled-requests.ts; hostile trial 55, F1).
  const cancellations = new CancelledRequests(deps.resume.ttlMs);
  // The server-to-client requests (elicitation/create, ...) SSE streams carry, per seller url and
  // session, until the host POSTs their answers: those streams' idle clocks are paused meanwhile
  // (routing/host-answer-waits.ts; hostile trial 57, F3).
  const hostAnswers = new HostAnswerWaits();

  // A request pipelined behind another answer on its connection waits for its turn there,
  // then is processed by `mcpHandler` (routing/pipelined-wait.ts).
  const waitForTurn = createTurnWaiter(deps.turns, inFlight, (request, reply, queuedAt) => mcpHandler(request, reply, queuedAt));

  // Not `async`, and nothing returned for a request forwarded at once (nearly all): the
  // handler has sent or will send the reply itself (Fastify's callback style, as for any
  // synchronous handler that calls `reply.send`). Returning the reply made Fastify await it
  // through `reply.then`, which watches the response with `stream.finished` (listeners on
  // finish, end, error and close added and removed per request), and an async function
  // added a promise and a thenable job on top (issue 5, 1 KiB results). A request that waits
  // for its turn returns a promise of the reply: Fastify would answer a promise of nothing
  // itself, with an empty body.
  // `queuedAt`: given when the request waited for its turn on its connection (waitForTurn),
  // the time it reached the handler first (on both clocks: QueuedAt).
  const mcpHandler = function mcpHandler(request: McpRequest, reply: FastifyReply, queuedAt?: QueuedAt): FastifyReply | Promise<FastifyReply | undefined> | undefined {
    const config = deps.getConfig();
    // A POST's leading UTF-8 BOM is ignored (RFC 8259 §8.1 lets a parser): the body is read,
    // refused and forwarded without it (mcp/utf8-bom.ts withoutLeadingBom). A DELETE's body
    // (Fastify reads one; a GET's it never reads) is no message: never judged, never
    // forwarded (`forward` below), its size on the exchange line.
    const sent = Buffer.isBuffer(request.body) ? request.body : undefined;
    const body = sent !== undefined && request.method === 'POST' ? withoutLeadingBom(sent) : sent;
    // Shutting down: nothing more goes to a seller (one flag read on the normal path), but a
    // resume (a GET with `Last-Event-ID`), served as usual under the drain's rules (routing/draining.ts).
    if (drain.draining && !isResume(request)) return refuseDraining(reply, request.method, body);
    // Refused from the head (request/head-refusal.ts, one function with `Expect: 100-continue`
    // in app.ts): a browser's request (Origin, Sec-Fetch-Site), a Host the gateway does not
    // serve, several Host fields, or none on HTTP/1.1 to a configured agent; each id null.
    const agent = config.agents.get(request.params.agent);
    const refusedByHead = headRefusal(request.raw, config, agent !== undefined, loopbackListen, ownHosts);
    if (refusedByHead !== undefined) return answerHeadRefusal(reply, refusedByHead, false);
    if (!agent) {
      return refuseUnknownAgent(reply, request.params.agent, refusalIdOf(request.method, body));
    }
    // A request whose answer is queued behind another on its connection (HTTP/1.1 pipelining:
    // no socket yet) is processed from here only at its turn, once every answer ahead of it
    // was written (routing/pipelined-turn.ts; the checks above run again then), never when an
    // answer ahead of it closes the connection (RFC 9112 §9.6: closing-answers.ts). One whose
    // connection Node has ended (after a `close` answer) is not processed. Reported failures:
    // test/regressions/pipelined-answers-unbounded-memory.test.ts,
    // pipelined-behind-closing-refusal-forwarded.test.ts. Any other request pays one property
    // read (`writableEnded`).
    if (queuedAt === undefined) {
      const connection = reply.raw.socket;
      if (connection === null) return waitForTurn(request, reply, body, agent);
      if (connection.writableEnded) {
        reply.hijack();
        return undefined;
      }
    }
    let rpc = NO_BODY;
    const versionHeader = request.headers['mcp-protocol-version'];
    const post = request.method === 'POST';
    if (post) {
      if (!body || body.length === 0) return refuse(reply, 'parse_error', null, 'Parse error: the request body is empty.');
      // A compressed body cannot be read (nor its id): refused, not mistaken for bad JSON. The
      // header is read as a seller's is (response/decode.ts parseContentEncoding): empty list
      // elements and `identity` are no coding, so `Content-Encoding: ` (empty) or
      // `identity, identity` is forwarded as `identity` always was (a hostile trial 26, L3:
      // test/regressions/empty-request-content-encoding-refused.test.ts).
      const coding = request.headers['content-encoding'];
      if (coding !== undefined && namesCoding(coding)) {
        reply.header('accept-encoding', 'identity');
        return refuse(reply, 'unsupported_content_encoding', null, `Unsupported Content-Encoding "${shownInMessage(coding)}" on the request: send the JSON body uncompressed.`);
      }
      // The bytes as sent, a leading BOM included: what a Content-Length declares, so the check
      // before the body is read (request/agent-body-limit.ts) and this one agree (a hostile
      // trial 20, H1: with the BOM left out, a Content-Length 1-3 bytes over was waited for).
      const sentBytes = sent!.length;
      if (sentBytes > agent.max_request_bytes) {
        // The body was read (under a larger bound a reload has since lowered: one pipelined
        // behind another answer, or read as the reload came): refused for its id, as the other
        // refusals of a read request are; the peek made as it began to wait, else the id read
        // alone, bounded (peek.ts requestIdOf). Before, id null (hostile trial 59, I3:
        // test/regressions/held-request-over-lowered-limit-refused-id-null.test.ts).
        const held = queuedAt?.peeked?.result;
        const id = held === undefined ? refusalIdOf(request.method, body) : held.ok ? held.peek : held;
        return refuse(reply, 'request_too_large', id, `Request body of ${sentBytes} bytes is over this agent's max_request_bytes (${agent.max_request_bytes}).`, undefined, {
          limit_bytes: agent.max_request_bytes,
          observed_bytes: sentBytes,
        });
      }
      // The structure bounds first, then the JSON-RPC facts (request/peek.ts): a tools/call's
      // its tool's max_json_depth / max_json_nodes, any other body the agent's
      // (request/request-json-bounds.ts; a hostile trial 22, F2).
      // Peeked already when it began to wait for its turn under this same agent config (waitingEntry).
      const peeked = queuedAt?.peeked;
      const peek = peeked !== undefined && peeked.agent === agent ? peeked.result : peekRequest(body, requestJsonBounds(agent));
      if (!peek.ok) return refuse(reply, peek.kind, peek, peek.message);
      rpc = peek.peek;
      // MCP removed batches in 2025-06-18: a batch from a host on that revision or later is
      // no MCP message (a new user's trial: such batches were forwarded;
      // test/regressions/batch-on-revision-without-batches.test.ts). The version is a
      // revision date here (hasBatches), so quoting it is safe.
      if (rpc.kind === 'batch') {
        const version = protocolVersionOf(versionHeader);
        if (!hasBatches(version)) {
          return refuse(reply, 'invalid_request', null, `Invalid Request: MCP ${version} has no JSON-RPC batches (removed in ${NO_BATCHES_SINCE}): send each message in its own request.`);
        }
        // More messages than the agent takes in one batch: refused before anything is sent, so
        // the errors the gateway mints for a batch (one per request) are at most that many (a
        // hostile new-user trial 14, M1: 12,000 tools/call got a 13.5 MB answer of them;
        // test/regressions/batch-minted-errors-unbounded.test.ts).
        const messages = rpc.batchMessages ?? 0;
        if (messages > agent.max_batch_messages) {
          return refuse(
            reply,
            'batch_too_large',
            null,
            `Invalid Request: the JSON-RPC batch holds ${messages} messages, over this agent's max_batch_messages (${agent.max_batch_messages}): send at most ${agent.max_batch_messages} per batch.`,
            undefined,
            { limit_messages: agent.max_batch_messages, observed_messages: messages },
          );
        }
      }
    }

    // Been through this gateway already (its Via carries our entry): an agent url leads back to
    // the gateway (request/via.ts). Refused for the request's id, never forwarded: each hop was
    // one more socket and exchange line until connections failed (a hostile new user's trial 10,
    // F4; test/regressions/agent-url-loops-to-gateway.test.ts). One header read per request.
    const via = request.headers.via;
    if (via !== undefined && viaCarries(via, ownVia.pseudonym)) {
      return refuse(
        reply,
        'request_loop',
        rpc,
        "Request loop: this request has already passed through this gateway (its Via header carries the gateway's own entry), so an agent's url leads back to the gateway, directly or through a DNS name, a proxy or a port forward. It was not forwarded again: point that agent's url at the seller's MCP endpoint.",
      );
    }
    // Two MCP-Protocol-Version fields (Node joins them "a, b"): refused as two
    // X-Max-Response-Bytes fields are, for the request's id (revision.ts isRepeatedProtocolVersion;
    // a batch sent so was forwarded as a 2025-03-26 host's before).
    if (isRepeatedProtocolVersion(versionHeader)) {
      return refuse(reply, 'invalid_request', rpc, 'Invalid MCP-Protocol-Version header: MCP-Protocol-Version must be sent at most once, with one revision (e.g. 2025-06-18)');
    }
    // Mcp-Session-Id sent twice, or as a list (`a, b`): refused the same way, never forwarded
    // as Node's join of the lines, which names no session (request/session-id-header.ts;
    // hostile trial 43: the seller answered 404 "Session not found"). So is one no server can
    // have issued: empty, or with a character outside MCP's 0x21-0x7E (a space, a tab, obs-text).
    const sessionHeader = request.headers['mcp-session-id'];
    if (isRepeatedSessionId(request.raw, sessionHeader)) return refuse(reply, 'invalid_request', rpc, REPEATED_SESSION_ID_MESSAGE);
    const sessionFault = sessionIdFault(sessionHeader);
    if (sessionFault !== undefined) return refuse(reply, 'invalid_request', rpc, notVisibleAsciiMessage(sessionFault));
    // The MCP session request ids are scoped to (routing/in-flight-requests.ts), a resume token is
    // bound to and verified against (resume/token.ts).
    const session = typeof sessionHeader === 'string' ? sessionHeader : undefined;
    // MCP 2026-07-28's Mcp-Method / Mcp-Name naming another method or tool than the body the
    // gateway read its limits from: refused for the request's id (request/mirrored-headers.ts).
    const mirrored = post ? mirroredHeaderProblem(request.headers, rpc) : undefined;
    if (mirrored !== undefined) return refuse(reply, 'invalid_request', rpc, mirrored);
    const callLimit = parseMaxResponseBytesHeader(request.headers['x-max-response-bytes']);
    if (!callLimit.ok) return refuse(reply, 'invalid_request', rpc, `Invalid X-Max-Response-Bytes header: ${callLimit.message}`);

    // A Last-Event-ID is one of our resume tokens or nothing: a raw seller id would reset the count (ARCHITECTURE §4).
    // Only a GET resumes a stream (MCP Streamable HTTP, "Resumability and Redelivery"): on a
    // POST the header is dropped, neither verified nor forwarded (a new user's POST carrying an
    // old token had that stream's count charged to a new request:
    // test/regressions/sse-resume-method-and-body.test.ts).
    let resumed: ResumeState | undefined;
    /** The token resumed from, as verified ('' when none). */
    let resumedToken = '';
    /** A standalone GET stream's resume from a url a reload moved the agent from: served as a fresh GET stream. */
    let resumeUrlMoved = false;
    const lastEventId = request.method === 'GET' ? request.headers['last-event-id'] : undefined;
    if (lastEventId !== undefined) {
      // Sent more than once: its own message (request/last-event-id-header.ts; hostile trial 54, F5b).
      if (isRepeatedLastEventId(request.raw, lastEventId)) return refuse(reply, 'resume_token_invalid', rpc, REPEATED_LAST_EVENT_ID_MESSAGE);
      resumedToken = Array.isArray(lastEventId) ? lastEventId.join(',') : lastEventId;
      // Verified against the agent's url in force: a token from before a reload that changed
      // it is refused (resume/token.ts; a hostile new user's trial 10, F7), except the
      // standalone GET stream's from a url the agent had (resume/previous-urls.ts): that
      // stream answers no request, so the host gets a fresh one from the new seller, without
      // the old seller's event id (hostile trial 36, F2: the MCP SDK client stopped its GET
      // stream after two refusals). A request's stream cannot go on at another seller: refused.
      // Bound to the session its stream was opened in (resume/token.ts `h`; hostile trial 54, F6).
      const verified = deps.resume.verify(resumedToken, agent.name, agent.url, deps.previousUrls.of(agent.name), session);
      if (!verified.ok) return refuse(reply, verified.reason, rpc, verified.message);
      const resumedRpc = rpcOfResumedStream(verified.state);
      if (verified.sellerMoved === true) {
        if (resumedRpc.kind !== 'none') return refuse(reply, 'resume_token_invalid', rpc, RESUME_SIGNATURE_MESSAGE);
        resumeUrlMoved = true;
      } else {
        resumed = verified.state;
        rpc = resumedRpc;
      }
    }

    // A resumed stream keeps the response limit it started with, from its token, as is (a
    // reload that lowered the agent's since does not apply to it: hostile trial 24, F2).
    const limits = resumed ? limitsOf(agent, rpc, resumed.limitBytes, 'token') : limitsOf(agent, rpc, callLimit.value);
    const protocolVersion = resumed ? resumed.protocolVersion : protocolVersionOf(versionHeader);
    // Tokens of a stream with the cumulative bound carry its count (0 on the standalone GET
    // stream, which counts nothing); a stream answering no request says so (resume/token.ts).
    const bounded = hasCumulativeBound(rpc);
    const stream = {
      startedAt: resumed ? resumed.streamStartedAt : Date.now(),
      usedBytes: resumed ? resumedCount(resumed, resumedToken, bounded, deps.resumeTails) : 0,
      resumeFrom: resumed?.upstreamId,
      resumeToken: resumed ? resumedToken : undefined,
    };
    // A batch's tokens carry the levels its limits came from (batchLevelsText); made for batches only.
    const batchLevels = rpc.kind === 'batch' ? batchLevelsText(agent, rpc.batchToolNames) : undefined;
    const answersNoRequest = rpc.kind === 'notification';
    // The bytes of a DELETE's body, which is not forwarded (undefined for none: the common case).
    const droppedBodyBytes = !post && body !== undefined && body.length > 0 ? body.length : undefined;
    // Tokens are signed for the url of the seller this stream came from (`agent` is the config
    // the exchange started under), so they resume only against it, and bound to the request's
    // session, if any, so they resume only in it (resume/token.ts); the session's hash is
    // computed once, at the stream's first token, not for each event (mintFor), and mintFor
    // itself is called at that token: most exchanges (JSON answers) mint none.
    let mintToken: ReturnType<ResumeCodec['mintFor']> | undefined;
    const exchange = createExchange({
      agent,
      rpc,
      limits,
      protocolVersion,
      normalize: limits.dedupe_text !== 'off' && hostReadsStructuredContent(protocolVersion),
      stream,
      guard: deps.guard,
      endsSession: request.method === 'DELETE',
      requestBodyDroppedBytes: droppedBodyBytes,
      opensStream: request.method === 'GET',
      resumeUrlMoved,
      session,
      mintEventId: (upstreamId, usedBytes, final, awaited) => {
        // An id the seller could not get back exactly in a Last-Event-ID header is not made a token.
        if (!isResumableEventId(upstreamId)) return undefined;
        const state = {
          upstreamId,
          agent: agent.name,
          rpcId: rpc.id,
          ...(rpc.idText !== undefined ? { rpcIdText: rpc.idText } : {}),
          method: rpc.kind === 'batch' ? BATCH_METHOD : rpc.method,
          toolName: rpc.kind === 'batch' ? batchLevels : rpc.toolName,
          ...(answersNoRequest ? { answersNoRequest } : {}),
          ...(final ? { final } : {}),
          usedBytes: bounded ? usedBytes : 0,
          limitBytes: limits.max_response_bytes,
          protocolVersion,
          streamStartedAt: stream.startedAt,
        };
        // A batch's requests still awaited ride along when they fit (resume/token.ts `w`); a
        // token they would take over its length goes without them, as before.
        if (awaited !== undefined && !final && awaitedFitsToken(awaited)) {
          try {
            return (mintToken ??= deps.resume.mintFor(agent.url, session))({ ...state, awaited });
          } catch {
            // Minted below without them.
          }
        }
        try {
          return (mintToken ??= deps.resume.mintFor(agent.url, session))(state);
        } catch (err) {
          exchange.tokenRefusal = err instanceof ResumeMintError ? { code: err.code, message: err.message, state } : { code: 'error', message: String(err), state };
          return undefined;
        }
      },
      // Where the stream notes its count at its end, when the host got bytes after its last event token (sse-event-ids.ts noteTail).
      resumeTails: bounded ? deps.resumeTails : undefined,
      // In a session, a stream's server requests pause idle clocks until the host's answers (host-answer-waits.ts).
      hostAnswers: session !== undefined ? hostAnswers : undefined,
      sseRetryMaxMs,
      // A request that waited for its turn: its duration runs from its arrival, as its deadline does.
      startedAt: queuedAt?.hr,
    });

    // A request whose id is in flight in its seller url and session (or a batch holding one,
    // or one id twice) is refused, not sent: MCP has a request ID never reused within a
    // session, and the seller's transport, mapping responses by id, would answer the second
    // and leave the first without an answer (routing/in-flight-requests.ts; hostile trial 54,
    // F4). Otherwise a request or batch in a session is registered until `end`, whatever ends
    // the exchange (nothing returns between here and `end`'s registration below, and nothing
    // is admitted yet): its ids held, and a single request's open to a host's cancellation.
    // A resumed stream (a GET with Last-Event-ID) continues a request: never refused, it holds
    // no id, and a single request's may be cancelled.
    const inFlightSlot = inFlight.open(exchange);
    if (typeof inFlightSlot !== 'number') return refuse(reply, 'invalid_request', rpc, inFlightSlot.refusal);
    // Cancelled while it waited for its turn on its connection (registered then: waitForTurn):
    // never sent, answered below once its exchange's end is in place (hostile trial 55, F2).
    if (queuedAt?.cancelled === true && rpc.kind === 'request') exchange.cancelAccepted = true;
    // A request to an agent that backs off waits its turn (agent-guard.ts); a resumed stream,
    // the standalone GET stream and notifications are never held back (a resumed request's
    // stream is admitted as it is sent: `forward` below).
    const arrivedAt = queuedAt?.ms ?? performance.now();
    // A request that waited for its turn on its connection is not sent when too little of its
    // deadline is left to finish within it, or when held at its turn past its time for a
    // cancellation's answer (as a backoff turn granted too late: in-flight-requests.ts
    // turnVerdict); otherwise its backoff wait may take what is left.
    const { maxWaitMs, turn } = queuedTurn(queuedAt, limits.response_deadline_ms, performance.now());
    const lateTurn = turn !== 'send';
    const kind = callKind(rpc.method, rpc.toolName, rpc.kind === 'batch');
    const answersRequest = rpc.kind === 'request' || rpc.kind === 'batch';
    const gate = !lateTurn && !exchange.cancelled && post && answersRequest ? deps.guard.admit(agent.name, kind, agent.guard, maxWaitMs) : undefined;
    const pending = gate !== undefined && 'admitted' in gate ? gate : undefined;
    let admission = gate !== undefined && !('admitted' in gate) ? gate : undefined;
    // Whether a byte bound broken may be under a limit lowered below the configured one, which
    // does not count for the backoff (guardOutcome): the host's X-Max-Response-Bytes, or a
    // resumed stream's limit from its token (its POST's, that header included).
    const limitMayBeLowered = resumed !== undefined || callLimit.value !== undefined;
    let deadline: NodeJS.Timeout | undefined = undefined; // set once admitted
    /** What the ended answer holds, not yet taken by the host's socket, counted for its agent until `end` (agent-guard.ts HostHold). */
    let hostHold: HostHold | undefined = undefined;
    // Set when undici starts writing the request: the connection (DNS, TCP, TLS) is up, so
    // from here on the seller may have received the request (undici calls onRequestStart
    // from writeH1, on a connected socket; a connect failure never reaches it).
    let requestStarted = false;
    // Started and not yet ended for undici: only then can an abort do anything (undici ignores
    // an abort of a completed or errored request), so only then is an abort reason built.
    let upstreamInFlight = false;
    // Given to the dispatcher with the request's headers (rewriteRequestHeaders below).
    const upstreamHooks: UpstreamHooks = {
      onStart(abort) {
        requestStarted = true;
        upstreamInFlight = true;
        exchange.abortUpstream = abort;
        if (exchange.finished) abort(GATEWAY_FINISHED);
      },
      onEnd() {
        upstreamInFlight = false;
      },
      // A failure before the response head, given here rather than to reply-from (which
      // would log it again: dispatcher.ts). Only a cause the exchange line cannot name is
      // logged, once; a transport failure's reason says it all (upstream-failure.ts).
      onFailure(error) {
        // The seller answered, with a status outside 100-599: not a failure to log (undefined-status.ts).
        if (error instanceof UndefinedStatusError) return answerUndefinedStatus(exchange, reply, error.status);
        // The wire meter's abort before the head (1xx heads past the bound: wire-meter.ts): a
        // bound broken, answered as such, no failure to log.
        const wire = wireBreach(error, exchange.limits.max_response_bytes);
        if (wire !== undefined) {
          if (!exchange.finished) answerWithLocalError(exchange, reply, wire);
          return;
        }
        if (!exchange.finished && findGatewayAbort(error) === undefined && !isTransportFailure(error)) {
          deps.log.warn(
            { err: error, agent: agent.name, reason: upstreamFailureReason(error, requestStarted) },
            'upstream request failed with an unexpected error',
          );
        }
        onUpstreamError(exchange, reply, error, requestStarted);
      },
      // The connections of the agent's origin and TLS settings (upstream-pools.ts; a new
      // user's trial 9, F2): mapped when its config was applied, one WeakMap lookup here.
      pool: deps.upstream.poolFor(agent),
      // Wire bytes per response (wire-meter.ts; review 37, F1): 6 x the limit + 64 KiB where
      // the answer has a total; on a stream without one, framing within 128 KiB + 5 x its body bytes.
      wire: bounded ? totalWireRule(limits.max_response_bytes) : STREAM_WIRE_RULE,
    };
    // What the host's connection had been given to send before this answer (the answers ahead
    // of it on the connection): `end` judges from it whether any of this answer went out.
    const hostBytesBefore = connectionBytesWritten(request.raw);
    // One function for the close of the host's answer and for a shutdown's cut, whichever
    // comes first: an exchange the forced exit cut wrote no line at all (a new user's trial,
    // test/regressions/shutdown-grace-cut-exchange-logged.test.ts).
    /**
     * Counted in `deps.quietStreams` (a stream answering no request: set once, where it
     * starts, while the exchange is open), until `end`; `ended` once `end` ran, so a stream
     * whose head comes after its host left is not counted.
     */
    let quiet = false;
    let ended = false;
    /** A forwarded `notifications/cancelled`'s: settles it with whether the seller answered it 2xx (below). */
    let settleCancellation: ((accepted: boolean) => void) | undefined;
    const end: OpenExchangeEnd = (cutByShutdown) => {
      if (!deps.openExchanges.remove(openSlot, end)) return; // ended already
      ended = true;
      inFlight.close(inFlightSlot, exchange);
      // A cancellation whose exchange ends without a 2xx head from the seller: refused.
      settleCancellation?.(false);
      // A request the host cancelled, the seller accepting it: remembered from its end, after
      // which its stream mints no more tokens, so a resume from any of them is known for as
      // long as it is honoured (one ending before the seller's answer: remembered at that answer).
      // A resumed stream's (remembered when cancelled) only renewed: a newer call may hold its id now (review of trial 56, F3).
      if (exchange.cancelAccepted && session !== undefined) {
        if (exchange.opensStream) cancellations.renewRequest(agentKeyOf(agent), session, exchange.rpc);
        else cancellations.rememberRequest(agentKeyOf(agent), session, exchange.rpc);
      }
      if (quiet) deps.quietStreams.count--;
      clearTimeout(deadline);
      // A body reader still waiting for buffer room (a deadline, a host that left) stops now.
      exchange.bufferLease?.release();
      hostHold?.release();
      pending?.cancel();
      // Settled before this end: the gateway had ended the answer (sent, or being written).
      const settled = exchange.finished;
      if (cutByShutdown === true) {
        // Even a settled answer: the host gets none of what is still unwritten, its reason (a minted error's) stays.
        exchange.finished = true;
        exchange.outcome = 'shutdown_cut';
      } else if (!settled) {
        exchange.finished = true;
        // The standalone GET stream (no request) has no end of its own: the host closing it
        // is how it ends, not an abort (a new user's trial: every SDK client's close counted
        // as host_aborted; test/regressions/get-stream-closed-by-host-not-aborted.test.ts).
        exchange.outcome = exchange.rpc.kind === 'none' && exchange.sseStarted ? 'ok' : 'host_aborted';
      }
      // The line's level follows the outcome (exchange-level.ts), taken before the host's
      // leaving can make it `host_aborted`: a minted error the host never got stays a failure.
      const level = exchangeLineLevel(exchange.outcome, exchange.reason);
      // A settled answer the host left before Node had written it all (answer-cut.ts).
      const leftMidAnswer = settled && hostLeftMidAnswer(exchange.outcome, request.raw, reply.raw);
      // The seller's answer counts for its agent's backoff as what it was, not as the host's leaving (as in `onDeadline`).
      if (admission !== undefined) deps.guard.finish(admission, guardOutcome(exchange, limitMayBeLowered));
      if (leftMidAnswer) exchange.outcome = 'host_aborted';
      // No byte of the answer reached the host's connection (it had ended, on the host's FIN,
      // or closed before the answer's head: unreached-answer.ts): whatever the gateway made of
      // it (a forwarded head, a minted error), the host left before any of it. Its reason (a
      // minted error's) stays, as on a shutdown's cut. Hostile trial 43, F1.
      const unreached = cutByShutdown !== true && answerUnreached(request.raw, reply.raw, hostBytesBefore);
      if (unreached) {
        exchange.outcome = 'host_aborted';
        exchange.bytesToHost = 0;
      }
      // On a cut the exit closes the upstream connection: an abort now would only run its callbacks.
      if (upstreamInFlight && cutByShutdown !== true) exchange.abortUpstream(new GatewayAbortError({ reason: 'host_aborted' }));
      // What was read of the seller's body so far: a read still waiting (a deadline, a host that
      // left) has not recorded its counts yet.
      if (exchange.bodySource !== undefined) recordCounts(exchange, exchange.bodySource);
      // null when no response head went out (the host went away first): `statusCode` would say
      // 200; `headersSent` says only that the head was made, not that it reached the host.
      const hostStatus = reply.raw.headersSent && !unreached ? reply.raw.statusCode : null;
      // Its fields are built only when the line is written (not at `silent`, e.g. `logger: false`).
      if (deps.log.isLevelEnabled(level)) logLine(level, exchangeLogFields(exchange, hostStatus, request.method), 'exchange');
      deps.onExchangeEnd?.(exchange, hostStatus);
    };
    const openSlot = deps.openExchanges.add(end);
    // `on`, not `once`: a response emits 'close' once, and `once` costs a wrapper and a removal per request.
    // Its response has the connection (a pipelined request is processed at its turn only), so
    // Node emits its 'close' however the connection ends.
    reply.raw.on('close', end);

    /** Sends the admitted request to the seller (reply-from), its answer to the response pipeline. */
    const forward = (): FastifyReply => {
      // A new request with an id in its session, sent now: a cancellation remembered for that id
      // named an earlier call, which is over; this call's resumes go to the seller
      // (routing/cancelled-requests.ts forget; hostile trial 56, F3). Here, after every refusal
      // that leaves it unsent (cancelled, pipeline_wait, agent_backoff): a request never sent
      // has no resume, and the earlier call's resumes still get 405.
      if (session !== undefined && !exchange.opensStream && rpc.kind === 'request') cancellations.forget(agentKeyOf(agent), session, rpc);
      // Its answer is shed rather than held when it waits for buffer room while its kind backs
      // off (agent-guard.ts, load shedding); never a probe: its outcome decides the backoff.
      if (admission !== undefined && !admission.probe) exchange.shedKind = admission.kind;

      // The JSON response deadline runs from the host's request (a backoff wait included) to
      // the last byte; an SSE stream swaps it for its own timers. In whole milliseconds, up
      // (timers fire no sooner anyway): Node keeps one timer list per distinct duration, and a
      // fractional duration, different for nearly every request, made and dropped a list (a
      // priority-queue insert and removal) per request (issue 5).
      //
      // The same timer, and the same function, then bound the host taking an answer the
      // gateway has ended (`settled` below): the rest of the deadline for a JSON answer,
      // sse_idle_timeout_ms from the end for an SSE stream. A host that has not taken it all
      // by then gets its connection destroyed, and the exchange ends as `host_not_reading`.
      // Without this, an answer Node could not write straight into the socket (the host not
      // reading; up to max_response_bytes held) never finished: its 'close' never came, so
      // the exchange wrote no line, was never counted, and held its connection and bytes for
      // good (test/regressions/host-never-reads-the-answer.test.ts).
      const onDeadline = (): void => {
        if (!exchange.finished) {
          answerWithLocalError(exchange, reply, { reason: 'deadline_exceeded', limitMs: limits.response_deadline_ms, observedMs: observedMs(performance.now() - arrivedAt, limits.response_deadline_ms) });
          return;
        }
        const raw = reply.raw;
        // Taken whole, or already closing (its 'close' ends the exchange as it is).
        if (raw.writableFinished || raw.destroyed) return;
        // The seller's answer counts for its agent's backoff as what it was (guardOutcome),
        // not as the host's stall: finished now, before the outcome is the host's.
        if (admission !== undefined) {
          deps.guard.finish(admission, guardOutcome(exchange, limitMayBeLowered));
          admission = undefined;
        }
        exchange.outcome = 'local_error';
        exchange.reason = 'host_not_reading';
        // Its 'close' writes the exchange line (`end`); a reset drops what the kernel holds for it (host-reset.ts).
        resetHostConnection(raw);
      };
      deadline = setTimeout(onDeadline, Math.max(0, Math.ceil(limits.response_deadline_ms - (performance.now() - arrivedAt))));

      const log = deps.log;
      // One object shape for every request (no conditional spread). A POST's body goes out as
      // its bytes (without a leading BOM: `body` above) with its Content-Type: left to
      // reply-from, a Buffer body with a JSON type was re-encoded as `JSON.stringify` of the
      // Buffer (`{"type":"Buffer",...}`: a new user's trial,
      // test/regressions/delete-body-and-connection-headers.test.ts). A GET and a DELETE go
      // without a body (`null`: @fastify/reply-from treats `undefined` as absent and then
      // sends the request's own body, a DELETE's), and without the host's headers describing
      // one (request/headers.ts BODY_HEADERS). A DELETE's body was forwarded as sent, and a
      // seller that routes on the body answered a `tools/call` in it, outside the tool's
      // limits and rewrite (a hostile new-user trial 16, L2:
      // test/regressions/delete-body-forwarded-escapes-limits.test.ts).
      return reply.from(agent.url.href, {
        body: post ? body : null,
        contentType: post ? String(request.headers['content-type'] ?? 'application/json') : undefined,
        rewriteRequestHeaders: (_req, headers) =>
          withUpstreamHooks(
            applyRequestHeaderPolicy(
              headers as Record<string, string | string[] | undefined>,
              agent,
              acceptEncoding(offeredCodings(agent.accept_encoding, exchange.rpc)),
              stream.resumeFrom,
              request.raw.httpVersion === '1.0' ? ownVia.entry10 : ownVia.entry11,
              post,
            ),
            upstreamHooks,
          ) as typeof headers,
        // The lines the host would get, their bytes and number summed as they are made: the
        // pipeline bounds the host's head with them (response/head-size.ts; a hostile new
        // user's trials 15, M1, and 42).
        rewriteHeaders: (headers) => {
          const filtered = filterResponseHeaders(headers, agent.name, exchange);
          measureHeaderLines(filtered, exchange);
          return filtered;
        },
        // Only an agent URL with a query needs merging (query.ts); otherwise reply-from forwards the host's.
        queryString: agent.url.search === '' ? undefined : mergeQuery,
        onResponse: (_req, _rep, res) => {
          settleCancellation?.(res.statusCode >= 200 && res.statusCode < 300);
          // The stream's entry in `deps.streams` (graceful shutdown ends it: SseShutdownEnd).
          let streamSlot = 0;
          let streamEntry: OpenStream | undefined;
          const hooks = {
            onSseStart: (end: SseShutdownEnd) => {
              clearTimeout(deadline);
              // A probe answered with a stream frees its slot now; its final outcome still counts.
              if (admission !== undefined) deps.guard.probeStreaming(admission);
              streamEntry = { exchange, end };
              streamSlot = deps.streams.add(streamEntry);
              if (!ended && !isRequestStream(exchange.rpc)) {
                quiet = true;
                deps.quietStreams.count++;
              }
            },
            onSseEnd: () => {
              if (streamEntry !== undefined) deps.streams.remove(streamSlot, streamEntry);
            },
            shutdownTokensOutlive: () => deps.drain.tokensOutlive,
            onSseEventDropped: (reason: string, count: number) => deps.metrics.incSseEventDropped(agent.name, reason, count),
            onSseEventIdNotTokenized: () => deps.metrics.incSseEventIdNotTokenized(agent.name),
            onSeller202Answer: () => deps.metrics.incSeller202Answer(agent.name),
            wantsResponseMessage: isDiscoveryRequest(exchange.rpc.method, exchange.rpc.toolName),
            onResponseMessage: (message: unknown, bytes: number, before?: BeforeResponse) => observeDiscovery(exchange, message, bytes, before, deps),
          };
          handleUpstreamResponse(exchange, reply, res as never, log, hooks).then(
            () => {
              if (!exchange.finished) return;
              // `settled`: the answer is ended. Nearly always Node wrote it straight into the
              // socket (`writableFinished` at once): no timer is left. Otherwise the host has
              // the rest of the deadline (JSON: the timer runs on) or sse_idle_timeout_ms from
              // now (SSE, whose stage cleared the deadline) to take it (`onDeadline`). The
              // answer has its connection: a request pipelined behind another answer is sent
              // only at its turn (routing/pipelined-turn.ts).
              const raw = reply.raw;
              if (raw.writableFinished || raw.destroyed) {
                clearTimeout(deadline);
                return;
              }
              if (exchange.sseStarted) deadline = setTimeout(onDeadline, limits.sse_idle_timeout_ms);
              // What Node holds of it counts for the agent until the host takes it (its 'close':
              // `end`; hostile trial 54, F3); only `onDeadline` cuts the host (agent-guard.ts HostHold).
              if (!ended) hostHold = deps.guard.holdForHost(agent.name, agent.guard, raw);
            },
            (err: unknown) => internalError(exchange, reply, log, err),
          );
        },
        // Errors that never reached the dispatcher (undici refused the request before
        // dispatching it): reply-from has logged them (`response errored`), as unexpected.
        onError: (_rep, { error }) => onUpstreamError(exchange, reply, error, requestStarted),
      });
    };

    // A resume of a request the host cancelled (routing/cancelled-requests.ts): 405 at once, the
    // seller not contacted, no error for the id the host dropped (hostile trial 55, F1:
    // test/regressions/cancelled-call-resumed-gets-sse-idle.test.ts).
    if (resumed !== undefined && session !== undefined && cancellations.has(agentKeyOf(agent), session, rpc)) {
      answerCancelledResume(exchange, reply);
      return undefined;
    }
    // A resume from the token of the event that carried the response: that stream is over,
    // the seller has nothing to replay (resume/token.ts `final`); held open empty, as the
    // seller would hold it, until the host closes it or sse_idle_timeout_ms.
    if (resumed?.final === true) {
      if (!ended) {
        quiet = true;
        deps.quietStreams.count++;
      }
      answerStreamOver(exchange, reply, resumedToken, limits.sse_idle_timeout_ms, deps.streams);
      return undefined;
    }
    // A request the host cancelled before it was sent is never sent (errors/local-reply.ts
    // answerCancelledUnsent): here one cancelled while pipelined; one waiting for its backoff
    // turn, below (`onCancelled`). Hostile trial 55, F2:
    // test/regressions/cancelled-while-held-still-sent.test.ts.
    if (exchange.cancelled) {
      answerCancelledUnsent(exchange, reply);
      return undefined;
    }
    if (lateTurn) {
      // Named for what it waited for last: the seller's answer to a cancellation (held at its turn), else the answers ahead of it.
      const reason = turn === 'cancel_wait' ? 'cancel_wait' : 'pipeline_wait';
      answerWithLocalError(exchange, reply, { reason, limitMs: limits.response_deadline_ms, observedMs: Math.round(performance.now() - arrivedAt) });
      return undefined;
    }
    // A resume of a stream whose sse_deadline_ms has run out: `sse_deadline` at once, the
    // seller not contacted (resume/resume-past-deadline.ts; review 35, F3).
    if (resumed !== undefined) {
      const pastDeadline = resumedPastDeadline(exchange);
      if (pastDeadline !== undefined) {
        answerWithLocalError(exchange, reply, pastDeadline);
        return undefined;
      }
    }
    // A host's cancellation marks the request it names, in its seller url and session, while that
    // request's exchange is open (routing/in-flight-requests.ts: its answer then ends plainly, not
    // with an error made up for an id the host dropped); it is forwarded as before. Without a
    // session it marks nothing. Source: trial 17, L1. The mark holds only if the seller accepts
    // the cancellation (2xx); a request held meanwhile is not sent before that answer (within its
    // deadline: InFlightRequests.holdAtTurn), and is sent after a refusal (a review, Low:
    // anyone knowing a session id dropped held requests;
    // test/regressions/cancel-refused-by-seller-still-drops-request.test.ts).
    if (rpc.kind === 'notification' && rpc.method === 'notifications/cancelled' && session !== undefined && body !== undefined) {
      const cancelledId = cancelledRequestIdOf(body, rpc);
      if (cancelledId !== undefined) {
        const seller = agentKeyOf(agent);
        const marked = inFlight.markCancelled(seller, session, cancelledId);
        // Awaiting the seller's answer: a new request sent with its id meanwhile supersedes it (cancelled-requests.ts).
        const awaited = cancellations.awaitSeller(seller, session, cancelledId);
        settleCancellation = (accepted) => {
          settleCancellation = undefined;
          // Matched or not (it may come between a stream's cut and its resume): accepted, a resume of it is not sent.
          const remembered = cancellations.settle(awaited, accepted);
          marked?.settle(accepted);
          // Accepted: the ids the call's stream parked at a resumable end are dropped (the host
          // neither answers nor resumes a cancelled call), unless a new request with its id was
          // sent meanwhile (`remembered` false: that call may have parked them). Not for an id
          // no resume token could carry (`awaited` undefined, `remembered` false): its stream
          // carries no token, so it rarely parks anything (what it does park lasts to its
          // deadline, as before), and canonicalizing a 4 MB id here cost ~70-215 ms of the event
          // loop per cancellation (review of the fix, Low). Before,
          // the ids held a parked slot and kept the session's chunks parsed to sse_deadline_ms
          // (review of trial 59 F2's fix, Low: test/regressions/cancelled-parked-call-holds-slot.test.ts).
          if (accepted && remembered) hostAnswers.callCancelled(seller, session, cancelledId);
        };
      }
    }
    // The host's answer to a seller's request (elicitation/create, ...): the streams of its
    // seller url and session awaiting that id run their idle clocks again, from now
    // (host-answer-waits.ts; hostile trial 57, F3). Forwarded as before.
    if (post && rpc.kind === 'notification' && rpc.method === undefined && session !== undefined) hostAnswers.answered(agentKeyOf(agent), session, rpc);
    if (pending === undefined) {
      // A resumed request's (or batch's) stream, sent to the seller now, counts for its
      // agent's backoff as the request's own answer would, for the kind in its token; never
      // held back (agent-guard.ts admitResumed; review 35, F1: a seller breaking its bounds
      // only on resumes was never held back).
      if (resumed !== undefined && answersRequest) admission = deps.guard.admitResumed(agent.name, kind, agent.guard);
      forward();
      return undefined;
    }
    // Waits for its backoff turn (routing/backoff-wait.ts), then sent with the turn granted.
    return awaitBackoffTurn({ request, reply, body, exchange, pending, limits, arrivedAt, kind, guard: deps.guard, inFlight, getConfig: () => deps.getConfig() }, (granted) => {
      admission = granted;
      return forward();
    });
  };
  return mcpHandler;
}
