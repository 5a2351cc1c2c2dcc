/**
 * When a JSON-RPC batch's SSE stream has answered the batch: every request in it (an element
 * with a `method` and an `id`: request/peek.ts RpcPeek.batchRequestIds) has had its response,
 * an event whose data is a JSON-RPC response with that id, or an array holding such
 * responses (MCP 2025-03-26 Streamable HTTP: "These responses MAY be batched"). The SSE stage
 * (sse-stage.ts) then ends the host's stream as it ends a single request's once its response
 * has passed: outcome `ok`, the event's resume token `final`, the upstream request aborted.
 *
 * Source: MCP 2025-03-26 Streamable HTTP, "Sending Messages to the Server": the server SHOULD
 * close the SSE stream after all JSON-RPC responses have been sent. Reported failure (a new
 * user's trial): a batch's stream closed after both of its answers brought the host an extra
 * error event for id null (`upstream_reset`), or ended `resumable_end` when the events had ids
 * (test/regressions/sse-batch-answer-never-ends-cleanly.test.ts).
 *
 * A response is what a single request's stream takes as one (rewrite.ts
 * isResponseToExchange): an object with exactly one of `result` and `error` and the id.
 * Ids compare exactly, as for a single request (json-value-at.ts isRequestId): a string the
 * same string (escapes decoded), `null` only `null`, a number the same mathematical value as
 * written, never through a double (`2.0` answers `2`; `9007199254740992` does not answer
 * `9007199254740993`). A batch holding one id twice waits for two responses with it (one sent
 * without a session: in a session it is refused before it is sent, routing/in-flight-requests.ts).
 *
 * A response to an id not awaited (an id not in the batch, or one whose request already had
 * its response: a second response for it) answers no request of the batch: a client routes
 * each response by its id alone, so it would answer another pending call, or a call twice.
 * It makes the answer `upstream_not_mcp` (docs/errors.md), as a response to another id does a
 * single request's: on the SSE path the stream ends there with an error event for each
 * request still awaited ({@link BatchAnswers.unanswered}), nothing of the event forwarded
 * (sse-stage.ts); on the JSON path (json-stage.ts) the body is refused (HTTP 200, an error for
 * each of the batch's requests: errors/local-reply.ts), and so is a body that leaves a
 * request without its response (no later answer can come for it: MCP 2025-03-26 Streamable
 * HTTP sends a response only on the stream of the POST that carried its request). Source: a new user's
 * trial, 2026-12-03, and a reviewer: a batch's answer carried a response for another id, a
 * second response for an id, or answered one of two requests, and went to the host, logged
 * `ok` (test/regressions/batch-answer-for-other-ids-forwarded.test.ts).
 */
import type { BatchRequestRef } from '../exchange.js';
import type { LocalErrorForm } from '../mcp/local-error.js';
import { isJsonObject } from '../mcp/extract.js';
import { exactDecimal } from '../mcp/json-numbers.js';
import { writtenIdRanges } from '../mcp/written-ids.js';
import { idTextOfNumber, writtenNumberId } from '../mcp/id-text.js';
import { readsAsNoRequest, textRepeatsMemberName } from '../mcp/repeated-names.js';
import { claimsAnswer, hasResponseMembers, isWellFormedResponse } from './rewrite.js';
import { mayHoldNonFiniteLiteral, parseWithNonFiniteLiterals } from '../mcp/lenient-json.js';

/**
 * The responses a batch's answer still waits for. Made once per stream or JSON body, only for
 * a batch (a single request's answer never makes one); cost per event that may be a response
 * (sse-response-sniff.ts mayBeResponse): one `JSON.parse` of its data, plus one walk of its bytes
 * (mcp/written-ids.ts) when a response id is a number.
 */
