/**
 * The server-to-client requests a seller sent whose answer the host has not POSTed yet, per
 * seller endpoint and MCP session, and the SSE streams waiting on them: while a stream waits,
 * its idle clock is paused (response/sse-stream-timers.ts awaitHostAnswer), and once nothing
 * it waits for is outstanding the clock runs again from zero (`hostAnswered`).
 *
 * Why: MCP lets a server ask its client something in the middle of a request
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`, ...). The seller is then
 * silent on the call's stream until the host answers with a separate POST carrying the JSON-RPC
 * response (or error) for that id in the same session. That silence is the host's (a human
 * approving, a model sampling), not the seller's: `sse_idle_timeout_ms` ended the call with
 * `sse_idle` whenever the host took longer than it, where the call straight to the seller
 * succeeded (hostile trial 57, F3:
 * test/regressions/elicitation-wait-hits-sse-idle.test.ts).
 *
 * Which streams wait (response/sse-stage.ts; the request read by response/server-request-id.ts):
 * - a request's or a batch's stream waits for the requests it carries (the MCP SDKs send a
 *   request made for a call on that call's stream: `extra.sendRequest`, `relatedRequestId`);
 * - a request on a stream answering no request names no call: the standalone GET stream (where
 *   the MCP TypeScript SDK's `server.elicitInput()` sends it by default) or a POSTed
 *   notification's or response's stream. Until the host answers it, every stream of that seller
 *   endpoint and session waits for it, those opened meanwhile included (the call's stream may
 *   reach the gateway after the request: they come on two connections), but only those opened
 *   within their own `sse_idle_timeout_ms` of it (`graceMs`), so that an id nobody ends pauses
 *   only the streams open around it (review of trial 57 F3's fix); and the id itself expires
 *   at the largest `sse_idle_timeout_ms` + `sse_deadline_ms` from when it was seen among the
 *   sharing stream's and those of the streams waiting for it (a tool's own for its call: by
 *   then none waits for it; review of e863d18: {@link StreamHostWaits.awaitShared}). The
 *   sharing stream's end does not end it while another member is open.
 * Only streams with a deadline wait (exchange.ts hasCumulativeBound: a request's, a batch's, a
 * POSTed notification's or response's), so `sse_deadline_ms` bounds every pause; the standalone
 * GET stream and long-lived streams never do (their idle end is a plain end the host resumes
 * from, and the host's answer reaches the seller by POST all the same). Nothing waits without a
 * session (the host's `Mcp-Session-Id`: nothing scopes an id), for a request in a JSON array or
 * with an escaped or repeated top-level key, nor for an id written in more than
 * {@link MAX_AWAITED_ID_BYTES} bytes; at most {@link MAX_AWAITED_PER_STREAM} ids are tracked per
 * stream and per session's shared set (more are not: a stream waits while any tracked one is
 * outstanding).
 *
 * The answer (routing/handler.ts): a POSTed single JSON-RPC response or error (no `method`;
 * request/peek.ts `notification` kind) to the same seller endpoint (config/agent-url-key.ts
 * agentKeyOf, as for the requests in flight: routing/in-flight-requests.ts) with the same
 * `Mcp-Session-Id`, when it arrives, whatever the seller then answers to it; ids match by the
 * gateway's canonical id (response/json-value-at.ts canonicalRequestId, canonicalWrittenId: `7`
 * and `7.0` are one id, `"7"` another), by value exactly as written: a seller's
 * `100000000000000000001` answered `100000000000000000000` (a JavaScript host's `JSON.parse`
 * rounds it) does not match, and the wait lasts to the id's expiry or the stream's deadline. A response inside a batch (2025-03-26) is not read for
 * this: a stream waiting for it stays paused until it ends or its deadline. The seller's own
 * `notifications/cancelled` naming it ends the wait too ({@link HostAnswerWaits.cancelledBySeller};
 * the SDKs' request timeout, after which the host SHOULD NOT answer: before, such an id on the
 * GET stream paused every stream of the session to its deadline; review of trial 57 F3's fix,
 * test/regressions/seller-cancelled-elicitation-pauses-session-idle.test.ts). To read it, a
 * chunk of the session's streams holding `"notifications/cancelled"` is parsed, no raw run,
 * while anything is awaited in it ({@link HostAnswerWaits.anyAwaitedIn}, then one native search,
 * per planned chunk: sse-stage.ts `readAll`). Its `method` is compared decoded (PHP's
 * `"notifications\/cancelled"`, `"notifications/\u0063ancelled"`: hostile trial 59, I1;
 * response/server-request-id.ts sellerCancelledIdOf): such a spelling holds a backslash, and a
 * block holding one is parsed anyway on every stream where responses are judged
 * (response/sse-raw-events.ts RawEventLimits.answerable), so it is read there with no further
 * search; on a batch's stream resumed (not judged) only the plain spelling is searched.
 *
 * A resume (review of trial 57 F3's fix, Medium: test/regressions/elicitation-wait-lost-on-resume.test.ts):
 * MCP 2025-11-25 lets a server close a call's stream while it waits (the SDK's
 * `closeSSEStream()`); the host resumes it with `Last-Event-ID`, and the ids the first stream
 * waited for died with it, so the resume ran its idle clock while the human decided
 * (`sse_idle`). Now a request's stream that ends resumable (`resumable_end`) with its own ids
 * outstanding parks them for its call ({@link HostAnswerWaits.park}: keyed by seller endpoint,
 * session and the call's canonical request id, one string) until the stream's deadline
 * (`startedAt` + `sse_deadline_ms`, which a resume of it keeps), and a resume of that call with
 * the same first start (`startedAt`, from its token: not another call re-using the id) inherits
 * them ({@link HostAnswerWaits.openStream} `resumes`). The host's answer and the seller's
 * cancellation drop parked ids as they end a stream's wait; a parked call left with none, or
 * past its deadline (a timer per parked call, unref'd), is dropped, and so is a call whose
 * cancellation by the host the seller accepted ({@link HostAnswerWaits.callCancelled}: the host
 * neither answers nor resumes it; review of trial 59 F2's fix, Low). Not parked: a batch's
 * stream's ids, those of a stream that ended otherwise (an error, the host's disconnect).
 *
 * Memory: per seller endpoint and session (one string key), an entry while a member is open: each stream with a
 * deadline (registered as it starts), and each other stream once it carried a request; each
 * member a small object, and a `Set` of at most {@link MAX_AWAITED_PER_STREAM} canonical ids of
 * at most about {@link MAX_AWAITED_ID_BYTES} bytes (a stream's own, the session's shared ones).
 * A member leaves at its stream's end ({@link StreamHostWaits.close}), the entry with its last
 * one, its shared ids with it: bounded by the streams open. Parked calls: at most
 * {@link MAX_PARKED_CALLS_PER_SESSION} per seller endpoint and session and {@link MAX_PARKED_CALLS}
 * in all (across sellers and sessions: the call parked longest ago is dropped first), each a
 * small object, a timer and its ids (at most {@link MAX_AWAITED_PER_STREAM}); a shared id, a
 * timer. While none is parked, one `size` check per answer, cancellation, resume and
 * `anyAwaited`. Cost: per stream with a deadline in a session, a key string, a `Map` lookup and
 * a `Set` insertion and deletion; per planned chunk, `anyAwaited` (O(1) on the stream's member:
 * two counts, and a `Map` lookup while a call is parked) and, while true, one native search
 * (sse-stage.ts `readAll`); per event, two native searches (server-request-id.ts); per host
 * response POST, a `Map` lookup, and a walk of its session's members when there are any.
 */
