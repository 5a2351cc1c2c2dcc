/**
 * The shapes of every answer the gateway makes up (ARCHITECTURE §3), as pure functions:
 * the AdCP error it mints when a seller's answer breaks a bound, the JSON-RPC message that
 * carries it (tool result or JSON-RPC error), and the refusal of a bad host request.
 * Writing them to a socket (JSON body, final SSE event, reset) is the local-reply writer's
 * job, not this module's. Codes, reasons and refusals come from `src/errors/codes.ts`.
 */
import { NO_BATCHES_SINCE, STATELESS_SINCE, isRevisionAtLeast } from './revision.js';
import { ADCP_CODES, NARROWABLE_METHODS, REASONS, REFUSALS } from '../errors/codes.js';
import type { AdcpErrorReason, DetailField, Recovery, RefusalReason } from '../errors/codes.js';
import { SDK_ID } from '../version.js';
import { RELATED_TASK_META_KEY } from './types.js';
import type {
  GatewayAdcpError,
  GatewayErrorDetails,
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcResultResponse,
  ToolErrorResult,
} from './types.js';

/** Tool-name prefixes treated as read-only: an error on them needs no "re-read state" warning. */
export const READ_ONLY_TOOL_PREFIXES: readonly string[] = ['get_', 'list_', 'search_', 'preview_', 'check_'];

/** What went wrong, with the numbers the stage measured. Units in the names. */
export interface BuildAdcpErrorInput {
  reason: AdcpErrorReason;
  /** JSON-RPC method of the host's request (`tools/call`, `tasks/result`, `tools/list`, …). */
  method: string;
  /** `params.name` of a `tools/call`, when known. */
  toolName?: string;
  /** Byte limit in force (every RESPONSE_TOO_LARGE reason). */
  limitBytes?: number;
  /** Bytes counted when the bound broke (for `content_length`, the announced length). */
  observedBytes?: number;
  /** Depth or node limit (`json_depth`, `json_nodes`), or header line limit (`upstream_headers_too_large`). */
  limit?: number;
  /** Depth or node count when the scan stopped (`json_depth`, `json_nodes`), or the host head's header lines counted (`upstream_headers_too_large`). */
  observed?: number;
  /** Time limit in force, milliseconds (deadline and idle reasons). */
  limitMs?: number;
  /** Time elapsed, milliseconds, when known. */
  observedMs?: number;
  /** The seller's HTTP status (`upstream_status`, `upstream_not_mcp`). */
  upstreamStatus?: number;
  /** Whole seconds after which a retry may succeed; becomes `retry_after` (agent_backoff: when the next probe may go; upstream_status: the seller's `Retry-After`). */
  retryAfterS?: number;
  /** Why the answer is `upstream_not_mcp`, when its message says it ({@link NOT_MCP_CAUSES}); ignored for any other reason. */
  cause?: NotMcpCause;
}

/**
 * A cause of `upstream_not_mcp` that the error's message names instead of the reason's own
 * first clause (the code, the reason and the `details` are the same):
 * - `batch_removed`: the seller answered a single request with a JSON-RPC batch (an array)
 *   holding its response, the answer on MCP 2025-03-26, on a host's revision without batches
 *   (2025-06-18 and later: revision.ts NO_BATCHES_SINCE; response/array-answer.ts). Source: a
 *   hostile new-user trial 13, L1 (the error did not say why such an answer was refused:
 *   test/regressions/seller-batch-json-answer-refused.test.ts).
 * - `status_undefined`: the seller's status code is outside 100-599, which RFC 9110 §15 makes
 *   invalid (`600`, `999`, `099`; routing/undefined-status.ts); `details.upstream_status` is
 *   that status. Source: hostile trial 28, L1 (it was `upstream_reset`:
 *   test/regressions/seller-status-over-599-reported-reset.test.ts).
 */
export type NotMcpCause = 'batch_removed' | 'status_undefined';

/** The first clause of `upstream_not_mcp`'s message for each {@link NotMcpCause}: gateway words only, never seller text. */
export const NOT_MCP_CAUSES: { readonly [C in NotMcpCause]: string } = {
  batch_removed: `The seller answered with a JSON-RPC batch (an array), which the host's MCP revision does not have: batches were removed in ${NO_BATCHES_SINCE}`,
  status_undefined: 'The seller answered with an HTTP status outside 100-599, which HTTP does not define',
};

