/**
 * The JSON path: bounded buffer -> structure bounds -> parse -> rewrite -> send
 * (ARCHITECTURE §2). A body the rewrite leaves unchanged goes out as the seller's original
 * bytes (no re-serialization).
 *
 * Invalid UTF-8 inside the body is decoded with U+FFFD replacement (WHATWG Encoding, as
 * `Buffer#toString('utf8')` does) for parsing; when nothing is rewritten the seller's bytes
 * are forwarded untouched.
 */
import type { FastifyReply } from 'fastify';
import type { Readable } from 'node:stream';
import type { Exchange } from '../exchange.js';
import { answerWithLocalError } from '../errors/local-reply.js';
import { checkJsonBounds } from '../mcp/json-bounds.js';
import { readBoundedBody } from './read-body.js';
import type { BodySource } from './body-source.js';
import type { PipelineHooks } from './pipeline.js';
import { isResponseToExchange, rewriteResponse } from './rewrite.js';

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
}

/** A 2xx `application/json` answer: the MCP message (or batch) the host waits for. */
export async function handleJsonBody(exchange: Exchange, reply: FastifyReply, res: UpstreamResponse, hooks: PipelineHooks): Promise<void> {
  const { limits } = exchange;
  const read = await readBoundedBody(exchange, res.body, res.headers['content-length'], limits.max_response_bytes);
  if (!read.ok) {
    if (read.error) answerWithLocalError(exchange, reply, read.error);
    return;
  }
  if (exchange.finished) return;
  const body = read.body;
  if (answeredJsonBoundsBreach(exchange, reply, body)) return;
  // `upstream_not_mcp` reports the seller's status (its one details field, docs/errors.md), as
  // the pipeline does for a 2xx that is not JSON (test/regressions/lying-content-length.test.ts).
  const notMcp = { reason: 'upstream_not_mcp', limitBytes: limits.max_response_bytes, observedBytes: body.length, upstreamStatus: res.statusCode } as const;
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    answerWithLocalError(exchange, reply, notMcp);
    return;
  }
  // A request is answered by the response carrying its id, nothing else: a wrong id, a
  // batch for a single request (the host would wait for its id until it times out).
  if (!isJsonRpcPayload(message) || (exchange.rpc.kind === 'request' && !isResponseToExchange(exchange, message))) {
    answerWithLocalError(exchange, reply, notMcp);
    return;
  }
  const rewritten = rewriteResponse(exchange, message, body);
  let out: Buffer = body;
  if (rewritten.changed) {
    out = Buffer.from(JSON.stringify(rewritten.message), 'utf8');
    exchange.bytesSaved += body.length - out.length;
    exchange.actions.push(rewritten.action);
    reply.header('content-type', 'application/json');
  }
  hooks.onResponseMessage(rewritten.message, out.length);
  sendBody(exchange, reply, res.statusCode, out, rewritten.changed ? 'rewritten' : 'ok');
}

/** A seller's 4xx (or other non-2xx, non-5xx) answer: passes through as it is, its body bounded (ARCHITECTURE §3). */
export async function handlePassThroughBody(
  exchange: Exchange,
  reply: FastifyReply,
  res: UpstreamResponse,
  opts: { emptyOnly?: boolean; jsonBounds?: boolean } = {},
): Promise<void> {
  const { limits } = exchange;
  const read = await readBoundedBody(exchange, res.body, res.headers['content-length'], limits.max_response_bytes);
  if (!read.ok) {
    if (read.error) answerWithLocalError(exchange, reply, read.error);
    return;
  }
  if (exchange.finished) return;
  const body = read.body;
  if (opts.emptyOnly && body.length > 0 && exchange.rpc.kind !== 'none') {
    answerWithLocalError(exchange, reply, { reason: 'upstream_not_mcp', limitBytes: limits.max_response_bytes, observedBytes: body.length, upstreamStatus: res.statusCode });
    return;
  }
  if (opts.jsonBounds && answeredJsonBoundsBreach(exchange, reply, body)) return;
  sendBody(exchange, reply, res.statusCode, body, 'ok');
}

/** Checks a whole JSON body's depth and node bounds; on a breach answers with json_depth/json_nodes and returns true. */
function answeredJsonBoundsBreach(exchange: Exchange, reply: FastifyReply, body: Buffer): boolean {
  const { limits } = exchange;
  const bounds = checkJsonBounds(body, { maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes });
  if (bounds.ok) return false;
  answerWithLocalError(exchange, reply, {
    reason: bounds.reason,
    limitBytes: limits.max_response_bytes,
    observedBytes: body.length,
    limit: bounds.limit,
    observed: bounds.observed,
  });
  return true;
}

function sendBody(exchange: Exchange, reply: FastifyReply, status: number, body: Buffer, outcome: 'ok' | 'rewritten'): void {
  exchange.finished = true;
  exchange.outcome = outcome;
  exchange.bytesToHost += body.length;
  reply.code(status).send(body);
}

/** A JSON-RPC message object (`jsonrpc: "2.0"`) or a non-empty batch of them. */
function isJsonRpcPayload(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0 && v.every((m) => m !== null && typeof m === 'object' && (m as Record<string, unknown>).jsonrpc === '2.0');
  return v !== null && typeof v === 'object' && (v as Record<string, unknown>).jsonrpc === '2.0';
}