import type { RpcIdRef } from '../exchange.js';
import type { WrittenRequestId } from '../mcp/cancelled-id.js';
import { canonicalRequestId, canonicalWrittenId } from '../response/json-value-at.js';

/** Ids tracked at once per stream, and per session's shared set: more are not (a stream waits while any tracked one is outstanding). */
export const MAX_AWAITED_PER_STREAM = 16;

/** The longest id tracked or matched: as the seller writes it, in bytes; a host's id (its string, or its number's text when kept), in characters. */
export const MAX_AWAITED_ID_BYTES = 256;

/** What a waiting stream pauses and restarts: its idle clock (response/sse-stream-timers.ts). */
export interface IdleClock {
  awaitHostAnswer(): void;
  hostAnswered(): void;
}

/** Calls with parked ids at most per seller endpoint and session: a call's stream ending resumable with more parks nothing (its resume runs its idle clock, as before). */
export const MAX_PARKED_CALLS_PER_SESSION = 16;

/** Calls with parked ids at most in all: past it, the oldest parked call's ids are dropped. */
export const MAX_PARKED_CALLS = 1024;

/** A call's own awaited ids, left by its stream that ended resumable ({@link StreamHostWaits.close} `park`). */
interface Parked {
  /** Its seller endpoint and session ({@link sessionKeyOf}). */
  readonly session: string;
  /** Its key in {@link HostAnswerWaits}'s parked calls ({@link parkedKeyOf}: {@link session}, NUL, the call's canonical request id). */
  readonly key: string;
  /** When the call's stream first started (Unix ms, as its resume token carries it), when told: a resume must name the same. */
  readonly startedAt: number | undefined;
  readonly ids: Set<string>;
  readonly timer: NodeJS.Timeout;
}