/** Whether the method's request can be narrowed and is answered with a tool result (`tools/call`, `tasks/result`). */
export function isNarrowableMethod(method: string): boolean {
  return NARROWABLE_METHODS.includes(method);
}

/**
 * Whether a failed call may have changed state at the seller: a `tools/call` or
 * `tasks/result` whose tool is unknown or not read-only (name not starting with
 * {@link READ_ONLY_TOOL_PREFIXES}). Other methods (`tools/list`, `initialize`, …) never are.
 */
export function mayBeMutation(method: string, toolName: string | undefined): boolean {
  if (!isNarrowableMethod(method)) return false;
  return !(toolName !== undefined && READ_ONLY_TOOL_PREFIXES.some((prefix) => toolName.startsWith(prefix)));
}

/**
 * The shape of a minted error's answer to a request: all that the request's method and tool
 * name decide in {@link buildAdcpError} and {@link localErrorMessage} (the rest is the
 * reason's and the numbers'), so that two requests of one form get the same answer for the
 * same breach:
 * - `rpc_error`: a JSON-RPC error, RESPONSE_TOO_LARGE `terminal` (every method but `tools/call`
 *   and `tasks/result`);
 * - `tool_result`: a tool error result, RESPONSE_TOO_LARGE `correctable` with the narrowing
 *   hint (a `tools/call` or `tasks/result` of a read-only tool: {@link READ_ONLY_TOOL_PREFIXES});
 * - `tool_result_may_have_run`: a tool error result, RESPONSE_TOO_LARGE `correctable`, the
 *   message ending with the warning that the seller may have completed the operation (any
 *   other tool, or one whose name is not known: {@link mayBeMutation}).
 *
 * Why it is a value of its own: a batch's requests each get the error they would get alone,
 * and a batch's resume token can carry one letter per request still awaited, not its method
 * and tool name (response/batch-answers.ts; reported failure: every request of a batch got
 * the `rpc_error` form, a `create_media_buy` no warning that it may have run,
 * test/regressions/batch-error-loses-tool-warning.test.ts).
 */
export type LocalErrorForm = 'rpc_error' | 'tool_result' | 'tool_result_may_have_run';

/** The {@link LocalErrorForm} of a request with this method (none: `rpc_error`) and tool name. */
export function localErrorFormOf(method: string | undefined, toolName: string | undefined): LocalErrorForm {
  if (method === undefined || !isNarrowableMethod(method)) return 'rpc_error';
  return mayBeMutation(method, toolName) ? 'tool_result_may_have_run' : 'tool_result';
}

function limitPhrase(value: number | undefined, unit: string, fallback: string): string {
  return value === undefined ? fallback : `the ${value}-${unit} limit`;
}

function msPhrase(value: number | undefined, fallback: string): string {
  return value === undefined ? fallback : `${value} ms`;
}

/**
 * The first clause of each reason's message: only gateway-measured numbers, never seller text.
 * The SSE ones hold for every stream they end: a request's, and one answering a POSTed
 * notification or JSON-RPC response, whose error goes out for id null (no "this request", no
 * "the response": test/regressions/sse-error-message-names-a-request-on-notification-stream.test.ts).
 */
