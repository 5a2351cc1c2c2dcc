/**
 * The upstream dispatcher: what @fastify/reply-from sends every seller request through, with
 * - each request on the connections of its agent's pool, one pool per (origin, TLS settings)
 *   (upstream-pools.ts: an agent's `tls_insecure_skip_verify` reaches no other agent at its
 *   origin, and a reload that changes an agent's TLS settings moves it to new connections);
 *   the pool rides with the exchange's hooks ({@link UpstreamHooks.pool});
 * - TLS certificates verified for every upstream (@fastify/reply-from does not verify by
 *   default: ARCHITECTURE §5); an agent may opt out explicitly with `tls_insecure_skip_verify`;
 * - no undici body timeout (it would cut SSE streams; the response pipeline runs its own
 *   deadlines and SSE idle timeout: ARCHITECTURE §5) and no headers timeout (the exchange
 *   deadline covers the wait for headers);
 * - an interceptor that ties each upstream request to its exchange, so the gateway can abort
 *   it when a deadline passes or the host disconnects (@fastify/reply-from passes no signal):
 *   the exchange's {@link UpstreamHooks} ride in the request's header object under the
 *   {@link UPSTREAM_HOOKS} symbol ({@link withUpstreamHooks});
 * - for an exchange's plain JSON answer (2xx, JSON media type, no Content-Encoding), a
 *   {@link LightBody} in place of undici's `Readable` body (light-body.ts says why and what
 *   it supports); every other answer keeps undici's body;
 * - a status outside 100-599 refused as the head arrives: the request is aborted with an
 *   {@link UndefinedStatusError}, which reaches the exchange as a failure (undefined-status.ts);
 * - the wire bytes of each response (head, chunk framing and extensions included) bounded on
 *   its connection by the exchange's {@link UpstreamHooks.wire} rule (wire-meter.ts: the
 *   handler opens the response's meter when undici starts the request, counts the body bytes
 *   it is given, and closes the meter when the request is over; review 37, F1);
 * - a failure before the response head goes to the exchange's `onFailure` hook, not to
 *   @fastify/reply-from's callback, which would log it as a `response errored` warning with
 *   a stack beside the exchange line that reports it ({@link UpstreamHooks.onFailure}).
 */
import type { AsyncResource } from 'node:async_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Agent, Dispatcher, util } from 'undici';
import type { AgentConfig } from '../config/types.js';
import { bodyKind } from '../response/content-type.js';
import { LightBody } from './light-body.js';
import { isUndefinedStatus, UndefinedStatusError } from './undefined-status.js';
import { UPSTREAM_POOL_OPTIONS, UpstreamPools, type UpstreamPool } from './upstream-pools.js';
import type { ResponseMeter, WireMeteredHandler, WireRule, WireSlot } from './wire-meter.js';

/** What the gateway learns about one upstream request (carried by its headers: {@link withUpstreamHooks}). */
export interface UpstreamHooks {
  /** The request starts (undici `onRequestStart`: connected, about to write); receives the function that aborts it. */
  onStart(abort: (reason: Error) => void): void;
  /**
   * The request is over for undici (`onResponseEnd` or `onResponseError`): from here on
   * aborting it is a no-op (undici ignores an abort of a completed or errored request), so
   * the caller need not build an abort reason.
   */
  onEnd(): void;
  /**
   * The request failed before its response head (connect, TLS, a reset, a head undici
   * cannot parse, or the gateway's own abort): the exchange answers for it. When set, such an
   * error is given here and not to the wrapped legacy handler, so the `request()` callback
   * (@fastify/reply-from's) never runs for it: reply-from logs every error it gets as a
   * `response errored` warning with a stack, whatever its options say (index.js, 12.6.5),
   * beside the exchange line that already reports the failure (a new user's trial:
   * test/regressions/response-errored-duplicate-warning.test.ts). Called after what is
   * already queued (a microtask) and in the request's async context, as undici's own handler
   * calls that callback. Not called for an error after the head: that one reaches the body.
   * Undefined: every error goes to the wrapped handler.
   */
  onFailure?(err: Error): void;
  /**
   * The pool whose connections carry the request: its agent's ({@link UpstreamDispatcher.poolFor},
   * looked up once when the exchange starts). Undefined: a pool per origin that verifies
   * certificates.
   */
  readonly pool?: UpstreamPool | undefined;
  /**
   * How the response's wire bytes are bounded on its connection (wire-meter.ts): the exchange's
   * `max_response_bytes` total, or the framing rule of a stream without one. Undefined: not
   * metered (the fallback Agent's connections never are).
   */
  readonly wire?: WireRule | undefined;
}

