/**
 * Resume tokens: the gateway's own SSE event ids (ARCHITECTURE §4).
 *
 * Every non-empty SSE event id forwarded to the host is replaced by a signed, opaque token
 * that carries the seller's id and the stream's byte count. On a GET with `Last-Event-ID`
 * the gateway verifies the token and seeds the request's cumulative budget from it (spec:
 * mcp-response-extraction.md, Size Limits: the SSE bound is "carried across `Last-Event-ID`
 * resumption rather than reset by it"). What holds: a resume starts from at least the count
 * of the token it names (what the host received through that token's event; more when this
 * process noted bytes sent after it, resume/tail-ledger.ts), so neither the seller nor a
 * reconnect can set the count below it, and along one chain of resumes, each from the newest
 * token the host took (as MCP SDK clients resume), the bound trips where one unbroken stream's
 * would. What does not: the host chooses the token, and a token does not know it was used
 * before. A host resuming again and again from an early token T1, or opening several resumes
 * from T1 at once, gets up to the limit minus T1's count on each (routing/resumed-stream.ts
 * resumedCount starts each from T1's own count; the tail ledger notes only a stream's last
 * token). Stopping that needs a store of used tokens shared by the replicas, which this
 * design does not have (docs/configuration.md, "The resume secret"; review 35, F4:
 * test/regressions/older-token-resume-restarts-count-undocumented.test.ts). Stateless: any
 * replica with the same secret verifies any token; no shared store.
 *
 * Pure: only `node:crypto` and config/agent-url-key.ts; no I/O, no clock other than the injected one.
 *
 * ## Token format (version 1)
 *
 * ```
 * agw1.<base64url(payload JSON, UTF-8)>.<base64url(HMAC-SHA256(sellerKey, "agw1." + <payload part> + LF + <seller url>))>
 * ```
 *
 * - The MAC covers the token text up to the second dot (prefix and the base64url payload
 *   as sent), so the signature is checked before anything is decoded, and any change to
 *   the text (including a non-canonical re-encoding) fails it.
 * - It also covers the url of the seller the stream came from (the agent's configured `url`,
 *   as config/agent-url-key.ts agentUrlKey writes it: scheme, host, port, path and query, one
 *   text for every spelling of the same resource; a config url has no userinfo or fragment),
 *   which the token does not carry: `verify` is given the agent's url in force, so a token
 *   only resumes against the seller url it was minted for. A reload that changes the url
 *   (another seller, path or query: a query can select another account on the same server)
 *   leaves the older tokens failing their signature, as a token minted with another secret
 *   does (`resume_token_invalid`); the agent's headers are not covered (rotating a key keeps
 *   streams resumable). The token is not one character longer for it. Reported failure (a
 *   hostile new user's trial 10, F7): the resume went to the new seller with the old
 *   seller's event id, and its answer was taken for the old request's
 *   (test/regressions/resume-after-repoint-goes-to-new-seller.test.ts). The token text
 *   (prefix, payload part) has no LF, so the MAC input splits one way only. A reload that only
 *   respells the url (`/mcp?`, `/m%63p`) keeps the tokens verifying, as it keeps the agent's
 *   streams open (routing/open-streams.ts): both compare by that key (hostile trial 36, F5:
 *   test/regressions/reload-url-spelling-counts-as-moved.test.ts). A token signed for the
 *   url's `href` (minted before the key, by an older replica) verifies too.
 * - `verify` may be given the agent's previous urls (resume/previous-urls.ts): a token that
 *   verifies only for one of them is valid, marked `sellerMoved`, and the caller decides
 *   (routing/handler.ts: the standalone GET stream's is served as a fresh GET stream at the new
 *   seller, any other is refused as before; hostile trial 36, F2). A token of the older
 *   format (below) is so marked whenever previous urls are given: it names no seller.
 * - `sellerKey` = HKDF-SHA256(ikm = secret (a string as UTF-8), salt = empty,
 *   info = "adcp-buyer-gateway resume v1 seller", 32 bytes). The raw secret is never the MAC key.
 * - A token minted before the seller url was covered (by an older replica, or before an
 *   upgrade) is signed HMAC-SHA256(key, "agw1." + <payload part>), `key` the same HKDF with
 *   info = "adcp-buyer-gateway resume v1": `verify` accepts it too, checked as before without
 *   a seller url (its agent and age still are), so that such tokens resume while replicas run
 *   mixed versions, until they expire (`ttl_ms`). The keys differ, so no token signed one way
 *   verifies the other way. An older replica refuses every token minted here
 *   (`resume_token_invalid`: its signature does not verify there).
 * - The signature is the full 32-byte HMAC: 43 base64url characters, no padding.
 * - The alphabet of the whole token is `[A-Za-z0-9_.-]`: no NUL, CR or LF (SSE `id:` rules;
 *   WHATWG HTML §9.2.6 ignores an id containing NUL), no byte that needs HTTP header escaping.
 * - At most {@link MAX_RESUME_TOKEN_LENGTH} characters.
 *
 * ## Payload: compact JSON with one-letter keys
 *
 * | key | field             | JSON type                 | absent means          |
 * |-----|-------------------|---------------------------|-----------------------|
 * | `u` | `upstreamId`      | non-empty string          | (required)            |
 * | `a` | `agent`           | non-empty string          | (required)            |
 * | `h` | (session hash) (3)| 22 base64url characters   | no session            |
 * | `i` | `rpcId`           | string or finite number   | `null`                |
 * | `x` | `rpcIdText`       | JSON number text of `i`   | `undefined`           |
 * | `m` | `method`          | string                    | `undefined`           |
 * | `t` | `toolName`        | string (1)                | `undefined`           |
 * | `r` | `answersNoRequest`| `true`                    | `false`               |
 * | `f` | `final`           | `true`                    | `false`               |
 * | `w` | `awaited`         | array of strings (2)      | `undefined`           |
 * | `b` | `usedBytes`       | non-negative safe integer | (required)            |
 * | `l` | `limitBytes`      | non-negative safe integer | (required)            |
 * | `v` | `protocolVersion` | non-empty string          | (required)            |
 * | `s` | `streamStartedAt` | non-negative safe integer (Unix ms) | (required)  |
 * | `n` | `issuedAt`        | non-negative safe integer (Unix ms) | (required)  |
 *
 * (1) On a batch's token (`m` the empty string) `t` names the levels the batch's limits came
 * from: its configured tools, joined by `,`, after an empty name when the agent's own level
 * took part too (routing/resumed-stream.ts batchLevelsText); a replica older than that reads the
 * batch's token as before and ignores it (the agent's level).
 *
 * (2) Only on a batch's token: the requests of the batch still without their response after
 * the token's event, as opaque entries (response/batch-answers.ts awaitedKeys: the key of each
 * one's id, after one letter for the form of its local error when that is a tool result), so
 * that the batch's stream resumed from it ends once they are answered, and a local error
 * answers each as it would be answered alone; absent when the batch's ids are not known or
 * the list would be over {@link MAX_AWAITED_CHARS} (the resumed stream then ends as an
 * unanswered batch's, as before `w`). An entry without the letter (a token minted before it
 * was carried) is a request answered with a JSON-RPC error, as every request of a batch was
 * then; a replica older than the letters reads a list with one as no list.
 *
 * (3) The request that opened the stream carried an `Mcp-Session-Id` (MCP Streamable HTTP,
 * Session Management): the first 16 bytes of HMAC-SHA256(sessionKey, the session ID as sent),
 * base64url, `sessionKey` = HKDF-SHA256(secret, salt empty, info = "adcp-buyer-gateway resume
 * v1 session", 32 bytes). Not the ID itself (session IDs are secrets; a token is only
 * encoded, and hosts log event ids). `verify` is given the resuming request's
 * `Mcp-Session-Id`: a token with `h` resumes only with the same session ID, else it is
 * `resume_token_invalid` with a message of its own ({@link RESUME_OTHER_SESSION_MESSAGE},
 * {@link RESUME_NO_SESSION_MESSAGE}). A token without `h` names no session and resumes with
 * any or none: minted for a request without a session (a seller without sessions), or by a
 * process older than the key, of the same secret (a rolling restart): such tokens resume as
 * before until they expire (`ttl_ms`); a process older than the key refuses a token with it,
 * as for every key below. Adds 29 bytes to the payload JSON (`,"h":"` and 22 characters and
 * `"`), about 39 characters to the token (base64url), far within {@link MAX_RESUME_TOKEN_LENGTH}.
 * Reported failure (hostile trial 54, F6: session A's token resumed with session B's
 * `Mcp-Session-Id` was forwarded to the seller, which answered 200:
 * test/regressions/resume-token-other-session-forwarded.test.ts).
 *
 * Any other key, a `null` in an optional key, a wrong type, `b > l`, or an `x` without a
 * number `i` or that is not a JSON number reading as `i` makes the token invalid (strict
 * envelope: it is our own format, so anything else is not one of ours).
 *
 * Optional keys were added without a new version, so that every token an older replica
 * minted stays valid here (its absent key means `false`). The other way round, a replica
 * older than a key refuses a token that carries it (`resume_token_invalid`, HTTP 400) and
 * accepts every token without it: `r` is on every token of a stream answering a POSTed
 * notification or response (since 7a712c6), `f` only on the token of the event that
 * carried a request's response, a stream the host has no need to resume (an older replica
 * forwards every other token's resume as before); `x` only on the tokens of a request whose
 * id is a number a double cannot carry (`9007199254740993`); `w` only on a batch's tokens
 * (MCP 2025-03-26 only). A token without `x` whose `i` is
 * such a number (minted before `x`) resumes with the id as parsed.
 *
 * ## Verification order
 *
 * 1. syntax: a string of at most 4096 characters, the prefix, exactly two base64url parts,
 *    a 43-character signature;
 * 2. signature: HMAC recomputed with the agent's seller url (or, failing that, as a token
 *    minted before the url was covered; then for each previous url given), compared with
 *    `crypto.timingSafeEqual` (lengths first);
 * 3. payload: JSON, strict shape (above); fields read by known key only (prototype-safe);
 * 4. agent: must equal the agent of the URL the GET arrived on;
 *    session: a token with a session hash (`h`) needs the same `Mcp-Session-Id` on the GET;
 * 5. age: `now - issuedAt > ttlMs` -> `resume_token_expired`; `issuedAt - now > 60 s`
 *    (beyond clock skew between replicas) -> `resume_token_invalid`.
 *
 * `verify` never throws; messages never carry the secret or payload contents.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { agentUrlKey } from '../config/agent-url-key.js';

/** Prefix every token carries: the format version, and cheap rejection of raw seller ids. */
export const RESUME_TOKEN_PREFIX: string = 'agw1.';