const MESSAGES: { readonly [R in AdcpErrorReason]: (d: GatewayErrorDetails) => string } = {
  content_length: (d) =>
    d.observed_bytes === undefined
      ? `The seller announced a Content-Length over ${limitPhrase(d.limit_bytes, 'byte', 'the byte limit')}`
      : `The seller announced a ${d.observed_bytes}-byte response (Content-Length), over ${limitPhrase(d.limit_bytes, 'byte', 'the byte limit')}`,
  raw_bytes: (d) => `The seller's response exceeded ${limitPhrase(d.limit_bytes, 'byte', 'the byte limit')}`,
  decoded_bytes: (d) => `The seller's response exceeded ${limitPhrase(d.limit_bytes, 'byte', 'the byte limit')} once decompressed`,
  sse_event: (d) => `An SSE event from the seller exceeded ${limitPhrase(d.limit_bytes, 'byte', 'the byte limit')} for one event`,
  sse_event_memory: (d) => `An SSE event from the seller held lines over ${limitPhrase(d.limit_bytes, 'byte', 'the memory limit')} for one unfinished event`,
  sse_cumulative: (d) => `The seller's SSE stream exceeded ${limitPhrase(d.limit_bytes, 'byte', 'the byte limit')} in total`,
  json_depth: (d) => `The seller's response nests JSON deeper than ${limitPhrase(d.limit_depth, 'level', 'the depth limit')}`,
  json_nodes: (d) => `The seller's response holds more JSON values than ${limitPhrase(d.limit_nodes, 'value', 'the node limit')}`,
  deadline_exceeded: (d) => `The seller did not finish its response within ${msPhrase(d.limit_ms, 'the deadline')}`,
  sse_idle: (d) => `The seller's SSE stream sent nothing for ${msPhrase(d.limit_ms, 'longer than the idle timeout')}`,
  sse_deadline: (d) => `The seller's SSE stream did not finish within ${msPhrase(d.limit_ms, 'the deadline')}`,
  host_not_reading: (d) => `The host stopped reading the SSE stream, so the response was not delivered within ${msPhrase(d.limit_ms, 'the limit')}`,
  upstream_unreachable: () => 'The seller could not be reached',
  agent_backoff: () => "The gateway did not send this request: the seller's recent answers kept breaking size limits, so it is backing off",
  pipeline_wait: (d) =>
    `The gateway did not send this request: it waited ${msPhrase(d.observed_ms, 'too long')} on its connection for the answers pipelined before it, too late to finish within ${msPhrase(d.limit_ms, 'the deadline')}`,
  cancel_wait: (d) =>
    `The gateway did not send this request: it held it for the seller's answer to a cancellation naming it, ${msPhrase(d.observed_ms, 'too long')} in all, too late to finish within ${msPhrase(d.limit_ms, 'the deadline')}`,
  agent_url_changed: () => 'The gateway did not send this request: a config reload moved its agent to another url while it waited for its backoff turn; send it again',
  agent_backoff_shed: () => "The gateway stopped reading the seller's answer: its recent answers kept breaking size limits and the agent's buffer was full",
  // Also a response head or framing undici cannot read (an oversized header, two
  // Content-Lengths): not "the connection closed" (a new user's trial).
  upstream_reset: () => "The seller's connection closed, or its response could not be read, before the response was complete",
  upstream_headers_too_large: (d) =>
    d.limit_lines === undefined
      ? `The seller's response headers exceeded ${limitPhrase(d.limit_bytes, 'byte', 'the size limit')} for a response head`
      : `The seller's response headers exceeded the ${d.limit_lines}-line limit for a response head`,
  upstream_status: (d) =>
    d.upstream_status === undefined ? 'The seller answered with a server error' : `The seller answered with HTTP status ${d.upstream_status}`,
  upstream_not_mcp: () => "The seller's answer was not an MCP JSON-RPC message",
  unsupported_encoding: () => "The seller's response used a content encoding the gateway did not ask for or cannot decode",
  upstream_encoding_invalid: () => "The seller's response could not be decoded by its content encoding (corrupt, truncated or followed by extra bytes)",
  gateway_shutdown: () => 'The gateway shut down before the seller answered, with no point to resume the stream from',
};

const MUTATION_WARNING = '; the seller may have completed the operation, so re-read its state before retrying.';
const NARROW_HINT = '; narrow the request with fields, max_results or a cursor.';

/**
 * Mints the AdCP error for a seller answer that broke a bound (ARCHITECTURE §3):
 * `{ code, message, recovery, source: "sdk", sdk_id, details }`.
 *
 * - `code`: `REASONS[reason].code`.
 * - `recovery`: RESPONSE_TOO_LARGE -> `correctable` on `tools/call` / `tasks/result` (the
 *   request can be narrowed), else `terminal`; SERVICE_UNAVAILABLE -> `transient`.
 * - `message`: one sentence under 256 UTF-8 bytes naming what happened and the limit; never
 *   seller text. When the call may have changed state ({@link mayBeMutation}) and the request
 *   reached the seller, it adds that the seller may have completed the operation, so re-read
 *   state before retrying; otherwise a correctable error adds how to narrow the request.
 * - `details`: `reason`, then the reason's fields (`REASONS[reason].details`) for which the
 *   input has a finite number: `limit_bytes`/`observed_bytes` (bytes), `limit_depth`/
 *   `observed_depth`, `limit_nodes`/`observed_nodes` or `limit_lines`/`observed_lines` (from
 *   `limit`/`observed`),
 *   `limit_ms`/`observed_ms` (milliseconds), `upstream_status`. Under 500 bytes serialized.
 *
 * Throws `TypeError` for a reason that is not in the catalog (a programming error).
 */
