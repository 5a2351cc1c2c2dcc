/**
 * An MCP SDK client (real `Client` over `StreamableHTTPClientTransport`) connected to `url`,
 * whose call of the seller's `slow` tool it aborts 300 ms after sending it: the SDK rejects the
 * call at once and sends `notifications/cancelled` for its id (MCP "Cancellation"). Shared by
 * the cancellation regressions (cancelled-call-gets-minted-upstream-reset,
 * cancelled-call-resumed-gets-sse-idle).
 *
 * `maxRetries`: the transport's resume attempts (`reconnectionOptions`, delays 50-200 ms).
 * The client is pushed to `clients` (the caller closes them); `errors` collects what the
 * client's `onerror` reported, as strings.
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withTimeout } from './timeout.js';

export const ABORT_REASON = 'user gave up';

export async function abortSlowSdkCall(url: string, maxRetries: number, clients: Client[]): Promise<{ client: Client; transport: StreamableHTTPClientTransport; errors: string[] }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1, maxRetries },
  });
  const client = new Client({ name: 'cancel-host', version: '1.0.0' });
  clients.push(client);
  const errors: string[] = [];
  client.onerror = (e) => errors.push(String(e));
  await withTimeout(client.connect(transport), 10_000, 'connect');
  const ac = new AbortController();
  const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: ac.signal });
  setTimeout(() => ac.abort(ABORT_REASON), 300);
  await assert.rejects(call, (e: unknown) => String(e).includes(ABORT_REASON));
  return { client, transport, errors };
}