/** Longest token (characters) `verify` looks at; anything longer is invalid outright. `mint` never exceeds it. */
export const MAX_RESUME_TOKEN_LENGTH = 4096;

/** How far (ms) `issuedAt` may lie in the future, for clock skew between replicas: 60 s. */
export const RESUME_CLOCK_SKEW_MS = 60_000;

/** Minimum secret size: 32 characters for a string (config/env), 32 bytes for a Buffer. */
export const MIN_RESUME_SECRET_BYTES = 32;

/** HKDF `info` for the version-1 MAC key over the token text and its seller url. */
const HKDF_INFO_SELLER = 'adcp-buyer-gateway resume v1 seller';
/** HKDF `info` for the MAC key of tokens minted before the seller url was covered (verified only). */
const HKDF_INFO = 'adcp-buyer-gateway resume v1';
/** HMAC-SHA256 output: 32 bytes = 43 base64url characters (unpadded). */
const SIGNATURE_CHARS = 43;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** SSE id rules: an id with NUL is ignored by clients; CR/LF end the field. */
const FORBIDDEN_ID_CHARS = /[\0\r\n]/;
const PAYLOAD_KEYS: ReadonlySet<string> = new Set(['u', 'a', 'h', 'i', 'x', 'm', 't', 'r', 'f', 'w', 'b', 'l', 'v', 's', 'n']);
/** HKDF `info` for the key of a token's session hash (`h`). */
const HKDF_INFO_SESSION = 'adcp-buyer-gateway resume v1 session';
/** Bytes of HMAC-SHA256 a token's session hash keeps: 16 (128 bits), 22 base64url characters. */
const SESSION_HASH_BYTES = 16;
/** A session hash as a token carries it: 22 base64url characters. */
const SESSION_HASH = /^[A-Za-z0-9_-]{22}$/;