export class BatchAnswers {
  /** How many requests still wait for a response, by the key of their id ({@link idKey}). */
  private readonly awaited = new Map<string, number>();
  /** Requests still without their response. */
  private left: number;
  /**
   * The keys of the requests counted answered by the data taken since the last
   * {@link delivered} (one per response): the host has not had those responses yet. An event
   * is taken before its last checks (its resume token's length against the cumulative bound:
   * sse-stage.ts), and one that fails them, or is `foreign`, is never forwarded.
   */
  private undelivered: string[] | undefined;
  /**
   * By the key of an id, the error forms of the batch's requests with that id, in the batch's
   * order: those a token's entries carry ({@link awaitedKeys}), the first `n` of them when `n`
   * are still awaited, as {@link unanswered} lists them.
   */
  private readonly forms = new Map<string, LocalErrorForm[]>();
  /**
   * By the key of a numeric id, the id's text as the host wrote it (BatchRequestRef.idText,
   * else JSON.stringify's) for each of the batch's requests with that id, in the batch's
   * order, as {@link forms}: what a token's entries carry when the key does not give it back
   * ({@link awaitedKeys}).
   */
  private readonly texts = new Map<string, string[]>();

  /** `ids`: the batch's requests (RpcPeek.batchRequestIds); none: nothing to wait for. */
  constructor(private readonly ids: readonly BatchRequestRef[]) {
    for (const ref of ids) {
      const key = idKey(ref.id, ref.idText);
      this.awaited.set(key, (this.awaited.get(key) ?? 0) + 1);
      const forms = this.forms.get(key);
      if (forms === undefined) this.forms.set(key, [ref.form]);
      else forms.push(ref.form);
      if (typeof ref.id !== 'number') continue;
      const text = writtenNumberId(ref.id, ref.idText);
      const texts = this.texts.get(key);
      if (texts === undefined) this.texts.set(key, [text]);
      else texts.push(text);
    }
    this.left = ids.length;
  }

  /**
   * The data taken since the last call has gone to the host (its event is written): the
   * responses it held count as answered for {@link unanswered} too. Cost: none unless that
   * data held a response.
   */
  delivered(): void {
    if (this.undelivered !== undefined) this.undelivered.length = 0;
  }

  /**
   * The requests of the batch the host still waits for: those without their response, and
   * those whose response is in data taken but not {@link delivered} (a `foreign` event's
   * included, whatever it counted before it turned out so), one per request (an id awaited
   * twice is listed twice: the first ones in the batch's order), in the batch's order, each
   * as the batch's peek read it (BatchRequestRef: a number's exact text when a double changes
   * it, the form of its error). What a local error ending the batch's stream answers, one
   * error per request (errors/local-reply.ts; reported failure: one error for id null answered
   * none of them, test/regressions/batch-local-error-answers-no-request.test.ts).
   * Cost: one walk of the batch's ids, on that error only.
   */
  unanswered(): BatchRequestRef[] {
    const left = new Map(this.awaited);
    for (const key of this.undelivered ?? []) left.set(key, (left.get(key) ?? 0) + 1);
    const out: BatchRequestRef[] = [];
    for (const ref of this.ids) {
      const key = idKey(ref.id, ref.idText);
      const count = left.get(key);
      if (count === undefined) continue;
      out.push(ref);
      if (count === 1) left.delete(key);
      else left.set(key, count - 1);
    }
    return out;
  }

  /**
   * The data taken since the last {@link delivered} held a response to a request of the batch
   * (sse-stage.ts: one in a named event answers none, and the stream ends as for a `foreign` one).
   */
  get answeredUndelivered(): boolean {
    return this.undelivered !== undefined && this.undelivered.length > 0;
  }

  /** Every request of the batch has had its response (at once for a batch without requests). */
  get done(): boolean {
    return this.left === 0;
  }

  /**
   * The requests still without their response, one entry each (an id awaited twice is listed
   * twice), in the order first awaited: the key of its id, after the letter of its error's form
   * when that is a tool result ({@link FORM_LETTERS}: `R`, `W`; none for `rpc_error`), and for
   * a number the host wrote otherwise than its key gives back (`1.0`, `1E2`, `-0`, `1e-400`,
   * `1e+21`: {@link plainDecimal} of the key writes `1`, `100`, `0`, 400 zeros and 22 digits),
   * `~` and the text as written ({@link WRITTEN_MARK}). What a resume token carries (resume/token.ts `w`) so
   * that the batch's stream resumed with `Last-Event-ID` knows what it still waits for, and
   * answers each with the error it would get alone, its id as the host wrote it
   * ({@link idsOfAwaitedKeys}; a hostile new-user trial 13, L2:
   * test/regressions/minted-error-rewrites-host-id.test.ts). Opaque outside this file. Cost:
   * one array of the requests left, made per call (a batch's tokens only); one character more
   * per tool call, and the id's text for a number so written.
   */
  awaitedKeys(): string[] {
    const keys: string[] = [];
    for (const [key, count] of this.awaited) {
      const forms = this.forms.get(key) ?? [];
      const texts = this.texts.get(key) ?? [];
      for (let k = 0; k < count; k++) {
        const text = texts[k];
        const written = text !== undefined && text !== plainDecimal(key.slice(1)) ? WRITTEN_MARK + text : '';
        keys.push(FORM_LETTERS[forms[k] ?? 'rpc_error'] + key + written);
      }
    }
    return keys;
  }

