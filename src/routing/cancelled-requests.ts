/**
 * The requests a host cancelled, remembered for as long as their streams can be resumed, so that
 * a resume of one (a GET with `Last-Event-ID` whose token names it) is answered without the
 * seller and without an error for an id the host dropped (routing/handler.ts).
 *
 * Why (hostile trial 55, F1): a cancelled request's stream ends plainly (outcome `cancelled`, or
 * `resumable_end` when the seller ends it: routing/in-flight-requests.ts), and when it had
 * carried an event with an id the MCP SDK client (1.x), which resumes a POST stream that gave it
 * an event id and no response, sends a GET with `Last-Event-ID`. That resume was a new exchange
 * that knew nothing of the cancellation: it went to the seller, which had dropped the request
 * and held the stream open, and at `sse_idle_timeout_ms` the host got a made-up `sse_idle` error
 * for the id (the SDK client: "Received a response for an unknown message ID"), logged
 * `local_error` and counted in `adcp_gateway_limit_breaches_total`; after `sse_deadline_ms`, the
 * same with `sse_deadline` (test/regressions/cancelled-call-resumed-gets-sse-idle.test.ts).
 *
 * What is remembered: each `notifications/cancelled` in an MCP session that the seller answered
 * 2xx (one it refused, 401 or 404, is not: a review, Low,
 * test/regressions/cancel-refused-by-seller-still-drops-request.test.ts), by seller endpoint (the
 * agent's `url`, normalized: config/agent-url-key.ts agentKeyOf; trial 56, F2), `Mcp-Session-Id` and the `requestId` as written (matched or not: a cancellation
 * may come while nothing is in flight, between a stream's cut and its resume); and again, when
 * its exchange ends, each request an accepted cancellation marked (its stream may have minted
 * tokens after the cancellation came; one ending before the seller's answer is remembered at
 * that answer, by the id as the cancellation wrote it). An id matches as routing/in-flight-requests.ts matches a cancellation
 * (response/json-value-at.ts isRequestId): a string the same string, escapes decoded; a number
 * the same value exactly as written (`1.0` names `1`, `9007199254740993` does not name
 * `9007199254740992`: mcp/json-numbers.ts exactDecimal); never a string for a number. One function
 * gives both the key's id and the registry's (response/json-value-at.ts canonicalRequestId),
 * computed once per request.
 *
 * For how long: `resume.ttl_ms` from the last time it was remembered, the lifetime of a resume
 * token (resume/token.ts: `now - issuedAt > ttlMs` is expired), and every token of such a
 * stream was minted before (at the latest when its exchange ended). A token the gateway no longer
 * honours is refused as before (`resume_token_expired`), so nothing is remembered past it.
 *
 * How many: at most {@link CANCELLED_REQUESTS_REMEMBERED} entries, all agents and sessions
 * together; past that the oldest is dropped first (a Map keeps insertion order, and with one
 * lifetime for all the oldest entry is also the first to expire), and expired entries are dropped
 * from the front as new ones come and at each lookup (has, forget, renewRequest: a review, Low,
 * test/regressions/cancel-store-expired-not-swept.test.ts), so an expired session's tally goes
 * with its last entry. An entry is the SHA-256 of its seller url, session and
 * canonical id (a 32-character one-byte string, whatever the length of the session id or a
 * string id: a host's 16 KiB session header or a 3,000-character string id takes no more), its expiry
 * time and its session's tally (a session id up to SHORT_SESSION characters kept once per session,
 * a longer one not kept: the tally of long sessions). Measured at the 10,000 cap (Node 20.20, heap
 * used after a full GC): ~1.5 MB with 100 per session (trial 56 measured 1.82 MB before the
 * tallies), ~4.8 MB with each in a 64-character session of its own. Cost: one SHA-256
 * (~2.5 µs) per cancellation remembered, and per resume or new request (forget) in a session with
 * something remembered; a `Map` lookup of the session otherwise (~0.02-0.05 µs).
 * An id no resume token could carry (over ~3,000 characters: resume/token.ts idMayFitToken) is
 * not remembered, decided from its length before it is parsed or hashed: no resume of it can
 * come (a review of this fix: a 4M-character string id cost 59-180 ms of parse and hash;
 * test/regressions/cancel-huge-request-id-hashed.test.ts).
 * A host sending cancellations by the thousand can only push out the oldest entries; a resume of
 * one pushed out goes to the seller as before (its error minted as before: the gap this closes).
 *
 * Per process, as resume/tail-ledger.ts: a resume that reaches another replica, or this one after
 * a restart, is sent to the seller as before. A request id is never reused within a session
 * (MCP Basic, Requests; a POST reusing one in flight is refused: routing/in-flight-requests.ts);
 * once a call is over its id may be sent again (docs/errors.md), and such a new request forgets
 * the cancellation ({@link CancelledRequests.forget}: hostile trial 56, F3).
 *
 * Awaiting the seller: a cancellation is remembered only once the seller answers it 2xx, so
 * from its arrival to that answer it is noted as awaited ({@link CancelledRequests.awaitSeller},
 * keyed as a remembered entry), and a new request sent with its id meanwhile ({@link forget})
 * supersedes it: its 2xx then remembers nothing, the id naming the new call by then (a review of
 * the cancel-accept fix, Medium 1: the late 2xx remembered it, and the new call's resume got
 * 405, never sent: test/regressions/reused-id-before-late-cancel-accept-gets-405.test.ts). A
 * note goes when its cancellation settles ({@link settle}: at the seller's answer, or at the
 * end of the notification's exchange without one: a failure, its deadline, the host leaving,
 * so none outlives its exchange), at most {@link CANCELLED_REQUESTS_REMEMBERED} at once (the
 * oldest pushed out first: its 2xx then remembers nothing, its resumes go to the seller as
 * before this memory). Cost: the key's SHA-256 once per cancellation that may name a resume
 * (reused for its entry at the 2xx), and a request (forget) in a session with a cancellation
 * awaited hashes its key, as one with something remembered does.
 *
 * No I/O; the clock is injected.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Exchange, RpcPeek } from '../exchange.js';
import type { WrittenRequestId } from '../mcp/cancelled-id.js';
import { canonicalRequestId, canonicalWrittenId } from '../response/json-value-at.js';
import { idMayFitToken } from '../resume/token.js';
import { QUOTE } from '../mcp/json-bytes.js';
import { NOSNIFF_NAME, NOSNIFF_VALUE } from '../errors/own-answer-headers.js';
import { MCP_METHODS } from './unrouted.js';

/** `s`, the first character of a string id's canonical text ({@link requestIdText}). */
const S = 0x73;