/**
 * Most characters of `w` (its JSON text) a token carries: a batch whose awaited ids take more
 * gets tokens without it (a resume then ends as an unanswered batch's). Keeps the token well
 * under {@link MAX_RESUME_TOKEN_LENGTH} (base64url makes 1024 about 1366 characters) for any
 * seller event id that fitted without it, and bounds what the list adds to the host's stream
 * per event (a token counts toward the stream's cumulative bound).
 */
export const MAX_AWAITED_CHARS = 1024;

/**
 * Whether a batch's `awaited` list fits a token: its JSON text is at most
 * {@link MAX_AWAITED_CHARS} characters. Decided from the entries' lengths (each entry's JSON
 * text is at least its quotes and its length) as soon as they add up past the bound, so a list
 * of long ids is never serialized; only a list that may fit is. Asked once per event with an id
 * (routing/handler.ts): serializing a batch's 100 ids of 40,000 characters for each event cost
 * ~3.6 ms an event, 400 events of 47 bytes stalled the event loop 1.5 s (an
 * algorithmic-complexity audit after trial 16, H1:
 * test/regressions/resume-token-refused-after-serializing-huge-host-id.test.ts).
 */
export function awaitedFitsToken(awaited: readonly string[]): boolean {
  // `[`, `]` and the commas between entries.
  let least = awaited.length === 0 ? 2 : awaited.length + 1;
  for (const key of awaited) {
    least += key.length + 2;
    if (least > MAX_AWAITED_CHARS) return false;
  }
  return JSON.stringify(awaited).length <= MAX_AWAITED_CHARS;
}
/** A JSON number text (RFC 8259 §6). */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

export interface ResumeState {
  /** The seller's own event id (opaque; never parsed). */
  readonly upstreamId: string;
  /** Agent name the stream belongs to. */
  readonly agent: string;
  /** JSON-RPC id and method of the request that opened the stream (null/undefined for the standalone GET stream). */
  readonly rpcId: string | number | null;
  /**
   * The JSON text of a numeric `rpcId` as the host wrote it, when `JSON.stringify` writes
   * `rpcId` otherwise (`9007199254740993`, read as `9007199254740992`; `1.0`, `-0`:
   * request/peek.ts RpcPeek.idText); absent otherwise. A resumed stream matches the seller's
   * response to it exactly and mints its errors with it, as the stream's first exchange did (a
   * new user's trial: test/regressions/response-id-compared-as-double.test.ts; a hostile
   * new-user trial 13, L2: test/regressions/minted-error-rewrites-host-id.test.ts).
   */
  readonly rpcIdText?: string;
  readonly method: string | undefined;
  /** tools/call tool name, if any (errors and per-tool limits are tied to it). */
  readonly toolName: string | undefined;
  /**
   * True for the stream answering a POSTed notification or JSON-RPC response (its `rpcId` and
   * `method` are the POSTed message's, either may be absent): it answers no request, and has
   * the cumulative bound like a request's (src/exchange.ts hasCumulativeBound). Absent
   * (false) otherwise; tokens minted before it existed never carry it. Without it a resume
   * could not tell such a stream from a request's with id null (`method` set) or from the
   * standalone GET stream (a response's: no `method`), and began it without its count
   * (test/regressions/sse-notification-answer-unbounded.test.ts).
   */
  readonly answersNoRequest?: boolean;
  /**
   * True on the token of the event that carried the response to the stream's request (a
   * request's stream only): the stream is over there (MCP Streamable HTTP: once the response
   * is sent, the server closes the stream), so a `Last-Event-ID` resume from it is answered,
   * without contacting the seller, with HTTP 200 and an SSE stream held open with nothing in
   * it until the host closes it, or ended after `sse_idle_timeout_ms` (or at a graceful
   * shutdown, or when another answer waits behind it on its connection) plainly after one
   * event `id: <this token>`, so a client resumes from it again rather than with no id
   * (routing/handler.ts; errors/local-reply.ts answerStreamOver; a stream that ended at once,
   * empty, sent the MCP SDK 1.x client into a reconnect loop: hostile trial 17, M2; review 35,
   * F6: test/regressions/final-token-resume-doc-says-ends-at-once.test.ts). Absent (false)
   * otherwise; tokens minted before it existed never carry it. Reported failure: such a resume was sent
   * to the seller, which had nothing to replay, and the host got an `upstream_reset` (or, the
   * seller's stream kept open, an `sse_idle`) error for the id it already had its answer for
   * (test/regressions/sse-resume-from-final-response-token.test.ts).
   */
  readonly final?: boolean;
  /**
   * Of a batch's stream only: its requests still without their response after this token's
   * event, as opaque entries of their ids and error forms (response/batch-answers.ts
   * awaitedKeys; duplicates kept), so that the stream resumed from this token ends once they are answered, as the
   * first one would have (MCP 2025-03-26: the server SHOULD close the stream after all
   * responses). Absent when unknown (tokens minted before it existed, a batch whose list is
   * over {@link MAX_AWAITED_CHARS}): the resumed stream then waits for nothing it can tell.
   * Reported failure (a reviewer: a resumed batch SSE stream did not know its request ids and
   * could not end `ok`): test/regressions/sse-batch-resumed-stream-never-ends-cleanly.test.ts.
   */
  readonly awaited?: readonly string[];
  /**
   * The request's cumulative count so far: its stream's bytes through the event carrying this
   * token, plus what every earlier token of the stream added to the host's stream (a token's
   * length over the seller id's; src/response/sse-event-ids.ts chargeToken), across resumes.
   */
  readonly usedBytes: number;
  /** The byte limit in force for that request (max_response_bytes after call/tool/agent resolution). */
  readonly limitBytes: number;
  /** The host's negotiated MCP revision for this stream (so normalization stays consistent after resume). */
  readonly protocolVersion: string;
  /** Unix ms when the stream (first response) started; the sse_deadline_ms runs from here across resumes. */
  readonly streamStartedAt: number;
  /** Unix ms when this token was minted; age is checked against ttl_ms. */
  readonly issuedAt: number;
}

export interface ResumeCodecOptions {
  /** Secret bytes or string (>= 32 chars when a string from config/env). */
  secret: string | Buffer;
  /** Max token age (ms) from issuedAt. */
  ttlMs: number;
  /** Clock (ms) — injectable for tests. Default Date.now. */
  now?: () => number;
}

