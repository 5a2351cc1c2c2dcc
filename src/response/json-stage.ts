/**
 * The JSON path: bounded buffer -> structure bounds -> parse -> rewrite -> send
 * (ARCHITECTURE §2). A body the rewrite leaves unchanged goes out as the seller's original
 * bytes (no re-serialization).
 *
 * A UTF-8 byte order mark (EF BB BF) at the very start of a 2xx JSON body (after any
 * Content-Encoding is decoded) is ignored and never reaches the host (RFC 8259 §8.1: senders
 * MUST NOT add one, parsers MAY ignore it; the host's `JSON.parse` or Python `json.loads`
 * fails on it): the scan drops it (json-scan.ts `ignoreBom`), and the body the stage checks,
 * rewrites and sends is the seller's bytes after it. Its 3 bytes still count toward the byte
 * bounds as they arrive (read-body.ts), and toward `observed_bytes`. A BOM anywhere else is
 * invalid JSON, as before (`upstream_not_mcp`). Source: a seller's BOM-prefixed answer was
 * refused `upstream_not_mcp` (test/regressions/json-answer-with-bom-refused.test.ts).
 *
 * Invalid UTF-8 inside the body is decoded with U+FFFD replacement (WHATWG Encoding, as
 * `Buffer#toString('utf8')` does) for parsing; when nothing is rewritten the seller's bytes
 * go out untouched if they are well-formed UTF-8, and with U+FFFD in place of each ill-formed
 * sequence otherwise (wellFormedUtf8; RFC 8259 §8.1). Whenever the host gets other bytes than
 * the seller's, or the seller's under a label naming another charset, the Content-Type is
 * `application/json` (sendJsonAnswer), without the seller's digests and ETag, which describe
 * the seller's bytes (headers.ts SELLER_BYTES_HEADERS).
 */
import type { FastifyReply } from 'fastify';
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { carriesRequest, type Exchange } from '../exchange.js';
import { answerWithLocalError } from '../errors/local-reply.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { JsonScanner, type JsonScanFailure, type TopMembers } from '../mcp/json-scan.js';
import { readBoundedBody } from './read-body.js';
import { releaseBody } from './decode.js';
import { bodyPool } from './body-pool.js';
import { dropSellerBytesHeaders, hijackAndWriteHead } from './headers.js';
import type { BodySource } from './body-source.js';
import type { PipelineHooks } from './pipeline.js';
import { holdsResponse, isResponseToExchange, scannedResponseWellFormed } from './rewrite.js';
import { mayRewrite, rewriteScanned, spliceScanned } from './scanned-message.js';
import { isMethodName, isRequestId, jsonValueIs } from './json-value-at.js';
import { bodyRewriteFits, recordLiftSkippedForRoom } from './rewrite-room.js';
import { BatchAnswers } from './batch-answers.js';
import { judgeArrayAnswer } from './array-answer.js';
import { repeatsMemberName, type NameFacts } from '../mcp/repeated-names.js';
import { keepsJsonLabel } from './content-type.js';
import { ACK_BODY, isUnscannedAckBody, readAckBody } from './ack-body.js';
import { NOT_JSON, parseJsonText } from '../mcp/parse-json.js';
import { isWideMessage } from './wide-answer.js';
import { hostStatusOf, type AcceptedAnswer } from './accepted-answer.js';

export interface UpstreamBody {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  stream: Readable;
}

/** The upstream response with its body opened for reading (decoded, bounded). */
export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: BodySource;
  /**
   * Set, by pipeline.ts, for a seller's 202 answering a POST that holds a request
   * (accepted-answer.ts): its head goes to the host as 200 (accepted-answer.ts hostStatusOf;
   * `statusCode` stays the seller's, the errors' `upstream_status`), and the stage that writes
   * that head calls its `headWritten` (the warning and the metric), once it has.
   */
  accepted?: AcceptedAnswer | undefined;
}

/**
 * A 2xx `application/json` answer: the MCP message (or batch) the host waits for.
 *
 * The body is scanned as it arrives (json-scan.ts: structure bounds, grammar, the message's
 * top-level members, whether any `text` may hold JSON object text, whether any number may
 * lose precision). When the scan proves the answer is the response to the exchange's request
 * and that the rewrite cannot change it (normalization off for this host or method, or no
 * text that could be JSON), the seller's bytes go out without `JSON.parse` (issue 5: "the
 * gateway must not parse and re-serialize a body it leaves unchanged"). A legacy text-only
 * result whose lift the scan can decide is lifted without `JSON.parse` (lift-splice.ts: the
 * parse path's exact bytes; issue 5, the (c) rewrite path), and a text copy of
 * `structuredContent` the scan can tell is deduped so too (dedupe-splice.ts, the (b) path).
 * Otherwise the body is parsed and checked as before.
 *
 * A message (or a batch's element) that repeats a member name is `upstream_not_mcp`, whatever
 * else it is (mcp/repeated-names.ts: hosts' parsers read a repeat differently, so
 * `"id":999,"id":1` would be request 1's answer here and request 999's for a host that keeps
 * the first member): told by the scan for the names it compares, else by counting the parsed
 * members (the fast path above is taken only when the scan proves no repeat).
 *
 * An answer to a POST that carries no request (a notification, a host's response, a batch of
 * only those) whose body is no JSON-RPC message (`{}`, `null`, `{"status":"accepted"}`) is an
 * acknowledgement: dropped, the host answered 202 Accepted with no body (ack-body.ts). One that
 * holds a message is judged as any answer (`upstream_not_mcp` when it holds a response).
 *
 * A rewritten body longer than `max_response_bytes` (a lift of a short text: rewrite-room.ts)
 * is not sent: the seller's body goes out unchanged, outcome `ok`, `text_not_lifted:
 * "max_response_bytes"` (rewrite-room.ts recordLiftSkippedForRoom).
 */