/** A request awaited by all members of a session (one that came on a stream answering no request). */
interface SharedWait {
  /** When it was seen (`performance.now()`). */
  readonly seenAt: number;
  /** When it expires (`performance.now()` ms; Infinity: never): the largest `keepMs` from {@link seenAt} of the stream that shared it and of the members that wait for it ({@link StreamHostWaits.awaitShared}). */
  expiresAt: number;
  /** Its expiry's timer, undefined when it has none. */
  timer: NodeJS.Timeout | undefined;
}

/** The one key of seller endpoint `seller` (agentKeyOf) and MCP session `session`: both joined by a NUL (neither holds one: an agent url, a header value). */
export function sessionKeyOf(seller: string, session: string): string {
  return `${seller}\0${session}`;
}

/** The key of call `call` (its canonical request id) of session `sessionKey` ({@link sessionKeyOf}) among the parked calls: both joined by a NUL (Parked.key). */
function parkedKeyOf(sessionKey: string, call: string): string {
  return `${sessionKey}\0${call}`;
}

/** The members of one seller endpoint and session, and the requests awaited by all of them. */
class SessionWaits {
  readonly members = new Set<StreamHostWaits>();
  /** Canonical ids of requests that came on streams answering no request: members with a clock wait for them (StreamHostWaits.awaiting). */
  shared: Map<string, SharedWait> | undefined = undefined;
  /** The latest `seenAt` of {@link shared} (-Infinity when empty): a member waits for a shared id when this one is within its grace. */
  newestSeenAt = -Infinity;
  /** Members whose own ids are not empty: {@link StreamHostWaits.anyAwaited} is O(1). */
  holding = 0;

  constructor(readonly key: string) {}

  /** Whether a member's own ids or a shared id are awaited here (parked ones aside: {@link HostAnswerWaits.parkedIn}): O(1). */
  get holdsAny(): boolean {
    return this.holding > 0 || this.newestSeenAt !== -Infinity;
  }

  /** Drops shared id `id`, its expiry with it; false when it was not shared. */
  dropShared(id: string): boolean {
    const shared = this.shared;
    const wait = shared?.get(id);
    if (wait === undefined) return false;
    clearTimeout(wait.timer);
    shared!.delete(id);
    let newest = -Infinity;
    for (const other of shared!.values()) if (other.seenAt > newest) newest = other.seenAt;
    this.newestSeenAt = newest;
    return true;
  }