export type VerifyResult =
  /**
   * `sellerMoved`: the token verified only for one of the `previous` urls given to `verify`, not
   * for the agent's url in force (its stream came from a seller a reload has moved the agent
   * from), or it is of the older format, which names no seller, and `previous` is not empty (it
   * may come from such a seller); absent otherwise.
   */
  | { ok: true; state: ResumeState; sellerMoved?: true }
  | { ok: false; reason: 'resume_token_invalid' | 'resume_token_expired'; message: string };

export interface ResumeCodec {
  /**
   * Mints the token for one SSE event (issuedAt = the codec's clock, floored to an integer),
   * signed for `seller`, the url of the seller the stream came from (the agent's configured
   * `url` when the stream started; not carried: only `verify` with the same url accepts it),
   * bound to `session`, the `Mcp-Session-Id` of the request the stream answers (its keyed hash,
   * payload key `h`; undefined: no session, a token any session resumes).
   *
   * The state is the gateway's own, except `upstreamId`, which the seller chose. For the
   * standalone GET stream (no cumulative bound), pass `usedBytes: 0`.
   *
   * @throws {ResumeMintError} `resume_state_invalid` when the state breaks the payload shape
   *   (empty `upstreamId`, one containing NUL/CR/LF, `usedBytes > limitBytes`, a negative or
   *   non-integer number, ...): a token that `verify` would refuse is never minted;
   *   `resume_token_too_long` when the token would exceed {@link MAX_RESUME_TOKEN_LENGTH}
   *   (in practice an oversized seller event id).
   */
  mint(state: Omit<ResumeState, 'issuedAt'>, seller: URL, session?: string): string;
  /**
   * `mint` for the events of one stream: the function returned mints each token exactly as
   * `mint(state, seller, session)` would (same text for the same state and clock, same
   * errors), with the session's keyed hash (payload key `h`) computed once, at its first token,
   * rather than once per event (one HMAC-SHA256: about 3 of a token's 10 to 14 us with a
   * session; a re-read of trial 54's F6 fix). Nothing is computed until it first mints (a
   * stream with no event id mints nothing). routing/handler.ts makes one per exchange, at its
   * first token (none for an exchange that mints none: a JSON answer).
   *
   * @throws {ResumeMintError} from the function returned, as `mint`.
   */
  mintFor(seller: URL, session?: string): (state: Omit<ResumeState, 'issuedAt'>) => string;
  /**
   * `agent` is the agent of the URL the GET arrived on, `seller` its configured `url` in force:
   * a token minted for another agent, or for another seller url, is invalid, unless that url
   * is one of `previous` (the agent's urls before the reloads that moved it, newest first:
   * resume/previous-urls.ts), when it is valid with `sellerMoved` (checked only once `seller`
   * fails, one HMAC per url). `session`: the resuming request's `Mcp-Session-Id` (undefined:
   * none), which a token bound to a session must carry (payload key `h`).
   */
  verify(token: string, agent: string, seller: URL, previous?: readonly URL[], session?: string): VerifyResult;
  /**
   * The lifetime `verify` allows a token, in milliseconds from its `issuedAt` (the option
   * given): the SSE stage bounds a seller's `retry:` by it (response/sse-encode.ts
   * sseRetryCeilingMs), so a host that waits as told still resumes with a valid token.
   */
  readonly ttlMs: number;
}

/** Why `mint` refused a state. */
export type ResumeMintErrorCode = 'resume_state_invalid' | 'resume_token_too_long';

/** Thrown by `mint` only (never by `verify`). The message names the field, never its value. */
export class ResumeMintError extends Error {
  override readonly name = 'ResumeMintError';
  constructor(
    readonly code: ResumeMintErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A random 32-byte secret for when none is configured (the app warns that resumption then won't survive a restart or cross replicas). */
export function randomResumeSecret(): Buffer {
  return randomBytes(MIN_RESUME_SECRET_BYTES);
}

/**
 * Builds a codec. Options are validated here (undici style), so a bad secret or TTL fails
 * at start-up, not on the first event.
 *
 * @throws {TypeError} the secret is not a string/Buffer, or `now` is not a function.
 * @throws {RangeError} the secret is shorter than 32 characters (string) or 32 bytes (Buffer);
 *   `ttlMs` is not a finite number >= 0.
 */
export function createResumeCodec(opts: ResumeCodecOptions): ResumeCodec {
  const { secret, ttlMs } = opts;
  let ikm: Buffer;
  if (typeof secret === 'string') {
    if (secret.length < MIN_RESUME_SECRET_BYTES) {
      throw new RangeError(`resume secret must be at least ${MIN_RESUME_SECRET_BYTES} characters long`);
    }
    ikm = Buffer.from(secret, 'utf8');
  } else if (Buffer.isBuffer(secret)) {
    if (secret.length < MIN_RESUME_SECRET_BYTES) {
      throw new RangeError(`resume secret must be at least ${MIN_RESUME_SECRET_BYTES} bytes long`);
    }
    ikm = secret;
  } else {
    throw new TypeError('resume secret must be a string or a Buffer');
  }
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs < 0) {
    throw new RangeError('resume ttlMs must be a finite number of milliseconds >= 0');
  }
  const now = opts.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError('resume codec `now` must be a function');

  // Derived once; the secret itself is not retained by the codec.
  const sellerKey = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), HKDF_INFO_SELLER, 32));
  const legacyKey = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), HKDF_INFO, 32));
  // A url's key (config/agent-url-key.ts), as its `href`, is ASCII (WHATWG URL serialization), so latin1 is its bytes.
  const signText = (signed: string, url: string): string => createHmac('sha256', sellerKey).update(`${signed}\n${url}`, 'latin1').digest('base64url');
  const sign: Signer = (signed, seller) => signText(signed, agentUrlKey(seller));
  const verifySeller: SellerCheck = (signed, given, seller) => {
    const key = agentUrlKey(seller);
    // A token signed for the url's `href` (before the key; an older replica) when they differ.
    return sameSignature(signText(signed, key), given) || (key !== seller.href && sameSignature(signText(signed, seller.href), given));
  };
  const signLegacy = (signed: string): string => createHmac('sha256', legacyKey).update(signed, 'latin1').digest('base64url');
  const sessionKey = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), HKDF_INFO_SESSION, 32));
  const sessionHash: SessionHash = (session) => createHmac('sha256', sessionKey).update(session, 'utf8').digest().subarray(0, SESSION_HASH_BYTES).toString('base64url');

  /** `mint`, the session's hash (`h`) asked of `hashOf` once the state's length is known to fit (undefined: no session). */
  const mintWith = (state: Omit<ResumeState, 'issuedAt'>, seller: URL, hashOf: () => string | undefined): string => {
    const issuedAt = Math.floor(now());
    // Too long from its strings' lengths alone: refused before anything is serialized, hashed or encoded.
    const least = leastTokenLength(state);
    if (least > MAX_RESUME_TOKEN_LENGTH) {
      throw new ResumeMintError('resume_token_too_long', `resume token would be at least ${least} characters, over ${MAX_RESUME_TOKEN_LENGTH} (upstream event id too long?)`);
    }
    const payload = encodePayload({ ...state, issuedAt }, hashOf());
    const signed = RESUME_TOKEN_PREFIX + Buffer.from(payload, 'utf8').toString('base64url');
    const token = `${signed}.${sign(signed, seller)}`;
    if (token.length > MAX_RESUME_TOKEN_LENGTH) {
      throw new ResumeMintError(
        'resume_token_too_long',
        `resume token would be ${token.length} characters, over ${MAX_RESUME_TOKEN_LENGTH} (upstream event id too long?)`,
      );
    }
    return token;
  };

  return {
    ttlMs,
    mint(state, seller, session) {
      return mintWith(state, seller, session === undefined ? noSession : () => sessionHash(session));
    },

    mintFor(seller, session) {
      let hash: string | undefined;
      const hashOnce = session === undefined ? noSession : (): string => (hash ??= sessionHash(session));
      return (state) => mintWith(state, seller, hashOnce);
    },

    verify(token, agent, seller, previous = [], session) {
      try {
        return verifyToken(token, agent, seller, previous, session, verifySeller, signLegacy, sessionHash, now(), ttlMs);
      } catch {
        // Defensive: nothing above is expected to throw, but verify never does.
        return invalid('Last-Event-ID could not be verified as a resume token.');
      }
    },
  };
}