export async function handleJsonBody(exchange: Exchange, reply: FastifyReply, res: UpstreamResponse, hooks: PipelineHooks): Promise<void> {
  const scanner = newScanner(exchange, true);
  // A depth/node breach stops the read there. A syntax error does not: the body is still read
  // to its end under the byte bounds, so a bomb of non-JSON bytes is reported by the bound it
  // breaks (decoded_bytes, raw_bytes), and a short invalid body as upstream_not_mcp.
  const body = await readBody(exchange, reply, res, scanner);
  if (body === undefined) return;
  try {
    // The JSON text: the body after a leading BOM, which the scan dropped (its offsets start after it).
    const text = scanner.leadingBomBytes === 0 ? body : body.subarray(scanner.leadingBomBytes);
    answerFromBody(exchange, reply, res, hooks, scanner, body, text);
  } finally {
    // A pooled body's buffer serves a later body once this response is over (body-pool.ts).
    // answerFromBody is synchronous and every answer it sends is `body` itself, its view after
    // a BOM, or a copy (splice, lift, serialization), so nothing reads the buffer after that.
    bodyPool.recycleAfterSend(reply.raw, body);
  }
}

/**
 * The rest of {@link handleJsonBody} once the body is read: synchronous (see there). `seller`
 * is the body as read, `body` its JSON text (without a leading BOM: the bytes the scan's
 * offsets index, checked, rewritten and sent).
 */