  /**
   * Marks the requests that the event data `data` (its text, or its UTF-8 bytes) answers: a
   * response, or an array of messages holding responses ({@link takeMessage}). Data that is not
   * JSON changes nothing (`waiting`, or `done` when nothing is left). A response, or an array
   * holding one, whose message repeats a member name (mcp/repeated-names.ts) is `foreign`.
   * Errors: none thrown. The caller has checked the data against the structure bounds
   * (max_json_depth, max_json_nodes).
   */
  take(data: string | Buffer): BatchTake {
    let message: unknown;
    try {
      message = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
    } catch {
      // No JSON text, but a response to a lenient host (`NaN`, `Infinity` read as numbers:
      // mcp/lenient-json.ts; a new user's trial 8, F2): it answers none of the batch's
      // requests, as on a single request's stream (sse-message.ts lenientVerdict).
      if (mayHoldNonFiniteLiteral(data) && holdsLenientResponse(parseWithNonFiniteLiterals(typeof data === 'string' ? data : data.toString('utf8')))) return 'foreign';
      return this.left === 0 ? 'done' : 'waiting';
    }
    const taken = this.takeMessage(message, data);
    // A response, or an array holding one, whose message repeats a member name: no answer, as
    // on a single request's stream (mcp/repeated-names.ts). One more scan of the data, for
    // these events only (a JSON body's answer is scanned as it arrives: json-stage.ts).
    if (taken !== 'foreign' && holdsResponse(message) && textRepeatsMemberName(typeof data === 'string' ? Buffer.from(data, 'utf8') : data, message)) return 'foreign';
    return taken;
  }

  /**
   * {@link take} on the message `message` already parsed from `data` (its JSON text, or its
   * UTF-8 bytes): a JSON body answering the batch (json-stage.ts) or an event's data.
   *
   * - `foreign`: a response in it answers no request still awaited: its id is not one of the
   *   batch's request ids, or its request already had its response (a second response for the
   *   same id), or it is no valid response at all (both `result` and `error`, an id that is
   *   not a string, a number or null, no `id` at all, or not well formed: `jsonrpc` not
   *   `"2.0"`, a `result` that is no object, an `error` without an integer `code` and a string
   *   `message`: rewrite.ts isWellFormedResponse). A response is a message with a
   *   `result` or an `error` member, whatever its `id` (rewrite.ts claimsResponse: the rule
   *   of a single request's stream, a `method` beside them included), or one naming no method
   *   (rewrite.ts lacksMethod: with an `id` a Go host reads it as a response, and with neither
   *   member it answers none, hostile trials:
   *   test/regressions/id-only-message-on-request-stream-passes.test.ts; without an `id` it is
   *   no message at all, and an empty `method` names none, a review:
   *   test/regressions/seller-message-without-kind-forwarded.test.ts). The counts after a
   *   `foreign` answer mean nothing: the caller ends the exchange with `upstream_not_mcp`.
   * - `done`: every request of the batch has had its response (with this message or before).
   * - `waiting`: requests are still without their response.
   *
   * Requests and notifications (a method named, no `result`, no `error`) change nothing. A message with
   * `result` or `error` and no `id` is `foreign`, as on a single request's stream (JSON-RPC 2.0
   * §5: a response has an `id`; a reviewer, 2026-12-03: one went out on a batch's stream,
   * test/regressions/sse-result-and-error-without-id-forwarded.test.ts).
   *
   * Source: a new user's trial, 2026-12-03: a batch's answer carried a response for another id
   * and a second response for an id, and both reached the host
   * (test/regressions/batch-answer-for-other-ids-forwarded.test.ts).
   */
  takeMessage(message: unknown, data: string | Buffer): BatchTake {
    let ids: ReturnType<typeof writtenIdRanges> | undefined;
    let bytes: Buffer | undefined;
    /**
     * The text of the number id of message `k` as written (the bytes encoded and walked once,
     * when first needed: once per response, a string's encoding made a batch of R numeric-id
     * responses in one event cost R encodings of the whole data; the complexity audit after
     * trial 16).
     */
    const writtenId = (k: number, parsed: number): string => {
      bytes ??= typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      const range = (ids ??= writtenIdRanges(bytes))[k];
      return range === undefined ? String(parsed) : bytes.toString('latin1', range[0], range[1]);
    };
    if (Array.isArray(message)) {
      // An element that is not an object (a nested array) is no JSON-RPC message (JSON-RPC 2.0
      // §6; a new user's trial, 2026-12-03: test/regressions/sse-nested-array-response-forwarded.test.ts).
      for (let k = 0; k < message.length; k++) if (!isJsonObject(message[k]) || !this.answer(message[k], k, writtenId)) return 'foreign';
    } else if (!this.answer(message, 0, writtenId)) {
      return 'foreign';
    }
    return this.left === 0 ? 'done' : 'waiting';
  }

