/**
 * buildApp(config) -> a Fastify instance serving the gateway. Never listens: `cli.ts` and
 * the tests call `listen`.
 *
 * Routes:
 * - `POST | GET | DELETE /agents/<agent>/mcp` -> the agent's seller (MCP Streamable HTTP);
 * - any other method there -> 405 with a JSON-RPC error body; any other path -> 404;
 * - `GET /healthz`, `/readyz`, `/metrics` (src/ops/routes.ts), unless `ops_listen` puts them
 *   on their own app (`app.gateway.opsApp`; `listenAll` in src/ops/listen.ts listens on both).
 */
import { maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, type FastifyError } from 'fastify';
import replyFrom from '@fastify/reply-from';
import type { Logger } from 'pino';
import { requestBodyLimit } from './config/resolve.js';
import type { AgentConfig, GatewayConfig } from './config/types.js';
import type { Exchange } from './exchange.js';
import { answerClientError, answerUnmetExpectation, type ClientErrorReason } from './errors/client-error.js';
import { answerConnect } from './errors/connect-refusal.js';
import type { RefusalReason } from './errors/codes.js';
import { REFUSAL_LISTENER, refuse, SHOWN_CHARS, type RefusalListener } from './errors/local-reply.js';
import {
  addLogPublicTexts,
  addLogSecrets,
  addLogUrlQueries,
  configPublicTexts,
  configSecrets,
  configUrlQueryPrefixes,
  createLogger,
  lazyChildLoggerFactory,
  plainInfoWriter,
} from './observability/logger.js';
import { createMetrics, REFUSAL_AGENT_NONE, REFUSAL_AGENT_UNKNOWN, type GatewayMetrics, type GuardSample } from './observability/metrics.js';
import { opsRoutes } from './ops/routes.js';
import { opsHeadCheck } from './ops/head-check.js';
import { agentNameOfPath, badUrlRefusal, isMcpMethod, MCP_METHODS, originFormOf, refuseUnknownAgent, refuseUnrouted, routedByPath, unroutedRefusal, type UnroutedScope } from './routing/unrouted.js';
import { createUpstreamDispatcher } from './routing/dispatcher.js';
import { isLoopbackListenHost, ownListenHosts } from './request/browser-guard.js';
import { createMcpHandler, type OpenExchangeEnd } from './routing/handler.js';
import { refuseDraining, type DrainState } from './routing/draining.js';
import { drainClosingResponse } from './routing/drain-close-answers.js';
import { closeConnectionAfter, whenWritten } from './routing/closing-answers.js';
import { lingerAfterClosingAnswers, type LingeringClose } from './routing/lingering-close.js';
import { PipelinedTurns } from './routing/pipelined-turn.js';
import { boundAnswersAhead } from './errors/earlier-answers.js';
import { AgentGuard } from './admission/agent-guard.js';
import { servedWithoutContentType } from './request/unreadable-content-type.js';
import { BodyOverBound, agentBodyLimit, bodyBound, declaresOver } from './request/agent-body-limit.js';
import { RefusedFromHead, answerHeadRefusal, browserFields, headRefusal, markRefusedFromHead } from './request/head-refusal.js';
import { InFlightTable } from './inflight-table.js';
import { createResumeCodec, randomResumeSecret } from './resume/token.js';
import { ResumeTailLedger } from './resume/tail-ledger.js';
import { PreviousAgentUrls } from './resume/previous-urls.js';
import { capHeaderFields, overHeaderFieldCap, TOO_MANY_HEADER_FIELDS_MESSAGE } from './request/header-field-count.js';
import { endStreamsOfReconfiguredAgents, type OpenStream, type OpenStreams } from './routing/open-streams.js';
import { AgentReload } from './routing/agent-reload.js';
import type { SseShutdownPhase } from './response/pipeline.js';

export interface BuildAppOptions {
  /** A pino logger, or `false` to silence logs. Default: a pino logger at `config.log_level`. */
  logger?: Logger | false;
}

const OTHER_METHODS = ['PUT', 'PATCH', 'OPTIONS', 'HEAD'] as const;

/**
 * The longest route parameter (an agent name) the router matches: Node's maximum request head
 * size (`http.maxHeaderSize`: 16 KiB unless --max-http-header-size says otherwise), which the
 * request line counts toward, so no name that reaches the router is longer. Fastify's default,
 * 100 characters, answered a longer name with its own 414 body (`FST_ERR_MAX_PARAM_LENGTH`,
 * the whole path echoed, no `refused` line, no count: a new user's trial, 2026-12-03,
 * test/regressions/agent-name-over-100-chars-fastify-414.test.ts). The router compares a
 * parameter's length with it once per match, at no other cost.
 */
const MAX_PARAM_CHARS = maxHeaderSize;

/** What the `ops_listen` listener serves. */
const OPS_SCOPE: UnroutedScope = { mcp: false, ops: true };