  /** The entry is gone: its shared ids' expiries with it. */
  clear(): void {
    if (this.shared === undefined) return;
    for (const wait of this.shared.values()) clearTimeout(wait.timer);
    this.shared = undefined;
    this.newestSeenAt = -Infinity;
  }
}

export class HostAnswerWaits {
  /** Per seller endpoint and session ({@link sessionKeyOf}): its entry while a member is open. */
  private readonly bySession = new Map<string, SessionWaits>();

  /**
   * Parked calls (resumable ends with ids outstanding), by {@link Parked.key}, in the order
   * parked (the oldest first: a re-park moves to the end); and per seller endpoint and session,
   * its parked calls. Empty (and never walked) while nothing is parked.
   */
  private readonly parked = new Map<string, Parked>();
  private readonly parkedBySession = new Map<string, Set<Parked>>();

  /** Sessions with an entry (a seam for tests). */
  get sessions(): number {
    return this.bySession.size;
  }

  /** Calls with parked ids (a seam for tests). */
  get parkedCount(): number {
    return this.parked.size;
  }

  /**
   * A member for a stream of seller endpoint `seller` in `session`, until its
   * {@link StreamHostWaits.close}: with `clock` (a stream with a deadline, registered as it
   * starts) it waits for the requests it carries ({@link StreamHostWaits.await}) and for the
   * session's shared ones ({@link StreamHostWaits.awaitShared}), already outstanding or to come;
   * without (any other stream, once it carries a request) it only keeps the shared ones it adds.
   * `graceMs` (the stream's `sse_idle_timeout_ms`): a shared request seen more than that before
   * this stream opened is not waited for by it (the call it was made for had its stream open by
   * then), so a shared id nobody ends (a seller that never answers, cancels or closes) pauses
   * only the streams open around it, each at most until its own `sse_deadline_ms`.
   * `resumes`: the stream resumes (`Last-Event-ID`) the call with that canonical request id,
   * first started at `startedAt` (Unix ms, from its resume token): it waits for the ids that
   * call's earlier stream parked ({@link park}) with the same `startedAt`, which are unparked.
   * A call id the host re-used for another call (another start) inherits nothing (hot-path
   * review of the elicitation tracking:
   * test/regressions/reused-call-id-inherits-parked-wait.test.ts).
   */
  openStream(seller: string, session: string, clock: IdleClock | undefined, graceMs = Infinity, resumes?: string, startedAt?: number, keepMs = 0): StreamHostWaits {
    const key = sessionKeyOf(seller, session);
    let entry = this.bySession.get(key);
    if (entry === undefined) this.bySession.set(key, (entry = new SessionWaits(key)));
    const stream = new StreamHostWaits(this, entry, clock, graceMs, keepMs);
    entry.members.add(stream);
    // The shared ids it waits for are kept at least its own `keepMs` from when they were seen (StreamHostWaits.awaitShared).
    if (clock !== undefined && entry.shared !== undefined) {
      for (const [id, wait] of entry.shared) if (stream.waitsFor(wait.seenAt)) this.keepShared(entry, id, wait, wait.seenAt + keepMs);
    }
    // A resume of a call whose stream ended resumable with its own requests outstanding waits for them (`park`).
    if (resumes !== undefined && this.parked.size > 0) {
      const parked = this.parked.get(parkedKeyOf(key, resumes));
      if (parked !== undefined && parked.startedAt === startedAt) {
        this.unpark(parked);
        for (const id of parked.ids) stream.await(id);
      }
    }
    stream.update();
    return stream;
  }