/** Most cancellations remembered at once, all agents and sessions together (module doc). */
export const CANCELLED_REQUESTS_REMEMBERED = 10_000;

/** The entries remembered in one session (or, for every session longer than {@link SHORT_SESSION}, in all of them together). */
interface SessionTally {
  readonly tag: string;
  count: number;
}

/** A remembered cancellation: when it expires (Unix ms), and its session's tally. */
interface Remembered {
  readonly expiresAt: number;
  readonly tally: SessionTally;
}

/** The cancellations of one key awaiting the seller's answer ({@link CancelledRequests.awaitSeller}). */
interface Awaiting {
  /** How many are awaited. */
  count: number;
  /** Raised by each new request sent with the key's id ({@link CancelledRequests.forget}): a cancellation noted before it remembers nothing. */
  generation: number;
  readonly tally: SessionTally;
}

/**
 * One cancellation awaiting the seller's answer ({@link CancelledRequests.awaitSeller}), to
 * give to {@link CancelledRequests.settle} once. Opaque to callers.
 */
export interface AwaitedCancellation {
  readonly key: string;
  readonly session: string;
  readonly awaiting: Awaiting;
  /** {@link Awaiting.generation} when it came. */
  readonly generation: number;
  settled: boolean;
}

/**
 * The longest session id tallied by itself (characters): a longer one (a host's own choice, up
 * to 16 KiB) is tallied with every other long one under {@link LONG_SESSIONS}, so no tally keeps
 * a long session string alive; a request in such a session hashes while any of them is remembered.
 */
const SHORT_SESSION = 64;
/** The tally of long sessions: NUL, which no session id holds (visible ASCII). */
const LONG_SESSIONS = '\0long';

