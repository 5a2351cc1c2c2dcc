/**
 * An MCP SDK 1.x client acting as a host on a given 2025-era revision, keeping its transport
 * (session id, DELETE) and allowing SSE resumption (the shared `connectClient` helper turns
 * reconnection off). The protocol version is negotiated through the shared
 * `instrumentedFetch` (see test/helpers/client.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { instrumentedFetch, type HttpExchange } from '../../helpers/client.js';
import { withTimeout } from '../../helpers/timeout.js';

export interface Sdk1Host {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  /** Every HTTP exchange the host made, in order. */
  readonly exchanges: HttpExchange[];
  close(): Promise<void>;
}

export async function connectSdk1Host(url: string, protocolVersion: string): Promise<Sdk1Host> {
  const exchanges: HttpExchange[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: instrumentedFetch({ protocolVersion, onExchange: (e) => exchanges.push(e) }),
    // Resumption on: short delays (the seller's `retry:` wins when it sends one) and a few
    // retries, so a loaded CI machine's transient failure does not strand the request.
    reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 2, maxRetries: 5 },
  });
  const client = new Client({ name: `host-${protocolVersion}`, version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
  await withTimeout(client.connect(transport), 10_000, `connect ${url}`);
  return {
    client,
    transport,
    exchanges,
    close: async () => {
      await client.close().catch(() => undefined);
    },
  };
}
