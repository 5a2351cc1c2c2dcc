/**
 * The host's MCP revision, from the `MCP-Protocol-Version` request header.
 *
 * - A request without it is 2025-03-26 (MCP Streamable HTTP, "Protocol Version Header":
 *   servers SHOULD assume 2025-03-26; 2026-07-28 keeps that rule for servers that serve
 *   pre-2025-06-18 clients).
 * - `structuredContent` exists from 2025-06-18 on (the 2025-03-26 `CallToolResult` has none),
 *   so only hosts on 2025-06-18 or later get results lifted into it and duplicated text
 *   stripped (ARCHITECTURE §5).
 * - 2026-07-28 starts the stateless ("modern") era: no `initialize`, no sessions, no GET
 *   stream, no SSE resumption; every POST carries `MCP-Protocol-Version` (equal to
 *   `params._meta["io.modelcontextprotocol/protocolVersion"]`), `Mcp-Method` and, for
 *   `tools/call`/`resources/read`/`prompts/get`, `Mcp-Name`. Tasks moved to the
 *   `io.modelcontextprotocol/tasks` extension, where the final result arrives inside the
 *   `tasks/get` response ({@link deliversTaskResultInTasksGet}).
 *
 * Revisions are dates (`YYYY-MM-DD`) and compare as strings; anything else (a typo, a
 * `draft` label) counts as older than every revision the gateway knows, so nothing is
 * rewritten for it.
 */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26';
export const STRUCTURED_CONTENT_SINCE = '2025-06-18';
/**
 * First revision without JSON-RPC batches: MCP 2025-06-18 changelog, "Remove support for
 * JSON-RPC batching"; from it on a POST body is one JSON-RPC message (Streamable HTTP,
 * "Sending Messages to the Server").
 */
export const NO_BATCHES_SINCE = '2025-06-18';
/** First revision of the stateless era (SEP-2575) and of the tasks extension (SEP-2663). */
export const STATELESS_SINCE = '2026-07-28';

/** The revisions this gateway is tested with, oldest first (README "MCP revisions and conformance"). */
export const KNOWN_PROTOCOL_VERSIONS: readonly string[] = ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];

const REVISION = /^\d{4}-\d{2}-\d{2}$/;

export function protocolVersionOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && v.trim() !== '' ? v.trim() : DEFAULT_PROTOCOL_VERSION;
}

/**
 * True when the `MCP-Protocol-Version` request header (as Node gives it) was sent more than
 * once, or holds more than one value: Node joins repeated fields with `", "`, so a value
 * holding a comma (which no revision date does), or an array of two or more. Such a request
 * is refused 400 `invalid_request` (routing/handler.ts), as two `X-Max-Response-Bytes`
 * fields are; a single value that is no revision date (`draft`) is not: it goes to the
 * seller as written (see the module doc). Cost on the common path: one `includes(',')` of
 * the value.
 *
 * Why (a new user's trial, 2026-12-03): `2025-06-18` sent twice became `"2025-06-18,
 * 2025-06-18"`, no revision date, so the host counted as 2025-03-26: its batches were
 * forwarded instead of refused, its results not deduped
 * (test/regressions/protocol-version-header-sent-twice.test.ts).
 */
export function isRepeatedProtocolVersion(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  return typeof header === 'string' ? header.includes(',') : header.length > 1 || (header.length === 1 && header[0]!.includes(','));
}

/** True when `version` is a revision date at or after `since`. */
export function isRevisionAtLeast(version: string, since: string): boolean {
  return REVISION.test(version) && version >= since;
}

/**
 * True when the host's revision has JSON-RPC batches: before {@link NO_BATCHES_SINCE}, which
 * includes a request without `MCP-Protocol-Version` (2025-03-26) and a header that is no
 * revision date (older than every revision, as everywhere here: the seller, which must answer
 * an unsupported version 400, judges it). A batch on a later revision is refused
 * (routing/handler.ts; reported failure: test/regressions/batch-on-revision-without-batches.test.ts).
 */
export function hasBatches(version: string): boolean {
  return !isRevisionAtLeast(version, NO_BATCHES_SINCE);
}

export function hostReadsStructuredContent(version: string): boolean {
  return isRevisionAtLeast(version, STRUCTURED_CONTENT_SINCE);
}

/**
 * True for the 2026-07-28 era and later, where a completed task's result is inlined in the
 * `tasks/get` response (`result.result`, tasks extension "Task Polling") instead of being
 * fetched with `tasks/result` (2025-11-25).
 */
export function deliversTaskResultInTasksGet(version: string): boolean {
  return isRevisionAtLeast(version, STATELESS_SINCE);
}