export async function buildApp(config: GatewayConfig, opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  const logger = opts.logger === false ? createLogger('silent') : (opts.logger ?? createLogger(config.log_level));
  let current = config;
  // Secret values of the config in force, and the queries of its agent URLs, are scrubbed
  // from every log line's string values, its agent names left whole (observability/logger.ts);
  // computed once per config.
  const secretsOf = (of: GatewayConfig) => ({ of, values: configSecrets(of), queryPrefixes: configUrlQueryPrefixes(of), publicTexts: configPublicTexts(of) });
  let secrets = secretsOf(config);
  const currentSecrets = (): ReturnType<typeof secretsOf> => (secrets.of === current ? secrets : (secrets = secretsOf(current)));
  const removeLogSecrets = addLogSecrets(logger, () => currentSecrets().values);
  const removeLogUrlQueries = addLogUrlQueries(logger, () => currentSecrets().queryPrefixes);
  const removeLogPublicTexts = addLogPublicTexts(logger, () => currentSecrets().publicTexts);
  const bodyLimit = requestBodyLimit(config);
  // How the MCP endpoint checks `Host` (request/browser-guard.ts): read at start-up (`listen` needs a restart).
  const loopbackListen = isLoopbackListenHost(config.listen.host);
  const ownHosts = ownListenHosts(config.listen.host);
  // The ops_listen listener's: the same rule with its own address (ops/head-check.ts; hostile trial 53, F4).
  const opsHeadRefusal = config.ops_listen === undefined ? undefined : opsHeadCheck(config.ops_listen.host, () => current);
  /** Set once the shutdown begins (the preClose hook, below); read by every route but the ops ones. */
  const drain: DrainState = { draining: false };
  /** Logs and counts a request Node's HTTP parser rejected (set once the metrics exist, below). */
  let clientRefused = (_reason: ClientErrorReason, _status: number, _code: string | undefined, _unused: boolean): void => {};

  /** What the gateway's listener serves: the MCP endpoints, and the ops ones unless `ops_listen` is set. */
  const mainScope: UnroutedScope = { mcp: true, ops: !config.ops_listen };
  /**
   * Fastify's options for a listener of the gateway: its own (`scope` mainScope: it serves the
   * MCP endpoints and drains, a request refused while it shuts down is 503 `draining`) or the
   * ops one (OPS_SCOPE, which answers as ever while draining). One set for both, so the ops
   * listener refuses what the gateway's refuses the same way (a hostile new user's trial 19, L1).
   */
  const serverOptions = (scope: UnroutedScope) => ({
    // A request the HTTP parser rejects (an oversized head, a malformed request) is refused
    // like any other, in JSON-RPC (errors/client-error.ts), not with Fastify's own body;
    // after the answers to the connection's earlier, pipelined requests (RFC 9112 §9.3.2).
    clientErrorHandler: (err: Error & { code?: string }, socket: Socket) => {
      answerClientError(err, socket, (reason, status, unused) => clientRefused(reason, status, err.code, unused));
    },
    loggerInstance: logger as FastifyBaseLogger,
    // One log line per exchange comes from the handler; Fastify's own request lines are off.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made on first use (most requests never log through it: observability/logger.ts).
    childLoggerFactory: lazyChildLoggerFactory as unknown as NonNullable<FastifyServerOptions['childLoggerFactory']>,
    bodyLimit,
    // A host has request_timeout_ms to send a whole request (408 request_timeout after it:
    // errors/client-error.ts); Fastify's default turns Node's request timeout off.
    requestTimeout: config.request_timeout_ms,
    // Node answers an HTTP/1.1 request without Host with a bare 400 and tells no one (no log
    // line, no count, no JSON-RPC body: a new user's trial); the handler refuses it instead.
    // The listener that drains writes `Connection: close` on every head written while draining
    // (routing/drain-close-answers.ts).
    http: {
      headersTimeout: headersTimeoutMs(config.request_timeout_ms),
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
      requireHostHeader: false,
      ...(scope.mcp ? { ServerResponse: drainClosingResponse(drain) } : {}),
    },
    exposeHeadRoutes: false,
    // Off: a request that reaches a route while the gateway shuts down gets the gateway's own
    // answer, 503 `draining` in JSON-RPC, logged and counted (routing/draining.ts), and the ops
    // endpoints answer as ever (`/readyz`: 503 draining). On, Fastify answered every such
    // request itself, before any route, with its own body (a new user's trial:
    // test/regressions/shutdown-503-not-json-rpc.test.ts). Fastify still sets
    // `Connection: close` on every response while closing.
    return503OnClosing: false,
    // The router carries an agent name as long as a request head can be (MAX_PARAM_CHARS), so
    // every name the HTTP server lets through is refused as the handler refuses an unknown one.
    routerOptions: { maxParamLength: MAX_PARAM_CHARS },
    // A request target the router cannot take (a path segment that does not percent-decode,
    // `/agents/%zz/mcp`) is refused as any other (badUrlRefusal), not with Fastify's bare 400.
    frameworkErrors: (_error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      scope.mcp && drain.draining ? refuseDraining(reply, request.method, undefined) : badUrlRefusal(reply, request.url, scope),
  });
  const app = Fastify(serverOptions(mainScope));

  for (const agent of config.agents.values()) if (agent.tls_insecure_skip_verify) warnInsecureAgent(logger, agent);
  // A pool per (origin, TLS settings): an agent's tls_insecure_skip_verify reaches no other
  // agent at its origin (a new user's trial 9, F2: routing/upstream-pools.ts); `setConfig`
  // gives it each reloaded config.
  const upstream = createUpstreamDispatcher();
  upstream.configure(config.agents.values());

  await app.register(replyFrom, { undici: upstream.dispatcher as never, disableRequestLogging: true, retryMethods: [] });
  app.addHook('onClose', async () => upstream.close());

  /**
   * Whether a head with `Expect: 100-continue` is told to send its body (the `checkContinue`
   * listener below): not when the gateway refuses it from its head, i.e. when no route of the
   * listener takes it (the not-found context's `refuseFromHead`), or when its Content-Length is
   * over the bound of its body (request/agent-body-limit.ts bodyBound: its agent's
   * max_request_bytes for a POST, `defaults.max_request_bytes` for an unknown agent or a method
   * the MCP endpoint does not take, or a DELETE's body; else the app's body limit, which
   * Fastify checks from the head), or when the MCP handler refuses it from its head
   * (request/head-refusal.ts headRefusal, the handler's own function: a bad Origin or Host,
   * several Host fields or none), which is then left on the request for the MCP endpoint's
   * preParsing hook to refuse before the body is read (a hostile trial 23, L1: such heads got
   * 100, their body read whole for the refusal). A refusal that carries the request's id
   * (`unknown_agent` within its bound, an invalid gateway header) still gets its 100: the body
   * is read for that id. The same while draining: such a head then gets `draining` from the
   * head, any other its 100 and, once its body is read, `draining` for its id (a hostile trial
   * 23, M1: every head got 100 while draining, a body over its bound, or to no route, read
   * whole).
   */
  const continueWanted = (req: IncomingMessage, scope: UnroutedScope): boolean => {
    // Too many header fields: refused from the head on every path (the onRequest hook below).
    if (overHeaderFieldCap(req)) return false;
    const target = originFormOf(req.url ?? '');
    if (!routedByPath(req.method, target, scope)) return false;
    const agent = scope.mcp ? agentNameOfPath(target) : undefined;
    if (declaresOver(req.headers['content-length'], bodyBound(current, req.method, agent, bodyLimit)?.bytes ?? bodyLimit)) return false;
    // An ops_listen head its check refuses (ops/head-check.ts): no 100 either.
    if (!scope.mcp) return opsHeadRefusal?.(req) === undefined;
    if (agent === undefined || !isMcpMethod(req.method)) return true;
    const refusal = headRefusal(req, current, current.agents.has(agent), loopbackListen, ownHosts);
    if (refusal === undefined) return true;
    markRefusedFromHead(req, refusal);
    return false;
  };
  /**
   * Makes `target` (the gateway's app, or the ops app: `scope`, `drains` as for
   * `serverOptions`) read bodies, refuse errors and answer a request no route takes as the
   * gateway does, each refusal logged and counted (`recordRefusal`, below). Called before
   * `target`'s routes are added: a route keeps the error handler it was added under.
   */
  const answerAsGateway = (target: FastifyInstance, scope: UnroutedScope): LingeringClose => {
    /** The MCP listener drains (503 `draining` once the gateway shuts down); the ops one answers as ever. */
    const drains = scope.mcp;
    /** The agent a refused request's target names, whole, on the MCP listener (its refusal's `agent` label: recordRefusal). */
    const agentNameOf = (target: string): string | null => (scope.mcp ? (agentNameOfPath(target) ?? null) : null);
    /** The same, shown (the refusal line's `agent`: its first SHOWN_CHARS characters). */
    const agentOf = (target: string): string | null => agentNameOf(target)?.slice(0, SHOWN_CHARS) ?? null;
    // Request bodies are kept as the original bytes: the gateway forwards exactly what the host sent.
    // The same parser is also registered under `application/json`, the media type MCP requests
    // carry: Fastify caches the parser it finds for a named type, but finds the catch-all anew
    // for every request (a ContentType parse and three lookups, ~0.8 µs; issue 5).
    // A head with more header fields than Node keeps (the rest would be dropped unseen, the
    // head forwarded truncated): 431 `request_header_too_large` from the head, on every path,
    // before any other check (request/header-field-count.ts; hostile trial 54, F5a). Fastify
    // runs the root's onRequest hooks for its not-found handler too.
    capHeaderFields(target.server);
    target.addHook('onRequest', (request, reply, done) => {
      if (!overHeaderFieldCap(request.raw)) return done();
      closeConnectionAfter(reply);
      refuse(reply, 'request_header_too_large', null, TOO_MANY_HEADER_FIELDS_MESSAGE);
    });
    target.removeAllContentTypeParsers();
    target.addContentTypeParser('*', { parseAs: 'buffer' }, keepBytes);
    target.addContentTypeParser('application/json', { parseAs: 'buffer' }, keepBytes);

    target.setErrorHandler((error: FastifyError, request, reply) => {
      // A body over its bound (request/agent-body-limit.ts) or over the app's limit, refused
      // unread, or as soon as its bytes passed it: its own refusal, id null (over its own bound,
      // `Connection: close`: the rest of the body may still come); `draining` while draining.
      if (error instanceof BodyOverBound || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        if (drains && drain.draining) return refuseDraining(reply, request.method, undefined);
        if (!(error instanceof BodyOverBound)) return refuse(reply, 'request_too_large', null, `Request body is over max_request_bytes (${bodyLimit}).`, undefined, { limit_bytes: bodyLimit });
        const { bytes, refusal } = error.bound;
        closeConnectionAfter(reply);
        if (refusal === 'unknown_agent') return refuseUnknownAgent(reply, (request.params as { agent: string }).agent, null);
        if (refusal === 'method_not_allowed') return refuseUnrouted(reply, scope);
        return refuse(reply, 'request_too_large', null, error.message, undefined, { limit_bytes: bytes });
      }
      // A head told no 100 for the refusal the MCP handler gives it from its head
      // (request/head-refusal.ts): that refusal, id null, `Connection: close` (its body was
      // never read); `draining` from the head while draining, as above.
      if (error instanceof RefusedFromHead) {
        if (drains && drain.draining) return refuseDraining(reply, request.method, undefined);
        return answerHeadRefusal(reply, error.refusal, true);
      }
      // A body that failed after its head (it never finished arriving within request_timeout_ms,
      // a malformed chunk): Node's HTTP server has answered it already (408, 400: errors/
      // client-error.ts) and is closing the connection. A second refusal would be logged and
      // counted for an answer never sent (a new user's trial: two `refused` lines per request).
      const socket = request.raw.socket as Socket | null;
      if (socket === null || socket.destroyed || socket.writableEnded) {
        reply.hijack();
        return;
      }
      // A Content-Type that is no media type (empty, `;`, `json`): served as a request without
      // one, not refused with Fastify's wording (request/unreadable-content-type.ts).
      if (servedWithoutContentType(error, request, reply, target.routing)) return;
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return refuse(reply, 'invalid_request', null, `Invalid Request: ${error.message}`);
      }
      request.log.error({ err: error }, 'unhandled error');
      return refuse(reply, 'internal_error', null, 'Internal error in the gateway.');
    });
    // A method Fastify does not route at all (TRACE, PROPFIND, ...; CONNECT never comes here:
    // the `connect` listener below) on a path the listener serves: 405 as for PUT on an MCP
    // endpoint (below), not 404 (found by a new user); any other path 404 (routing/unrouted.ts).
    // Refused from the head, before a body is read (an onRequest hook of the not-found context):
    // with the body limit of the largest agent, 4 POSTs of 150 MB to /nope held ~850 MB while
    // read for nothing (a hostile trial 20, H2, on the ops listener, which now shares these
    // options; the main listener did the same before). A request that declares a body gets
    // `Connection: close` (its body is never read). While draining, it gets `draining` instead,
    // from the head too, id null (a hostile trial 23, M1: its body was read, after a 100
    // Continue, for the id of that answer). Fastify's types list only preValidation and
    // preHandler for the not-found context, but it takes every lifecycle hook from these options
    // (fastify/lib/four-oh-four.js, _setNotFoundHandler); the regression test
    // unrouted-request-body-read-for-nothing checks the hook runs.
    const refuseFromHead = (request: FastifyRequest, reply: FastifyReply): void => {
      if (drains && drain.draining) {
        refuseDraining(reply, request.method, undefined);
        return;
      }
      const length = request.headers['content-length'];
      if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined) closeConnectionAfter(reply);
      refuseUnrouted(reply, scope);
    };
    // The handler is never reached: the hook answers every request.
    target.setNotFoundHandler({ onRequest: refuseFromHead } as Parameters<FastifyInstance['setNotFoundHandler']>[0] & object, refuseFromHead);
    target.decorate(REFUSAL_LISTENER, refusalListener(scope));
    // An answer that closes the connection while the host still sends its request (a 413 over
    // max_request_bytes, ...) is not lost to a reset: the connection half-closes and reads on,
    // bounded, before it closes (routing/lingering-close.ts; a hostile trial 23, H1). Node's
    // server.close() closes idle connections (the app's own wrapper below calls it later):
    // the lingering ones are destroyed then too, so none holds the close up.
    const lingering = lingerAfterClosingAnswers(target.server);
    const closeIdle = target.server.closeIdleConnections.bind(target.server);
    target.server.closeIdleConnections = (): void => {
      lingering.destroyLingering();
      closeIdle();
    };
    // CONNECT: Node's HTTP server hands it to this listener, out of HTTP, and destroyed the
    // connection without a word when there was none (a hostile new user's trial 15, L3); refused
    // as another method no route takes, then the connection closes (errors/connect-refusal.ts).
    target.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
      const url = req.url ?? '';
      const refusal = unroutedRefusal('CONNECT', url, scope);
      answerConnect(req, socket, refusal, (status) => recordRefusal(refusal.reason, { agent: agentOf(url), http_method: 'CONNECT', status }, agentNameOf(url)));
    });
    // `Expect: 100-continue`: Node answers 100 Continue to every such head unless the server
    // listens for `checkContinue`. A head the gateway refuses from the head alone (no route of
    // the listener takes it, its Content-Length is over its bound, or the MCP handler refuses
    // its headers: continueWanted) goes on without the 100 to its refusal, and the connection
    // is closed after it: the body the head announced never comes, so nothing else can follow
    // on it (routing/closing-answers.ts).
    // RFC 9110 §10.1.1: a server that will refuse the request by its head answers so, and the
    // client never sends the body. A head a route takes gets its 100 (the route reads the body
    // before it answers, a refusal by the handler included). Source: a new user's hostile
    // trial 12, L2 (`100 Continue`, then `413`: test/regressions/expect-continue-over-limit-told-to-send.test.ts);
    // a hostile trial 20, L2 (the same on the ops port, for an unknown path, and for an
    // absolute-form target: test/regressions/expect-continue-before-refusal.test.ts); a hostile
    // trial 23, L1 (the same for a bad Origin or Host:
    // test/regressions/expect-continue-before-header-refusal.test.ts).
    target.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (continueWanted(req, scope)) res.writeContinue();
      else res.setHeader('connection', 'close');
      target.server.emit('request', req, res);
    });
    // An `Expect` other than 100-continue: Node answers a bare 417 unless the server listens for
    // `checkExpectation` (a new user's trial, 2026-12-03); refused like the parser's rejections,
    // logged with the request's method and agent (errors/client-error.ts answerUnmetExpectation).
    // Its answer closes the connection: a request pipelined behind it is not processed
    // (routing/closing-answers.ts). Queued behind another answer, it bounds a stream ahead of it
    // (errors/earlier-answers.ts) and is logged once written, as a route's refusal is.
    target.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
      const queued = res.socket === null;
      if (queued) boundAnswersAhead(req.socket, res);
      const status = answerUnmetExpectation(res);
      const record = (): void => recordRefusal('expectation_failed', { agent: agentOf(req.url ?? ''), http_method: req.method ?? null, status }, agentNameOf(req.url ?? ''));
      if (queued) whenWritten(res, record);
      else record();
    });
    return lingering;
  };
  const keepBytes = (_req: unknown, body: Buffer | string, done: (err: null, body: Buffer | string) => void): void => done(null, body);
  const mainLingering = answerAsGateway(app, mainScope);

  if (config.resume.secret === undefined) {
    logger.warn(
      'No resume secret configured (resume.secret or ADCP_GATEWAY_RESUME_SECRET): using a random per-process secret, so SSE resumption will not survive a restart or work across replicas.',
    );
  }
  const resume = createResumeCodec({ secret: config.resume.secret ?? randomResumeSecret(), ttlMs: config.resume.ttl_ms });
  // The counts of bounded streams that went on past their last event token (resume/tail-ledger.ts): per process, for the tokens' lifetime.
  const resumeTails = new ResumeTailLedger(config.resume.ttl_ms);
  // The urls agents had before the reloads that moved them (resume/previous-urls.ts; hostile trial 36, F2).
  const previousUrls = new PreviousAgentUrls();
  // Whether the tokens outlive this process: read from the start-up config, as the codec is
  // (a reload that adds, removes or changes `resume` needs a restart: reload.ts), so a
  // shutdown ends streams as the codec they were minted with allows (GatewayControl.resumeSecret).
  const resumeSecret = config.resume.secret === undefined ? 'per_process' : 'configured';
  const streams: OpenStreams = new InFlightTable<OpenStream>();
  const openExchanges = new InFlightTable<OpenExchangeEnd>();
  // How many of them are streams answering no request (routing/handler.ts HandlerDeps.quietStreams).
  const quietStreams = { count: 0 };
  // Requests pipelined on a host's connection waiting for their turn (routing/pipelined-turn.ts).
  const turns = new PipelinedTurns();
  // Node's server.close() (Fastify's close, on SIGTERM) also closes every connection it deems
  // idle, and a response already ended counts as idle while its bytes are still queued for a
  // slow host: a 12 MB answer was cut after ~4 MB and logged `ok` (a new user's trial:
  // test/regressions/shutdown-cuts-answer-being-written.test.ts). So while any exchange is
  // open, idle connections are left for later: each exchange that ends while closing closes
  // the idle ones again (exchangeEndListeners below), the last one with none left open.
  const closeIdleConnections = app.server.closeIdleConnections.bind(app.server);
  app.server.closeIdleConnections = (): void => {
    if (openExchanges.size === 0) closeIdleConnections();
    else mainLingering.destroyLingering();
  };
  const exchangeEndListeners: Array<(exchange: Exchange, hostStatus: number | null) => void> = [];
  // Per-agent backoff and buffered-bytes cap (src/admission/agent-guard.ts); state survives reloads.
  const guard = new AgentGuard(
    (agent, kind, consecutiveBreaches, backoffMs) =>
      logger.warn({ agent, call: kind, consecutive_breaches: consecutiveBreaches, backoff_ms: backoffMs }, 'agent backing off: its answers keep breaking size limits'),
    (agent, kind) => logger.info({ agent, call: kind }, 'agent backoff ended: an answer came within limits'),
  );
  // Only the agents of the running config have series: a reload drops a removed agent's
  // (metrics.forgetAgents, in setConfig below), and neither the guard's state of it (kept, so
  // that re-adding the agent finds its buffer cap and backoff as they were: hostile trial 36,
  // F1, F3) nor an exchange of it that ends after the reload brings one back (trial 36, F4).
  function* configuredGuardSamples(): Generator<GuardSample> {
    for (const sample of guard.snapshot()) if (current.agents.has(sample.agent)) yield sample;
  }
  const metrics = createMetrics({ openStreams: () => streams.size, pipelinedWaiting: () => turns.size, guard: configuredGuardSamples });
  exchangeEndListeners.push((exchange, hostStatus) => {
    if (current.agents.has(exchange.agent.name)) metrics.observeExchange(exchange, hostStatus);
  });

  // Shutting down (draining): requests waiting out a backoff are answered now, never sent; a
  // request that reaches a route from now on is refused 503 `draining` (routing/draining.ts:
  // the handlers check this one flag); and a keep-alive connection whose answer goes out
  // while closing is closed once it is idle (Fastify closes only the connections idle when
  // close starts: the others would wait for their keepAliveTimeout, 72 s, and the process
  // with them).
  app.addHook('preClose', (done) => {
    drain.draining = true;
    guard.close();
    done();
  });
  exchangeEndListeners.push(() => {
    if (drain.draining) setImmediate(() => app.server.closeIdleConnections());
  });
  const handler = createMcpHandler({
    getConfig: () => current,
    loopbackListen,
    ownHosts,
    upstream,
    guard,
    resume,
    resumeTails,
    previousUrls,
    log: logger,
    streams,
    openExchanges,
    quietStreams,
    turns,
    metrics,
    drain,
    onExchangeEnd: (exchange, status) => {
      for (const listener of exchangeEndListeners) listener(exchange, status);
    },
  });
  // One log line and one metric per refused host request (the seller was never contacted):
  // refused by a route (`refuse` calls the app's REFUSAL_LISTENER), or by the HTTP parser
  // before any route (clientRefused). Counted under the agent its path names, whole (`name`),
  // when the config in force has it (as the counter is read: a refusal counted once written,
  // after a reload removed its agent, does not bring its series back), else under one of two
  // fixed values (observability/metrics.ts REFUSAL_AGENT_UNKNOWN, REFUSAL_AGENT_NONE).
  const logInfo = plainInfoWriter(logger);
  const recordRefusal = (reason: RefusalReason, fields: Record<string, unknown>, name: string | null): void => {
    metrics.incRefusal(reason, name === null ? REFUSAL_AGENT_NONE : current.agents.has(name) ? name : REFUSAL_AGENT_UNKNOWN);
    logInfo({ ...fields, outcome: 'refused', reason }, 'refused');
  };
  /** The RefusalListener of a listener serving `scope`: on one serving no MCP endpoint, `agent` is null. */
  function refusalListener(scope: UnroutedScope): RefusalListener {
    return (reply, reason, status) => {
      const request = reply.request;
      const agent = (request.params as { agent?: unknown } | undefined)?.agent;
      // A request no route matched (a method Fastify does not route: TRACE, PROPFIND, ...) has
      // no parameters: the name comes from its path, as the route would give it.
      const name = !scope.mcp ? null : typeof agent === 'string' ? agent : (agentNameOfPath(request.url) ?? null);
      const fields: Record<string, unknown> = { agent: name?.slice(0, SHOWN_CHARS) ?? null, http_method: request.method, status };
      // What a browser said of itself, for a refusal that names it (hostile trial 33, F3: the
      // line said origin_not_allowed but not which origin).
      if (reason === 'origin_not_allowed' || reason === 'host_not_allowed') Object.assign(fields, browserFields(request.raw));
      // A `draining` refusal, and any refusal queued behind another answer on its connection
      // (HTTP/1.1 pipelining: no socket yet) or made on a connection Node has ended after a
      // `close` answer, is logged and counted once Node has written it: one behind an answer
      // that closes the connection is never written (routing/draining.ts, routing/closing-answers.ts).
      const socket = reply.raw.socket;
      if (reason === 'draining' || socket === null || socket.writableEnded) whenWritten(reply.raw, () => recordRefusal(reason, fields, name));
      else recordRefusal(reason, fields, name);
    };
  }
  // A connection timed out before it sent a byte (a browser's preconnect) refused no request:
  // a debug line and adcp_gateway_unused_connections_total, no `refused` line or refusal count
  // (errors/client-error.ts unusedConnection).
  clientRefused = (reason, status, code, unused) => {
    if (unused) {
      metrics.incUnusedConnection();
      logger.debug({ status, http_error: code ?? null }, 'unused connection closed');
    } else recordRefusal(reason, { agent: null, http_method: null, status, http_error: code ?? null }, null);
  };
  // A body over its bound (a POST's: its agent's max_request_bytes; one to an unknown agent or
  // with a method the endpoint does not take: defaults.max_request_bytes) is refused before it
  // is read (request/agent-body-limit.ts).
  const bodyBoundHook = agentBodyLimit(() => current, bodyLimit);
  app.route({ method: [...MCP_METHODS], url: '/agents/:agent/mcp', preParsing: bodyBoundHook, handler });
  app.route({
    method: [...OTHER_METHODS],
    url: '/agents/:agent/mcp',
    preParsing: bodyBoundHook,
    handler: (request, reply) => (drain.draining ? refuseDraining(reply, request.method, undefined) : refuseUnrouted(reply, mainScope)),
  });

  // Ops endpoints: on this app, or on their own app when ops_listen is set (listenAll listens on it).
  let readyFlag = true;
  // Draining from `setReady(false)` (the shutdown's first step: cli.ts) or the close's start,
  // whichever comes first; on the main listener too (routing/draining.ts spares the ops routes).
  const notReadyReason = (): string | undefined => (!readyFlag || drain.draining ? 'draining' : !app.server.listening ? 'not_listening' : undefined);
  // The ops app has the gateway's options (return503OnClosing off: its /readyz answers
  // `draining` to its last request) and refuses as the gateway does (answerAsGateway).
  const opsApp = config.ops_listen ? Fastify(serverOptions(OPS_SCOPE)) : undefined;
  if (opsApp !== undefined) answerAsGateway(opsApp, OPS_SCOPE);
  await (opsApp ?? app).register(opsRoutes, { metrics, notReadyReason, ...(opsHeadRefusal !== undefined ? { headCheck: opsHeadRefusal } : {}) });
  app.addHook('onClose', async () => {
    removeLogSecrets();
    removeLogUrlQueries();
    removeLogPublicTexts();
    await opsApp?.close();
  });

  const gateway: GatewayControl = {
    get config() {
      return current;
    },
    // Swapping the config object applies to new requests only; in-flight exchanges keep theirs.
    setConfig(next) {
      // Its agents' TLS settings too: their new requests go on connections made under them.
      upstream.configure(next.agents.values());
      // Before the swap: an agent moved here remembers the url it had (resume/previous-urls.ts).
      // Which agents the reload removes or moves, worked out once for the three below (routing/agent-reload.ts).
      const reload = new AgentReload(current, next);
      previousUrls.update(reload);
      current = next;
      // On every listener built from serverOptions: the ops one too (review 36, F2: it kept the
      // start-up timeout; test/regressions/ops-listen-reload-request-timeout-not-applied.test.ts).
      applyRequestTimeout(app.server, next.request_timeout_ms);
      if (opsApp !== undefined) applyRequestTimeout(opsApp.server, next.request_timeout_ms);
      guard.applySettings(next.agents); // a running backoff follows the new settings at once
      // Requests waiting out the backoff of an agent removed or moved are answered now, never
      // sent (routing/backoff-wait.ts: unknown_agent, agent_url_changed; hostile trial 57, F4).
      guard.releaseWaiters(reload);
      // The streams with no end of their own, of an agent removed or moved (hostile trial 34, F1).
      endStreamsOfReconfiguredAgents(streams, reload);
      // The metric series of removed agents (hostile trial 34, F2).
      metrics.forgetAgents(new Set(next.agents.keys())).catch((err: unknown) => logger.warn({ err }, 'could not drop the metric series of removed agents'));
    },
    get openStreams() {
      return streams.size;
    },
    get openExchanges() {
      return openExchanges.size;
    },
    get requestsInFlight() {
      return openExchanges.size - quietStreams.count;
    },
    get pipelinedWaiting() {
      return turns.size;
    },
    guard,
    resumeSecret,
    endStreams(phase = 'final', onEnded) {
      // From now on a stream learns the shutdown from its start (DrainState.tokensOutlive).
      drain.tokensOutlive = resumeSecret === 'configured';
      // The config in force (reloads stop at the signal): the `retry:` before each plain end.
      const retryMs = current.shutdown_sse_retry_ms;
      let ended = 0;
      for (const stream of streams.values()) {
        if (!stream.end(resumeSecret === 'configured', phase, retryMs)) continue;
        ended++;
        onEnded?.(stream.exchange, retryMs);
      }
      return ended;
    },
    cutOpenExchanges() {
      const ends = openExchanges.values();
      for (const end of ends) end(true);
      return ends.length;
    },
    onExchangeEnd(listener) {
      exchangeEndListeners.push(listener);
    },
    metrics,
    opsApp,
    setReady(ready) {
      readyFlag = ready;
    },
  };
  app.decorate('gateway', gateway);
  return app;
}

