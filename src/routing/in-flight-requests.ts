/**
 * The requests in flight in each MCP session, per seller endpoint: one registry that both
 * refuses a POSTed request reusing an id still in flight, and finds the request a host's
 * `notifications/cancelled` names (routing/handler.ts). It replaces routing/in-flight-ids.ts
 * (the refusal: a `Set` of key strings) and routing/cancellations.ts (the cancellation: an
 * InFlightTable walked whole), which kept the same requests twice, matched by two rules.
 *
 * Where (the scope of an id): the seller endpoint (the agent's `url`: two agents of one seller
 * URL share its sessions and its transport's map of ids; re-read of session 33; compared as
 * config/agent-url-key.ts agentKeyOf writes it, as resume tokens are signed, so a url only
 * respelled, `/mcp?` or `/m%63p` for `/mcp`, is the same endpoint: hostile trial 56, F2) and the MCP
 * session (the host's `Mcp-Session-Id`, exactly). MCP Basic, Requests (2025-03-26, 2025-06-18,
 * 2025-11-25): "The request ID MUST NOT have been previously used by the requestor within the
 * same session"; so ids are unique within a session only, and a request without a session (a
 * stateless seller gives none) is never registered: nothing scopes its id (two hosts of one
 * agent may use the same ids; one host's cancellation must not silence another's error).
 *
 * What is registered (Exchange, src/exchange.ts), from when the handler takes the request (its
 * exchange is made; a backoff wait included) until its exchange ends (routing/handler.ts `end`:
 * the host's answer closed, whatever ended it: the answer delivered, JSON or the end of its SSE
 * stream; a minted error, a timeout, a refusal after admission; the host leaving; a shutdown's
 * cut):
 * - a POSTed single request (`rpc.kind` 'request'): holds its id, and a cancellation can name it;
 * - a POSTed batch (2025-03-26) with at least one request: holds each request's id; a
 *   cancellation names none of them (a batch's stream answers several ids, and one cancelled
 *   among them would need its own end: their errors are minted as before), nor is a
 *   cancellation inside a batch read;
 * - a single request's stream resumed with `Last-Event-ID` (a GET): it continues a request
 *   that went out already, so it holds no id (never refused, and once the request's own
 *   stream is cut, `resumable_end`, its id is free, while the host resumes and after); a
 *   cancellation can name it. A batch's resumed stream is not registered;
 * - a POSTed single request pipelined (HTTP/1.1) behind another answer on its connection,
 *   while it waits for its turn (routing/pipelined-turn.ts), before its exchange exists
 *   ({@link InFlightRequests.openWaiting}: its seller endpoint, session and id as the peek reads
 *   them then): a cancellation can name it, and it holds no id (its id is judged at its turn,
 *   as before, when its exchange is registered in its place).
 * Notifications, the host's responses and the standalone GET stream are not registered.
 *
 * A mark holds once the seller accepts the cancellation (answers it 2xx), and is withdrawn when
 * it refuses it (a review, Low: {@link PendingCancellation}); a request marked before it is sent
 * is not sent before the answers to the cancellations awaited when its turn came (at most until
 * too little of its deadline is left to send it: {@link InFlightRequests.holdAtTurn}), and
 * never once one is accepted (routing/backoff-wait.ts awaitBackoffTurn,
 * routing/pipelined-wait.ts): hostile trial 55, F2 (a call cancelled while it waited for its
 * agent's backoff turn, or pipelined behind another answer, went to the seller after the
 * cancellation, which the seller had ignored, so the seller ran it:
 * test/regressions/cancelled-while-held-still-sent.test.ts). A registered entry's
 * `onCancelled` is called once (and cleared) when the seller accepts a cancellation naming it.
 * Two users set it (Exchange.onCancelled): routing/backoff-wait.ts awaitBackoffTurn while the
 * request waits for its backoff turn (answered then, never sent), and response/sse-stage.ts
 * while the request's SSE stream waits for host answers (it then waits for none: hostile trial
 * 59, F2); the stage sets it only when the slot is empty, never over the wait's.
 *
 * The id rule (one, the seller transport's): ids are the peek's parsed values (RpcPeek.id,
 * `string | number | null`) compared with `===`: a string and a number are never one id
 * (`"1"` is not `1`); a string is the same string (escapes decoded); a number the same double
 * (`7.0` is `7`, `-0` is `0`, and `1e-400` is `0`, `9007199254740993` is
 * `9007199254740992`: JSON-RPC keeps those apart, but the MCP TypeScript SDK's
 * StreamableHTTPServerTransport maps each response to its stream by the parsed id, so such a
 * seller answered the second request with the first's response; re-read of session 33).
 *
 * Refusal (`invalid_request`, HTTP 400, docs/errors.md "Request ids in flight"; the messages
 * below): a POSTed request whose id is held in its seller endpoint and session, for its id; a
 * POSTed batch holding such an id, or one id more than once, id null (as every refusal of a
 * batch). Nothing is registered for a refused request. Source: hostile trial 54, F4: a host
 * reusing id 7 had both requests forwarded; the SDK seller's transport gave the second's
 * stream the first's mapping, and the first waited until sse_idle_timeout_ms
 * (test/regressions/duplicate-in-flight-id-hangs-first-call.test.ts); a batch holding one id
 * twice got one answer and the gateway's `upstream_reset` for the other.
 *
 * Cancellation (MCP "Cancellation": a host cancels a request it sent with
 * `notifications/cancelled` `{requestId}`; the receiver "SHOULD NOT send a response for the
 * cancelled request", and the host drops the id): {@link InFlightRequests.markCancelled} marks
 * (Exchange.cancelled) each cancellable request registered in the seller endpoint and session
 * whose id is the `requestId` as written, exactly (response/json-value-at.ts isRequestId, as
 * a seller's response id is compared: `1.0` and `1.1e1` name `1` and `11`; `1e-400` does not
 * name `0`, nor `9007199254740993` `9007199254740992`). That is the id rule above, narrowed:
 * exact equality implies the same double, so only requests the rule calls that id are marked,
 * and of those only the one the host wrote. Why narrower (decided here; pinned by
 * test/unit/cancellations.test.ts): a mark takes an answer away (the gateway then mints no
 * error for the id, errors/local-reply.ts, and the stream ends plainly, outcome `cancelled`),
 * so a mark the host did not mean (a host with exact ids cancelling `2^53 + 1` while `2^53`
 * waits, at a seller that keeps them apart too) would leave a call it still waits for with
 * no answer; a mark missed costs an error event for an id the host dropped (its client logs it)
 * and a breach counted. The SDK seller's only other case, a fraction or exponent written for
 * an integer id (`1e-400` for `0`), is not a host's way to name its own request. The
 * notification itself is forwarded as before, always. Source: trial 17, L1 (a cancelled call
 * got a made-up `upstream_reset` for an id its client had dropped:
 * test/regressions/cancelled-call-gets-minted-upstream-reset.test.ts).
 *
 * Shape: a slot per registered exchange (an array of exchanges and a free list, as
 * src/inflight-table.ts), the exchanges of one session linked in a chain (`next`/`prev` slot
 * numbers, -1 at an end), and a `Map` from each session with something registered to the
 * first slot of its chain. A lookup (a refusal's, a cancellation's) hashes the session once
 * and walks its chain only: the few exchanges a host keeps in flight in that session (over
 * every seller endpoint that issued that session id; others are skipped), never every exchange
 * in flight. Cost per registered request: one `Map` `get` (the session header's hash,
 * computed once, kept by its string), a walk of the chain, a slot, and, for a session's first
 * or last exchange, one `Map` `set` or `delete`; no key string built, nothing allocated once
 * the arrays have grown (a batch: two `Set`s of its ids). Measured (Node 20.20, a loop of
 * 200,000 requests with 8 or 1,000 in flight, one to eight per session; a shared 2-core
 * machine): ~0.15-0.3 µs per request (open and close), against ~0.35-0.55 µs for the two
 * registries it replaced (a key string built and hashed, and a table slot); a cancellation
 * with 1,000 in flight ~1 µs against ~7-12 µs (a walk of them all). Nothing else is hashed,
 * and the `Map` holds session strings and slot numbers only: what V8 keeps of its tables
 * under churn (src/inflight-table.ts, issue 5) reaches no exchange
 * (test/unit/in-flight-requests.test.ts). A session with thousands in flight at once walks
 * them per request in it: that host's own load.
 *
 * Memory: one slot per registered exchange or waiting request (a small object of five
 * references) and one `Map` entry per session with something registered, each dropped when its
 * exchange ends or its wait does: what is held is bounded by the exchanges in flight and the
 * requests waiting (their own bounds: connections, MAX_WAITING_PER_CONNECTION pipelined per
 * connection, backoff's MAX_WAITERS), and a session with nothing in flight holds nothing, so a
 * session's end (DELETE, expiry) needs nothing of its own. The slot arrays keep their length
 * (the peak in flight), emptied slots holding nothing.
 */
