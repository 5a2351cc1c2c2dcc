/**
 * A host that answers elicitations: a real MCP TypeScript SDK client declaring the `elicitation`
 * capability, connected through the gateway to a test/helpers/sdk-session-seller.ts seller,
 * accepting each elicitation (`{ action: 'accept', content: { ok: true } }`) after `answerMs`.
 * Shared by test/regressions/shared-elicitation-expires-before-tool-deadline.test.ts,
 * test/regressions/seller-cancelled-elicitation-pauses-session-idle.test.ts and
 * test/regressions/elicitation-wait-hits-sse-idle.test.ts, test/regressions/elicitation-wait-lost-on-resume.test.ts
 * ({@link reasonOrText} also by test/regressions/seller-wide-cancel-keeps-stream-paused.test.ts and
 * test/regressions/php-escaped-seller-cancel-keeps-stream-paused.test.ts, through {@link callWithSlowHuman}).
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { SdkSessionSeller } from './sdk-session-seller.js';
import { withTimeout } from './timeout.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Connects a new eliciting host to `agentUrl` (the gateway's URL of an agent fronting `seller`),
 * pushed onto `clients` for the caller to close. It returns once `seller` has the session's
 * standalone GET stream open (polled every 10 ms, 500 times at most; asserted): the SDK seller
 * drops a request with no related request (an elicitation) while that stream is not open.
 * `transportOptions` go to the client's transport (e.g. `reconnectionOptions` for a test whose
 * seller closes the call's stream: test/regressions/elicitation-wait-lost-on-resume.test.ts).
 */
export async function connectElicitingHost(
  agentUrl: string,
  seller: SdkSessionSeller,
  answerMs: number,
  clients: Client[],
  transportOptions?: StreamableHTTPClientTransportOptions,
): Promise<Client> {
  const client = new Client({ name: 'elicit-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    await sleep(answerMs);
    return { action: 'accept', content: { ok: true } };
  });
  clients.push(client);
  const transport = new StreamableHTTPClientTransport(new URL(agentUrl), transportOptions);
  await withTimeout(client.connect(transport), 5_000, 'connect');
  const session = transport.sessionId;
  for (let i = 0; i < 500 && !seller.openedGets.includes(session ?? ''); i++) await sleep(10);
  assert.ok(session !== undefined && seller.openedGets.includes(session), 'the client opened its GET stream');
  return client;
}

/** What a `tools/call` result is: a minted tool error (docs/errors.md) or a text result. */
interface CallOutcome {
  isError?: boolean;
  structuredContent?: { adcp_error?: { details?: { reason?: string } } };
  content?: { text?: string }[];
}

/** The `adcp_error.details.reason` of a minted tool error result, else the result's first text. */
export function reasonOrText(result: unknown): string | undefined {
  const o = result as CallOutcome;
  return o.isError === true ? o.structuredContent?.adcp_error?.details?.reason : o.content?.[0]?.text;
}

/**
 * A new host session (pushed onto `clients` for the caller to close) calls tool `name` at
 * `agentUrl` (no arguments, 10 s timeout) with a human slower than any test: each elicitation is
 * declined only after 20 s, or when the SDK aborts it (the seller's `notifications/cancelled`),
 * so the seller's cancellation is the only end of the wait. Its result as {@link reasonOrText}.
 * Shared by test/regressions/seller-wide-cancel-keeps-stream-paused.test.ts and
 * test/regressions/php-escaped-seller-cancel-keeps-stream-paused.test.ts.
 */
export async function callWithSlowHuman(agentUrl: string, name: string, clients: Client[]): Promise<string | undefined> {
  const client = new Client({ name: 'h', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (_r, extra) => {
    await new Promise((r) => {
      const t = setTimeout(r, 20_000);
      t.unref();
      extra.signal.addEventListener('abort', r);
    });
    return { action: 'decline' };
  });
  clients.push(client);
  await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(agentUrl))), 5_000, 'connect');
  return reasonOrText(await withTimeout(client.callTool({ name, arguments: {} }, undefined, { timeout: 10_000 }), 10_000, name));
}