/** The session hash of a token minted without a session: none. */
const noSession = (): undefined => undefined;

/** The signature of a token's signed text (prefix and payload part) for the seller url its stream came from. */
type Signer = (signed: string, seller: URL) => string;

/** The session hash (payload key `h`) of a session ID. */
type SessionHash = (session: string) => string;

/** Whether `given` is the signature of `signed` for `seller` (constant time for equal lengths). */
type SellerCheck = (signed: string, given: Buffer, seller: URL) => boolean;

/**
 * The message of a token whose signature does not verify. A repointed agent's older tokens
 * land here (the url is not carried, so the cases cannot be told apart): the message names
 * them, so that an operator who just reloaded knows why.
 */
export const RESUME_SIGNATURE_MESSAGE =
  "Last-Event-ID resume token does not verify: minted with another resume secret, or for another seller url than this agent's (another agent's, or this agent's before a reload changed its url).";

/** The message of a token bound to an MCP session resumed with another session's `Mcp-Session-Id` (hostile trial 54, F6). */
export const RESUME_OTHER_SESSION_MESSAGE =
  "Last-Event-ID resume token belongs to another MCP session than this request's Mcp-Session-Id: a stream is resumed only in the session it was opened in (send the Mcp-Session-Id of that session).";

/** The message of a token bound to an MCP session resumed without `Mcp-Session-Id` (hostile trial 54, F6). */
export const RESUME_NO_SESSION_MESSAGE =
  'Last-Event-ID resume token belongs to an MCP session, and this request carries no Mcp-Session-Id: send the Mcp-Session-Id of the session the stream was opened in.';

function invalid(message: string): VerifyResult {
  return { ok: false, reason: 'resume_token_invalid', message };
}

function verifyToken(
  token: unknown,
  agent: unknown,
  seller: URL,
  previous: readonly URL[],
  session: string | undefined,
  verifySeller: SellerCheck,
  signLegacy: (signed: string) => string,
  sessionHash: SessionHash,
  nowMs: number,
  ttlMs: number,
): VerifyResult {
  // 1. Syntax.
  if (typeof token !== 'string' || token.length === 0) {
    return invalid('Last-Event-ID is empty or not a string.');
  }
  const parts = tokenParts(token);
  if (parts === 'long') {
    return invalid(`Last-Event-ID is longer than ${MAX_RESUME_TOKEN_LENGTH} characters.`);
  }
  if (parts === 'foreign') {
    return invalid('Last-Event-ID is not a resume token minted by this gateway.');
  }
  if (parts === 'malformed') {
    return invalid('Last-Event-ID is not a well-formed resume token.');
  }
  const { payloadPart, signaturePart, signed } = parts;
  if (
    signaturePart.length !== SIGNATURE_CHARS ||
    !BASE64URL.test(payloadPart) ||
    !BASE64URL.test(signaturePart) ||
    payloadPart.length % 4 === 1 // no base64 encoding has this length
  ) {
    return invalid('Last-Event-ID is not a well-formed resume token.');
  }

  // 2. Signature, over the text as received and the agent's seller url (constant time;
  // lengths checked first); else as a token minted before the url was covered; else for one
  // of the agent's previous urls (then marked `sellerMoved`). A token of the older format names
  // no seller: once the agent has moved (a previous url is known) it may be the old seller's,
  // so it is marked `sellerMoved` too, and a request's stream is not resumed at the new seller
  // with it (routing/handler.ts). Reported failure (a review, 2026-12-05, Nit: such a token for a
  // `tools/call` stream verified unmarked after a move; test/unit/resume-token-previous-url.test.ts).
  const given = Buffer.from(signaturePart, 'latin1');
  let sellerMoved = false;
  if (!verifySeller(signed, given, seller)) {
    if (sameSignature(signLegacy(signed), given)) sellerMoved = previous.length > 0;
    else if (previous.some((url) => verifySeller(signed, given, url))) sellerMoved = true;
    else return invalid(RESUME_SIGNATURE_MESSAGE);
  }

  // 3. Payload shape.
  const parsed = payloadJson(payloadPart);
  if (parsed === undefined) {
    return invalid('Last-Event-ID resume token payload is malformed.');
  }
  const decoded = decodePayload(parsed);
  if (decoded === undefined) {
    return invalid('Last-Event-ID resume token payload is malformed.');
  }
  const { state, boundSession } = decoded;

  // 4. Agent.
  if (typeof agent !== 'string' || state.agent !== agent) {
    return invalid('Last-Event-ID resume token was minted for a different agent.');
  }
  // The session its stream was opened in, when it had one (payload key `h`; hostile trial 54, F6).
  if (boundSession !== undefined) {
    if (typeof session !== 'string') return invalid(RESUME_NO_SESSION_MESSAGE);
    if (!sameSignature(sessionHash(session), Buffer.from(boundSession, 'latin1'))) return invalid(RESUME_OTHER_SESSION_MESSAGE);
  }

  // 5. Age.
  if (nowMs - state.issuedAt > ttlMs) {
    return { ok: false, reason: 'resume_token_expired', message: 'Last-Event-ID resume token has expired.' };
  }
  if (state.issuedAt - nowMs > RESUME_CLOCK_SKEW_MS) {
    return invalid('Last-Event-ID resume token is issued in the future.');
  }
  return sellerMoved ? { ok: true, state, sellerMoved: true } : { ok: true, state };
}