import type { BatchRequestRef, Exchange, RpcIdRef, RpcPeek } from '../exchange.js';
import type { WrittenRequestId } from '../mcp/cancelled-id.js';
import { shownInMessage } from '../errors/local-reply.js';
import { requestIdMatcher } from '../response/json-value-at.js';
import { agentKeyOf } from '../config/agent-url-key.js';
import { sendWindowMs, tooLateToSend } from '../admission/agent-guard.js';

/** What {@link InFlightRequests.open} gives for an exchange not registered (no session, nothing to hold or cancel). */
export const NOT_REGISTERED = -1;

/** Why {@link InFlightRequests.open} refused a request: the message of its `invalid_request` refusal. */
export interface IdRefusal {
  readonly refusal: string;
}

/**
 * What the registry reads of a registered request: an {@link Exchange}, or a
 * {@link WaitingRequest}. `opensStream`: it holds no id (a resumed stream, a waiting request).
 */
export interface InFlightEntry {
  readonly agent: { readonly url: URL };
  readonly rpc: RpcPeek;
  readonly session: string | undefined;
  readonly opensStream: boolean;
  /** Cancellations naming it whose seller's answer has not come (Exchange.cancelsAwaited). */
  cancelsAwaited: number;
  /** True once the seller accepted one (Exchange.cancelAccepted). */
  cancelAccepted: boolean;
  /** Called once when the seller accepts a cancellation naming it (Exchange.onCancelled). */
  onCancelled: (() => void) | undefined;
  /** While the handler holds it at its turn for the seller's answers to cancellations naming it ({@link InFlightRequests.holdForCancels}; Exchange.cancelHold). */
  cancelHold: CancelHold | undefined;
}

