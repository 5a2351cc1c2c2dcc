/**
 * A real MCP SDK client for tests, with two additions the SDK does not offer directly:
 *
 * - `protocolVersion`: act as an older host. The SDK's `Client.connect` always offers
 *   LATEST_PROTOCOL_VERSION in `initialize` and has no option to change it, so the client's
 *   `fetch` rewrites `params.protocolVersion` of the initialize request; the server then
 *   negotiates that revision and the SDK sends it as `MCP-Protocol-Version`. For 2025-03-26
 *   the header is also removed, because that revision had no such header (a request without
 *   it is a 2025-03-26 request, ARCHITECTURE §5).
 * - `onExchange`: every HTTP exchange the client makes, with the body bytes it actually
 *   received (counted as the SDK reads the stream), so a test or the demo can measure what the
 *   host gets.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { withTimeout } from './timeout.js';

export interface HttpExchange {
  readonly method: string;
  /** Request headers as sent (lower-cased names). */
  readonly requestHeaders: Readonly<Record<string, string>>;
  /** The JSON-RPC method of a POST body (`undefined` for GET/DELETE or a batch). */
  readonly rpcMethod: string | undefined;
  /** The JSON-RPC id of a POST body, if any. */
  readonly rpcId: string | number | undefined;
  /** `params.name` of a `tools/call`. */
  readonly toolName: string | undefined;
  readonly status: number;
  readonly contentType: string | null;
  /** Resolves with the body bytes the client read once the body ends or is cancelled. */
  readonly bodyBytes: Promise<number>;
}

export interface ConnectOptions {
  /** Negotiate this MCP revision instead of the SDK's latest (e.g. '2025-03-26', '2025-06-18'). */
  protocolVersion?: string;
  /** Extra headers on every request (e.g. `X-Max-Response-Bytes`), through `requestInit.headers`. */
  headers?: Record<string, string>;
  /** Called for every HTTP exchange, before its body is read. */
  onExchange?: (exchange: HttpExchange) => void;
  /** Guard for `connect` (default 10 s). */
  timeoutMs?: number;
}

function peekRpc(body: unknown): { rpcMethod?: string; rpcId?: string | number; toolName?: string; parsed?: Record<string, unknown> } {
  if (typeof body !== 'string') return {};
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const msg = parsed as Record<string, unknown>;
    const params = (msg.params ?? {}) as Record<string, unknown>;
    return {
      parsed: msg,
      ...(typeof msg.method === 'string' ? { rpcMethod: msg.method } : {}),
      ...(typeof msg.id === 'string' || typeof msg.id === 'number' ? { rpcId: msg.id } : {}),
      ...(msg.method === 'tools/call' && typeof params.name === 'string' ? { toolName: params.name } : {}),
    };
  } catch {
    return {};
  }
}

/** Wraps a body stream so every byte the reader takes is counted; `done` fires on end, error or cancel. */
export function countBody(body: ReadableStream<Uint8Array>, done: (bytes: number) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let bytes = 0;
  let settled = false;
  const finish = (): void => {
    if (!settled) {
      settled = true;
      done(bytes);
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: end } = await reader.read();
        if (end) {
          finish();
          controller.close();
          return;
        }
        bytes += value.byteLength;
        controller.enqueue(value);
      } catch (err) {
        finish();
        controller.error(err);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason);
    },
  });
}

/**
 * A `fetch` for the SDK transport that applies the protocol-version override and reports
 * each exchange with a byte counter on its body.
 */
export function instrumentedFetch(opts: Pick<ConnectOptions, 'protocolVersion' | 'onExchange'> = {}): FetchLike {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    let body = init?.body;
    const peek = peekRpc(body);
    if (opts.protocolVersion !== undefined) {
      if (peek.rpcMethod === 'initialize' && peek.parsed) {
        const params = { ...(peek.parsed.params as Record<string, unknown>), protocolVersion: opts.protocolVersion };
        body = JSON.stringify({ ...peek.parsed, params });
      }
      if (opts.protocolVersion === '2025-03-26') headers.delete('mcp-protocol-version');
    }
    const response = await fetch(url, { ...init, headers, ...(body !== undefined ? { body } : {}) });
    if (!opts.onExchange) return response;
    let resolveBytes!: (n: number) => void;
    const bodyBytes = new Promise<number>((resolve) => (resolveBytes = resolve));
    const requestHeaders: Record<string, string> = {};
    headers.forEach((v, k) => (requestHeaders[k] = v));
    opts.onExchange({
      method: init?.method ?? 'GET',
      requestHeaders,
      rpcMethod: peek.rpcMethod,
      rpcId: peek.rpcId,
      toolName: peek.toolName,
      status: response.status,
      contentType: response.headers.get('content-type'),
      bodyBytes,
    });
    if (!response.body) {
      resolveBytes(0);
      return response;
    }
    return new Response(countBody(response.body, resolveBytes), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Connects a real SDK `Client` over Streamable HTTP. Close it with `client.close()`. */
export async function connectClient(url: string, opts: ConnectOptions = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: instrumentedFetch(opts),
    ...(opts.headers ? { requestInit: { headers: opts.headers } } : {}),
    // Tests must not sit in reconnect back-off when a stream ends.
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
  });
  const client = new Client({ name: 'adcp-gateway-e2e', version: '1.0.0' });
  await withTimeout(client.connect(transport), opts.timeoutMs ?? 10_000, `connect ${url}`);
  return client;
}

/** Collects exchanges, for `onExchange`. */
export function exchangeLog(): { log: HttpExchange[]; onExchange: (e: HttpExchange) => void; toolCalls(name: string): HttpExchange[] } {
  const log: HttpExchange[] = [];
  return {
    log,
    onExchange: (e) => log.push(e),
    toolCalls: (name) => log.filter((e) => e.rpcMethod === 'tools/call' && e.toolName === name),
  };
}