/** Whether `expected` (base64url) is `given`, in constant time for equal lengths. */
function sameSignature(expected: string, given: Buffer): boolean {
  const e = Buffer.from(expected, 'latin1');
  return e.length === given.length && timingSafeEqual(e, given);
}

// ---------------------------------------------------------------------------------------
// Payload encoding. Both directions share the same checks, so mint never produces a token
// that verify would refuse for its shape.

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isRpcId = (v: unknown): v is string | number =>
  typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** The name of the first field that breaks the shape, or undefined when the state is valid. */
function shapeProblem(s: ResumeState): string | undefined {
  if (!isNonEmptyString(s.upstreamId) || FORBIDDEN_ID_CHARS.test(s.upstreamId)) return 'upstreamId';
  if (!isNonEmptyString(s.agent)) return 'agent';
  if (s.rpcId !== null && !isRpcId(s.rpcId)) return 'rpcId';
  if (s.rpcIdText !== undefined && !(typeof s.rpcId === 'number' && typeof s.rpcIdText === 'string' && JSON_NUMBER.test(s.rpcIdText) && Number(s.rpcIdText) === s.rpcId)) {
    return 'rpcIdText';
  }
  if (s.method !== undefined && typeof s.method !== 'string') return 'method';
  if (s.toolName !== undefined && typeof s.toolName !== 'string') return 'toolName';
  if (s.answersNoRequest !== undefined && typeof s.answersNoRequest !== 'boolean') return 'answersNoRequest';
  if (s.final !== undefined && typeof s.final !== 'boolean') return 'final';
  if (s.awaited !== undefined && !(Array.isArray(s.awaited) && s.awaited.every((k) => typeof k === 'string'))) return 'awaited';
  if (!isCount(s.usedBytes)) return 'usedBytes';
  if (!isCount(s.limitBytes)) return 'limitBytes';
  if (s.usedBytes > s.limitBytes) return 'usedBytes';
  if (!isNonEmptyString(s.protocolVersion)) return 'protocolVersion';
  if (!isCount(s.streamStartedAt)) return 'streamStartedAt';
  if (!isCount(s.issuedAt)) return 'issuedAt';
  return undefined;
}

/**
 * Whether some token could carry a request id that takes at least `idChars` characters of the
 * payload's JSON (a string id: its UTF-16 length and its quotes; a number: its text as written,
 * which a token carries as `i` or `x`), everything else of the token at its least: the bound
 * {@link leastTokenLength} applies, from a length alone. False means no token of that request
 * can be minted, so no resume of it can come (routing/cancelled-requests.ts skips remembering
 * its cancellation: a review of hostile trial 55, F1's fix, where a 4M-character id cost
 * 59-180 ms of parse and hash: test/regressions/cancel-huge-request-id-hashed.test.ts).
 */
export function idMayFitToken(idChars: number): boolean {
  return RESUME_TOKEN_PREFIX.length + Math.ceil((idChars * 4) / 3) + 1 + SIGNATURE_CHARS <= MAX_RESUME_TOKEN_LENGTH;
}

/**
 * A lower bound, in characters, of the token {@link ResumeCodec.mint} makes of `s`, from the
 * lengths of its strings only (O(number of strings), nothing read character by character): a
 * string's JSON text is at least its quotes and its UTF-16 length (escapes only lengthen it),
 * its UTF-8 bytes at least that many, and base64url writes 4 characters per 3 bytes; the
 * prefix, the `.` and the signature are added. The parts are {@link walkTokenParts}' (the list
 * {@link tokenPartCosts} reads too; a batch's awaited ids with their brackets and commas); a
 * number id counts nothing, nor do fields of the wrong type (the shape check refuses them).
 *
 * Why: every event with an id of a stream mints a token, and a state over
 * {@link MAX_RESUME_TOKEN_LENGTH} was refused only once its whole payload had been serialized,
 * encoded and hashed. A host's request id (or tool name, or a batch's `awaited` ids) of
 * 4,000,000 characters cost ~85 ms per seller event: 400 events of 47 bytes (18 KB) with ids
 * stalled the event loop 34 s (an algorithmic-complexity audit after trial 16, H1:
 * test/regressions/resume-token-refused-after-serializing-huge-host-id.test.ts).
 */
export function leastTokenLength(s: Omit<ResumeState, 'issuedAt'>): number {
  const leastBytes = walkTokenParts(s, LEAST, undefined);
  return RESUME_TOKEN_PREFIX.length + Math.ceil((leastBytes * 4) / 3) + 1 + SIGNATURE_CHARS;
}

/**
 * How a reader of {@link walkTokenParts} counts a value's JSON bytes: a string's (its quotes
 * included; past `budget` it may stop, a number over it), a number's.
 */
interface PartMeasure {
  readonly string: (text: string, budget: number) => number;
  readonly number: (value: number) => number;
}

/** {@link leastTokenLength}'s: a string at least its quotes and its UTF-16 length (O(1)); a number nothing (a lower bound). */
const LEAST: PartMeasure = { string: (text) => text.length + 2, number: () => 0 };
/** {@link tokenPartCosts}': a string's JSON text as JSON.stringify writes it, counted to `budget`; a number's text (no escapes). */
const EXACT: PartMeasure = { string: (text, budget) => jsonStringBytes(text, budget), number: (value) => String(value).length };

