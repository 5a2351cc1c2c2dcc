/**
 * The host's MCP revision, from the `MCP-Protocol-Version` request header.
 * A request without it is 2025-03-26 (MCP Streamable HTTP, "Protocol Version Header":
 * servers SHOULD assume 2025-03-26). `structuredContent` exists from 2025-06-18 on (the
 * 2025-03-26 `CallToolResult` has none), so only hosts on 2025-06-18 or later get results
 * lifted into it and duplicated text stripped (ARCHITECTURE §5).
 */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26';
export const STRUCTURED_CONTENT_SINCE = '2025-06-18';

export function protocolVersionOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && v.trim() !== '' ? v.trim() : DEFAULT_PROTOCOL_VERSION;
}

/** Revisions are dates (YYYY-MM-DD) and compare as strings; anything else is treated as too old. */
export function hostReadsStructuredContent(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= STRUCTURED_CONTENT_SINCE;
}