export function buildAdcpError(input: BuildAdcpErrorInput): GatewayAdcpError {
  return buildAdcpErrorOfForm(input, localErrorFormOf(input.method, input.toolName));
}

/**
 * {@link buildAdcpError} for a request of the form `form` ({@link LocalErrorForm}), whatever
 * its method and tool name (`input.method` and `input.toolName` are not read): what a batch's
 * error for each of its requests is built with (errors/local-reply.ts). Throws as
 * buildAdcpError does.
 */
export function buildAdcpErrorOfForm(input: Omit<BuildAdcpErrorInput, 'method' | 'toolName'>, form: LocalErrorForm): GatewayAdcpError {
  if (!Object.hasOwn(REASONS, input.reason)) throw new TypeError(`buildAdcpError: unknown reason ${String(input.reason)}`);
  const spec = REASONS[input.reason];
  const values: { readonly [F in DetailField]: number | undefined } = {
    limit_bytes: input.limitBytes,
    observed_bytes: input.observedBytes,
    limit_depth: input.limit,
    observed_depth: input.observed,
    limit_nodes: input.limit,
    observed_nodes: input.observed,
    limit_ms: input.limitMs,
    observed_ms: input.observedMs,
    limit_lines: input.limit,
    observed_lines: input.observed,
    upstream_status: input.upstreamStatus,
  };
  const details: GatewayErrorDetails = { reason: input.reason };
  for (const field of spec.details) {
    const value = values[field];
    if (typeof value === 'number' && Number.isFinite(value)) details[field] = value;
  }

  const codeSpec = ADCP_CODES[spec.code];
  const recovery: Recovery = form === 'rpc_error' ? codeSpec.recoveryOther : codeSpec.recoveryNarrowable;
  const suffix =
    spec.mayHaveExecuted && form === 'tool_result_may_have_run'
      ? MUTATION_WARNING
      : recovery === 'correctable'
        ? NARROW_HINT
        : '.';
  const err: GatewayAdcpError = {
    code: spec.code,
    message: (input.reason === 'upstream_not_mcp' && input.cause !== undefined ? NOT_MCP_CAUSES[input.cause] : MESSAGES[input.reason](details)) + suffix,
    recovery,
    source: 'sdk',
    sdk_id: SDK_ID,
    details,
  };
  if (input.retryAfterS !== undefined && Number.isInteger(input.retryAfterS) && input.retryAfterS >= 1) err.retry_after = input.retryAfterS;
  return err;
}

/**
 * The tool result carrying a minted error, for `tools/call` and `tasks/result`
 * (ARCHITECTURE §3; transport-errors §Tool-Level Errors):
 * `{ content: [{type:'text', text: '{"adcp_error":{…}}'}, {type:'text', text: <err.message>}], isError: true, structuredContent: { adcp_error: err } }`.
 */
export function toolErrorResult(err: GatewayAdcpError): ToolErrorResult {
  return {
    content: [
      { type: 'text', text: JSON.stringify({ adcp_error: err }) },
      { type: 'text', text: err.message },
    ],
    isError: true,
    structuredContent: { adcp_error: err },
  };
}

/**
 * The JSON-RPC message answering request `id` with a minted error (ARCHITECTURE §3): for
 * `tools/call` and `tasks/result`, `{jsonrpc:'2.0', id, result: toolErrorResult(err)}`; for
 * every other method, `{jsonrpc:'2.0', id, error: {code, message: err.message, data: {adcp_error: err}}}`
 * with `code` -32050 (RESPONSE_TOO_LARGE) or -32027 (SERVICE_UNAVAILABLE). The same object
 * goes in an HTTP 200 JSON body or in a final SSE `message` event.
 *
 * `protocolVersion` is the host's MCP revision: from 2026-07-28 on every result carries
 * `resultType` (MCP 2026-07-28 schema, `Result.resultType`; the 2.x SDK client rejects a
 * result without it), so the tool error result gets `resultType: "complete"` there.
 *
 * `taskId`: the `params.taskId` of the `tasks/result` answered (request/peek.ts
 * RpcPeek.taskId), when known; see {@link localErrorMessageOfForm}.
 */