/** `v`'s bytes as `m` counts a string; 0 for a value of another type (the shape check refuses it). */
function stringBytes(m: PartMeasure, v: unknown, budget: number): number {
  return typeof v === 'string' ? m.string(v, budget) : 0;
}

/**
 * The one list of a token payload's parts of variable length (TokenPartCost.key, in its order;
 * absent parts left out: no `i` for a null id, no `t` or `m` when undefined, no `w` unless a
 * list), each given to `part` with its JSON bytes as `m` counts them, to at least
 * {@link MEASURED_PART_BYTES} (a part past it may be cut short there). Read by
 * {@link leastTokenLength} (every event with an id: a lower bound from lengths) and
 * {@link tokenPartCosts} (a refused token's warning: exact), so the two cannot disagree on
 * which parts a token has (before, each listed them: a review, duplicate code). Returns the
 * sum of the parts' bytes ({@link leastTokenLength} needs only that: `part` undefined; before, a
 * module-level scratch sum filled by a callback: a re-read of 7767818, L4).
 */
function walkTokenParts(s: Omit<ResumeState, 'issuedAt'>, m: PartMeasure, part: ((key: TokenPartCost['key'], bytes: number) => void) | undefined): number {
  let sum = 0;
  let bytes: number;
  if (s.rpcId !== null) {
    // A number's text has no escapes (JSON_NUMBER); `x`, its text as written, is carried beside `i` as a string.
    const id = s.rpcId;
    sum += bytes = (typeof id === 'number' ? m.number(id) : stringBytes(m, id, MEASURED_PART_BYTES)) + stringBytes(m, s.rpcIdText, MEASURED_PART_BYTES);
    part?.('i', bytes);
  }
  if (s.toolName !== undefined) {
    sum += bytes = stringBytes(m, s.toolName, MEASURED_PART_BYTES);
    part?.('t', bytes);
  }
  if (s.method !== undefined) {
    sum += bytes = stringBytes(m, s.method, MEASURED_PART_BYTES);
    part?.('m', bytes);
  }
  sum += bytes = stringBytes(m, s.upstreamId, MEASURED_PART_BYTES);
  part?.('u', bytes);
  sum += bytes = stringBytes(m, s.agent, MEASURED_PART_BYTES);
  part?.('a', bytes);
  sum += bytes = stringBytes(m, s.protocolVersion, MEASURED_PART_BYTES);
  part?.('v', bytes);
  if (Array.isArray(s.awaited)) {
    // `[`, `]` and the commas, then each entry's JSON text while under the bound.
    bytes = s.awaited.length === 0 ? 2 : s.awaited.length + 1;
    for (const k of s.awaited) if (bytes <= MEASURED_PART_BYTES) bytes += stringBytes(m, k, MEASURED_PART_BYTES - bytes + 1);
    sum += bytes;
    part?.('w', bytes);
  }
  return sum;
}

/** A part of a token's payload of variable length (the keys above), as {@link tokenPartCosts} measures it. */
export interface TokenPartCost {
  /**
   * The payload key: `i` the request's id (with `x`, its number text, when carried), `t` the
   * tool name, `m` the method, `u` the seller's event id, `a` the agent's name, `v` the protocol
   * version, `w` a batch's awaited ids.
   */
  readonly key: 'i' | 't' | 'm' | 'u' | 'a' | 'v' | 'w';
  /**
   * Characters of the token the part's JSON value takes: its UTF-8 bytes in the payload (quotes
   * and escapes included: `\u0001` is 6) x 4/3 (base64url), rounded up; its key and comma
   * are not counted. With `over`, at least this many (the measure stopped there).
   */
  readonly chars: number;
  /** The part is over {@link MEASURED_PART_TOKEN_CHARS}: `chars` is that bound, not its size. */
  readonly over: boolean;
}

/**
 * The most characters of a token {@link tokenPartCosts} measures a part to: 65,536 (49,152 bytes
 * of JSON), 16 times {@link MAX_RESUME_TOKEN_LENGTH}. A longer part is only said to be over it,
 * so measuring costs at most 49,152 characters read per part, whatever the host sent (a request
 * id can be megabytes: resume-token-refused-after-serializing-huge-host-id).
 */
export const MEASURED_PART_TOKEN_CHARS = 65_536;
const MEASURED_PART_BYTES = (MEASURED_PART_TOKEN_CHARS * 3) / 4;

/**
 * What each part of variable length of `s` takes of the token {@link ResumeCodec.mint} would
 * make of it (`{ key, chars, over }`, in the order `key` lists them; absent parts left out),
 * read from the payload's own encoding rather than serialized: a string's JSON text as
 * `JSON.stringify` writes it (`"` and `\` and `\b\f\n\r\t` 2 bytes, other controls below
 * U+0020 and lone surrogates 6 as `\uXXXX`, others their UTF-8 bytes), a number's text as
 * written, each counted to at most {@link MEASURED_PART_TOKEN_CHARS} (one pass, nothing
 * allocated). The session's hash
 * (about 39 characters), the counts and times (at most ~16 digits each), the keys and the
 * prefix and signature (49) are fixed and not listed. For the refused token's warning
 * (response/sse-id-token-log.ts tokenRefusalCause), once per stream. Reported failure
 * (hostile trial 56, F4): the warning measured a string id by its UTF-16 length, 700 U+0001
 * characters as 702 though the token carries 4,202 bytes of them, and left the protocol version
 * out, so a 3,100-character `MCP-Protocol-Version` blamed the seller's event id
 * (test/regressions/token-warning-misnames-protocol-version.test.ts).
 */
export function tokenPartCosts(s: Omit<ResumeState, 'issuedAt'>): TokenPartCost[] {
  const parts: TokenPartCost[] = [];
  walkTokenParts(s, EXACT, (key, bytes) => {
    const over = bytes > MEASURED_PART_BYTES;
    parts.push({ key, chars: over ? MEASURED_PART_TOKEN_CHARS : Math.ceil((bytes * 4) / 3), over });
  });
  return parts;
}

/**
 * The UTF-8 bytes of `JSON.stringify(text)` (its quotes included), counted without making it;
 * once past `budget`, a number over it (the rest not read).
 */