  /**
   * The stream of call `call` (its canonical request id: json-value-at.ts canonicalRequestId)
   * of seller endpoint and session `sessionKey` ({@link sessionKeyOf}), first started at
   * `startedAt` (Unix ms; a resume must name the same: {@link openStream}), ended resumable
   * (`resumable_end`) with its own requests `ids` outstanding: they are kept for the call until
   * `expiresAt` (Unix ms: the stream's
   * `startedAt` + `sse_deadline_ms`, past which a resume ends `sse_deadline` anyway), for a
   * resume of it ({@link openStream} `resumes`), unless the host answers them or the seller
   * cancels them first. At most {@link MAX_PARKED_CALLS_PER_SESSION} calls per seller endpoint
   * and session (more park nothing) and {@link MAX_PARKED_CALLS} in all, across sellers and
   * sessions (the oldest parked dropped). A second park for the same call replaces the first.
   */
  park(sessionKey: string, call: string, ids: ReadonlySet<string>, expiresAt: number, startedAt?: number): void {
    const delayMs = expiresAt - Date.now();
    if (ids.size === 0 || !(delayMs > 0)) return;
    const key = parkedKeyOf(sessionKey, call);
    const before = this.parked.get(key);
    if (before !== undefined) this.unpark(before);
    else if ((this.parkedBySession.get(sessionKey)?.size ?? 0) >= MAX_PARKED_CALLS_PER_SESSION) return;
    if (this.parked.size >= MAX_PARKED_CALLS) this.unpark(this.parked.values().next().value!);
    const timer = setTimeout(() => this.unpark(parked), Math.min(delayMs, 2 ** 31 - 1));
    timer.unref();
    const parked: Parked = { session: sessionKey, key, startedAt, ids: new Set(ids), timer };
    this.parked.set(key, parked);
    let calls = this.parkedBySession.get(sessionKey);
    if (calls === undefined) this.parkedBySession.set(sessionKey, (calls = new Set()));
    calls.add(parked);
  }

  private unpark(parked: Parked): void {
    if (this.parked.get(parked.key) !== parked) return;
    this.parked.delete(parked.key);
    clearTimeout(parked.timer);
    const calls = this.parkedBySession.get(parked.session);
    if (calls === undefined) return;
    calls.delete(parked);
    if (calls.size === 0) this.parkedBySession.delete(parked.session);
  }

  /** The host answered or the seller cancelled `id` in session `key` ({@link sessionKeyOf}): no parked call waits for it (a parked call left with none is dropped). */
  private releaseParked(key: string, id: string): void {
    const calls = this.parkedBySession.get(key);
    if (calls === undefined) return;
    for (const parked of [...calls]) {
      parked.ids.delete(id);
      if (parked.ids.size === 0) this.unpark(parked);
    }
  }

  /**
   * The host POSTed the response with id `rpc` (a host's response's peek) to `seller` in
   * `session`: that id is no longer awaited there, and each member that now waits for nothing
   * has its idle clock restarted. Nothing when there is no entry (one `Map` lookup), or the id
   * is null or longer than {@link MAX_AWAITED_ID_BYTES}.
   */
  answered(seller: string, session: string, rpc: RpcIdRef): void {
    const key = sessionKeyOf(seller, session);
    const entry = this.bySession.get(key);
    if (entry === undefined && this.parked.size === 0) return;
    const text = typeof rpc.id === 'string' ? rpc.id : rpc.idText;
    if (text !== undefined && text.length > MAX_AWAITED_ID_BYTES) return;
    const id = canonicalRequestId(rpc);
    if (id === undefined) return;
    if (this.parked.size > 0) this.releaseParked(key, id);
    if (entry !== undefined) this.release(entry, id);
  }

  /**
   * The seller cancelled its own request with canonical id `id` (a `notifications/cancelled`
   * on any stream of `seller` in `session`: response/server-request-id.ts sellerCancelledIdOf):
   * as {@link answered}, no answer is awaited for it any more (the host SHOULD NOT send one).
   */
  cancelledBySeller(seller: string, session: string, id: string): void {
    const key = sessionKeyOf(seller, session);
    if (this.parked.size > 0) this.releaseParked(key, id);
    const entry = this.bySession.get(key);
    if (entry !== undefined) this.release(entry, id);
  }

