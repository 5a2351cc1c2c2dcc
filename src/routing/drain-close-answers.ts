/**
 * While the gateway drains, every response whose head is written says `Connection: close`, and
 * Node closes the connection after it: no host reuses a connection the gateway is about to
 * close. Fastify sets `Connection: close` only on the responses to requests it routes once the
 * app closes; an exchange already in flight at the signal wrote its head with
 * `Connection: keep-alive` (`Keep-Alive: timeout=72`), and once it was over the gateway closed
 * the idle connection (app.ts, `closeIdleConnections`): a host that sent its next request on
 * it meanwhile got a reset. Reported failure (a hostile operator's trial 51, finding 2: curl
 * --next reused such a connection and got "Connection reset by peer"):
 * test/regressions/answer-during-drain-invites-reuse.test.ts.
 *
 * How: the listener's responses are of a subclass (Node's `ServerResponse` server option)
 * whose `writeHead` (which every head goes through: `flushHeaders`, an implicit head on the
 * first write) clears `shouldKeepAlive` while draining; Node then writes `Connection: close`
 * and ends the connection after the response (lib/_http_outgoing.js `_storeHeader`). A head
 * written before the signal (an SSE stream's) keeps what it said: that connection closes once
 * its response is over and it is idle. Cost when not draining: one flag read per response.
 */
import { ServerResponse } from 'node:http';
import type { DrainState } from './draining.js';

/** The `ServerResponse` class for a listener that drains with `drain` (see file comment). */
export function drainClosingResponse(drain: DrainState): typeof ServerResponse {
  class DrainClosingResponse extends ServerResponse {}
  const writeHead = ServerResponse.prototype.writeHead as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  DrainClosingResponse.prototype.writeHead = function writeHeadWhileDraining(this: ServerResponse, ...args: unknown[]): ServerResponse {
    if (drain.draining) this.shouldKeepAlive = false;
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
  return DrainClosingResponse as typeof ServerResponse;
}