function jsonStringBytes(text: string, budget: number): number {
  let bytes = 2;
  for (let k = 0; k < text.length && bytes <= budget; k++) {
    const c = text.charCodeAt(k);
    if (c < 0x20) bytes += c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) bytes += 2;
    else if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && k + 1 < text.length && (text.charCodeAt(k + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      k++;
    } else if (c >= 0xd800 && c <= 0xdfff) bytes += 6;
    else bytes += 3;
  }
  return bytes;
}

function encodePayload(s: ResumeState, sessionHash: string | undefined): string {
  const problem = shapeProblem(s);
  if (problem !== undefined) {
    throw new ResumeMintError('resume_state_invalid', `cannot mint a resume token: invalid ${problem}`);
  }
  // Key order fixed; optional keys omitted when null/undefined (shorter tokens).
  const p: Record<string, string | number | boolean | readonly string[]> = { u: s.upstreamId, a: s.agent };
  if (sessionHash !== undefined) p.h = sessionHash;
  if (s.rpcId !== null) p.i = s.rpcId;
  if (s.rpcIdText !== undefined) p.x = s.rpcIdText;
  if (s.method !== undefined) p.m = s.method;
  if (s.toolName !== undefined) p.t = s.toolName;
  if (s.answersNoRequest === true) p.r = true;
  if (s.final === true) p.f = true;
  if (s.awaited !== undefined) p.w = s.awaited;
  p.b = s.usedBytes;
  p.l = s.limitBytes;
  p.v = s.protocolVersion;
  p.s = s.streamStartedAt;
  p.n = s.issuedAt;
  return JSON.stringify(p);
}

/**
 * The seller's event id a token of this format carries (payload key `u`), read without
 * verifying its signature; undefined when `token` is not of that shape (no prefix, not two
 * base64url parts, a payload that is no JSON object with a non-empty string `u`). For
 * measuring only, never for trusting: the probe's SSE reader leaves an `id:` line carrying a
 * token out of its count (probe/rpc.ts `tokenBytes`), as the live discovery-size check does
 * (response/sse-event-ids.ts `tokenLineBytes`), so that both measure the seller's answer,
 * not the gateway's tokens (mcp/discovery-size.ts DiscoveryInput.bytes).
 */
export function resumeTokenSellerId(token: string): string | undefined {
  const parts = tokenParts(token);
  if (typeof parts === 'string') return undefined;
  const parsed = payloadJson(parts.payloadPart);
  if (typeof parsed !== 'object' || parsed === null || !Object.hasOwn(parsed, 'u')) return undefined;
  const u = (parsed as Record<string, unknown>).u;
  return typeof u === 'string' && u !== '' ? u : undefined;
}

/**
 * A token's text split into its payload and signature parts (the text between the prefix and
 * the one dot, and after it) and `signed`, the text the signature covers (prefix and payload).
 * Otherwise why not: `'long'` (over MAX_RESUME_TOKEN_LENGTH characters), `'foreign'` (no
 * RESUME_TOKEN_PREFIX), `'malformed'` (no dot, an empty payload, or a second dot). The parts
 * are not checked for base64url here. Shared by verifyToken and resumeTokenSellerId.
 */
function tokenParts(
  token: string,
): { payloadPart: string; signaturePart: string; signed: string } | 'long' | 'foreign' | 'malformed' {
  if (token.length > MAX_RESUME_TOKEN_LENGTH) return 'long';
  if (!token.startsWith(RESUME_TOKEN_PREFIX)) return 'foreign';
  const dot = token.indexOf('.', RESUME_TOKEN_PREFIX.length);
  if (dot <= RESUME_TOKEN_PREFIX.length || token.indexOf('.', dot + 1) !== -1) return 'malformed';
  return {
    payloadPart: token.slice(RESUME_TOKEN_PREFIX.length, dot),
    signaturePart: token.slice(dot + 1),
    signed: token.slice(0, dot),
  };
}

/** A payload part's base64url-decoded UTF-8 text parsed as JSON; undefined when it is not JSON. */
function payloadJson(payloadPart: string): unknown {
  try {
    return JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Builds a state from parsed JSON, reading known keys only (own properties; a `__proto__`
 * key from JSON.parse is an unknown key and makes the payload invalid), and the session hash
 * it carries (`h`; undefined: none). Undefined when the shape is wrong.
 */
function decodePayload(raw: unknown): { state: ResumeState; boundSession: string | undefined } | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  for (const k of Object.keys(raw)) if (!PAYLOAD_KEYS.has(k)) return undefined;
  const o = raw as Record<string, unknown>;
  const own = (k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);
  const has = (k: string): boolean => Object.hasOwn(o, k);

  // Optional keys: absent means null/undefined; present must have the right type (no null).
  const rpcId = own('i');
  const rpcIdText = own('x');
  const method = own('m');
  const toolName = own('t');
  if (has('i') && !isRpcId(rpcId)) return undefined;
  if (has('x') && typeof rpcIdText !== 'string') return undefined;
  if (has('m') && typeof method !== 'string') return undefined;
  if (has('t') && typeof toolName !== 'string') return undefined;
  // Only `true` is ever written (false is the key's absence).
  if (has('r') && own('r') !== true) return undefined;
  if (has('f') && own('f') !== true) return undefined;
  const awaited = own('w');
  if (has('w') && !(Array.isArray(awaited) && awaited.every((k) => typeof k === 'string'))) return undefined;
  const boundSession = own('h');
  if (has('h') && !(typeof boundSession === 'string' && SESSION_HASH.test(boundSession))) return undefined;

  const state: ResumeState = {
    upstreamId: own('u') as string,
    agent: own('a') as string,
    rpcId: has('i') ? (rpcId as string | number) : null,
    ...(has('x') ? { rpcIdText: rpcIdText as string } : {}),
    method: method as string | undefined,
    toolName: toolName as string | undefined,
    ...(has('r') ? { answersNoRequest: true } : {}),
    ...(has('f') ? { final: true } : {}),
    ...(has('w') ? { awaited: Object.freeze([...(awaited as string[])]) } : {}),
    usedBytes: own('b') as number,
    limitBytes: own('l') as number,
    protocolVersion: own('v') as string,
    streamStartedAt: own('s') as number,
    issuedAt: own('n') as number,
  };
  return shapeProblem(state) === undefined ? { state: Object.freeze(state), boundSession: boundSession as string | undefined } : undefined;
}