  /**
   * The seller accepted (2xx) the host's `notifications/cancelled` naming call `call` (its
   * `requestId` as written: mcp/cancelled-id.ts) of `seller` in `session`: the ids that call's
   * stream parked at its resumable end ({@link park}) are dropped, the call's alone (same seller
   * endpoint, session and canonical request id: a request that names the call, not one of the
   * seller's requests). The host answers none of the requests made for a cancelled call and
   * never resumes it (routing/cancelled-requests.ts: a resume gets 405), so they only held one
   * of the {@link MAX_PARKED_CALLS_PER_SESSION} / {@link MAX_PARKED_CALLS} parked slots and kept
   * {@link anyAwaitedIn} true (the session's chunks holding `"notifications/cancelled"` parsed
   * event by event) until the call's `sse_deadline_ms`. Called only once the seller accepted
   * (routing/handler.ts: not while its answer is awaited, not after a refusal), and not when a
   * new request with that id was sent since the cancellation came (that call, not the cancelled
   * one, may have parked ids by then). A stream of the call still open is told by
   * {@link StreamHostWaits.hostCancelled}. Source: review of trial 59 F2's fix, Low
   * (test/regressions/cancelled-parked-call-holds-slot.test.ts). Cost: one `size` check while
   * nothing is parked; else a `Map` lookup, and the id's canonical text when its session has a
   * parked call.
   */
  callCancelled(seller: string, session: string, call: WrittenRequestId): void {
    if (this.parked.size === 0) return;
    const key = sessionKeyOf(seller, session);
    if (!this.parkedBySession.has(key)) return;
    const parked = this.parked.get(parkedKeyOf(key, canonicalWrittenId(call.bytes, call.range)));
    if (parked !== undefined) this.unpark(parked);
  }

  /**
   * Whether any request is awaited in seller endpoint and session `key` ({@link sessionKeyOf},
   * made once by the caller): a stream's own, a shared or a parked one. One `Map` lookup, a
   * second while anything is parked. A member asks its own ({@link StreamHostWaits.anyAwaited}:
   * no lookup).
   */
  anyAwaitedIn(key: string): boolean {
    return this.bySession.get(key)?.holdsAny === true || this.parkedIn(key);
  }

  /** @internal Whether a call of session `key` ({@link sessionKeyOf}) has parked ids: no lookup while nothing is parked. */
  parkedIn(key: string): boolean {
    return this.parked.size > 0 && this.parkedBySession.has(key);
  }

  private release(entry: SessionWaits, id: string): void {
    entry.dropShared(id);
    for (const stream of entry.members) stream.answer(id);
  }

  /**
   * @internal Shared id `id` of `entry` (its `wait`) is kept at least to `expiresAt`
   * (`performance.now()` ms): its expiry moves there when later; `delayMs`, the time to it when
   * the caller knows it exactly (a new id: its `keepMs`).
   */
  keepShared(entry: SessionWaits, id: string, wait: SharedWait, expiresAt: number, delayMs = expiresAt - performance.now()): void {
    if (!(expiresAt > wait.expiresAt)) return;
    wait.expiresAt = expiresAt;
    clearTimeout(wait.timer);
    wait.timer = undefined;
    if (!Number.isFinite(expiresAt)) return;
    const timer = setTimeout(() => this.expireShared(entry, id), Math.min(Math.max(delayMs, 0), 2 ** 31 - 1));
    timer.unref();
    wait.timer = timer;
  }

  /** @internal A shared id's expiry ({@link StreamHostWaits.awaitShared} `keepMs`): no member waits for it any more. */
  expireShared(entry: SessionWaits, id: string): void {
    if (!entry.dropShared(id)) return;
    for (const stream of entry.members) stream.update();
  }

