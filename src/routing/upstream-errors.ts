/**
 * How routing/handler.ts answers a failure before the seller's response head, and a failure of
 * the response pipeline itself.
 */
import { maxHeaderSize } from 'node:http';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Exchange } from '../exchange.js';
import { answerWithLocalError, refuse } from '../errors/local-reply.js';
import { GATEWAY_FINISHED, findGatewayAbort } from '../errors/abort.js';
import { resetHostConnection } from '../response/host-reset.js';
import { rootCode, transportErrorCode } from './upstream-failure.js';

/**
 * Maps a failure before the seller's response headers to a local error (ARCHITECTURE §3).
 * `upstream_unreachable` says the request was NOT delivered (no "may have completed" warning),
 * so it is only for failures before the request started: once it did, any failure (a reset,
 * a response head undici cannot parse) is `upstream_reset`
 * (test/regressions/unreadable-response-head.test.ts), except a response head over undici's
 * header limit: `upstream_headers_too_large`, with that limit ({@link upstreamFailureReason}).
 */
export function onUpstreamError(exchange: Exchange, reply: FastifyReply, error: unknown, requestStarted: boolean): void {
  if (exchange.finished || findGatewayAbort(error)) return;
  const reason = upstreamFailureReason(error, requestStarted);
  // Which transport failure it was, for the exchange line (`upstream_error`): the reason alone
  // does not tell a typo'd host from a seller that is down (trial 50, finding 1).
  exchange.upstreamError = transportErrorCode(error);
  answerWithLocalError(
    exchange,
    reply,
    reason === 'upstream_headers_too_large'
      ? { reason, limitBytes: UPSTREAM_HEAD_LIMIT_BYTES }
      : { reason, limitBytes: exchange.limits.max_response_bytes, observedBytes: 0 },
  );
}

/**
 * The limit undici reads a seller's response head with: `maxHeaderSize`, which the gateway's
 * pools leave at its default, Node's `http.maxHeaderSize` (16 KiB unless
 * --max-http-header-size says otherwise), counted over header names and values.
 */
export const UPSTREAM_HEAD_LIMIT_BYTES = maxHeaderSize;

/**
 * The reason of a failure before the response head (see `onUpstreamError`). A head over
 * undici's limit (`UND_ERR_HEADERS_OVERFLOW`) is `upstream_headers_too_large`, as a head the
 * host could not read is (pipeline.ts): it was `upstream_reset`, "connection closed ... or
 * could not be read", with no word of the headers' size (a hostile new user's trial 15, L3:
 * test/regressions/seller-headers-over-limit-reported-as-reset.test.ts). The request was
 * delivered then, whatever `requestStarted` says.
 */
export function upstreamFailureReason(error: unknown, requestStarted: boolean): 'upstream_reset' | 'upstream_unreachable' | 'upstream_headers_too_large' {
  const code = rootCode(error);
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return 'upstream_headers_too_large';
  return requestStarted || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE' ? 'upstream_reset' : 'upstream_unreachable';
}

export function internalError(exchange: Exchange, reply: FastifyReply, log: FastifyBaseLogger, err: unknown): void {
  log.error({ err, agent: exchange.agent.name }, 'response pipeline failed');
  if (exchange.finished) return;
  exchange.finished = true;
  exchange.outcome = 'local_error';
  exchange.reason = 'internal_error';
  exchange.abortUpstream(GATEWAY_FINISHED);
  if (exchange.sseStarted || reply.raw.headersSent) {
    resetHostConnection(reply.raw);
    return;
  }
  refuse(reply, 'internal_error', exchange.rpc, 'Internal error in the gateway.');
}
