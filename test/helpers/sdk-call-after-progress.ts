/**
 * A `tools/call` through a real MCP SDK client, started and awaited until its first progress
 * notification: the seller's SSE stream is open and the call in flight, which is when the
 * shutdown and restart regressions send their signal
 * (restart-without-secret-hangs-sdk-call, shutdown-answers-unresumable-sse-call-at-once,
 * restart-with-secret-loses-answered-sse-call).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { withTimeout } from './timeout.js';

/** How the call settled: its result, or the error `callTool` rejected with. */
export type SettledCall = { result: Awaited<ReturnType<Client['callTool']>> } | { error: Error };

/**
 * Calls tool `name` (no arguments) with the client's request timeout `timeoutMs`; resolves,
 * once the first progress notification arrived (within 10 s), to `{ settled }`: the call's
 * settlement, still pending (it never rejects). Wrapped in an object: an async function
 * resolving to a promise would wait for that promise too.
 */
export async function callAfterFirstProgress(client: Client, name: string, timeoutMs: number): Promise<{ settled: Promise<SettledCall> }> {
  let progressed!: () => void;
  const progress = new Promise<void>((resolve) => (progressed = resolve));
  const call = client.callTool({ name, arguments: {} }, undefined, { timeout: timeoutMs, onprogress: () => progressed() }).then(
    (result): SettledCall => ({ result }),
    (error: Error): SettledCall => ({ error }),
  );
  await withTimeout(progress, 10_000, 'the progress notification');
  return { settled: call };
}
