/**
 * Reported (a new user's hostile trial, F10): a seller's `retry:  500` (two spaces) reached
 * the host as a valid `retry: 500`. WHATWG HTML §9.2.6 drops one space after the colon; the
 * value left, ` 500`, is not all ASCII digits, so the field is ignored (eventsource-parser,
 * which the SSE stage parses with, ignores it: its `onRetry` is not called).
 * Checked (2026-12-03): the gateway already drops it. The trial's script
 * (/tmp/trial8/repro/t_retry.mjs) printed `"retry: " + v` but sent `"retry:" + v` for a value
 * `v` starting with a space, so its `retry:  500` case sent `retry: 500` (one space, valid).
 * This test pins the behaviour on the wire.
 *
 * Input: a raw seller answers each tools/call over SSE with a `retry:` line on its own block,
 * then the result (`event: message`, one `data: ` line), in one write, or the line cut after
 * its first space (two writes).
 * Expectation, exact bytes: for `retry:  500`, `retry:   500`, `retry: \t700`, `retry: 500 `,
 * `retry: +500`, `retry:` alone and `retry: ` the host gets the result event alone; outcome ok.
 * Controls: `retry: 700` and `retry:700` go out as `retry: 700` on their own block.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-11-25' };

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);
const gw = (): ObservedGateway => stack.gateway;

const resultFrame = (id: number): string => `event: message\ndata: ${toolResponse(id, { content: [{ type: 'text', text: 'done' }] })}\n\n`;

/** POSTs tools/call `rpcId`, answered with `body` (cut in two writes after its first space when `cut`): the host's body. */
async function call(rpcId: number, body: string, cut = false): Promise<string> {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const at = cut ? body.indexOf(' ') + 1 : 0;
    if (at > 0) res.write(body.slice(0, at));
    res.end(body.slice(at));
  };
  const r = await withTimeout(rawPost(gw().agentUrl('s'), toolCall(rpcId, 'get_products'), HEADERS), undefined, 'the POST');
  assert.equal(r.status, 200);
  const line = await gw().exchangeLine('s', rpcId);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  return r.text();
}

describe('a retry: field whose value is not all digits after one space is ignored', { timeout: TEST_TIMEOUT_MS }, () => {
  const ignored = ['retry:  500', 'retry:   500', 'retry: \t700', 'retry: 500 ', 'retry: +500', 'retry:', 'retry: '];
  let rpcId = 200;
  for (const line of ignored) {
    const id = rpcId++;
    const cutId = rpcId++;
    test(`${JSON.stringify(line)} is dropped`, async () => {
      assert.equal(await call(id, `${line}\n\n` + resultFrame(id)), resultFrame(id));
      assert.equal(await call(cutId, `${line}\n\n` + resultFrame(cutId), true), resultFrame(cutId));
    });
  }
  for (const line of ['retry: 700', 'retry:700']) {
    const id = rpcId++;
    test(`control: ${JSON.stringify(line)} goes out as retry: 700`, async () => {
      assert.equal(await call(id, `${line}\n\n` + resultFrame(id)), 'retry: 700\n\n' + resultFrame(id));
    });
  }
});