  /** @internal {@link StreamHostWaits.close}'s. */
  leave(stream: StreamHostWaits, entry: SessionWaits): void {
    if (!entry.members.delete(stream) || entry.members.size > 0) return;
    entry.clear();
    if (this.bySession.get(entry.key) === entry) this.bySession.delete(entry.key);
  }
}

/** One member ({@link HostAnswerWaits.openStream}): a stream, and the ids it waits for itself. */
export class StreamHostWaits {
  /** The canonical ids of the requests this stream carried (json-value-at.ts canonicalWrittenId); made at the first. */
  private ids: Set<string> | undefined = undefined;
  /** Its clock is paused (awaitHostAnswer called, hostAnswered not since). */
  private paused = false;
  private closed = false;
  /** The host cancelled its call ({@link hostCancelled}): it waits for nothing. */
  private cancelled = false;

  constructor(
    private readonly registry: HostAnswerWaits,
    private readonly entry: SessionWaits,
    private readonly clock: IdleClock | undefined,
    private readonly graceMs: number,
    /** Its own `sse_idle_timeout_ms` + `sse_deadline_ms` (ms; 0 when not told): a shared id it waits for is kept at least that long from when it was seen. */
    readonly keepMs: number,
  ) {}

  /** When it opened (`performance.now()`). */
  private readonly openedAt = performance.now();

  /** Whether the stream waits for an answer (one of its own requests is outstanding, or a shared one seen no more than its `graceMs` before it opened). */
  get awaiting(): boolean {
    if (this.closed || this.cancelled) return false;
    if (this.ids !== undefined && this.ids.size > 0) return true;
    return this.withinGrace(this.entry.newestSeenAt);
  }

  /** Whether a shared id seen at `seenAt` (`performance.now()`) was seen no more than its `graceMs` before it opened. */
  private withinGrace(seenAt: number): boolean {
    return seenAt + this.graceMs >= this.openedAt;
  }

  /** @internal Whether it waits for a shared id seen at `seenAt` (`performance.now()`): it has a clock, is open, and opened no more than its `graceMs` after. */
  waitsFor(seenAt: number): boolean {
    return this.clock !== undefined && !this.closed && this.withinGrace(seenAt);
  }

  /**
   * Whether any request is awaited in the stream's seller endpoint and session (a member's own,
   * a shared or a parked one): as {@link HostAnswerWaits.anyAwaitedIn}, in O(1) (counts kept as
   * ids come and go; a `Map` lookup only while some call is parked). Asked per planned chunk of
   * the stream (response/sse-stage.ts `readAll`): before, two `Map` lookups and a walk of the
   * members' ids per chunk (hot-path review of the elicitation tracking).
   */
  anyAwaited(): boolean {
    return this.entry.holdsAny || this.registry.parkedIn(this.entry.key);
  }

  /** The stream carried a request with canonical id `id`, made for its own call: it waits for the host's answer (not once its call is cancelled: {@link hostCancelled}). */
  await(id: string): void {
    if (this.closed || this.cancelled) return;
    const ids = (this.ids ??= new Set());
    if (ids.size >= MAX_AWAITED_PER_STREAM || ids.has(id)) return;
    if (ids.size === 0) this.entry.holding++;
    ids.add(id);
    this.update();
  }