/**
 * How a hold at a request's turn ended ({@link InFlightRequests.holdForCancels}): `accepted`, the
 * seller accepted a cancellation naming it (never send it); `refused`, every cancellation
 * awaited at its turn was answered otherwise (send it, if its deadline leaves time); `timeout`,
 * too little of its deadline was left to send it before those answers came; `closed`, its
 * registration ended first (its exchange ended: the host left).
 */
export type CancelHoldEnd = 'accepted' | 'refused' | 'timeout' | 'closed';

/** A request held at its turn ({@link InFlightRequests.holdForCancels}). */
export interface CancelHold {
  /** Of the cancellations naming it awaited at its turn, how many still are. */
  awaited: number;
  /** The last cancellation ({@link PendingCancellation.seq}) made before its turn: later ones are not waited for. */
  readonly upTo: number;
  readonly timer: NodeJS.Timeout;
  readonly then: (end: CancelHoldEnd) => void;
}

/**
 * A POSTed single request waiting for its turn on its connection (routing/pipelined-turn.ts),
 * registered by {@link InFlightRequests.openWaiting} until its turn or its connection's close:
 * `cancelAccepted` tells its exchange, made at its turn, that the host cancelled it meanwhile, the seller accepting it.
 */
export interface WaitingRequest extends InFlightEntry {
  readonly session: string;
  /** A waiting request holds no id (module doc). */
  readonly opensStream: true;
}

/** The end of a chain. */
const NONE = -1;

/** The MCP rule, as every message of these refusals cites it. */
const RULE = '(MCP: a request ID must not be reused within a session)';

export class InFlightRequests {
  /** Each session with something registered: the first slot of its chain. */
  private readonly heads = new Map<string, number>();
  /** The entry (an exchange, a waiting request) in each slot; undefined when free. */
  private readonly exchanges: Array<InFlightEntry | undefined> = [];
  /** The next and previous slot in the slot's session chain ({@link NONE} at its ends). */
  private readonly next: number[] = [];
  private readonly prev: number[] = [];
  /** Empty slots, reused last-in first-out. */
  private readonly free: number[] = [];
  private count = 0;
  /** The last cancellation's number ({@link PendingCancellation.seq}). */
  private seq = 0;

  /** Exchanges registered now, over every seller endpoint and session. */
  get size(): number {
    return this.count;
  }

  /** Sessions with something registered now (a session's entry goes with its last exchange). */
  get sessions(): number {
    return this.heads.size;
  }