  /**
   * Counts `m` (message `k` of the data) when it is the response to an awaited request; false
   * when it is a response that answers none ({@link takeMessage}'s `foreign`).
   */
  private answer(m: unknown, k: number, writtenId: (k: number, parsed: number) => string): boolean {
    if (!isJsonObject(m) || !claimsAnswer(m)) return true;
    // Both members, a `method` beside them, or no `id`: no response (rewrite.ts hasResponseMembers);
    // nor one not well formed (rewrite.ts isWellFormedResponse: a new user's trial 8, F5).
    if (!hasResponseMembers(m) || !Object.hasOwn(m, 'id') || !isWellFormedResponse(m)) return false;
    const id = m.id;
    let key: string;
    if (typeof id === 'number') key = idKey(id, writtenId(k, id));
    else if (typeof id === 'string' || id === null) key = idKey(id, undefined);
    else return false;
    const count = this.awaited.get(key);
    if (count === undefined) return false;
    if (count === 1) this.awaited.delete(key);
    else this.awaited.set(key, count - 1);
    this.left--;
    (this.undelivered ??= []).push(key);
    return true;
  }
}

/**
 * `message` is a response or an array holding one, as a host reads it: its `result` or
 * `error`, or no method named, in any case (mcp/repeated-names.ts readsAsNoRequest: a Go host
 * reads `"Result"` and `"reſult"` as `result`, `"METHOD":""` as an empty method).
 */
function holdsResponse(message: unknown): boolean {
  if (Array.isArray(message)) return message.some((m) => isJsonObject(m) && readsAsNoRequest(m));
  return isJsonObject(message) && readsAsNoRequest(message);
}

/**
 * A lenient reading of data (mcp/lenient-json.ts; NOT_LENIENT_JSON when none) is a
 * response ({@link holdsResponse}) or an array with an element that is not an object (no
 * JSON-RPC message: {@link BatchAnswers.takeMessage}).
 */
function holdsLenientResponse(value: unknown): boolean {
  return holdsResponse(value) || (Array.isArray(value) && value.some((m) => !isJsonObject(m)));
}

/** What a message did to a batch's awaited responses ({@link BatchAnswers.takeMessage}). */
export type BatchTake = 'waiting' | 'done' | 'foreign';

/**
 * The letter before an entry's key ({@link BatchAnswers.awaitedKeys}) for each error form:
 * none for `rpc_error`, so a batch's tokens without tool calls are as before forms were
 * carried, and an entry of a token minted before is read as `rpc_error`, the error every
 * request of a batch got then. `R` and `W` begin no key ({@link idKey}: `s`, `n`, `z`).
 */
const FORM_LETTERS: { readonly [F in LocalErrorForm]: string } = { rpc_error: '', tool_result: 'R', tool_result_may_have_run: 'W' };