function answerFromBody(exchange: Exchange, reply: FastifyReply, res: UpstreamResponse, hooks: PipelineHooks, scanner: JsonScanner, seller: Buffer, body: Buffer): void {
  // An empty answer to anything but a request (or a batch holding one), whatever its Content-Type (isEmptyAnswerToNonRequest).
  // A BOM alone is no empty answer (it is no JSON text either: upstream_not_mcp below).
  if (isEmptyAnswerToNonRequest(exchange, seller)) {
    sendBody(exchange, reply, res.statusCode, seller, 'ok');
    return;
  }
  const scan = scanner.end();
  // The body's JSON value (mcp/parse-json.ts parseJsonText), parsed at most once (undefined
  // until then): here for a POST without a request whose scan read an object or an array (the
  // acknowledgement check reads it), else below unless the scan judges the answer alone (a
  // request's answer on the fast path is never parsed).
  let message: unknown;
  // Whether the message object (or its `error`) is too wide to parse (wide-answer.ts): judged
  // here once for both readings of a POST's answer without a request, below otherwise.
  let wide: boolean | undefined;
  // A body that is no JSON-RPC message answering a POST without a request: an acknowledgement,
  // dropped (ack-body.ts; a body holding a message is judged below, as before).
  if (!carriesRequest(exchange.rpc)) {
    wide = scan.ok && isWideMessage(body, scan);
    message = readAckBody(body, scan, wide);
    if (message === ACK_BODY) {
      dropAckBody(exchange, reply, seller.length);
      return;
    }
  }
  const notMcp = notMcpError(exchange, res, seller);
  // A message repeating a member name (`"id":999,"id":1`) is no answer, whichever member a
  // host's parser keeps (mcp/repeated-names.ts); told by the scan here, from the parsed
  // message below when the scan cannot tell.
  // So is a message object (or its `error`) of more than 1000 members, told without parsing
  // it (wide-answer.ts; a hostile trial 54, F1: its `JSON.parse` held the event loop ~200 ms).
  if (!scan.ok || scan.repeatedName || (wide ?? isWideMessage(body, scan))) {
    answerWithLocalError(exchange, reply, notMcp);
    return;
  }
  // From the scan's members when they tell (answersExchange; an `error` answer is judged parsed,
  // below), a batch's answer never (it is parsed and checked against its request ids: answerBatch).
  const answers =
    exchange.rpc.kind !== 'batch' && scan.members !== undefined && scan.members.plainKeys && scan.namesDistinct && !hooks.wantsResponseMessage
      ? answersExchange(exchange, body, scan.members)
      : undefined;
  if (answers === false) {
    answerWithLocalError(exchange, reply, notMcp);
    return;
  }
  if (answers === true) {
    if (!mayRewrite(exchange, scan)) {
      sendJsonAnswer(exchange, reply, res, seller, wellFormedUtf8(body, exchange.limits.max_response_bytes), 'ok');
      return;
    }
    // A text copy of structuredContent deduped, or a legacy text-only result lifted, from the
    // scan: the parse path's exact bytes (dedupe-splice.ts, lift-splice.ts).
    const spliced = spliceScanned(exchange, body, scan);
    if (spliced !== undefined && (spliced.action === 'none' || !bodyRewriteFits(spliced.out.length, exchange.limits.max_response_bytes))) {
      // Unchanged, or a lift that would not fit the limit (rewrite-room.ts): the seller's
      // bytes, the skipped lift reported (text_not_lifted).
      if (spliced.action !== 'none') recordLiftSkippedForRoom(exchange, spliced.action, 'max_response_bytes');
      bodyPool.recycleAfterSend(reply.raw, spliced.out);
      sendJsonAnswer(exchange, reply, res, seller, wellFormedUtf8(body, exchange.limits.max_response_bytes), 'ok');
      return;
    }
    if (spliced !== undefined) {
      exchange.bytesSaved += body.length - spliced.out.length;
      exchange.actions.push(spliced.action);
      sendJsonAnswer(exchange, reply, res, seller, spliced.out, 'rewritten');
      return;
    }
  }
  if (message === undefined) message = parseJsonText(body);
  if (message === NOT_JSON) {
    answerWithLocalError(exchange, reply, notMcp);
    return;
  }
  // A batch's answer: checked against its request ids, never rewritten (answerBatch).
  if (exchange.rpc.kind === 'batch') {
    answerBatch(exchange, reply, res, hooks, seller, body, message, scan, notMcp);
    return;
  }
  // A batch (an array) answering a single request: judged as the same array in an SSE event
  // (array-answer.ts, the one judgement of both paths): the seller's bytes when it holds the
  // request's response on a revision with batches (2025-03-26), else upstream_not_mcp, saying
  // so when batches were removed in the host's revision (a hostile new-user trial 13, L1).
  if (exchange.rpc.kind === 'request' && Array.isArray(message)) {
    answerArrayForRequest(exchange, reply, res, hooks, seller, body, message, scan, notMcp);
    return;
  }
  // A request is answered by the response carrying its id, nothing else: a wrong id (the
  // host would wait for its id until it times out).
  if (
    !isJsonRpcPayload(message) ||
    repeatsMemberName(scan, message) ||
    (exchange.rpc.kind === 'request' && !isResponseToExchange(exchange, message, body, scan.members)) ||
    (exchange.rpc.kind === 'notification' && holdsResponse(message))
  ) {
    answerWithLocalError(exchange, reply, notMcp);
    return;
  }
  let { rewritten, out } = rewriteScanned(exchange, message, body, scan);
  if (rewritten.changed && !bodyRewriteFits(out.length, exchange.limits.max_response_bytes)) {
    // A lift that would not fit the limit (rewrite-room.ts): the seller's bytes, as parsed,
    // the skipped lift reported (text_not_lifted).
    recordLiftSkippedForRoom(exchange, rewritten.action, 'max_response_bytes');
    bodyPool.recycleAfterSend(reply.raw, out);
    rewritten = { changed: false, message, action: 'none' };
    out = body;
  }
  if (rewritten.changed) {
    exchange.bytesSaved += body.length - out.length;
    exchange.actions.push(rewritten.action);
  }
  // Unchanged: the seller's bytes (`out` is `body`; a rewrite is always a new buffer: scanned-message.ts).
  sendParsedAnswer(exchange, reply, res, hooks, seller, body, rewritten.message, rewritten.changed ? out : undefined);
}