  /**
   * Registers `exchange` (its seller endpoint `agent.url`, `session`, `rpc`, and whether it
   * is a POST: not `opensStream`) when it is one of those the module doc lists: its slot, for
   * {@link close}; {@link NOT_REGISTERED} when it is none of them; or, for a POSTed request
   * or batch whose id is held in its seller endpoint and session (or a batch holding one id
   * twice), the message of its refusal, nothing registered.
   */
  open(exchange: Exchange): number | IdRefusal {
    const session = exchange.session;
    if (session === undefined) return NOT_REGISTERED;
    const rpc = exchange.rpc;
    const posted = !exchange.opensStream;
    const batch = rpc.kind === 'batch' && posted ? rpc.batchRequestIds : undefined;
    if (rpc.kind !== 'request' && (batch === undefined || batch.length === 0)) return NOT_REGISTERED;
    const head = this.heads.get(session) ?? NONE;
    if (batch !== undefined) {
      const refusal = this.batchRefusal(head, agentKeyOf(exchange.agent), batch);
      if (refusal !== undefined) return refusal;
    } else if (posted && head !== NONE && this.holds(head, agentKeyOf(exchange.agent), rpc.id)) {
      return { refusal: `Invalid Request: request id ${shownId(rpc)} is already in flight in this session ${RULE}; it was not sent to the seller: send it with an id not used before in this session.` };
    }
    return this.link(exchange, session, head);
  }

  /**
   * Registers a POSTed single request (`rpc.kind` 'request') of the seller endpoint `agent.url`
   * in `session` waiting for its turn on its connection (module doc): the entry and its slot,
   * for {@link close} (at its turn, or its connection's close). It holds no id, so it is never
   * refused here. Undefined for any other `rpc`.
   */
  openWaiting(agent: { readonly url: URL }, session: string, rpc: RpcPeek): { entry: WaitingRequest; slot: number } | undefined {
    if (rpc.kind !== 'request') return undefined;
    const entry: WaitingRequest = {
      agent,
      rpc,
      session,
      opensStream: true,
      cancelsAwaited: 0,
      cancelAccepted: false,
      onCancelled: undefined,
      cancelHold: undefined,
    };
    return { entry, slot: this.link(entry, session, this.heads.get(session) ?? NONE) };
  }