const tagOf = (session: string): string => (session.length <= SHORT_SESSION ? session : LONG_SESSIONS);

/** The sessions with entries of one kind (remembered, awaited), each with its tally, by {@link tagOf}: a request in any other hashes nothing for them. */
class SessionTallies {
  private readonly bySession = new Map<string, SessionTally>();

  /** Sessions with an entry (long sessions counted as one). */
  get size(): number {
    return this.bySession.size;
  }

  /** Whether `session` has an entry. */
  has(session: string): boolean {
    return this.bySession.has(tagOf(session));
  }

  /** Counts one more entry in `session`: its tally, made with its first entry. */
  add(session: string): SessionTally {
    const tag = tagOf(session);
    let tally = this.bySession.get(tag);
    if (tally === undefined) this.bySession.set(tag, (tally = { tag, count: 0 }));
    tally.count++;
    return tally;
  }

  /** Counts one entry fewer in `tally`'s session, dropped with its last. */
  remove(tally: SessionTally): void {
    if (--tally.count === 0) this.bySession.delete(tally.tag);
  }
}

export class CancelledRequests {
  /** Each remembered cancellation's key ({@link keyOf}), its expiry and its session's tally, oldest first. */
  private readonly until = new Map<string, Remembered>();
  /** The sessions with something remembered: a request in any other hashes nothing. */
  private readonly sessions = new SessionTallies();
  /**
   * No entry expires before this (Unix ms; Infinity when none is held): a lower bound of the
   * front's expiry, so that {@link sweep} reads no entry while the front is unexpired.
   */
  private frontExpiresAt = Infinity;
  /** The cancellations awaiting the seller's answer, by key ({@link keyOf}), oldest first (module doc). */
  private readonly awaiting = new Map<string, Awaiting>();
  /** The sessions with a cancellation awaited: a request in any other hashes nothing for them. */
  private readonly awaitingSessions = new SessionTallies();