/**
 * The header-object key under which a request carries its exchange's {@link UpstreamHooks}
 * to the dispatcher. A symbol, so it is never a header: @fastify/reply-from copies the
 * object it gets back from `rewriteRequestHeaders` with `Object.assign` (symbols included)
 * and hands the copy to undici as `opts.headers`, whose `dispatch` is where the hooks are
 * read; undici itself walks header names with `Object.keys`, which skips symbols.
 *
 * Why not a table of hooks by exchange key, with the key in a header (as before): inserting
 * a fresh string key into a dictionary-mode object (and deleting it) per request cost ~2 µs
 * of a 1 KiB request's CPU (issue 5), for a lookup the header object can carry itself.
 */
export const UPSTREAM_HOOKS: unique symbol = Symbol('adcp-gateway upstream hooks');

/** A request header object that may carry an exchange's hooks. */
type HeadersWithHooks = Record<string, string | string[] | undefined> & { [UPSTREAM_HOOKS]?: UpstreamHooks | undefined };

/**
 * Attaches `hooks` to a request's header object (in place) and returns it: the dispatcher
 * calls `hooks.onStart` when undici starts that request and `hooks.onEnd` when it is over.
 */
export function withUpstreamHooks<H extends Record<string, string | string[] | undefined>>(headers: H, hooks: UpstreamHooks): H {
  (headers as HeadersWithHooks)[UPSTREAM_HOOKS] = hooks;
  return headers;
}

export interface UpstreamDispatcher {
  /** The dispatcher for every seller request; a request whose headers carry {@link UPSTREAM_HOOKS} reports to them and goes on their pool. */
  readonly dispatcher: Dispatcher;
  /**
   * Applies a config's agents (at start-up and on every reload, before its requests): each gets
   * the pool of its origin and TLS settings; pools no agent uses any more close once their
   * requests are over (upstream-pools.ts).
   */
  configure(agents: Iterable<AgentConfig>): void;
  /** The pool of an agent (of the config applied last, or of an earlier one): a WeakMap lookup. */
  poolFor(agent: AgentConfig): UpstreamPool;
  close(): Promise<void>;
}

/**
 * The handler undici calls for a request that carries its exchange's hooks: forwards every callback to
 * @fastify/reply-from's handler and reports the start and the end. A class (one object per
 * request, shared methods) rather than an object literal of closures.
 *
 * It speaks undici's legacy handler API (`onConnect(abort)` ... `onComplete`), the API of
 * the handler it wraps (undici's `request()` handler, which @fastify/reply-from uses): undici
 * then calls it directly. A new-API wrapper made undici adapt each callback twice (an
 * UnwrapHandler around it, a WrapHandler inside it, parsing the response headers twice),
 * ~2 µs a request (issue 5). `onConnect` is where undici's new-API `onRequestStart` comes
 * from (writeH1, on a connected socket), and `abort` is the function its controller calls.
 */
class LegacyExchangeHandler implements WireMeteredHandler {
  /** The connection's slot, handed over by a metered client at dispatch (wire-meter.ts MeteredClient). */
  wireSlot: WireSlot | undefined = undefined;
  /** This response's wire meter, from `onConnect` on (when the request has a rule and a metered connection). */
  private meter: ResponseMeter | undefined = undefined;
  private abort: ((reason?: Error) => void) | undefined;
  /** Set when this response's body is a {@link LightBody}: the wrapped handler then sees nothing more. */
  private light: LightBody | undefined;
  /** Set once a final (2xx-5xx) response head was handed on: from then on an error belongs to the body. */
  private responded = false;

  constructor(
    private readonly h: LegacyHandler,
    private readonly hooks: UpstreamHooks,
    /** The `request()` callback the wrapped handler would call, when known ({@link ExchangeRouter.request}). */
    private readonly respond: RequestCallback | undefined,
  ) {}

