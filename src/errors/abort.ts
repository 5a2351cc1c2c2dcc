/**
 * The error the gateway aborts an upstream request with (deadline, host gone, limit hit).
 * Carrying the local-error input lets whichever callback sees the abort first report the
 * same reason.
 */
import type { LocalErrorInput } from './local-reply.js';

export class GatewayAbortError extends Error {
  override readonly name = 'GatewayAbortError';
  constructor(readonly input: LocalErrorInput | { reason: 'host_aborted' } | { reason: 'finished' }) {
    super(`aborted by the gateway: ${input.reason}`);
  }
}

/** Walks `error.cause` to find a GatewayAbortError, if the abort was ours. */
export function findGatewayAbort(err: unknown): GatewayAbortError | undefined {
  for (let e: unknown = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof GatewayAbortError) return e;
  }
  return undefined;
}
