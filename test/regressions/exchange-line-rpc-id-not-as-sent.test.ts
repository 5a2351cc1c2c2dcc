/**
 * Reported failure (a hostile trial 26, L2): the exchange line's `rpc_id` stated an id the
 * host never sent. A `tools/call` with `"id":12345678901234567891` was logged
 * `"rpc_id":12345678901234567000` (the double `JSON.parse` reads), and `-0`, `1E2`, `0.1e1`
 * were logged `0`, `100`, `1`, while the seller and the host got the exact bytes (the gateway
 * forwards the body as sent and compares the answer's id as written). README says `rpc_id` is
 * "the JSON-RPC id": an operator searching the log for the host's id found nothing, or found
 * another request's (`1E2` and `100` are two ids on the wire, one in the log).
 *
 * Now a numeric id that `JSON.stringify` writes otherwise than the host did (the peek keeps
 * its text: request/peek.ts RpcPeek.idText, mcp/id-text.ts) is logged as that text, a JSON
 * string (`"rpc_id":"12345678901234567891"`, `"-0"`, `"1E2"`); every other id as before: a
 * number that round-trips as a number, a string as the string.
 *
 * Input: raw host POSTs to the real gateway in front of a raw seller on 127.0.0.1 that answers
 * with the request's id bytes as written (the trial's rpc.mjs). Expectation: the host's answer
 * carries the id bytes as sent, and the exchange line's `rpc_id` is exactly the value above.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** The id as the host writes it, and the `rpc_id` the exchange line must carry. */
const CASES: readonly (readonly [string, unknown])[] = [
  ['12345678901234567891', '12345678901234567891'],
  ['-0', '-0'],
  ['1E2', '1E2'],
  ['0.1e1', '0.1e1'],
  ['1.0', '1.0'],
  ['-1e-400', '-1e-400'],
  // Controls: ids JSON.stringify writes as the host did, logged as before.
  ['7', 7],
  ['1.5', 1.5],
  ['9007199254740991', 9007199254740991],
  ['"1E2"', '1E2'],
];

const answer = (idText: string): string => `{"jsonrpc":"2.0","id":${idText},"result":{"content":[{"type":"text","text":"ok"}]}}`;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      // The id's bytes as the host wrote them (the gateway forwards the body as sent).
      const idText = /"id":([^,}]+)/.exec(req.body.toString('utf8'))![1]!;
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer(idText));
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

describe("the exchange line's rpc_id is the id the host sent", { timeout: TEST_TIMEOUT_MS }, () => {
  CASES.forEach(([idText, logged], i) => {
    test(`id ${idText} -> rpc_id ${JSON.stringify(logged)}`, async () => {
      const tool = `tool_${i}`;
      const body = `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"${tool}","arguments":{}}}`;
      const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), body, { 'mcp-protocol-version': '2025-06-18' }));
      assert.deepEqual([r.status, r.text()], [200, answer(idText)]);
      const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.tool === tool);
      assert.deepEqual([line.rpc_id, line.outcome], [logged, 'ok']);
    });
  });
});
