/**
 * What the shutdown regressions share: the gateway's exact `draining` refusal on the wire
 * (src/routing/draining.ts), the wire text without its `date` lines, and the start of a
 * graceful shutdown as src/cli.ts runs it on SIGTERM.
 */
import assert from 'node:assert/strict';
import type { ObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

export const DRAINING_MESSAGE = 'The gateway is shutting down: the request was not sent to any seller; send it again (to another instance, or once the gateway is back).';

/** The gateway's exact answer to a request refused while draining, `date` line left out. */
export function drainingAnswer(id: number | null): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32027, message: DRAINING_MESSAGE, data: { reason: 'draining' } } });
  return (
    `HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: application/json\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** `text` without its `date` header lines (they change). */
export function withoutDate(text: string): string {
  return text.replace(/\r\ndate: [^\r]*/gi, '');
}

/**
 * Starts the shutdown as src/cli.ts does on SIGTERM (not ready, then the app's close) and
 * resolves once the listener is closed (at most 5 s), with the close's own promise.
 */
export async function beginShutdown(gw: ObservedGateway): Promise<{ closed: Promise<void> }> {
  gw.app.gateway.setReady(false);
  const closed = gw.app.close();
  for (let k = 0; k < 500 && gw.app.server.listening; k++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(gw.app.server.listening, false, 'the listener is closed');
  return { closed };
}

/**
 * A raw seller on 127.0.0.1 that answers every `tools/call` with 200 and `result` for its id,
 * but holds the request with id `heldId` until `release()`: `held` resolves once that request
 * has arrived (a busy connection to shut down beside).
 */
export async function startHoldingSeller(heldId: number, result: unknown): Promise<{ seller: RawSeller; held: Promise<void>; release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const held = new Promise<void>((resolve) => (arrived = resolve));
  const seller = await startRawSeller(async (req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    if (id === heldId) {
      arrived();
      await released;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, result));
  });
  return { seller, held, release };
}