export function localErrorMessage(
  id: JsonRpcId,
  method: string,
  err: GatewayAdcpError,
  protocolVersion?: string,
  taskId?: string,
): JsonRpcResultResponse<ToolErrorResult> | JsonRpcErrorResponse<{ adcp_error: GatewayAdcpError }> {
  return localErrorMessageOfForm(id, isNarrowableMethod(method) ? 'tool_result' : 'rpc_error', err, protocolVersion, taskId);
}

/**
 * {@link localErrorMessage} for a request of the form `form` ({@link LocalErrorForm}): a tool
 * error result for both tool forms, a JSON-RPC error for `rpc_error`.
 *
 * `taskId` (the answered `tasks/result`'s `params.taskId`, when the caller knows it): the
 * tool error result gets `_meta: {"io.modelcontextprotocol/related-task": {"taskId": taskId}}`
 * after `structuredContent`. MCP 2025-11-25, Tasks, "Related Task Metadata": "The
 * `tasks/result` operation **MUST** include this metadata in its response, as the result
 * structure itself does not contain the task ID"; the seller's own answers carry it, and the
 * error made in their place did not (hostile trial 39, item 1:
 * test/regressions/tasks-result-minted-error-drops-related-task.test.ts). Unknown (a stream
 * resumed with `Last-Event-ID`, whose token carries no taskId; a batch's request; a taskId
 * that is no string or is over request/peek.ts MAX_TASK_ID_CHARS): no `_meta`.
 */
export function localErrorMessageOfForm(
  id: JsonRpcId,
  form: LocalErrorForm,
  err: GatewayAdcpError,
  protocolVersion?: string,
  taskId?: string,
): JsonRpcResultResponse<ToolErrorResult> | JsonRpcErrorResponse<{ adcp_error: GatewayAdcpError }> {
  if (form !== 'rpc_error') {
    const result = toolErrorResult(err);
    if (taskId !== undefined) result._meta = { [RELATED_TASK_META_KEY]: { taskId } };
    if (protocolVersion !== undefined && isRevisionAtLeast(protocolVersion, STATELESS_SINCE)) result.resultType = 'complete';
    return { jsonrpc: '2.0', id, result };
  }
  return {
    jsonrpc: '2.0',
    id,
    error: { code: ADCP_CODES[err.code].jsonRpcCode, message: err.message, data: { adcp_error: err } },
  };
}

/** `error.data` of a refusal: its `reason`, then any extra gateway-made fields. */
export type RefusalData = { reason: RefusalReason } & Record<string, unknown>;

/**
 * A refusal of the host's request, made before any seller is contacted (ARCHITECTURE §3):
 * `{ statusCode, body: {jsonrpc:'2.0', id, error: {code, message, data: {reason, ...extra}}} }`
 * with the status and JSON-RPC code of `REFUSALS[kind]`. `id` is the request's id, or
 * `null` when unknown (`undefined` becomes `null`). `message` is the gateway's sentence;
 * `extra` fields are copied as own data (a `reason` key in it is ignored).
 * Throws `TypeError` for a kind that is not in the catalog.
 */
export function requestRefusal(
  kind: RefusalReason,
  id: JsonRpcId | undefined,
  message: string,
  extra?: Record<string, unknown>,
): { statusCode: number; body: JsonRpcErrorResponse<RefusalData> } {
  if (!Object.hasOwn(REFUSALS, kind)) throw new TypeError(`requestRefusal: unknown refusal ${String(kind)}`);
  const spec = REFUSALS[kind];
  const extraEntries = extra === undefined ? [] : Object.entries(extra).filter(([key]) => key !== 'reason');
  const data = Object.fromEntries([['reason', kind], ...extraEntries]) as RefusalData;
  return {
    statusCode: spec.statusCode,
    body: { jsonrpc: '2.0', id: id ?? null, error: { code: spec.jsonRpcCode, message, data } },
  };
}
