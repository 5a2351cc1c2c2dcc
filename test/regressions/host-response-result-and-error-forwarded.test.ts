/**
 * Regression (a new user's trial, Low: "JSON-RPC validation is loose"): a JSON-RPC response
 * sent by the host (the answer to a server's request, such as `elicitation/create`) carrying
 * both `result` and `error`, or an `error` that is no error object (`"error":"x"`), reached the
 * seller, alone or inside a batch. JSON-RPC 2.0 §5: "Either the result member or error member
 * MUST be included, but both members MUST NOT be included"; §5.1: the error member is an
 * object whose `code` "MUST be an integer" and whose `message` is a String.
 *
 * Input: host responses (id 7) with both members; with `error` a string, an array, an object
 * with a fractional, a string or no `code`, or no string `message`; one over 1 KiB (the peek's
 * scan reading); and batches (MCP 2025-03-26: no MCP-Protocol-Version) holding such an
 * element, one of them over 1 KiB.
 * Expected: HTTP 400 and the JSON-RPC error body byte for byte: -32600 with id null (the id of
 * a host's response names a request of the server's, not one the host awaits; MCP Streamable
 * HTTP: a refused response's error "has no id"), the message saying what is wrong (for a batch,
 * naming the element); one `refused` line (`invalid_request`); the seller never contacted.
 * Control: a response with a result, one with a well-formed error, and a batch of both, are
 * forwarded as written (the seller's 202 reaches the host).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { assertRefusedUnsent } from '../helpers/refused-unsent.js';

const RESULT = '{"jsonrpc":"2.0","id":"elicit-1","result":{"action":"accept","content":{"ok":true}}}';
const BOTH_MESSAGE = 'a response must carry \\"result\\" or \\"error\\", not both';
const ERROR_MESSAGE = '\\"error\\" must be an object with an integer \\"code\\" and a string \\"message\\"';
const PAD = 'm'.repeat(1500);

function refusalBody(message: string): string {
  return `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"${message}","data":{"reason":"invalid_request"}}}`;
}

const single = (problem: string): string => refusalBody(`Invalid Request: ${problem}.`);
const element = (index: number, problem: string): string => refusalBody(`Invalid Request: batch element ${index} is not a JSON-RPC message (${problem}).`);

const CASES: ReadonlyArray<readonly [label: string, body: string, expected: string]> = [
  ['both result and error', '{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":-32000,"message":"no"}}', single(BOTH_MESSAGE)],
  ['both, error first, result null', '{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":7,"result":null}', single(BOTH_MESSAGE)],
  ['"error":"x"', '{"jsonrpc":"2.0","id":7,"error":"x"}', single(ERROR_MESSAGE)],
  ['"error":[]', '{"jsonrpc":"2.0","id":7,"error":[]}', single(ERROR_MESSAGE)],
  ['a fractional code', '{"jsonrpc":"2.0","id":7,"error":{"code":-32000.5,"message":"m"}}', single(ERROR_MESSAGE)],
  ['a string code', '{"jsonrpc":"2.0","id":7,"error":{"code":"-32000","message":"m"}}', single(ERROR_MESSAGE)],
  ['no code', '{"jsonrpc":"2.0","id":7,"error":{"message":"m"}}', single(ERROR_MESSAGE)],
  ['a number message', '{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":5}}', single(ERROR_MESSAGE)],
  ['over 1 KiB (the scan reading): no code', `{"jsonrpc":"2.0","id":7,"error":{"message":"${PAD}"}}`, single(ERROR_MESSAGE)],
  ['a batch: both members in element 1', `[${RESULT},{"jsonrpc":"2.0","id":8,"result":{},"error":{"code":1,"message":"m"}}]`, element(1, BOTH_MESSAGE)],
  ['a batch: "error":"x" in element 2', `[${RESULT},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":9,"error":"x"}]`, element(2, ERROR_MESSAGE)],
  ['a batch over 1 KiB: a large element with a string code', `[{"jsonrpc":"2.0","id":8,"error":{"code":"1","message":"${PAD}"}},${RESULT}]`, element(0, ERROR_MESSAGE)],
];

describe('host-response-result-and-error-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    // Responses and notifications only: accepted, 202 with no body (MCP Streamable HTTP).
    () => startRawSeller((_req, res) => void res.writeHead(202).end()),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  for (const [label, body, expected] of CASES) {
    test(`${label}: 400 invalid_request, id null, the seller not contacted`, () => assertRefusedUnsent(stack, 's', body, expected));
  }

  test('control: a result, a well-formed error and a batch of both are forwarded as written', async () => {
    const error = '{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"declined","data":{"why":"user"}}}';
    for (const body of [RESULT, error, `[${RESULT},${error}]`]) {
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), body);
      assert.equal(r.status, 202, body);
      assert.equal(r.text(), '');
      assert.equal(stack.seller.requests.length, seen + 1);
      assert.equal(stack.seller.requests.at(-1)!.body.toString('utf8'), body);
    }
  });
});