  /**
   * The stream (answering no request) carried a request with canonical id `id`: every member of
   * its session waits for it, until the host answers it, the seller cancels it, the session's
   * last member leaves, or it expires: the largest `keepMs` (ms) from now among this stream's
   * (its `sse_idle_timeout_ms` + `sse_deadline_ms`) and those of the members that wait for it
   * ({@link HostAnswerWaits.openStream} `keepMs`: each its own `sse_idle_timeout_ms` +
   * `sse_deadline_ms`, a tool's own limits for its call's stream), those opened later within
   * their `graceMs` included. A member pauses at most to its own `sse_deadline_ms`, so by then
   * none still waits for it. Before, such an id lasted as long as the GET stream and kept every
   * chunk of the session's streams parsed (hot-path review of the elicitation tracking:
   * test/regressions/shared-elicitation-wait-never-expires.test.ts); then it expired at the
   * sharing stream's limits alone, and a tool's call with a longer `sse_deadline_ms` ran its
   * idle clock again while the human still decided (review of e863d18:
   * test/regressions/shared-elicitation-expires-before-tool-deadline.test.ts). O(1) per member
   * updated.
   */
  awaitShared(id: string, keepMs = Infinity): void {
    if (this.closed) return;
    const entry = this.entry;
    const shared = (entry.shared ??= new Map());
    if (shared.size >= MAX_AWAITED_PER_STREAM || shared.has(id)) return;
    const seenAt = performance.now();
    let keep = keepMs;
    for (const stream of entry.members) if (stream.keepMs > keep && stream.waitsFor(seenAt)) keep = stream.keepMs;
    const wait: SharedWait = { seenAt, expiresAt: -Infinity, timer: undefined };
    shared.set(id, wait);
    this.registry.keepShared(entry, id, wait, seenAt + keep, keep);
    entry.newestSeenAt = seenAt;
    for (const stream of entry.members) stream.update();
  }

  /**
   * The host cancelled the stream's call (its `notifications/cancelled` accepted by the seller:
   * response/sse-stage.ts): the host answers none of the requests made for it (MCP
   * "Cancellation": the call's work is abandoned), so the stream waits for nothing from now on,
   * its own requests nor shared ones: a paused clock restarts from zero and ends the stream at
   * `sse_idle_timeout_ms` of the seller's silence. Before, the seller's unanswered request
   * kept it paused to `sse_deadline_ms` (hostile trial 59, F2:
   * test/regressions/cancelled-call-elicitation-pauses-idle-to-deadline.test.ts). Its own ids
   * are dropped, and any it carries later ignored: nothing of its call is awaited in the
   * session nor parked at its end.
   */
  hostCancelled(): void {
    if (this.closed || this.cancelled) return;
    this.cancelled = true;
    // Its own ids are dropped: no longer awaited in the session (anyAwaited), nor parked at a
    // resumable end, where they took one of the parked slots for a call whose resume the host
    // never makes (review of trial 59 F2's fix, Nit:
    // test/regressions/cancelled-call-ids-parked-on-resumable-end.test.ts).
    if (this.ids !== undefined && this.ids.size > 0) this.entry.holding--;
    this.ids = undefined;
    this.update();
  }

  /** @internal The host answered `id` ({@link HostAnswerWaits.answered}, the shared set updated first). */
  answer(id: string): void {
    if (this.ids?.delete(id) === true && this.ids.size === 0) this.entry.holding--;
    this.update();
  }

  /** @internal Pauses or restarts the clock when whether it waits has changed. */
  update(): void {
    if (this.clock === undefined) return;
    const awaiting = this.awaiting;
    if (awaiting === this.paused) return;
    this.paused = awaiting;
    if (awaiting) this.clock.awaitHostAnswer();
    else this.clock.hostAnswered();
  }

  /**
   * The stream is over: it leaves its session's entry (the entry, its shared ids with it, goes
   * with its last member); its clock is never called again. `park`: it ended resumable, a
   * request's stream: its own ids still outstanding are kept for a resume of its call
   * ({@link HostAnswerWaits.park}; `startedAt`, its first start, Unix ms).
   */
  close(park?: { readonly call: string; readonly expiresAt: number; readonly startedAt?: number }): void {
    if (this.closed) return;
    this.closed = true;
    if (this.ids !== undefined && this.ids.size > 0) {
      this.entry.holding--;
      if (park !== undefined) this.registry.park(this.entry.key, park.call, this.ids, park.expiresAt, park.startedAt);
    }
    this.ids = undefined;
    this.registry.leave(this, this.entry);
  }
}
