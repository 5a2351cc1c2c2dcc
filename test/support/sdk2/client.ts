/**
 * Hosts on MCP 2026-07-28: the SDK 2.x client (`@modelcontextprotocol/client`) pinned to that
 * revision, with every HTTP exchange recorded; and raw 2026-07-28 POSTs (request headers and
 * the `_meta` envelope as the revision defines them) for what the SDK client does not send.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { withTimeout } from '../../helpers/timeout.js';
import { rawPost, type RawResponse } from '../../helpers/raw.js';

export const MODERN = '2026-07-28';

export interface Sdk2Exchange {
  readonly method: string;
  readonly requestHeaders: Readonly<Record<string, string>>;
  readonly requestBody: string | undefined;
  readonly status: number;
  readonly contentType: string | null;
}

export interface Sdk2Host {
  readonly client: Client;
  readonly exchanges: Sdk2Exchange[];
  close(): Promise<void>;
}

export async function connectSdk2Host(url: string, headers: Record<string, string> = {}): Promise<Sdk2Host> {
  const exchanges: Sdk2Exchange[] = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
    const requestBody = request.method === 'POST' ? await request.clone().text() : undefined;
    const response = await fetch(request);
    const requestHeaders: Record<string, string> = {};
    request.headers.forEach((value, name) => (requestHeaders[name] = value));
    exchanges.push({ method: request.method, requestHeaders, requestBody, status: response.status, contentType: response.headers.get('content-type') });
    return response;
  };
  const client = new Client({ name: 'host-2026-07-28', version: '2.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch })), 10_000, `connect ${url}`);
  return { client, exchanges, close: () => client.close().catch(() => undefined) };
}

/** The `_meta` envelope every 2026-07-28 request carries. */
export function envelope(extensions: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-host', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': Object.keys(extensions).length > 0 ? { extensions } : {},
  };
}

/**
 * POSTs one 2026-07-28 request: `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` from
 * `params.name`/`params.uri` (or `params.taskId` for the tasks extension's methods).
 */
export function modernPost(url: string, id: number, method: string, params: Record<string, unknown>, extra: Record<string, string> = {}): Promise<RawResponse> {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : typeof params.taskId === 'string' ? params.taskId : undefined;
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name !== undefined ? { 'mcp-name': name } : {}), ...extra };
  return rawPost(url, { jsonrpc: '2.0', id, method, params }, headers);
}
