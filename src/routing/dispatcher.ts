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
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { EXCHANGE_HEADER } from '../request/headers.js';

/** Called when the upstream request starts; receives the function that aborts it. */
export type AbortRegistry = Map<string, (abort: (reason: Error) => void) => void>;

export interface UpstreamDispatcher {
  readonly dispatcher: Dispatcher;
  /** Registers the exchange `key`; `onStart` receives the abort function when the request starts. */
  register(key: string, onStart: (abort: (reason: Error) => void) => void): void;
  unregister(key: string): void;
  close(): Promise<void>;
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
    if (headers && key !== undefined) delete headers[EXCHANGE_HEADER];
    const onStart = typeof key === 'string' ? pending.get(key) : undefined;
    if (!onStart) return dispatch(opts, handler);
    const h = handler as Dispatcher.DispatchHandler;
    return dispatch(opts, {
      onRequestStart(controller, context) {
        onStart((reason) => controller.abort(reason));
        return h.onRequestStart?.(controller, context);
      },
      onRequestUpgrade(controller, statusCode, hdrs, socket) {
        return h.onRequestUpgrade?.(controller, statusCode, hdrs, socket);
      },
      onResponseStart(controller, statusCode, hdrs, statusMessage) {
        return h.onResponseStart?.(controller, statusCode, hdrs, statusMessage);
      },
      onResponseData(controller, chunk) {
        return h.onResponseData?.(controller, chunk);
      },
      onResponseEnd(controller, trailers) {
        return h.onResponseEnd?.(controller, trailers);
      },
      onResponseError(controller, err) {
        return h.onResponseError?.(controller, err);
      },
    });
  };

  return {
    dispatcher: agent.compose(interceptor),
    register: (key, onStart) => void pending.set(key, onStart),
    unregister: (key) => void pending.delete(key),
    close: () => agent.close(),
  };
}
