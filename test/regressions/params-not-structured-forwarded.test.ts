/**
 * Regression (a new user's trial, Low: "JSON-RPC validation is loose"): a request or a
 * notification whose `params` is a string or a number (`"params":"x"`, `"params":5`) reached
 * the seller, alone or inside a batch, although JSON-RPC 2.0 §4.2 says "If present,
 * parameters for the rpc call MUST be provided as a Structured value" (an object or an
 * array) and docs/errors.md says batch elements are checked by the rules for a single message.
 *
 * Input: single messages whose `params` is `"x"`, `5`, `true` or `null` (ids 5, "p-1",
 * 9007199254740993 written as the host wrote it, none for a notification; one body over
 * 1 KiB, read by the peek's scan), and batches (MCP 2025-03-26: no MCP-Protocol-Version) with
 * such an element, one of them over 1 KiB.
 * Expected: HTTP 400 and the JSON-RPC error body byte for byte: -32600, `Invalid Request:
 * "params" must be an object or an array.` with the request's id (null for a notification),
 * or for a batch id null and the element named; one `refused` line (`invalid_request`); the
 * seller never contacted. Control: `params` `[]` and `{}`, alone and in a batch, forwarded as
 * written.
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

const CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"CTV"}}}';
const PAD = 'n'.repeat(1500);
const MESSAGE = 'Invalid Request: \\"params\\" must be an object or an array.';

/** The refusal's bytes for an id written `idText` (JSON). */
function refusalBody(idText: string, message: string): string {
  return `{"jsonrpc":"2.0","id":${idText},"error":{"code":-32600,"message":"${message}","data":{"reason":"invalid_request"}}}`;
}

const CASES: ReadonlyArray<readonly [label: string, body: string, expected: string]> = [
  ['a string', '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}', refusalBody('5', MESSAGE)],
  ['a number', '{"jsonrpc":"2.0","id":"p-1","method":"tools/list","params":5}', refusalBody('"p-1"', MESSAGE)],
  ['true, a large id kept as written', '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":true}', refusalBody('9007199254740993', MESSAGE)],
  ['null', '{"jsonrpc":"2.0","id":6,"method":"ping","params":null}', refusalBody('6', MESSAGE)],
  ['a notification (no id)', '{"jsonrpc":"2.0","method":"notifications/initialized","params":5}', refusalBody('null', MESSAGE)],
  ['over 1 KiB (the scan reading)', `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"${PAD}"}`, refusalBody('7', MESSAGE)],
  [
    'a batch: a notification with params 5',
    `[${CALL},{"jsonrpc":"2.0","method":"notifications/progress","params":5}]`,
    refusalBody('null', 'Invalid Request: batch element 1 is not a JSON-RPC message (\\"params\\" must be an object or an array).'),
  ],
  [
    'a batch over 1 KiB: a large element with params "x"',
    `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"${PAD}"},${CALL}]`,
    refusalBody('null', 'Invalid Request: batch element 0 is not a JSON-RPC message (\\"params\\" must be an object or an array).'),
  ],
];

describe('params-not-structured-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const text = req.body.toString('utf8');
        if (text.startsWith('[')) {
          const batch = JSON.parse(text) as Array<{ id?: unknown; method?: string }>;
          const answers = batch.filter((m) => m.method !== undefined && m.id !== undefined).map((m) => ({ jsonrpc: '2.0', id: m.id, result: {} }));
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
          return;
        }
        const m = JSON.parse(text) as { id?: unknown };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  for (const [label, body, expected] of CASES) {
    test(`params ${label}: 400 invalid_request, the seller not contacted`, () => assertRefusedUnsent(stack, 's', body, expected));
  }

  test('control: params [] and {}, alone and in a batch, are forwarded as written', async () => {
    for (const [body, answer] of [
      ['{"jsonrpc":"2.0","id":8,"method":"ping","params":{}}', '{"jsonrpc":"2.0","id":8,"result":{}}'],
      ['{"jsonrpc":"2.0","id":9,"method":"ping","params":[]}', '{"jsonrpc":"2.0","id":9,"result":{}}'],
      [`[${CALL},{"jsonrpc":"2.0","id":3,"method":"ping","params":[]}]`, '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":3,"result":{}}]'],
    ] as const) {
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), body);
      assert.equal(r.status, 200, body);
      assert.equal(r.text(), answer);
      assert.equal(stack.seller.requests.length, seen + 1);
      assert.equal(stack.seller.requests.at(-1)!.body.toString('utf8'), body);
    }
  });
});