  /**
   * @param ttlMs      how long an entry lives (ms): the resume token lifetime (`resume.ttl_ms`)
   * @param maxEntries at most this many entries ({@link CANCELLED_REQUESTS_REMEMBERED})
   * @param now        the clock (Unix ms)
   */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number = CANCELLED_REQUESTS_REMEMBERED,
    private readonly now: () => number = Date.now,
  ) {}

  /** Entries held (expired ones not yet dropped included). */
  get size(): number {
    return this.until.size;
  }

  /** Sessions with an entry held (long sessions counted as one: {@link SHORT_SESSION}). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Cancellations awaiting the seller's answer (their keys; several of one key count once). */
  get awaitedSize(): number {
    return this.awaiting.size;
  }

  /** Remembers the cancellation naming `id` (a `requestId` as written) in the seller endpoint `seller` (an agent's normalized url: config/agent-url-key.ts agentKeyOf) and `session`. */
  rememberWritten(seller: string, session: string, id: WrittenRequestId): void {
    const key = writtenKeyOf(seller, session, id);
    if (key !== undefined) this.remember(key, session);
  }

  /**
   * Notes the cancellation naming `id` (a `requestId` as written) in `seller` and `session`,
   * forwarded to the seller, as awaiting its answer (module doc): what to give {@link settle}
   * with that answer; undefined for an id no resume token could carry (nothing to remember).
   * Past {@link CANCELLED_REQUESTS_REMEMBERED} keys awaited, the oldest is pushed out.
   */
  awaitSeller(seller: string, session: string, id: WrittenRequestId): AwaitedCancellation | undefined {
    const key = writtenKeyOf(seller, session, id);
    if (key === undefined) return undefined;
    let awaiting = this.awaiting.get(key);
    if (awaiting === undefined) {
      this.awaiting.set(key, (awaiting = { count: 0, generation: 0, tally: this.awaitingSessions.add(session) }));
      while (this.awaiting.size > this.maxEntries) {
        const [oldest, entry] = this.awaiting.entries().next().value!;
        this.dropAwaited(oldest, entry);
      }
    }
    awaiting.count++;
    return { key, session, awaiting, generation: awaiting.generation, settled: false };
  }

  /**
   * Settles `awaited` ({@link awaitSeller}) with the seller's answer (`accepted`: 2xx): remembers
   * the cancellation when accepted, unless a new request with its id was sent since it came
   * ({@link forget}) or it was pushed out; either way it is no longer awaited. A no-op for
   * undefined and after the first call. Returns whether it remembered it: accepted, and still
   * naming the call it came for (routing/handler.ts then drops that call's parked ids:
   * host-answer-waits.ts HostAnswerWaits.callCancelled); false otherwise, and for a no-op.
   */
  settle(awaited: AwaitedCancellation | undefined, accepted: boolean): boolean {
    if (awaited === undefined || awaited.settled) return false;
    awaited.settled = true;
    const { key, awaiting } = awaited;
    const current = this.awaiting.get(key) === awaiting;
    const remembered = accepted && current && awaiting.generation === awaited.generation;
    if (remembered) this.remember(key, awaited.session);
    if (--awaiting.count === 0 && current) this.dropAwaited(key, awaiting);
    return remembered;
  }

  /** Remembers the cancellation of the request `rpc` (its exchange marked cancelled) in `seller` and `session`; anything but a single request is ignored. */
  rememberRequest(seller: string, session: string, rpc: Pick<RpcPeek, 'kind' | 'id' | 'idText'>): void {
    if (!requestIdMayFitToken(rpc)) return;
    const id = requestIdText(rpc);
    if (id !== undefined) this.remember(keyOf(seller, session, id), session);
  }

  /**
   * Renews the cancellation of the request `rpc` in `seller` and `session` (a new lifetime from
   * now) only while it is still remembered: for a resumed stream's end (routing/handler.ts),
   * whose cancellation was remembered when it came ({@link rememberWritten}). Never re-added
   * once a newer request with that id opened there and {@link forget} dropped it: that call's
   * resumes got 405 when the cancelled resume ended after it opened (a review of hostile trial
   * 56, F3; test/regressions/reused-id-after-cancel-resume-gets-405.test.ts).
   */
  renewRequest(seller: string, session: string, rpc: Pick<RpcPeek, 'kind' | 'id' | 'idText'>): void {
    if (!this.holdsLive(session) || !requestIdMayFitToken(rpc)) return;
    const id = requestIdText(rpc);
    if (id === undefined) return;
    const key = keyOf(seller, session, id);
    if (this.until.has(key)) this.remember(key, session);
  }

  /** Whether a cancellation of the request `rpc` (a resume token's: its id and exact text) in `seller` and `session` is remembered, unexpired. */
  has(seller: string, session: string, rpc: Pick<RpcPeek, 'kind' | 'id' | 'idText'>): boolean {
    if (!this.holdsLive(session)) return false;
    const id = requestIdText(rpc);
    if (id === undefined) return false;
    const key = keyOf(seller, session, id);
    const entry = this.until.get(key);
    if (entry === undefined) return false;
    if (entry.expiresAt >= this.now()) return true;
    this.drop(key, entry);
    return false;
  }

  /**
   * Forgets the cancellation of the id of `rpc` in `seller` and `session`, if remembered: called
   * when a new request with that id is sent there (a POSTed single request, once no refusal
   * can leave it unsent: routing/handler.ts `forward`; a review's Nit,
   * test/regressions/cancel-forgotten-by-request-refused-unsent.test.ts). A call that is over frees its id (docs/errors.md, "Request ids in
   * flight"); a cancellation names the call it cancelled, so the new call's resumes go to the
   * seller, and only the cancelled call's own resumes, before, get 405. Source: hostile trial 56,
   * F3 (a new call with a cancelled call's id had its resume answered 405, never sent:
   * test/regressions/reused-id-after-cancel-resume-gets-405.test.ts). A cancellation of that id
   * still awaiting the seller's answer ({@link awaitSeller}) is superseded: its 2xx remembers
   * nothing (a review of the cancel-accept fix, Medium 1:
   * test/regressions/reused-id-before-late-cancel-accept-gets-405.test.ts). Cost when nothing is
   * remembered or awaited in `session`: a `Map` lookup of it, no hash.
   */
  forget(seller: string, session: string, rpc: Pick<RpcPeek, 'kind' | 'id' | 'idText'>): void {
    const awaited = this.awaiting.size > 0 && this.awaitingSessions.has(session);
    if ((!this.holdsLive(session) && !awaited) || !requestIdMayFitToken(rpc)) return;
    const id = requestIdText(rpc);
    if (id === undefined) return;
    const key = keyOf(seller, session, id);
    const entry = this.until.get(key);
    if (entry !== undefined) this.drop(key, entry);
    // A cancellation of the id awaiting the seller named an earlier call: its 2xx remembers nothing (module doc).
    const awaiting = awaited ? this.awaiting.get(key) : undefined;
    if (awaiting !== undefined) awaiting.generation++;
  }

  private remember(key: string, session: string): void {
    const nowMs = this.now();
    // Remembered again: it goes last, with a new lifetime.
    const again = this.until.get(key);
    if (again !== undefined) this.drop(key, again);
    this.sweep(nowMs);
    const expiresAt = nowMs + this.ttlMs;
    this.until.set(key, { expiresAt, tally: this.sessions.add(session) });
    if (expiresAt < this.frontExpiresAt) this.frontExpiresAt = expiresAt;
    while (this.until.size > this.maxEntries) {
      const [oldest, entry] = this.until.entries().next().value!;
      this.drop(oldest, entry);
    }
  }

  /**
   * Whether `session` has something remembered, once the expired entries at the front are
   * dropped ({@link sweep}): false at once when nothing is held. Swept here, not only in
   * {@link remember}: after `resume.ttl_ms` with nothing new remembered, an expired entry kept
   * its session's tally, and every request (forget) and resume (has) in that session hashed a
   * key for nothing (a review, Low: test/regressions/cancel-store-expired-not-swept.test.ts).
   */
  private holdsLive(session: string): boolean {
    if (this.until.size === 0) return false;
    this.sweep(this.now());
    return this.sessions.has(session);
  }

  /**
   * Drops the entries at the front expired at `nowMs` (`expiresAt < nowMs`, as {@link has}
   * reads it), stopping at the first unexpired one (entries are in the order remembered, so of
   * expiry); nothing read while {@link frontExpiresAt} says the front is unexpired.
   */
  private sweep(nowMs: number): void {
    if (nowMs <= this.frontExpiresAt) return;
    for (const [oldest, entry] of this.until) {
      if (entry.expiresAt >= nowMs) {
        this.frontExpiresAt = entry.expiresAt;
        return;
      }
      this.drop(oldest, entry);
    }
    this.frontExpiresAt = Infinity;
  }

  /** Drops the entry `entry` held under `key`, and its session's tally with its last entry. */
  private drop(key: string, entry: Remembered): void {
    this.until.delete(key);
    this.sessions.remove(entry.tally);
  }

  /** Drops the awaited cancellations `entry` of `key` (settled, or pushed out), and their session's awaited tally with its last key. */
  private dropAwaited(key: string, entry: Awaiting): void {
    this.awaiting.delete(key);
    this.awaitingSessions.remove(entry.tally);
  }
}

