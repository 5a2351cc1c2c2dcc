/**
 * A seller's status code outside 100-599, refused as its response head arrives
 * (dispatcher.ts), before @fastify/reply-from or undici's request handler reads it.
 *
 * RFC 9110 §15: a status code is three digits, and "All valid status codes are within the range
 * of 100 to 599, inclusive"; llhttp reads any three digits (`000` to `999`). Such a status is
 * no HTTP answer, so no MCP answer: the exchange answers `upstream_not_mcp` with the status in
 * `details.upstream_status` (routing/handler.ts; mcp/local-error.ts NotMcpCause
 * `status_undefined`), as for a 1xx or 3xx final answer: not `upstream_status`, which is a
 * server error (5xx) whose `Retry-After` a host may follow, nor `upstream_reset`, which names
 * a broken connection.
 *
 * Reported failure (hostile trial 28, L1): `HTTP/1.1 600 Weird` reached reply-from, whose
 * `reply.code(600)` threw (a Fastify warning "response has invalid status code" with a stack),
 * and the host got `upstream_reset`; `099` was taken by undici for an interim 1xx and tripped
 * its assertion at the message's end, an "unexpected error" warning
 * (test/regressions/seller-status-over-599-reported-reset.test.ts).
 */
import type { FastifyReply } from 'fastify';
import type { Exchange } from '../exchange.js';
import { answerWithLocalError } from '../errors/local-reply.js';

/** The error a request is aborted with when its response's status is outside 100-599. */
export class UndefinedStatusError extends Error {
  constructor(readonly status: number) {
    super(`the seller answered with HTTP status ${status}, outside 100-599 (RFC 9110 §15)`);
    this.name = 'UndefinedStatusError';
  }
}

/** True for a status outside 100-599 (two comparisons). */
export function isUndefinedStatus(status: number): boolean {
  return status > 599 || status < 100;
}

/**
 * Answers the exchange whose seller sent `status` (outside 100-599): `upstream_not_mcp`,
 * cause `status_undefined`, the status in `details.upstream_status` and in the exchange line.
 * No-op once the exchange is finished (a deadline, the host gone).
 */
export function answerUndefinedStatus(exchange: Exchange, reply: FastifyReply, status: number): void {
  if (exchange.finished) return;
  exchange.upstreamStatus = status;
  answerWithLocalError(exchange, reply, {
    reason: 'upstream_not_mcp',
    limitBytes: exchange.limits.max_response_bytes,
    observedBytes: 0,
    upstreamStatus: status,
    cause: 'status_undefined',
  });
}