  onConnect(abort: (reason?: Error) => void, context?: unknown): void {
    this.abort = abort;
    // Opened before the request is written: every byte the seller sends for it counts.
    const slot = this.wireSlot;
    const rule = this.hooks.wire;
    if (slot !== undefined && rule !== undefined) this.meter = slot.begin(rule, abort);
    this.hooks.onStart(abort);
    return this.h.onConnect(abort, context);
  }
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusMessage?: string): boolean {
    const success = statusCode >= 200 && statusCode < 300;
    // A status outside 100-599 is no HTTP answer (undefined-status.ts): the request is aborted
    // with it before the wrapped handler sees it (reply-from's `reply.code(600)` threw, undici
    // took `099` for a 1xx and tripped an assertion); `onError` hands it to the exchange.
    // Judged off the 2xx path only: a 2xx costs no comparison more.
    if (!success && isUndefinedStatus(statusCode)) {
      this.abort!(new UndefinedStatusError(statusCode));
      return false;
    }
    // undici's request handler answers its callback on a final head only (a 1xx is informational).
    if (statusCode >= 200) this.responded = true;
    if (this.respond !== undefined && success) {
      const headers = util.parseHeaders(rawHeaders) as Record<string, string | string[] | undefined>;
      // Exactly the answers the pipeline reads with the JSON stage's direct reader (pipeline.ts).
      if (headers['content-encoding'] === undefined && bodyKind(headers['content-type']) === 'json') {
        const body = (this.light = new LightBody(resume, this.abort!));
        const data = { statusCode, statusText: statusMessage, headers, trailers: {}, opaque: null, body, context: undefined };
        try {
          // In the async context of the request it answers, as undici's handler (an
          // AsyncResource) runs it: undici calls onHeaders in the context of the pooled socket,
          // which is that of whichever request opened the connection; AsyncLocalStorage users
          // (tracing, a logger mixin) would credit this answer's work to that request.
          // test/regressions/light-body-async-context.test.ts
          const scope = this.h as Partial<AsyncResource>;
          if (typeof scope.runInAsyncScope === 'function') scope.runInAsyncScope(this.respond, null, null, data);
          else this.respond(null, data);
        } catch (err) {
          // As undici's request handler does: the body is destroyed, the error thrown again outside undici.
          body.destroy(err as Error);
          queueMicrotask(() => {
            throw err;
          });
        }
        return true;
      }
    }
    return this.h.onHeaders!(statusCode, rawHeaders, resume, statusMessage);
  }
  onData(chunk: Buffer): boolean {
    const meter = this.meter;
    if (meter !== undefined) meter.body += chunk.length;
    if (this.light !== undefined) return this.light.push(chunk);
    return this.h.onData!(chunk);
  }
  onComplete(trailers: Buffer[] | null): void {
    this.meter?.end();
    this.hooks.onEnd();
    if (this.light !== undefined) return this.light.end();
    return this.h.onComplete!(trailers);
  }
  onError(err: Error): void {
    this.meter?.end();
    this.hooks.onEnd();
    const light = this.light;
    // As undici's request handler does: after what is already queued to run.
    if (light !== undefined) return queueMicrotask(() => light.fail(err));
    const onFailure = this.hooks.onFailure;
    if (!this.responded && onFailure !== undefined) {
      // Instead of the wrapped handler, whose only work before a head is calling back (no
      // response body yet; reply-from's request body is a string or a Buffer, and it passes
      // no abort signal): nothing of it is left to release.
      const scope = this.h as Partial<AsyncResource>;
      queueMicrotask(() => {
        if (typeof scope.runInAsyncScope === 'function') scope.runInAsyncScope(onFailure, this.hooks, err);
        else onFailure.call(this.hooks, err);
      });
      return;
    }
    return this.h.onError(err);
  }
  onUpgrade(statusCode: number, rawHeaders: Buffer[], socket: Duplex): void {
    this.meter?.end();
    return this.h.onUpgrade!(statusCode, rawHeaders, socket);
  }
}

/** The callback of undici's `request(opts, callback)`, as @fastify/reply-from passes it. */
type RequestCallback = (err: Error | null, data?: Dispatcher.ResponseData | Record<string, unknown>) => void;

/** undici's legacy dispatch handler, as `core/request.js` calls it (`assertRequestHandler`). */
interface LegacyHandler {
  onConnect(abort: (reason?: Error) => void, context?: unknown): void;
  onError(err: Error): void;
  onHeaders?(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusMessage?: string): boolean;
  onData?(chunk: Buffer): boolean;
  onComplete?(trailers: Buffer[] | null): void;
  onUpgrade?(statusCode: number, rawHeaders: Buffer[], socket: Duplex): void;
  onBodySent?(chunk: unknown): void;
  onRequestSent?(): void;
  onResponseStarted?(): void;
}