/**
 * The JSON answer (a non-empty body within the structure bounds, parsed as `message`) to a
 * JSON-RPC batch the host sent (MCP 2025-03-26): sent as the seller's bytes, outcome `ok` (a batch is never rewritten:
 * rewrite.ts; its ill-formed UTF-8 is repaired as a single answer's: wellFormedUtf8), when it is a JSON-RPC message or a non-empty array of them ({@link
 * isJsonRpcPayload}) that answers the batch exactly: each response in it (a message with
 * `result` or `error`) the response to one of the batch's requests (ids compared exactly, a
 * number as written: json-value-at.ts isRequestId, via batch-answers.ts), none answered twice,
 * and every request answered, in any order (a lone response object answers a batch of one
 * request). Requests and notifications among the elements are passed on as before.
 *
 * Anything else is `upstream_not_mcp`: HTTP 200, one JSON-RPC error for each of the batch's
 * requests (the batch's local error: errors/local-reply.ts; HTTP 502 and one for id null when
 * it has none). Why every request must be answered: the body ends the
 * POST, and MCP 2025-03-26 Streamable HTTP sends a response only on the stream of the POST that
 * carried its request ("the server MUST NOT send a JSON-RPC response on the stream unless
 * resuming a stream associated with a previous client request"; the GET stream carries none),
 * so a request left out is never answered and its host waits until its own timeout (JSON-RPC
 * 2.0 §6: "A Response object SHOULD exist for each Request object"). A batch of notifications
 * and host responses only has no request: any response answers none. An element repeating a
 * member name (`names`: the body's scan; mcp/repeated-names.ts) makes the answer this error too.
 *
 * Source: a new user's trial, 2026-12-03, and a reviewer: `[r1, r2, r999, r1]` answering a
 * batch of requests 1 and 2, and a lone object answering only id 1, reached the host, logged
 * `ok` (test/regressions/batch-answer-for-other-ids-forwarded.test.ts). Cost: one `JSON.parse`
 * of the body (by the caller, as before for an array), plus one walk of its bytes when a
 * response id is a number; batches only (a single request's answer never comes here).
 *
 * Ill-formed UTF-8 in the answer: U+FFFD for each ill-formed sequence, by the single answer's
 * rule and code ({@link wellFormedUtf8}: the seller's bytes when their repair would not fit
 * `max_response_bytes`). Source: a team note, "a batch answer with invalid UTF-8 is forwarded
 * unrepaired, where single answers are repaired"
 * (test/regressions/batch-answer-invalid-utf8-forwarded.test.ts). Cost: one `isUtf8` pass of
 * the body, batches only.
 */
function answerBatch(
  exchange: Exchange,
  reply: FastifyReply,
  res: UpstreamResponse,
  hooks: PipelineHooks,
  seller: Buffer,
  body: Buffer,
  message: unknown,
  names: NameFacts,
  notMcp: LocalErrorInput,
): void {
  // A resumed batch's stream may not know its ids (exchange.ts batchRequestIds), but a JSON
  // answer to a resume is refused before this stage (pipeline.ts): every POSTed batch has them.
  const ids = exchange.rpc.batchRequestIds;
  // An element repeating a member name is no message (mcp/repeated-names.ts), as a single answer that does.
  if (!isJsonRpcPayload(message) || repeatsMemberName(names, message) || (ids !== undefined && new BatchAnswers(ids).takeMessage(message, body) !== 'done')) {
    answerWithLocalError(exchange, reply, notMcp);
    return;
  }
  // The seller's bytes, made well-formed UTF-8 when they are not, as a single answer's (wellFormedUtf8).
  sendParsedAnswer(exchange, reply, res, hooks, seller, body, message, undefined);
}

/**
 * The JSON answer (a non-empty body within the structure bounds, parsed as the array
 * `message`) to a single request: judged by array-answer.ts judgeArrayAnswer, as the same
 * array in an SSE event is (sse-message.ts batchVerdict), so the two paths agree.
 *
 * - `answer` (it holds the request's response, no response to another id, on a host's
 *   revision with batches: MCP 2025-03-26, "These responses MAY be batched"): the seller's
 *   bytes, never rewritten (as on SSE; ill-formed UTF-8 repaired as every 2xx JSON answer's:
 *   {@link wellFormedUtf8}), outcome `ok`; the discovery hooks get the array, as on SSE.
 * - `batch_removed` (the same on 2025-06-18 or later, which have no batches):
 *   `upstream_not_mcp` for the request's id, its message saying batches were removed in
 *   2025-06-18 (mcp/local-error.ts NotMcpCause), as on SSE.
 * - `foreign`, `none` (a response to another id, an element that is no object; no response
 *   at all): `upstream_not_mcp`. (On SSE an array without a response is forwarded and the
 *   stream goes on; a JSON body ends the POST, so it leaves the request unanswered.)
 *
 * Reported failure (a hostile new-user trial 13, L1): a seller answering a `tools/call` with the
 * JSON body `[response]` got `upstream_not_mcp` on every revision, while the MCP SDK client
 * took it as the result directly and the gateway's SSE path forwarded the same array for
 * 2025-03-26 (test/regressions/seller-batch-json-answer-refused.test.ts). Cost: none more than
 * before (the body was parsed already); one walk of its bytes when the id is a number.
 */
function answerArrayForRequest(
  exchange: Exchange,
  reply: FastifyReply,
  res: UpstreamResponse,
  hooks: PipelineHooks,
  seller: Buffer,
  body: Buffer,
  message: readonly unknown[],
  names: NameFacts,
  notMcp: LocalErrorInput,
): void {
  const held = judgeArrayAnswer(exchange, message, body, names);
  if (held !== 'answer') {
    answerWithLocalError(exchange, reply, held === 'batch_removed' ? { ...notMcp, cause: 'batch_removed' } : notMcp);
    return;
  }
  sendParsedAnswer(exchange, reply, res, hooks, seller, body, message, undefined);
}

