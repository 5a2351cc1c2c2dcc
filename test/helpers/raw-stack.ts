/**
 * A raw seller (test/support/raw-seller.ts, node:http) with the real gateway in front of it,
 * started and closed by `useSellerAndGateway` (test/helpers/stack.ts). The gateway's YAML is
 * `log_level: silent`, `agents:`, then the lines `agentLines` gives for the started seller (its
 * agents, each line as YAML text, indented under `agents:`). Shared by the load-shedding suite
 * (test/integration/load-shed.test.ts) and the brotli-window regressions (trial 15, H2).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawHandler, type RawSeller } from '../support/raw-seller.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { useSellerAndGateway, type SellerAndGateway } from './stack.js';

export function useRawSellerAndGateway(answer: RawHandler, agentLines: (seller: RawSeller) => readonly string[]): SellerAndGateway<RawSeller, RunningGateway> {
  return useSellerAndGateway(
    () => startRawSeller(answer),
    (seller) => startGateway(['log_level: silent', 'agents:', ...agentLines(seller), ''].join('\n')),
  );
}

/**
 * Waits, 5 ms at a time (1,000 times at most: about 5 s), until `ok()` is true; fails with
 * "timed out waiting until <what>" (then ` (<detail()>)` when `detail` is given) if it never is.
 */
export async function until(what: string, ok: () => boolean, detail?: () => string): Promise<void> {
  for (let i = 0; i < 1_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), `timed out waiting until ${what}${detail ? ` (${detail()})` : ''}`);
}

/**
 * The JSON-RPC ids of the `tools/call`s that reached `seller` (its POSTs, in the order they came;
 * other methods and other JSON-RPC messages aside). Shared by the held/pipelined cancellation
 * regressions (cancelled-while-held-still-sent, cancel-refused-by-seller-still-drops-request,
 * overlapping-cancels-hold-request-past-deadline, pipelined-request-peeked-twice).
 */
export function toolCallIdsSent(seller: RawSeller): unknown[] {
  return seller.requests
    .filter((r) => r.method === 'POST')
    .map((r) => JSON.parse(r.body.toString('utf8')) as { id?: unknown; method?: string })
    .filter((m) => m.method === 'tools/call')
    .map((m) => m.id);
}

/**
 * A raw seller's answer for the held/pipelined regressions: anything but a `tools/call` 202 with
 * no body; a `tools/call` whose id `hold` picks handed unanswered to `onHold` (the test releases
 * it); any other `tools/call` 200 `application/json`, a result of one text content `text(id)`
 * (`done <id>` unless given).
 */
export function answerToolCallsHolding(hold: (id: number) => boolean, onHold: (res: ServerResponse) => void, text: (id: number) => string = (id) => `done ${id}`): RawHandler {
  return (req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string };
    if (msg.method !== 'tools/call') {
      res.writeHead(202).end();
      return;
    }
    if (hold(msg.id!)) {
      onHold(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(msg.id!, { content: [{ type: 'text', text: text(msg.id!) }] }));
  };
}