/**
 * The same for a handler on undici's new API (`onRequestStart` ...): not what reply-from
 * passes today, kept for any other caller. Every error goes to that handler (`onFailure` is
 * for reply-from's callback, which this API has not). Not metered on the wire: the pool wraps
 * it in undici's UnwrapHandler before its client sees it (wire-meter.ts), so only the body
 * bytes count for it.
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  constructor(
    private readonly h: Dispatcher.DispatchHandler,
    private readonly hooks: UpstreamHooks,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.hooks.onStart((reason) => controller.abort(reason));
    return this.h.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    return this.h.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    if (isUndefinedStatus(statusCode)) return controller.abort(new UndefinedStatusError(statusCode));
    return this.h.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    return this.h.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.hooks.onEnd();
    return this.h.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: Dispatcher.DispatchController, err: Error): void {
    this.hooks.onEnd();
    return this.h.onResponseError?.(controller, err);
  }
}

/**
 * Wraps `handler` for the exchange whose `hooks` its request carries. A legacy handler's
 * optional callbacks are copied only when it has them, so undici sees the same set of
 * callbacks as on the handler itself.
 */
function wrapForExchange(hooks: UpstreamHooks, handler: Dispatcher.DispatchHandler, respond: RequestCallback | undefined): Dispatcher.DispatchHandler {
  if (typeof handler.onRequestStart === 'function') return new ExchangeHandler(handler, hooks);
  const legacy = handler as unknown as LegacyHandler;
  const wrapped = new LegacyExchangeHandler(legacy, hooks, respond) as unknown as Record<string, unknown>;
  for (const name of OPTIONAL_LEGACY_CALLBACKS) {
    const fn = legacy[name];
    if (typeof fn === 'function') wrapped[name] = (...args: unknown[]) => (fn as (...a: unknown[]) => unknown).apply(legacy, args);
  }
  return wrapped as unknown as Dispatcher.DispatchHandler;
}

/** Legacy callbacks undici calls only when the handler has them (api-request's handler has none). */
const OPTIONAL_LEGACY_CALLBACKS = ['onBodySent', 'onRequestSent', 'onResponseStarted'] as const;

/**
 * The dispatcher whose `dispatch` ties a request to its exchange (no `compose`: a Proxy and
 * a handler adapter per request) and sends it on its exchange's pool, and whose `request`
 * lets that tie give a plain JSON answer a {@link LightBody}: `request(opts, callback)`
 * dispatches synchronously (undici `api-request.js`), so the callback it was given is the one
 * its handler would call, and `dispatch` hands it to the exchange's wrapper. A request with
 * no hooks (or hooks without a pool) goes through `fallback`, an undici Agent (pools by
 * origin) that verifies certificates.
 */
class ExchangeRouter extends Dispatcher {
  private pendingCallback: RequestCallback | undefined;

  constructor(
    private readonly pools: UpstreamPools,
    private readonly fallback: Agent,
  ) {
    super();
  }

  override request(...args: unknown[]): never {
    const callback = args[1];
    this.pendingCallback = typeof callback === 'function' ? (callback as RequestCallback) : undefined;
    try {
      return (super.request as (...a: unknown[]) => never)(...args);
    } finally {
      this.pendingCallback = undefined;
    }
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const respond = this.pendingCallback;
    this.pendingCallback = undefined;
    const headers = opts.headers as HeadersWithHooks | undefined;
    const hooks = headers?.[UPSTREAM_HOOKS];
    if (hooks === undefined) return this.fallback.dispatch(opts, handler);
    // undefined rather than `delete`: the object keeps its shape for what reads it next.
    headers![UPSTREAM_HOOKS] = undefined;
    const wrapped = wrapForExchange(hooks, handler, respond);
    const pool = hooks.pool;
    return pool === undefined ? this.fallback.dispatch(opts, wrapped) : this.pools.dispatch(pool, opts, wrapped);
  }

  override async close(): Promise<void> {
    await Promise.all([this.pools.close(), this.fallback.close().catch(() => undefined)]);
  }

  override async destroy(): Promise<void> {
    await Promise.all([this.pools.destroy(), this.fallback.destroy().catch(() => undefined)]);
  }
}

/** The upstream dispatcher; give it each config's agents with `configure` before their requests. */
export function createUpstreamDispatcher(): UpstreamDispatcher {
  const pools = new UpstreamPools();
  const router = new ExchangeRouter(pools, new Agent({ ...UPSTREAM_POOL_OPTIONS, connect: { rejectUnauthorized: true } }));
  return {
    dispatcher: router,
    configure: (agents) => pools.configure(agents),
    poolFor: (agent) => pools.poolFor(agent),
    close: () => router.close(),
  };
}
