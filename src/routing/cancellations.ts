/**
 * The requests in flight that a host's `notifications/cancelled` can name, and the marking of
 * the one it names (Exchange.cancelled). MCP "Cancellation": a host cancels a request it sent
 * with `notifications/cancelled` `{requestId}`; the receiver "SHOULD NOT send a response for
 * the cancelled request", and the host drops the id (the MCP TypeScript SDK client rejects
 * the call at once and logs any later response for it as "Received a response for an unknown
 * message ID"). A seller that honours it sends nothing more for the request and ends its
 * stream (at once, or when the session is deleted); the gateway used to take that end for a
 * failure and mint `upstream_reset` (or `sse_idle`, `deadline_exceeded`, `sse_deadline`) for
 * the dropped id, counted as a limit breach. Now the marked exchange ends plainly, outcome
 * `cancelled` (errors/local-reply.ts). The notification itself is forwarded as before, always.
 *
 * What is matched: the agent (by name), the MCP session (the host's `Mcp-Session-Id`, exactly)
 * and the request id (mcp/cancelled-id.ts sameRequestId: exactly, as a seller's response id is
 * compared). MCP makes request ids unique within a session only, so:
 * - a request without a session (a stateless seller, which gives none) is never registered,
 *   and a cancellation without one marks nothing: two hosts of one agent may use the same
 *   ids, and one host's cancellation would silence another's error (a call then waits to its
 *   own timeout). Such a request still gets the minted error, which its client ignores;
 * - only a single request's exchange (a POST, or its stream resumed with `Last-Event-ID`,
 *   rpc kind `request`) is registered; a batch's requests (2025-03-26) are not (a batch's
 *   stream answers several ids, and one cancelled among them would need its own end), nor is
 *   a cancellation inside a batch read: their errors are minted as before.
 *
 * Memory: only exchanges in flight are held, in an InFlightTable (src/inflight-table.ts: no
 * key, no hashing, nothing allocated per request once grown), added when the exchange is
 * made and removed when it ends (routing/handler.ts `end`); no set of cancelled ids is kept.
 * A cancellation, rare, walks the table: a few comparisons per exchange in flight (agent and
 * session first). Cost per request: one header read, one add and one remove
 * (test/unit/cancellations.test.ts measures it).
 */
import { InFlightTable } from '../inflight-table.js';
import type { Exchange } from '../exchange.js';
import type { WrittenRequestId } from '../mcp/cancelled-id.js';
import { isRequestId } from '../response/json-value-at.js';

/** The slot of an exchange not registered (no session, not a single request). */
export const NOT_REGISTERED = -1;

export class CancellableRequests {
  private readonly table = new InFlightTable<Exchange>();

  /** Registered exchanges now. */
  get size(): number {
    return this.table.size;
  }

  /**
   * Registers `exchange` when a cancellation can name it (a single request with a session:
   * module doc); its slot for {@link unregister}, or {@link NOT_REGISTERED}.
   */
  register(exchange: Exchange): number {
    return exchange.session === undefined || exchange.rpc.kind !== 'request' ? NOT_REGISTERED : this.table.add(exchange);
  }

  /** Removes `exchange` (its slot from {@link register}); a no-op when not registered or removed already. */
  unregister(slot: number, exchange: Exchange): void {
    if (slot !== NOT_REGISTERED) this.table.remove(slot, exchange);
  }

  /**
   * Marks cancelled (Exchange.cancelled) each registered exchange of agent `agent` in session
   * `session` whose request id is `id` as written (compared as a seller's response id is:
   * response/json-value-at.ts isRequestId); how many it marked (0 when none is in flight: the
   * request was answered already, or never went through this gateway).
   */
  cancel(agent: string, session: string, id: WrittenRequestId): number {
    let marked = 0;
    this.table.forEach((exchange) => {
      if (exchange.session === session && exchange.agent.name === agent && isRequestId(id.bytes, id.range, exchange.rpc)) {
        exchange.cancelled = true;
        marked++;
      }
    });
    return marked;
  }
}
