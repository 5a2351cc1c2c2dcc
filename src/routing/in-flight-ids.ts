/**
 * The request ids a host has in flight in each MCP session, per seller endpoint, so that a
 * request reusing one is refused before it reaches the seller.
 *
 * MCP Basic, Requests (2025-03-26, 2025-06-18, 2025-11-25): "The request ID MUST NOT have
 * been previously used by the requestor within the same session." A host that broke it had
 * both requests forwarded, and the MCP TypeScript SDK's StreamableHTTPServerTransport maps
 * each response to its stream by request id: the second request's stream took the first's
 * mapping and got its answer, and the first waited until sse_idle_timeout_ms for one that
 * never came (hostile trial 54, F4:
 * test/regressions/duplicate-in-flight-id-hangs-first-call.test.ts). A batch holding one id
 * twice fared no better: the SDK answered the first and closed the stream, and the second got
 * the gateway's `upstream_reset`.
 *
 * What is refused (routing/handler.ts; `invalid_request`, HTTP 400, docs/errors.md "Request
 * ids in flight"): a POSTed request whose id is in flight in the same seller endpoint (the
 * agent's `url`: two agents of one seller URL share its sessions, and its transport's map of
 * ids; re-read of session 33) and session (the host's `Mcp-Session-Id`, exactly), for its id; a POSTed batch holding such an id, or holding
 * one id more than once, id null (as every refusal of a batch). Ids compare as the seller's
 * transport tells them apart: a string and a number are never one id (`"1"` is not `1`); a
 * string is the same string; a number the same double (`7.0` is `7`, `-0` is `0`; and, since
 * the MCP TypeScript SDK maps responses by the parsed id, `1e-400` is `0` and
 * `9007199254740993` is `9007199254740992`: two ids JSON-RPC keeps apart that such a seller
 * cannot, so the second was answered with the first's response; re-read of session 33).
 *
 * What is in flight: a request (or a batch's requests) from the moment the handler takes it
 * (its exchange is made; a backoff wait included) until its exchange ends (routing/handler.ts
 * `end`: the host's answer closed, whatever ended it: the answer delivered, JSON or the end
 * of its SSE stream; a minted error, a timeout, a refusal after admission; the host leaving;
 * a shutdown's cut). A stream resumed with `Last-Event-ID` (a GET) continues a request that
 * went out already: it is never refused and holds no id, so once a request's stream is cut
 * (its exchange over, `resumable_end`) its id is free, while the host resumes and after. Not tracked: requests without an `Mcp-Session-Id` (a
 * stateless seller gives none, so there is no session to scope the rule to: two hosts of one
 * agent may use the same ids, as for cancellations, routing/cancellations.ts), notifications
 * and a host's responses (the id of a response is the seller's).
 *
 * Memory: one key per request in flight with a session (a batch's, one per request in it,
 * at most its agent's max_batch_messages), added when its exchange opens and removed when it
 * ends; so what is held is bounded by the exchanges in flight (their own bounds: connections,
 * MAX_WAITING_PER_CONNECTION pipelined per connection, backoff's MAX_WAITERS), and a session
 * with nothing in flight holds nothing: no per-session state outlives its last request, so a
 * session's end (DELETE, expiry) needs nothing of its own. Cost per request with a session:
 * one key string (seller url, session, id) built and hashed, one `has`, one `add`, one `delete`.
 * A flat `Set` of keys, not a map of sessions to their ids: a host keeps one or a few calls
 * in flight per session, so a per-session entry would be made and dropped for nearly every
 * request; the `Set` holds strings only (no exchange), so what V8 keeps of its tables under
 * churn (src/inflight-table.ts, issue 5) is a few short strings.
 */
import type { RpcIdRef, RpcPeek } from '../exchange.js';
import { shownInMessage } from '../errors/local-reply.js';

/** The keys a request holds while in flight ({@link InFlightRequestIds.claim}): none, one, or a batch's. */
export type HeldIds = string | readonly string[] | undefined;

/** What {@link InFlightRequestIds.claim} gives: the ids now held for the request, or the message of its refusal. */
export type IdClaim = { readonly held: HeldIds; readonly refusal?: undefined } | { readonly held?: undefined; readonly refusal: string };

const NOTHING_HELD: IdClaim = { held: undefined };

/** The MCP rule, as every message of these refusals cites it. */
const RULE = '(MCP: a request ID must not be reused within a session)';

export class InFlightRequestIds {
  private readonly keys = new Set<string>();

  /** Ids held now, over every seller endpoint and session. */
  get size(): number {
    return this.keys.size;
  }

  /**
   * Holds the ids of `rpc`, a message POSTed to the seller endpoint `seller` (the agent's url)
   * in session `session`, or tells why it is refused: one of its ids is in flight in that
   * endpoint and session, or a batch
   * holds one id twice (the message of an `invalid_request` refusal; nothing held then). A
   * notification, a host's response, a batch without requests, or no session: nothing held.
   * The held ids go back with {@link release}, once, when the request's exchange ends.
   */
  claim(seller: string, session: string | undefined, rpc: RpcPeek): IdClaim {
    if (session === undefined) return NOTHING_HELD;
    if (rpc.kind === 'request') {
      const key = `${seller} ${session} ${idKey(rpc)}`;
      if (this.keys.has(key)) {
        return { refusal: `Invalid Request: request id ${shownId(rpc)} is already in flight in this session ${RULE}; it was not sent to the seller: send it with an id not used before in this session.` };
      }
      this.keys.add(key);
      return { held: key };
    }
    const refs = rpc.kind === 'batch' ? rpc.batchRequestIds : undefined;
    if (refs === undefined || refs.length === 0) return NOTHING_HELD;
    const prefix = `${seller} ${session} `;
    const batchKeys: string[] = [];
    const seen = new Set<string>();
    for (const ref of refs) {
      const key = prefix + idKey(ref);
      if (this.keys.has(key)) {
        return {
          refusal: `Invalid Request: the batch holds request id ${shownId(ref)}, which is already in flight in this session ${RULE}; the batch was not sent to the seller: send it with ids not used before in this session.`,
        };
      }
      if (seen.has(key)) {
        return { refusal: `Invalid Request: the batch holds request id ${shownId(ref)} more than once ${RULE}; the batch was not sent to the seller: give each of its requests its own id.` };
      }
      seen.add(key);
      batchKeys.push(key);
    }
    for (const key of batchKeys) this.keys.add(key);
    return { held: batchKeys };
  }

  /** Gives back what {@link claim} held (a no-op for nothing held). Call it once per claim. */
  release(held: HeldIds): void {
    if (held === undefined) return;
    if (typeof held === 'string') {
      this.keys.delete(held);
      return;
    }
    for (const key of held) this.keys.delete(key);
  }
}

/**
 * The key of a request id: `s` and the string; `n` and the double a number parses to (the
 * peek's `id`; String(-0) is `0`), so ids one double holds share a key (see the header);
 * `z` for null (refused by the peek, request/peek.ts, kept apart all the same).
 */
function idKey(ref: RpcIdRef): string {
  const id = ref.id;
  if (typeof id === 'string') return `s${id}`;
  if (id === null) return 'z';
  return `n${String(id)}`;
}

/** An id as a refusal's message shows it: a number as the host wrote it, a string quoted; either cut to its first 64 characters. */
function shownId(ref: RpcIdRef): string {
  const id = ref.id;
  if (typeof id === 'string') return JSON.stringify(shownInMessage(id));
  return shownInMessage(ref.idText ?? String(id));
}
