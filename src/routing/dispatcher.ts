/**
 * The upstream dispatcher: one undici Agent for every seller, with
 * - TLS certificates verified for every upstream (@fastify/reply-from does not verify by
 *   default: ARCHITECTURE §5); an agent may opt out explicitly with `tls_insecure_skip_verify`;
 * - no undici body timeout (it would cut SSE streams; the response pipeline runs its own
 *   deadlines and SSE idle timeout: ARCHITECTURE §5) and no headers timeout (the exchange
 *   deadline covers the wait for headers);
 * - an interceptor that ties each upstream request to its exchange, so the gateway can abort
 *   it when a deadline passes or the host disconnects (@fastify/reply-from passes no signal).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { EXCHANGE_HEADER } from '../request/headers.js';

/** What the gateway learns about one upstream request (registered under its exchange key). */
export interface UpstreamHooks {
  /** The request starts (undici `onRequestStart`: connected, about to write); receives the function that aborts it. */
  onStart(abort: (reason: Error) => void): void;
  /**
   * The request is over for undici (`onResponseEnd` or `onResponseError`): from here on
   * aborting it is a no-op (undici ignores an abort of a completed or errored request), so
   * the caller need not build an abort reason.
   */
  onEnd(): void;
}

export type AbortRegistry = Map<string, UpstreamHooks>;

export interface UpstreamDispatcher {
  readonly dispatcher: Dispatcher;
  /** Registers the exchange `key`; `hooks.onStart` receives the abort function when the request starts. */
  register(key: string, hooks: UpstreamHooks): void;
  unregister(key: string): void;
  close(): Promise<void>;
}

/**
 * The handler undici calls for a registered exchange's request: forwards every callback to
 * @fastify/reply-from's handler and reports the start and the end. A class (one object per
 * request, shared methods) rather than an object literal of closures.
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
 * @param isInsecureOrigin tells whether an origin (`https://host:port`) belongs to an agent that
 *   opted out of TLS verification. Read per connection, so a config reload applies to new connections.
 */
export function createUpstreamDispatcher(isInsecureOrigin: (origin: string) => boolean): UpstreamDispatcher {
  const secure = buildConnector({ rejectUnauthorized: true });
  const insecure = buildConnector({ rejectUnauthorized: false });
  const agent = new Agent({
    bodyTimeout: 0,
    headersTimeout: 0,
    connect(opts, cb) {
      const origin = `${opts.protocol}//${opts.hostname}:${opts.port || (opts.protocol === 'https:' ? 443 : 80)}`;
      return (opts.protocol === 'https:' && isInsecureOrigin(origin) ? insecure : secure)(opts, cb);
    },
  });
  const pending: AbortRegistry = new Map();

  const interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    const headers = opts.headers as Record<string, string | string[] | undefined> | undefined;
    const key = headers?.[EXCHANGE_HEADER];
    // undefined rather than `delete`: undici skips undefined header values, and a delete
    // turns the object into a slow dictionary-mode one for everything that reads it next.
    if (headers && key !== undefined) headers[EXCHANGE_HEADER] = undefined;
    const hooks = typeof key === 'string' ? pending.get(key) : undefined;
    if (!hooks) return dispatch(opts, handler);
    return dispatch(opts, new ExchangeHandler(handler as Dispatcher.DispatchHandler, hooks));
  };

  return {
    dispatcher: agent.compose(interceptor),
    register: (key, hooks) => void pending.set(key, hooks),
    unregister: (key) => void pending.delete(key),
    close: () => agent.close(),
  };
}