  /** Puts `entry` in a free slot, linked into the chain of `session` whose first slot is `head`. */
  private link(entry: InFlightEntry, session: string, head: number): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.exchanges.length;
    this.exchanges[slot] = entry;
    this.count++;
    if (head === NONE) {
      this.next[slot] = NONE;
      this.prev[slot] = NONE;
      this.heads.set(session, slot);
    } else {
      // Linked after the head: the session's entry in the map stays as it is.
      const after = this.next[head]!;
      this.next[slot] = after;
      this.prev[slot] = head;
      this.next[head] = slot;
      if (after !== NONE) this.prev[after] = slot;
    }
    return slot;
  }

  /** Ends the registration of `exchange` (its slot from {@link open} or {@link openWaiting}), and its hold (`closed`: {@link holdForCancels}); a no-op when not registered or closed already. */
  close(slot: number, exchange: InFlightEntry): void {
    if (slot < 0 || this.exchanges[slot] !== exchange) return;
    endHold(exchange, 'closed');
    const before = this.prev[slot]!;
    const after = this.next[slot]!;
    if (before !== NONE) {
      this.next[before] = after;
      if (after !== NONE) this.prev[after] = before;
    } else if (after === NONE) {
      this.heads.delete(exchange.session!);
    } else {
      this.prev[after] = NONE;
      this.heads.set(exchange.session!, after);
    }
    this.exchanges[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  /**
   * Marks cancelled (Exchange.cancelled), until the seller's answer to the cancellation, each
   * cancellable request registered in the seller endpoint `seller` (an agent's normalized url:
   * config/agent-url-key.ts agentKeyOf) and session `session` whose id is `id` as written (module
   * doc): the marked requests, to settle with the seller's answer ({@link PendingCancellation});
   * undefined when none is in flight (the request was answered already, or never went through
   * this gateway).
   */
  markCancelled(seller: string, session: string, id: WrittenRequestId): PendingCancellation | undefined {
    const seq = ++this.seq;
    let marked: InFlightEntry[] | undefined;
    const isId = requestIdMatcher(id.bytes, id.range); // the id read once, not once per request in flight (trial 56 F1)
    for (let slot = this.heads.get(session) ?? NONE; slot !== NONE; slot = this.next[slot]!) {
      const exchange = this.exchanges[slot]!;
      if (exchange.rpc.kind === 'request' && agentKeyOf(exchange.agent) === seller && isId(exchange.rpc)) {
        exchange.cancelsAwaited++;
        (marked ??= []).push(exchange);
      }
    }
    return marked === undefined ? undefined : new PendingCancellation(marked, seq);
  }

  /**
   * Holds the registered request `entry` at its turn (its backoff turn granted, or its pipelined
   * turn come) while cancellations naming it await the seller's answer: `then` is called once,
   * with how the hold ended ({@link CancelHoldEnd}): at once (synchronously) `accepted` when one
   * was accepted already, `refused` when none is awaited; else when the seller accepts one
   * naming it (whenever it came), when every one awaited now has been answered otherwise, after
   * `maxMs` (`timeout`: the time left before its deadline leaves too little to send it), or when
   * its registration ends (`closed`). A cancellation that comes during the hold marks it as
   * before (accepted, it ends the hold: never sent) but does not lengthen it. Source: a review
   * of the cancel-accept fix, Medium 2: each new cancellation lengthened the wait, which no
   * timer bounded (a request held 5,368 ms by cancellations each refused 401, its deadline
   * 1,000 ms: test/regressions/overlapping-cancels-hold-request-past-deadline.test.ts).
   */
  private holdForCancels(entry: InFlightEntry, maxMs: number, then: (end: CancelHoldEnd) => void): void {
    // Its only caller, holdAtTurn, holds only an entry that awaitsCancelAnswer.
    endHold(entry, 'closed'); // one hold at a time
    entry.cancelHold = { awaited: entry.cancelsAwaited, upTo: this.seq, timer: setTimeout(endHold, maxMs, entry, 'timeout'), then };
  }

  /**
   * The hold at a request's turn (its backoff turn granted, or its pipelined turn come: both
   * sites call this, routing/pipelined-wait.ts and routing/backoff-wait.ts, then {@link turnVerdict}): when cancellations naming
   * the registered request `entry` await the seller's answer and none was accepted, it is held
   * ({@link holdForCancels}) for at most what its deadline leaves before it is too late to send
   * it (agent-guard.ts sendWindowMs: `deadlineMs` from `startedMs`, performance.now() at its
   * arrival), `then` called once with how the hold ended; true then. False, `then` never
   * called, when it is not held: nothing awaited, one accepted already, or too late already.
   */
  holdAtTurn(entry: InFlightEntry, deadlineMs: number, startedMs: number, then: (end: CancelHoldEnd) => void): boolean {
    if (!awaitsCancelAnswer(entry)) return false;
    const windowMs = sendWindowMs(deadlineMs - (performance.now() - startedMs), deadlineMs);
    if (windowMs < 0) return false;
    this.holdForCancels(entry, Math.ceil(windowMs), then);
    return true;
  }

  /** Whether a POSTed exchange of `seller` in the chain from `head` holds the id `id`. */
  private holds(head: number, seller: string, id: RpcIdRef['id']): boolean {
    for (let slot = head; slot !== NONE; slot = this.next[slot]!) {
      const exchange = this.exchanges[slot]!;
      if (exchange.opensStream || agentKeyOf(exchange.agent) !== seller) continue;
      const rpc = exchange.rpc;
      if (rpc.kind === 'request') {
        if (rpc.id === id) return true;
      } else {
        for (const ref of rpc.batchRequestIds!) if (ref.id === id) return true;
      }
    }
    return false;
  }

  /**
   * Why the batch `refs` is refused, for its first id (in order) held in `seller`'s chain from
   * `head`, or held by the batch twice; undefined when it is not. `Set`s: a batch holds up to
   * its agent's max_batch_messages ids (100,000 at most), and they compare as `===` does
   * (SameValueZero: the same, ids being never NaN).
   */
  private batchRefusal(head: number, seller: string, refs: readonly BatchRequestRef[]): IdRefusal | undefined {
    const held = new Set<RpcIdRef['id']>();
    for (let slot = head; slot !== NONE; slot = this.next[slot]!) {
      const exchange = this.exchanges[slot]!;
      if (exchange.opensStream || agentKeyOf(exchange.agent) !== seller) continue;
      const rpc = exchange.rpc;
      if (rpc.kind === 'request') held.add(rpc.id);
      else for (const ref of rpc.batchRequestIds!) held.add(ref.id);
    }
    const seen = new Set<RpcIdRef['id']>();
    for (const ref of refs) {
      if (held.has(ref.id)) {
        return {
          refusal: `Invalid Request: the batch holds request id ${shownId(ref)}, which is already in flight in this session ${RULE}; the batch was not sent to the seller: send it with ids not used before in this session.`,
        };
      }
      if (seen.has(ref.id)) {
        return { refusal: `Invalid Request: the batch holds request id ${shownId(ref)} more than once ${RULE}; the batch was not sent to the seller: give each of its requests its own id.` };
      }
      seen.add(ref.id);
    }
    return undefined;
  }
}

/**
 * The requests one `notifications/cancelled` marked ({@link InFlightRequests.markCancelled}),
 * until the seller answers it: {@link settle} once, with whether it answered 2xx (the handler,
 * at the notification's response head; false at the notification's end without one: a
 * refusal, a failure, a timeout). Accepted, each request stays marked (Exchange.cancelAccepted)
 * and its `onCancelled` is called once (a request held in a backoff wait is answered then,
 * never sent); refused, the mark is withdrawn unless another cancellation naming it was
 * accepted. A request held at its turn ({@link InFlightRequests.holdForCancels}) ends its hold
 * on an acceptance, and once every cancellation awaited at its turn is answered otherwise (then
 * sent, if its deadline leaves time). Source: a review (Low): the mark took effect when
 * the cancellation came, so anyone knowing a session id had a held request dropped unsent and
 * its resumes answered 405, though the seller refused that cancellation (401, 404)
 * (test/regressions/cancel-refused-by-seller-still-drops-request.test.ts).
 */
export class PendingCancellation {
  private settled = false;

  /**
   * @param marked the requests it marked
   * @param seq    its number in its registry, in order of arrival: a request held at its turn
   *               waits only for those up to its {@link CancelHold.upTo}
   */
  constructor(
    private readonly marked: readonly InFlightEntry[],
    readonly seq: number,
  ) {}

  /** How many requests it marked. */
  get count(): number {
    return this.marked.length;
  }

  /** Settles it with the seller's answer (`accepted`: 2xx); a no-op after the first call. */
  settle(accepted: boolean): void {
    if (this.settled) return;
    this.settled = true;
    for (const entry of this.marked) {
      entry.cancelsAwaited--;
      if (accepted && !entry.cancelAccepted) {
        entry.cancelAccepted = true;
        const then = entry.onCancelled;
        entry.onCancelled = undefined;
        then?.();
      }
      const hold = entry.cancelHold;
      if (hold === undefined) continue;
      if (entry.cancelAccepted) endHold(entry, 'accepted');
      else if (this.seq <= hold.upTo && --hold.awaited === 0) endHold(entry, 'refused');
    }
  }
}

/** Whether `entry` waits for the seller's answer to a cancellation naming it, none accepted yet: what {@link InFlightRequests.holdAtTurn} holds. */
export function awaitsCancelAnswer(entry: InFlightEntry): boolean {
  return entry.cancelsAwaited > 0 && !entry.cancelAccepted;
}

/**
 * How a request's turn is judged once its hold ({@link InFlightRequests.holdAtTurn}) is over:
 * `send`; `cancel_wait`, it was held (`held`: how its hold ended) and is past its time
 * (`timeout`, whatever the clock reads now) or too late to send now; `too_late`, it was not
 * held and too little of its deadline is left (the caller's own reason: `pipeline_wait`,
 * `agent_backoff`). Too late: agent-guard.ts tooLateToSend with `remainingMs` of `deadlineMs`.
 */
export type TurnVerdict = 'send' | 'cancel_wait' | 'too_late';

/** The {@link TurnVerdict} of a turn whose hold ended as `held` (undefined: not held), `remainingMs` of its `deadlineMs` left. */
export function turnVerdict(held: CancelHoldEnd | undefined, remainingMs: number, deadlineMs: number): TurnVerdict {
  if (held !== 'timeout' && !tooLateToSend(remainingMs, deadlineMs)) return 'send';
  return held === undefined ? 'too_late' : 'cancel_wait';
}

/** Ends the hold of `entry` ({@link InFlightRequests.holdForCancels}), if any, with `end`: its timer cleared, its `then` called once. */
function endHold(entry: InFlightEntry, end: CancelHoldEnd): void {
  const hold = entry.cancelHold;
  if (hold === undefined) return;
  entry.cancelHold = undefined;
  clearTimeout(hold.timer);
  hold.then(end);
}

/** An id as a refusal's message shows it: a number as the host wrote it, a string quoted; either cut to its first 64 characters. */
function shownId(ref: RpcIdRef): string {
  const id = ref.id;
  if (typeof id === 'string') return JSON.stringify(shownInMessage(id));
  return shownInMessage(ref.idText ?? String(id));
}
