/**
 * Shared types of the pure MCP/AdCP core (`src/mcp/`). No runtime code.
 */
import type { AdcpCode, AdcpErrorReason, Recovery } from '../errors/codes.js';

export type { Recovery };

/** A JSON-RPC request id as it appears on the wire; `null` when unknown (e.g. a parse error). */
export type JsonRpcId = string | number | null;

/**
 * An AdCP error object as extracted from a seller's message: a string `code` of 1–64
 * characters, every other field kept exactly as the seller sent it (transport-errors page:
 * extraction returns raw values; clamping `retry_after` is the caller's job).
 */
export interface AdcpError {
  code: string;
  [key: string]: unknown;
}

/** `details` of an error the gateway mints (ARCHITECTURE §3). Which fields appear per reason: `REASONS[reason].details`. */
export interface GatewayErrorDetails {
  reason: AdcpErrorReason;
  limit_bytes?: number;
  observed_bytes?: number;
  limit_depth?: number;
  observed_depth?: number;
  limit_nodes?: number;
  observed_nodes?: number;
  limit_ms?: number;
  observed_ms?: number;
  limit_lines?: number;
  observed_lines?: number;
  upstream_status?: number;
}

/** An AdCP error minted by the gateway (ARCHITECTURE §3): every field always present but `retry_after`. */
export interface GatewayAdcpError extends AdcpError {
  code: AdcpCode;
  /** One sentence, under 256 UTF-8 bytes, no seller-controlled text. */
  message: string;
  recovery: Recovery;
  source: 'sdk';
  /** `adcp-buyer-gateway@<version>` (`SDK_ID` of `src/version.ts`). */
  sdk_id: string;
  details: GatewayErrorDetails;
  /** Whole seconds after which a retry may succeed; only when the gateway knows it (`agent_backoff`). */
  retry_after?: number;
}

/** An MCP `text` content item. */
export interface TextContent {
  type: 'text';
  text: string;
  [key: string]: unknown;
}

/** The tool result the gateway answers with when it mints an error for `tools/call` / `tasks/result`. */
export interface ToolErrorResult {
  content: [TextContent, TextContent];
  isError: true;
  structuredContent: { adcp_error: GatewayAdcpError };
  /**
   * Present on the answer to a `tasks/result` whose `params.taskId` the request peek read
   * (mcp/local-error.ts localErrorMessageOfForm; MCP 2025-11-25, Tasks, "Related Task
   * Metadata": the `tasks/result` response MUST include it).
   */
  _meta?: RelatedTaskMeta;
  /** Present for hosts on MCP 2026-07-28 or later (every result carries it there). */
  resultType?: 'complete';
}

/** The `_meta` key MCP 2025-11-25 (Tasks) associates a message with a task under. */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** `_meta` associating a result with a task: `{"io.modelcontextprotocol/related-task":{"taskId":…}}`. */
export interface RelatedTaskMeta {
  [RELATED_TASK_META_KEY]: { taskId: string };
}

/** A JSON-RPC success response carrying a tool result. */
export interface JsonRpcResultResponse<R = unknown> {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: R;
}

/** A JSON-RPC error response. */
export interface JsonRpcErrorResponse<D = unknown> {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string; data: D };
}

/**
 * Limits that decide whether a `content[].text` item may be JSON-parsed at all (text
 * fallback, dedupe). Omitted fields: `maxTextBytes` defaults to 4 MiB, the structure bounds
 * are not checked.
 */
export interface TextJsonBounds {
  /** UTF-8 bytes of the text; longer text is skipped (mcp-response-extraction §Size Limits). */
  maxTextBytes?: number;
  /** JSON nesting bound checked before `JSON.parse` (ARCHITECTURE §5). */
  maxDepth?: number;
  /** JSON node bound checked before `JSON.parse` (ARCHITECTURE §5). */
  maxNodes?: number;
}

/**
 * Why a `content[].text` that may hold a JSON object (its first character after JSON
 * whitespace is `{`) was not read as one because of a bound, not because of what it holds
 * (extract.ts readTextObject): `text_bytes`, its UTF-8 bytes over `maxTextBytes`; `json_depth`
 * / `json_nodes`, its JSON over `maxDepth` / `maxNodes` (the strings of the
 * `details.reason` values of the same whole-message bounds, src/errors/codes.ts). The spec
 * skips such an item (mcp-response-extraction §Extraction Algorithm step 3); the gateway says
 * so in its exchange line (`text_not_lifted`) and metrics. Source: a reviewer, "a text over the
 * bounds was silently not lifted" (test/regressions/text-over-bounds-not-lifted-silently.test.ts).
 */
export type TextBoundReason = 'text_bytes' | 'json_depth' | 'json_nodes';

/**
 * Why a `content[].text` holding a liftable JSON object was not lifted for what the object
 * holds: `proto_key`, a member named `__proto__` at any depth (proto-key.ts: the MCP
 * TypeScript SDK client drops such a member from `structuredContent`, and the text would be
 * replaced by a summary); `lone_surrogate`, a string or key at any depth holding a lone
 * surrogate (lone-surrogate.ts: lifted, `structuredContent` would carry a lone-surrogate
 * escape, which strict parsers such as the MCP Python SDK's refuse, the whole result lost: a
 * hostile trial 29, M1); or, where the lift would be re-serialized, a
 * {@link ReserializedLiftReason}. The exchange line's `text_not_lifted` and the metric name it as they
 * name a {@link TextBoundReason}. Source: a hostile trial 24, L1
 * (test/regressions/lifted-proto-member-lost-to-sdk-host.test.ts).
 */
export type TextObjectReason = 'proto_key' | 'lone_surrogate' | ReserializedLiftReason;

/**
 * Why a liftable text was not lifted where the lift would go out re-serialized (a 2026-07-28
 * `tasks/get` result, a `tools/call` result the splice declines: response/scanned-message.ts
 * rewriteScanned), for what `JSON.stringify` of its parsed object, or of the whole message,
 * would drop (reserialized-lift.ts): `repeated_key`, an object writes a key more than once
 * (in the text at any depth, plain or escaped: only the last would go out, and the text, where
 * every member is, would be summarized away; or anywhere else in the message: only the last
 * would go out); `negative_zero`, the text or the rest of the message holds a negative zero
 * (`-0`, `-0.0`: written `0`). A spliced lift carries the text's bytes and loses neither. And
 * `lossy_number`: the message holds, outside its strings, a number a double cannot carry
 * exactly (`12345678901234567891`, `1e400`: json-numbers.ts hasLossyNumber), which stops every
 * rewrite, spliced or not (response/rewrite.ts rewriteResponse); or the text to lift holds one
 * (normalize.ts: `structuredContent` would carry another number). Sources: a hostile trial 26, L1
 * (test/regressions/tasks-get-lift-loses-repeated-key-and-negative-zero.test.ts); hostile
 * trial 39, item 2: such values outside the text stopped the lift silently
 * (test/regressions/reserialized-lift-skipped-silently-for-value-outside-text.test.ts).
 */
export type ReserializedLiftReason = 'repeated_key' | 'negative_zero' | 'lossy_number';