/**
 * Sends the 2xx JSON answer whose body was parsed as `message`: `rewrite` (the rewritten
 * message's bytes: outcome `rewritten`), or when undefined the seller's JSON text `body`, made
 * well-formed UTF-8 when it is not ({@link wellFormedUtf8}; outcome `ok`). The discovery hooks
 * see `message` (after any rewrite) and the bytes sent first (pipeline.ts PipelineHooks), when
 * they want it. The one tail of every parsed answer: a single one, a batch's
 * ({@link answerBatch}), an array answering a request ({@link answerArrayForRequest}).
 */
function sendParsedAnswer(exchange: Exchange, reply: FastifyReply, res: UpstreamResponse, hooks: PipelineHooks, seller: Buffer, body: Buffer, message: unknown, rewrite: Buffer | undefined): void {
  const out = rewrite ?? wellFormedUtf8(body, exchange.limits.max_response_bytes);
  if (hooks.wantsResponseMessage) hooks.onResponseMessage(message, out.length);
  sendJsonAnswer(exchange, reply, res, seller, out, rewrite === undefined ? 'ok' : 'rewritten');
}

/**
 * A seller's 4xx answer, or a DELETE's 2xx that is not SSE (pipeline.ts): passes through as it
 * is, its body bounded (ARCHITECTURE §3); with `emptyOnly`, a 2xx to a POST with no
 * Content-Type, or with one that is neither JSON nor SSE answering a POST without a request:
 * passed through when empty, dropped when an acknowledgement body (ack-body.ts), else
 * `upstream_not_mcp`.
 */
export async function handlePassThroughBody(
  exchange: Exchange,
  reply: FastifyReply,
  res: UpstreamResponse,
  opts: { emptyOnly?: boolean; jsonBounds?: boolean } = {},
): Promise<void> {
  // A JSON error body is bounded in depth and nodes as it arrives; it is not required to be
  // valid (it passes through as it is), so the scan of an invalid one stops at its first
  // syntax error: a host's parser stops there too.
  const body = await readBody(exchange, reply, res, opts.jsonBounds ? newScanner(exchange) : undefined);
  if (body === undefined) return;
  // Given back once this response is over (body-pool.ts); what follows is synchronous.
  bodyPool.recycleAfterSend(reply.raw, body);
  // No Content-Type: fine for the empty answer to a notification, a response (or a batch of
  // only those); a body there is not MCP, and neither is an empty answer to a request, whose
  // host waits for a response carrying its id (MCP Streamable HTTP: a request is answered with
  // JSON or SSE), or to a batch holding one. Found by a new user: the SDK client hung on a 202
  // until its own timeout. (A GET's or DELETE's answer never comes here: pipeline.ts.) A body
  // that is no JSON-RPC message answering no request is an acknowledgement, dropped
  // (ack-body.ts; a new user's hostile trial 12, M2: `text/plain` `OK` broke the SDK's connect()).
  if (opts.emptyOnly && !isEmptyAnswerToNonRequest(exchange, body)) {
    if (!carriesRequest(exchange.rpc) && isUnscannedAckBody(body, { maxDepth: exchange.limits.max_json_depth, maxNodes: exchange.limits.max_json_nodes })) {
      dropAckBody(exchange, reply, body.length);
      return;
    }
    answerWithLocalError(exchange, reply, notMcpError(exchange, res, body));
    return;
  }
  if (body.length !== 0 && !reply.hasHeader('content-type')) sendUnlabelled(exchange, reply, res.statusCode, body);
  else sendBody(exchange, reply, res.statusCode, body, 'ok');
}

/**
 * Sends `body`, passed through from a seller that sent no Content-Type (a DELETE's 2xx, a 4xx),
 * with none: written on the raw response, with the headers the reply holds (the seller's,
 * filtered: headers.ts) and its length, as the SSE stage writes its head (sse-stage.ts), since
 * Fastify's `reply.send` labels a Buffer `application/octet-stream`, a type the seller never
 * named (RFC 9110 §8.3: a recipient may then guess, the gateway must not say). Reported
 * failure (a carried defect): a DELETE answered 200 with a body and no Content-Type reached
 * the host as `application/octet-stream`
 * (test/regressions/delete-answer-labelled-octet-stream.test.ts). Only on this rare path: an
 * MCP answer is JSON or SSE, labelled.
 */
function sendUnlabelled(exchange: Exchange, reply: FastifyReply, status: number, body: Buffer): void {
  exchange.finished = true;
  exchange.outcome = 'ok';
  exchange.bytesToHost += body.length;
  // `body` is as read: the seller's bytes, or decoded ones whose digests the pipeline dropped (headers.ts SELLER_BYTES_HEADERS).
  hijackAndWriteHead(reply, status, { 'content-length': String(body.length) }, true);
  // The body's buffer is given back by the caller (handlePassThroughBody), once the response closes.
  reply.raw.end(body);
}

