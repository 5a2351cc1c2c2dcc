/**
 * MCP 2026-07-28's mirrored request headers checked against the body the gateway reads: a
 * request whose `Mcp-Method` is not its body's `method`, or whose `Mcp-Name` is not a
 * `tools/call`'s `params.name`, is refused 400 `invalid_request` for its id before any seller
 * is contacted (routing/handler.ts; docs/errors.md, invalid_request, "Gateway headers").
 *
 * Why (review 36, F3): the headers were forwarded unchecked while the gateway resolved a
 * call's limits, backoff kind and log line from the body's `params.name`, so a host sending
 * `Mcp-Name: big_tool` with a body naming `small_tool` got small_tool's limits while a seller
 * front end routing on the header ran big_tool
 * (test/regressions/mcp-name-header-differs-from-body-forwarded.test.ts). MCP 2026-07-28,
 * Streamable HTTP, "Server Validation": servers that process the request body MUST reject
 * requests where the headers do not match the corresponding body values (400; intermediaries
 * "MUST return an appropriate HTTP error status ... but are not required to return a JSON-RPC
 * error response"), "to prevent ... different components in the network rely[ing] on
 * different sources of truth (e.g., a load balancer routing on the header value while the MCP
 * server executes based on the body value)". The MCP TypeScript SDK 2.x server does the same
 * (its `validateStandardRequestHeaders`, code -32020 HeaderMismatch).
 *
 * What is compared (what the gateway itself reads from the body; the seller checks the rest:
 * `Mcp-Name` of `resources/read`, `prompts/get`, `Mcp-Param-*`, and which headers are missing):
 * - only on a POST whose `MCP-Protocol-Version` is 2026-07-28 or later (earlier revisions
 *   define no such headers: they are forwarded unchanged, as any header);
 * - only a header that is present (an absent one is the seller's to require);
 * - `Mcp-Method` as Node gives it (leading and trailing spaces and tabs removed, RFC 9110
 *   §5.5), case-sensitively, with the body's `method` (a request's or a notification's);
 * - `Mcp-Name` of a `tools/call` whose `params.name` the gateway read, after decoding its
 *   `=?base64?…?=` form (Value Encoding: canonical Base64 of the UTF-8 text; a value that is
 *   not is refused as malformed), with that name.
 * Two field lines of one header reach the gateway joined (`a, b`: Node, RFC 9110 §5.3), which
 * names no method or tool of the body, and are refused the same way.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { shownInMessage } from '../errors/local-reply.js';
import { isRevisionAtLeast, protocolVersionOf, STATELESS_SINCE } from '../mcp/revision.js';

/** What the check reads of the peeked request (exchange.ts RpcPeek). */
export interface MirroredBody {
  readonly method: string | undefined;
  readonly toolName: string | undefined;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
/** Canonical Base64 (standard alphabet, padded), as the MCP SDK's `decodeMcpParamValue` takes it. */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

const WHY = `(MCP ${STATELESS_SINCE}: Mcp-Method and Mcp-Name mirror the request body, and a server refuses a request where they differ)`;

/**
 * A header value in MCP's Value Encoding decoded: the value itself, or the UTF-8 text of its
 * `=?base64?…?=` form; undefined when that form holds no canonical Base64 of UTF-8 text.
 */
export function decodeMirroredValue(value: string): string | undefined {
  if (value.length < SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length || !value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const base64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(base64)) return undefined;
  try {
    return UTF8.decode(Buffer.from(base64, 'base64'));
  } catch {
    return undefined;
  }
}

/** `value` quoted for a refusal's message (its first characters: errors/local-reply.ts shownInMessage). */
const quoted = (value: string): string => JSON.stringify(shownInMessage(value));

/** A header field as one value: Node gives these as strings (an array only for a few names it knows). */
const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

/**
 * The refusal's message when `headers` (a POST's, as Node gives them) mirror `body` otherwise
 * than it reads, else undefined. Costs two property reads on a request without the headers.
 */
export function mirroredHeaderProblem(headers: IncomingHttpHeaders, body: MirroredBody): string | undefined {
  const methodHeader = single(headers['mcp-method']);
  const nameHeader = single(headers['mcp-name']);
  if (methodHeader === undefined && nameHeader === undefined) return undefined;
  if (body.method === undefined || !isRevisionAtLeast(protocolVersionOf(headers['mcp-protocol-version']), STATELESS_SINCE)) return undefined;
  if (methodHeader !== undefined && methodHeader !== body.method) {
    return `Invalid Mcp-Method header: it names method ${quoted(methodHeader)}, but the body's method is ${quoted(body.method)} ${WHY}.`;
  }
  if (nameHeader === undefined || body.method !== 'tools/call' || body.toolName === undefined) return undefined;
  const name = decodeMirroredValue(nameHeader);
  if (name === undefined) {
    return `Invalid Mcp-Name header: its =?base64?...?= value is not canonical Base64 of UTF-8 text ${WHY}.`;
  }
  if (name !== body.toolName) {
    return `Invalid Mcp-Name header: it names tool ${quoted(name)}, but the body's params.name is ${quoted(body.toolName)} ${WHY}.`;
  }
  return undefined;
}