/**
 * The key ({@link keyOf}) of the cancellation naming `id` (a `requestId` as written) in `seller`
 * and `session`; undefined for an id no resume token could carry ({@link writtenIdMayFitToken},
 * then a string's length once decoded), nothing hashed then.
 */
function writtenKeyOf(seller: string, session: string, id: WrittenRequestId): string | undefined {
  if (!writtenIdMayFitToken(id)) return undefined;
  const text = canonicalWrittenId(id.bytes, id.range);
  // A string's length known now (`s` and its characters): with its quotes, as a token carries it.
  if (text.charCodeAt(0) === S && !idMayFitToken(text.length + 1)) return undefined;
  return keyOf(seller, session, text);
}

/**
 * The canonical text of a request's id (response/json-value-at.ts canonicalRequestId: `s` and
 * the string, or `n` and the exact value of the number as the host wrote it, kept per request
 * object); undefined for anything but a single request.
 */
function requestIdText(rpc: Pick<RpcPeek, 'kind' | 'id' | 'idText'>): string | undefined {
  return rpc.kind === 'request' ? canonicalRequestId(rpc) : undefined;
}

/**
 * Whether a token could carry the id of `rpc` (resume/token.ts idMayFitToken), from its length
 * alone: a string id with its quotes, a number as its text (kept, or as `JSON.stringify` writes
 * it, at most 24 characters). A request whose id no token carries has no resume to answer.
 */