/**
 * Reads the body under the response bounds, each chunk fed to `scanner` when given (a
 * depth/node breach stops the read: readBoundedBody `inspect`). Undefined when the exchange
 * was answered (a bound, a reset) or finished meanwhile.
 *
 * A 204 (or 304: any 3xx is refused before this stage, pipeline.ts) has no body, whatever its
 * Content-Length says (RFC 9112 §6.3: such a response "is always terminated by the first empty
 * line after the header fields"; RFC 9110 §8.6: a server must send it none there): its body is
 * empty, the stream released unread. Reading it was wrong twice over: a bogus `Content-Length:
 * 5000` over `max_response_bytes` was refused `content_length` before the read (read-body.ts),
 * and one under it was `upstream_reset`, since undici (7.x) frames the 204 with no body, then
 * fails that body with `ResponseContentLengthMismatchError` (0 bytes read, 5000 declared) and
 * destroys the socket (review 37, F6:
 * test/regressions/no-content-answer-bogus-content-length-refused.test.ts). Cost: one status
 * comparison per body.
 */
async function readBody(exchange: Exchange, reply: FastifyReply, res: UpstreamResponse, scanner: JsonScanner | undefined): Promise<Buffer | undefined> {
  if (res.statusCode === 204 || res.statusCode === 304) {
    releaseBody(res.body.stream);
    return exchange.finished ? undefined : NO_CONTENT;
  }
  const inspect = scanner && ((chunk: Buffer) => boundsBreach(exchange, scanner.feed(chunk), scanner.leadingBomBytes));
  const read = await readBoundedBody(exchange, res.body, res.headers['content-length'], exchange.limits.max_response_bytes, inspect);
  if (!read.ok) {
    if (read.error) answerWithLocalError(exchange, reply, read.error);
    return undefined;
  }
  return exchange.finished ? undefined : read.body;
}

/** The body of a 204 or 304 ({@link readBody}): empty, never written into. */
const NO_CONTENT = Buffer.alloc(0);

/**
 * `upstream_not_mcp` for a read body. It reports the seller's status (its one details field,
 * docs/errors.md), as the pipeline does for a 2xx that is not JSON
 * (test/regressions/lying-content-length.test.ts).
 */
function notMcpError(exchange: Exchange, res: UpstreamResponse, body: Buffer): LocalErrorInput {
  return { reason: 'upstream_not_mcp', limitBytes: exchange.limits.max_response_bytes, observedBytes: body.length, upstreamStatus: res.statusCode };
}

/** The structure scan of a body; `ignoreBom` for a 2xx JSON answer (json-scan.ts JsonScanOptions). */
function newScanner(exchange: Exchange, ignoreBom = false): JsonScanner {
  return new JsonScanner({ maxDepth: exchange.limits.max_json_depth, maxNodes: exchange.limits.max_json_nodes, ignoreBom });
}

/**
 * The local error for a depth/node breach the scan found (json_depth / json_nodes), or
 * undefined (no failure, or a syntax failure: judged when the body is complete).
 * `observed_bytes` is the body's bytes through the one that broke the bound, a leading BOM's
 * `bomBytes` (dropped before the scan, whose offsets start after it) included.
 */
function boundsBreach(exchange: Exchange, failure: JsonScanFailure | undefined, bomBytes: number): LocalErrorInput | undefined {
  if (failure === undefined || failure.reason === 'syntax') return undefined;
  return {
    reason: failure.reason,
    limitBytes: exchange.limits.max_response_bytes,
    observedBytes: bomBytes + failure.offset + 1,
    limit: failure.limit,
    observed: failure.observed,
  };
}

/**
 * The JSON-RPC checks of the parse path, answered from the scan's top-level members: a
 * message (`jsonrpc: "2.0"`), and for a request the response carrying its id (`result` or
 * `error`, and no `method`), well formed (rewrite.ts scannedResponseWellFormed: `result` an
 * object). Only the small `jsonrpc` and `id` values are read (json-value-at.ts jsonValueIs,
 * isRequestId: the id compared exactly, a number as written, not as a double; a new user's
 * trial: test/regressions/response-id-compared-as-double.test.ts). Undefined for the response
 * carrying the request's id with an `error`, whose members the scan does not record: the parse
 * path judges it (rewrite.ts isWellFormedResponse).
 */
