/**
 * A `tools/call` held at a raw seller until the test releases it: what a shutdown test needs
 * to keep the gateway draining (test/regressions/reload-finishing-after-sigterm-logged-applied,
 * sighup-during-shutdown-silent).
 */
import { toolCall } from './raw.js';
import { withTimeout } from './timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

/** The result the held call is answered with once released. */
export const HELD_RESULT = { content: [{ type: 'text', text: 'held' }] };

export interface HeldCallSeller {
  readonly seller: RawSeller;
  /** Answers the call the seller holds (200 JSON, {@link HELD_RESULT}); nothing once answered or gone. */
  release(): void;
}

/** A raw seller on 127.0.0.1 that holds each call's answer until `release()`. */
export async function startHeldCallSeller(): Promise<HeldCallSeller> {
  let release: () => void = () => {};
  const seller = await startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id: number };
    const body = toolResponse(msg.id, HELD_RESULT);
    release = () => {
      if (!res.headersSent && !res.destroyed) res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
  });
  return { seller, release: () => release() };
}

/** Sends call id 1 through the gateway at `address` to agent `s`, and waits (10 s at most) until `seller` holds it; `answer` settles once released. */
export async function sendHeldCall(address: string, seller: RawSeller): Promise<{ answer: Promise<Response> }> {
  const call = fetch(`${address}/agents/s/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(toolCall(1, 'held')),
  });
  await withTimeout(
    (async () => {
      while (seller.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    })(),
    10_000,
    'the call at the seller',
  );
  return { answer: call };
}