/**
 * Whether `agent` (if any) connects without TLS certificate verification: `tls_insecure_skip_verify:
 * true` on an `https:` url (on an `http:` one there is no TLS, and the flag does nothing). A
 * reload warns when this turns true (src/reload.ts): the flag turning on, or the url of an agent
 * with the flag moving from `http:` to `https:` (review 31, finding 4: that logged nothing).
 */
export function skipsVerification(agent: AgentConfig | undefined): boolean {
  return agent?.tls_insecure_skip_verify === true && agent.url.protocol === 'https:';
}

/**
 * The start-up (and reload) warning for an agent with `tls_insecure_skip_verify: true`, on an
 * `https:` url only: an `http:` url has no TLS to verify, so the setting does nothing there
 * (`--check-config` notes that: config/setting-notes.ts), and "verification is OFF" would be
 * false. Source: hostile trial 45, L7 (left over): test/regressions/tls-skip-warning-on-http-agent.test.ts.
 */
export function warnInsecureAgent(log: Logger, agent: AgentConfig): void {
  if (!skipsVerification(agent)) return;
  log.warn({ agent: agent.name, url: agent.url.origin }, 'TLS certificate verification is OFF for this agent (tls_insecure_skip_verify: true). Never use this in production.');
}

/** Control surface of a built gateway (cli.ts: reload, shutdown; observability: metrics). */
export interface GatewayControl {
  /** The config new requests use. */
  readonly config: GatewayConfig;
  /**
   * Applies a new config to new requests (its agents' TLS settings included: routing/upstream-pools.ts);
   * in-flight exchanges keep the limits and connection settings they started with.
   */
  setConfig(next: GatewayConfig): void;
  /** SSE streams to hosts open right now. */
  readonly openStreams: number;
  /** Exchanges whose host answer is not yet over (closed, or cut: `cutOpenExchanges`) right now. */
  readonly openExchanges: number;
  /**
   * `openExchanges` less the SSE streams answering no request (the standalone GET stream, a
   * long-lived one, a POSTed notification's): the exchanges a graceful shutdown waits for
   * before it ends those streams (src/shutdown-streams.ts).
   */
  readonly requestsInFlight: number;
  /**
   * Requests pipelined on hosts' connections (HTTP/1.1) waiting for the answers before them to
   * be written, not yet sent to a seller, right now (routing/pipelined-turn.ts).
   */
  readonly pipelinedWaiting: number;
  /**
   * Where the resume secret came from, as the codec was built at start-up (a reload does not
   * change it): `configured` (`resume.secret` or `ADCP_GATEWAY_RESUME_SECRET`), or
   * `per_process`, the random secret made when none is, whose tokens no other process verifies.
   * The `shutting down` line's `resume_secret` (cli.ts).
   */
  readonly resumeSecret: 'configured' | 'per_process';
  /**
   * Ends the open SSE streams a shutdown's `phase` (default `final`) ends (response/pipeline.ts
   * SseShutdownPhase, SseShutdownEnd); returns how many it ended. `grace` ends none;
   * `no_requests` ends those answering no request, plainly; `final` ends every one: plainly
   * when it can be resumed (a configured secret, an event id sent) or answers no request, else
   * with `gateway_shutdown` for its request's id (a hostile new user's trial 13, M1). Each
   * stream ended plainly gets the `retry:` of the config's `shutdown_sse_retry_ms` just before
   * its end (response/shutdown-retry.ts). `onEnded`: called with the exchange of each stream
   * this call ended, its outcome set, and that setting (src/shutdown-streams.ts lists the calls
   * ended `resumable_end`).
   */
  endStreams(phase?: SseShutdownPhase, onEnded?: (exchange: Exchange, retryMs: number) => void): number;
  /**
   * For a shutdown's forced exit, called just before `process.exit` (cli.ts): ends every
   * exchange whose host answer is still open (not yet `close`d) with outcome `shutdown_cut`,
   * writing its `exchange` line (synchronously, into the log destination's buffer, which the
   * exit flushes) and calling the `onExchangeEnd` listeners; returns how many. Their
   * connections are left open, for the exit to close. Source: a new user's trial, where such
   * exchanges wrote no line (test/regressions/shutdown-grace-cut-exchange-logged.test.ts).
   */
  cutOpenExchanges(): number;
  /**
   * Registers a listener called once per exchange when the host's response is over (or a
   * shutdown's forced exit cut it first: `cutOpenExchanges`), with the HTTP status sent to
   * the host (null when no response head went out).
   */
  onExchangeEnd(listener: (exchange: Exchange, hostStatus: number | null) => void): void;
  /** This gateway's metrics (`/metrics`; `incDiscoveryOvershoot`, `incConfigReload`). */
  readonly metrics: GatewayMetrics;
  /** The app serving /healthz, /readyz and /metrics when `ops_listen` is set (`listenAll` listens on it; `app.close()` closes it), else undefined. */
  readonly opsApp: FastifyInstance | undefined;
  /** `false`: /readyz answers 503 (`draining`), e.g. from the start of a shutdown. Ready also requires the server to be listening. */
  setReady(ready: boolean): void;
  /** The per-agent backoff and buffered-bytes cap (src/admission/agent-guard.ts): its state, for metrics and tests. */
  readonly guard: AgentGuard;
}

declare module 'fastify' {
  interface FastifyInstance {
    readonly gateway: GatewayControl;
  }
}

/**
 * How often Node's HTTP server checks its connections against `request_timeout_ms` (its
 * default, 30 s, would let a request overrun its timeout by up to that much): the timeout
 * fires within a second of its time.
 */
const CONNECTIONS_CHECK_MS = 1_000;

/** Node's head timeout: its default 60 s, or the request timeout when that is shorter (the head is part of the request). */
function headersTimeoutMs(requestTimeoutMs: number): number {
  return Math.min(60_000, requestTimeoutMs);
}

/**
 * A reloaded `request_timeout_ms` on a running listener: the two settings `serverOptions` gives
 * a server from it (`requestTimeout`, and `headersTimeout` by {@link headersTimeoutMs}), which
 * Node reads at each connection check. The only per-server settings a reload changes.
 */
function applyRequestTimeout(server: { requestTimeout: number; headersTimeout: number }, requestTimeoutMs: number): void {
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = headersTimeoutMs(requestTimeoutMs);
}