export function answersExchange(exchange: Exchange, body: Buffer, members: TopMembers): boolean | undefined {
  if (!jsonValueIs(body, members.jsonrpc, '2.0')) return false;
  // The answer to a POSTed notification or JSON-RPC response (MCP expects 202 with no body) holds no
  // JSON-RPC response, as on the standalone GET stream: no request of that POST awaits one, so a
  // client would route it to another pending call by its id, past that call's limits and rewrite.
  // Such an answer is `upstream_not_mcp` (HTTP 502, the error for id null; parsed, rewrite.ts
  // holdsResponse, below); on SSE the event is dropped (`notification_stream_response`). A new
  // user's trial 8, F4 (test/regressions/notification-answer-carries-response-forwarded.test.ts).
  // So is a message naming no method (rewrite.ts lacksMethod: with an `id` a Go host reads it
  // as a response, hostile trials: test/regressions/id-only-message-on-request-stream-passes.test.ts;
  // without one it is no message, and an empty `method` names none, a review:
  // test/regressions/seller-message-without-kind-forwarded.test.ts). Cost: two bytes read.
  if (exchange.rpc.kind === 'notification') return !(members.hasResult || members.hasError || !isMethodName(body, members.method));
  if (exchange.rpc.kind !== 'request') return true;
  // Exactly one of `result` and `error` (JSON-RPC 2.0 §5: never both; a new user's trial: a body with both was forwarded),
  // and no `method` beside it (§4, §5: no response has one; a new user's trial, 2026-12-03: such a body with the request's
  // id was passed on and the SDK client failed on it: test/regressions/method-and-result-for-own-id-passed-as-answer.test.ts).
  // Cost: property reads of the scan's members.
  if (members.hasResult === members.hasError || members.hasMethod || !isRequestId(body, members.id, exchange.rpc)) return false;
  // Well formed (a new user's trial 8, F5: `"result":null` was the answer, logged ok): `result` an object; an `error` parsed.
  return scannedResponseWellFormed(body, members);
}

/**
 * `body` when it is well-formed UTF-8 (nearly always: one `isUtf8` pass, ~0.07 µs at 1 KiB,
 * ~50 µs at 4 MiB on this machine), else its UTF-8 decoding with each ill-formed sequence
 * replaced by U+FFFD (WHATWG Encoding, as `Buffer#toString('utf8')` decodes), encoded again:
 * a new buffer, up to 3 bytes for each invalid byte. When that copy is over `limitBytes`
 * (`max_response_bytes`: the seller's bytes fit it, the copy may not), `body` itself, as a
 * lift that would not fit is skipped (rewrite-room.ts): a rewrite never takes an answer over
 * its limit.
 *
 * Why: JSON exchanged between systems MUST be UTF-8 (RFC 8259 §8.1), and a host's parser may
 * refuse anything else (a new user's trial, 2026-12-03: a seller's JSON answer with a 0xFF
 * byte was forwarded byte for byte, logged `ok`, and Python's `json.loads` failed on it with
 * `UnicodeDecodeError`; test/regressions/invalid-utf8.test.ts). The SSE
 * path already sends U+FFFD for such bytes (it decodes every event it parses), and a rewritten
 * body is always well-formed: the host now gets well-formed UTF-8 on every 2xx JSON answer,
 * a batch's included (answerBatch).
 * A non-2xx body passes through as it is (handlePassThroughBody).
 */
export function wellFormedUtf8(body: Buffer, limitBytes: number): Buffer {
  if (isUtf8(body)) return body;
  const repaired = Buffer.from(body.toString('utf8'), 'utf8');
  return bodyRewriteFits(repaired.length, limitBytes) ? repaired : body;
}

/**
 * Sends a 2xx JSON answer: `out`, either `seller` (the body as read) itself or other bytes (its
 * JSON text after a dropped BOM, that text with U+FFFD repairs, a rewrite). The host gets the
 * seller's `Content-Type` (copied with its other headers: headers.ts) only with the seller's
 * bytes, and only when that label does not name a charset other than UTF-8 for bytes the gateway
 * read as UTF-8; otherwise `application/json`:
 *
 * - other bytes: `application/json` (the gateway wrote them: UTF-8, RFC 8259 §8.1);
 * - the seller's bytes, well-formed UTF-8, under a label naming another charset, or `charset`
 *   twice (content-type.ts keepsJsonLabel): `application/json`, so a host that honours the
 *   label reads the text the gateway judged (ASCII under `charset=iso-8859-1` included: one rule);
 * - the seller's bytes, not well-formed UTF-8 (only when their repair would not fit
 *   `max_response_bytes`: wellFormedUtf8): the seller's label, which is the seller's word for them.
 * - the seller's bytes whose label did not survive the header filter (a seller's `Connection`
 *   naming `Content-Type`: hop-by-hop, headers.ts filterResponseHeaders), after the pipeline
 *   judged them JSON by it: `application/json`, what the gateway judged (Fastify labelled the
 *   reply `application/octet-stream`, logged `ok`, and the MCP SDK client refused it: review 37,
 *   F3, test/regressions/seller-connection-content-type-octet-stream.test.ts). The SSE path
 *   always writes its own `text/event-stream` (sse-headers.ts).
 *
 * Other bytes also go out without the seller's `Content-Digest`, `Repr-Digest`, `Digest`,
 * `Content-MD5` and `ETag` (headers.ts SELLER_BYTES_HEADERS: they describe the seller's bytes;
 * a new user's hostile trial 12, M4); the seller's bytes keep them (a coded body lost them
 * already: pipeline.ts).
 *
 * Reported failure (a hostile trial, F10): a seller's answer labelled `application/json;
 * charset=iso-8859-1` with a Latin-1 `é` (E9) reached the host as `EF BF BD` (the repair) under
 * the same label, and a host honouring it (Python `requests`) read `cafï¿½`
 * (test/regressions/json-charset-label-forwarded-after-utf8-repair.test.ts). Cost on an ordinary
 * answer: one buffer identity test, one header lookup and one string comparison (keepsJsonLabel's last label);
 * `isUtf8` again only under a label naming another charset.
 */