function requestIdMayFitToken(rpc: Pick<RpcPeek, 'id' | 'idText'>): boolean {
  const id = rpc.id;
  return typeof id === 'string' ? idMayFitToken(id.length + 2) : idMayFitToken(rpc.idText?.length ?? 0);
}

/**
 * Whether a token could carry the request a `requestId` as written names, from its written
 * length alone (nothing parsed or hashed): a string's characters are at least a sixth of its
 * bytes between the quotes (`\uXXXX`, six bytes, is the longest writing of one UTF-16 unit;
 * one that may fit, at most ~18 KB, is parsed and its length checked before it is hashed);
 * a number is carried as its request wrote it, taken to be as the cancellation writes it.
 * Narrowing: a cancellation writing a number longer than a token carries (over ~3,000
 * characters: `1.000…0`) that names a request written short (`1`) is not remembered, though
 * that request has tokens; the request is still remembered at its end when the cancellation
 * found it in flight (rememberRequest), so only a cancellation sent between a stream's cut and
 * its resume, spelling the id otherwise than the request did, is missed (its resume then goes
 * to the seller as before this memory).
 */
function writtenIdMayFitToken({ bytes, range }: WrittenRequestId): boolean {
  const length = range[1] - range[0];
  return bytes[range[0]] === QUOTE ? idMayFitToken(Math.ceil((length - 2) / 6) + 2) : idMayFitToken(length);
}

/**
 * The key of a cancellation: the SHA-256 of `seller`, `session` and `id` (a canonical id text),
 * as a 32-character one-byte string. NUL separates them: a url's href and a session id (visible
 * ASCII: request/session-id-header.ts) hold none. UTF-16 code units are hashed as they are, so
 * two string ids differing only in a lone surrogate stay apart.
 */
function keyOf(seller: string, session: string, id: string): string {
  return createHash('sha256').update(`${seller}\0${session}\0${id}`, 'utf16le').digest().toString('latin1');
}

/** The `Allow` of an MCP endpoint (routing/unrouted.ts). */
const ALLOW = MCP_METHODS.join(', ');

/**
 * Answers a resume (a GET with `Last-Event-ID`) of a request the host cancelled
 * ({@link CancelledRequests.has}) without the seller: HTTP 405 with `Allow: POST, GET, DELETE`,
 * `Cache-Control: no-store`, no body; outcome `cancelled`, reason null (no error was due: the
 * host dropped the id), no breach, nothing for the agent's backoff.
 *
 * Why 405 (MCP Streamable HTTP: the server "MUST either return Content-Type: text/event-stream in
 * response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that the
 * server does not offer an SSE stream at this endpoint"): it is the one answer the MCP
 * TypeScript SDK client (1.x) takes quietly and finally, `_startOrAuthSse` returns on it with no
 * error and no retry. Anything else costs the host more: an SSE stream that ends at once, empty,
 * makes that client reconnect after its delay with a plain GET (no event gave it an id), which
 * the seller answers 409 while the session's standalone stream is open, until it gives up, each
 * try an `onerror` ("Maximum reconnection attempts (2) exceeded" at the end; README, Outcome
 * `already_answered`); the MCP Python SDK client (its main branch, 2026) resumes an empty ended
 * stream again every second without end, and gives a 405 up after two tries logged at debug
 * (`_handle_reconnection`); a stream held open empty holds a connection for a request no one
 * awaits, and ends at sse_idle_timeout_ms into the same reconnection; another status (404, 410) is an error and retried by both. `Allow` lists
 * the endpoint's methods (RFC 9110 §15.5.6 asks for it on a 405): GET is still taken there, for
 * the standalone stream and other resumes. The seller is not contacted: its GET would be held
 * open for nothing (it dropped the request) or refused.
 */
export function answerCancelledResume(exchange: Exchange, reply: FastifyReply): void {
  if (exchange.finished) return;
  exchange.finished = true;
  exchange.outcome = 'cancelled';
  reply.code(405).headers({ allow: ALLOW, 'cache-control': 'no-store', [NOSNIFF_NAME]: NOSNIFF_VALUE }).send();
}