/**
 * The requests of {@link BatchAnswers.awaitedKeys}'s entries, from which a `BatchAnswers` that
 * waits for the same responses is made (a batch's stream resumed with `Last-Event-ID`:
 * routing/handler.ts); undefined when an entry is not one awaitedKeys makes (a token minted by
 * another format: the resumed stream then does not know the ids, as before). A number's
 * `idText` is as the peek keeps it (RpcPeek.idText): the text the host wrote, from the entry
 * after {@link WRITTEN_MARK} (it must have the key's exact value), else its exact value's
 * plain decimal text ({@link plainDecimal}: `9007199254740993`), undefined when
 * `JSON.stringify` writes that text (`1`, `0.5`); so an error for it carries the id as the
 * host wrote it (errors/local-reply.ts), and its key is the same again. Its form is the
 * entry's letter's ({@link FORM_LETTERS}; none: `rpc_error`).
 */
export function idsOfAwaitedKeys(keys: readonly string[]): BatchRequestRef[] | undefined {
  const ids: BatchRequestRef[] = [];
  for (const entry of keys) {
    const letter = entry.charAt(0);
    const form: LocalErrorForm = letter === FORM_LETTERS.tool_result ? 'tool_result' : letter === FORM_LETTERS.tool_result_may_have_run ? 'tool_result_may_have_run' : 'rpc_error';
    const key = form === 'rpc_error' ? entry : entry.slice(1);
    const kind = key.charAt(0);
    const rest = key.slice(1);
    if (kind === 's') ids.push({ id: rest, idText: undefined, form });
    else if (key === 'z') ids.push({ id: null, idText: undefined, form });
    else if (kind === 'n') {
      const mark = rest.indexOf(WRITTEN_MARK);
      const canonical = mark < 0 ? rest : rest.slice(0, mark);
      const written = mark < 0 ? undefined : rest.slice(mark + 1);
      if (!CANONICAL_NUMBER.test(canonical) || !Number.isFinite(Number(canonical))) return undefined;
      if (written !== undefined && !(JSON_NUMBER.test(written) && exactDecimal(written) === canonical)) return undefined;
      const text = written ?? plainDecimal(canonical);
      const id = Number(text);
      ids.push({ id, idText: idTextOfNumber(text, id), form });
    } else return undefined;
  }
  return ids;
}

/**
 * What separates a number's key from the text the host wrote in an entry of
 * {@link BatchAnswers.awaitedKeys}: no canonical text ({@link CANONICAL_NUMBER}) holds it.
 */
const WRITTEN_MARK = '~';

/** A JSON number text (RFC 8259 §6): the only texts after {@link WRITTEN_MARK}. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** json-numbers.ts exactDecimal's canonical texts: `0`, or `[-]<digits without leading or trailing 0>e<exponent>`. */
const CANONICAL_NUMBER = /^(?:0|-?[1-9](?:\d*[1-9])?e(?:0|-?[1-9]\d*))$/;

/** Most zeros {@link plainDecimal} writes out: a finite double's decimal exponent is within ±324. */
const MAX_PLAIN_ZEROS = 400;

/**
 * The JSON number text of a canonical text (`[-]<digits>e<exponent>`, {@link CANONICAL_NUMBER})
 * without an exponent, as hosts write ids: `9007199254740993e0` -> `9007199254740993`, `1e2`
 * -> `100`, `15e-1` -> `1.5`; the canonical text itself (a JSON number too) when that would
 * take more than {@link MAX_PLAIN_ZEROS} zeros.
 */
function plainDecimal(canonical: string): string {
  if (canonical === '0') return canonical;
  const e = canonical.indexOf('e');
  const exponent = Number(canonical.slice(e + 1));
  const negative = canonical.charCodeAt(0) === 0x2d;
  const digits = canonical.slice(negative ? 1 : 0, e);
  const sign = negative ? '-' : '';
  if (exponent >= 0) return exponent > MAX_PLAIN_ZEROS ? canonical : `${sign}${digits}${'0'.repeat(exponent)}`;
  const point = digits.length + exponent;
  if (point > 0) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  return -point > MAX_PLAIN_ZEROS ? canonical : `${sign}0.${'0'.repeat(-point)}${digits}`;
}

/**
 * The lookup key of a JSON-RPC id: equal keys for exactly the same id. A number's is its exact
 * value (json-numbers.ts exactDecimal) of `text`, its JSON text as written when JSON.stringify
 * writes it otherwise (RpcPeek.idText, a response's written id), else of the double itself.
 */
function idKey(id: string | number | null, text: string | undefined): string {
  if (typeof id === 'string') return `s${id}`;
  if (id === null) return 'z';
  return `n${exactDecimal(text ?? String(id))}`;
}