function sendJsonAnswer(exchange: Exchange, reply: FastifyReply, res: UpstreamResponse, seller: Buffer, out: Buffer, outcome: 'ok' | 'rewritten'): void {
  if (out !== seller) {
    reply.header('content-type', 'application/json');
    // Not the seller's bytes: its digests and ETag describe those (headers.ts SELLER_BYTES_HEADERS; trial 12, M4).
    dropSellerBytesHeaders(reply);
  } else if (!reply.hasHeader('content-type') || (!keepsJsonLabel(res.headers['content-type']) && isUtf8(out))) reply.header('content-type', 'application/json');
  // The seller's status, but 200 for a 202 answering a request (accepted-answer.ts hostStatusOf: hostile trial 57, F1).
  sendBody(exchange, reply, hostStatusOf(res), out, outcome);
  res.accepted?.headWritten();
}

function sendBody(exchange: Exchange, reply: FastifyReply, status: number, body: Buffer, outcome: 'ok' | 'rewritten'): void {
  exchange.finished = true;
  exchange.outcome = outcome;
  exchange.bytesToHost += body.length;
  // An empty answer goes out without a body (Fastify would label an empty Buffer application/octet-stream).
  if (body.length === 0) reply.code(status).send();
  else reply.code(status).send(body);
  // A pooled buffer (the seller's body, or a rewrite written into one: body-pool.ts splice) serves another body once this response is over.
  bodyPool.recycleAfterSend(reply.raw, body);
}

/**
 * Answers the host 202 Accepted with no body (and no Content-Type) in place of the seller's
 * 2xx acknowledgement body of `bytes` bytes, which is dropped (ack-body.ts: MCP Streamable
 * HTTP answers a POST without a request "202 Accepted with no body"); outcome `ok`, the
 * exchange line's `ack_body_dropped_bytes`. The seller's other headers go out as on any
 * answer (headers.ts), but for its Content-Type and the headers describing the dropped bytes
 * (digests, `ETag`: headers.ts SELLER_BYTES_HEADERS, which pass only with those bytes; review
 * 37, F2: they reached the host over the empty body,
 * test/regressions/dropped-ack-body-keeps-seller-digest-headers.test.ts). Source: a new user's
 * hostile trial 12, M2 (test/regressions/notification-ack-body-breaks-sdk-connect.test.ts).
 */
function dropAckBody(exchange: Exchange, reply: FastifyReply, bytes: number): void {
  exchange.finished = true;
  exchange.outcome = 'ok';
  exchange.ackBodyDroppedBytes = bytes;
  reply.removeHeader('content-type');
  dropSellerBytesHeaders(reply);
  reply.code(202).send();
}

/**
 * An empty body answering a notification, a host's response or a batch of only those: nothing
 * waits for an answer to those, so an empty body is their answer whatever its Content-Type
 * (MCP Streamable HTTP: 202 Accepted, no body); a request's host waits for its response, and
 * so does a batch's holding a request (an element with a `method` and an `id`: MCP 2025-03-26
 * Streamable HTTP answers a POST holding any request with SSE or JSON, 202 only one holding
 * none). Reported failures: the Python MCP SDK answers every notification `202` with
 * `Content-Type: application/json` and no body, the gateway made that a 502 upstream_not_mcp,
 * and the SDK client could not connect (test/regressions/new-user-findings.test.ts); a batch
 * holding requests answered with an empty 202 went to the host as it was, logged `ok`, its
 * requests never answered (a reviewer: test/regressions/batch-empty-202-answer-ok.test.ts).
 */
function isEmptyAnswerToNonRequest(exchange: Exchange, body: Buffer): boolean {
  // A batch's stream resumed with Last-Event-ID has no ids (routing/handler.ts), but its answer is SSE or an error (pipeline.ts).
  return body.length === 0 && !carriesRequest(exchange.rpc);
}

/** A JSON-RPC message object (`jsonrpc: "2.0"`) or a non-empty batch of them. */
function isJsonRpcPayload(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0 && v.every((m) => m !== null && typeof m === 'object' && (m as Record<string, unknown>).jsonrpc === '2.0');
  return v !== null && typeof v === 'object' && (v as Record<string, unknown>).jsonrpc === '2.0';
}
