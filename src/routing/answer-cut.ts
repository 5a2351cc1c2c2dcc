/**
 * Did the host leave before the answer the gateway had settled was all written?
 *
 * Reported failure: a host that left in the middle of a large JSON answer (the gateway had
 * called `reply.send`, Node was still writing the queued bytes) was logged `ok`
 * (test/regressions/host-leaves-mid-answer-not-ok.test.ts). Node ends such a response as if
 * it were whole: the failed write's callback still runs, so the response emits 'finish',
 * drops its socket, then emits 'close' with `writableFinished` true and `destroyed` true,
 * exactly as on a normal end (Node 20 and 22 checked), and the socket's `writableLength` is
 * back to 0 by then. What differs is the connection: it was destroyed with the write's error
 * (`ECONNRESET`, `EPIPE`), which the socket keeps as `errored`. On a normal end it is null at
 * the response's 'close': that close follows 'finish' within the same tick (nextTick), with
 * no I/O between, so a reset arriving after the last byte was written cannot be seen there.
 *
 * Only answers forwarded from the seller are judged (`ok`, `rewritten`, `resumable_end`): a
 * gateway-made answer keeps `local_error` or `refused`, whose reason is what the log line
 * and the breach counter are about (and the gateway may have destroyed the connection itself
 * with an error: local-reply.ts), unless no byte of it reached the host's connection: then
 * the host left before any of it (unreached-answer.ts, judged in routing/handler.ts `end`).
 */
import type { IncomingMessage } from 'node:http';
import type { Outcome } from '../exchange.js';

/**
 * True when `outcome` is a forwarded answer's and it did not all reach the host's connection:
 * the connection (the socket of `request`, the host's HTTP request) failed before it was all
 * written, or the `response` never finished at all (its connection closed first). (An answer
 * queued behind another on a pipelined connection that died before its turn was the second
 * case once: test/regressions/pipelined-answer-connection-dies.test.ts; such a request is now
 * sent only at its turn, routing/pipelined-turn.ts.) Read once, when the exchange ends
 * (routing/handler.ts `end`): two property reads, no listener.
 */
export function hostLeftMidAnswer(outcome: Outcome | undefined, request: IncomingMessage, response: { readonly writableFinished: boolean }): boolean {
  if (!isForwardedOutcome(outcome)) return false;
  if (!response.writableFinished) return true;
  // `socket` is typed non-null but is not guaranteed for every request object (e.g. a fake one).
  const socket = request.socket as IncomingMessage['socket'] | null;
  return socket !== null && socket.errored != null;
}

/** An answer forwarded from the seller (`ok`, `rewritten`, `resumable_end`): the outcomes a host that never got it all turns into `host_aborted`. */
function isForwardedOutcome(outcome: Outcome | undefined): boolean {
  return outcome === 'ok' || outcome === 'rewritten' || outcome === 'resumable_end';
}
