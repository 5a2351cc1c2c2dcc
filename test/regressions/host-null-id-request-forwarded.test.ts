/**
 * Regression (a hostile new-user trial 14, L1): a host request with `"id": null`, alone or as
 * an element of a batch, was forwarded as a request: the seller answered `{"id":null,...}`,
 * which matches no call (docs/errors.md: an error for id `null` "answers no call"), and every
 * error the gateway mints for such a request looks exactly like its generic id-null refusals.
 * MCP (Basic, Requests: every revision) says a request's id "MUST NOT be null".
 *
 * Input: a raw seller on 127.0.0.1 (answers each request in the body with a result for its id,
 * a body holding none 202 with no body) behind the real gateway, agent `s`; real POSTs, a
 * batch as a 2025-03-26 host (no MCP-Protocol-Version header), the others as 2025-06-18.
 * Expected: a request (a `method` and an `id`) with id null is refused before it is forwarded:
 * HTTP 400, JSON-RPC -32600 `invalid_request`, id null, the message saying why; a batch
 * holding one is refused whole, as any batch with a bad element (request/peek.ts: id null,
 * `batch element <i> is not a JSON-RPC message (...)`); one `refused` line; the seller not
 * contacted. Over 1 KiB (the peek's scan reading) the same.
 * Controls, forwarded as written: a notification (no `id` member), a request with id 0, and a
 * host's error response with id null (JSON-RPC 2.0 §5: a response's id is null when the
 * request's could not be read; a response's id is not judged).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { assertRefusedUnsent, postForwardedAsWritten } from '../helpers/refused-unsent.js';

/** The seller's answer to request `id`. */
const sellerResult = (id: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'ok' }] } });

/** Why an id null is refused, as the refusal's message says it. */
const WHY = '"id" must not be null (MCP): an answer for id null matches no call; use a string or a number, or leave "id" out for a notification';

/** The refusal's bytes (id null), its message as JSON string content. */
const refusal = (message: string): string => `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":${JSON.stringify(message)},"data":{"reason":"invalid_request"}}}`;

const PAD = 'p'.repeat(1500);

const REFUSED: ReadonlyArray<readonly [label: string, body: string, expected: string]> = [
  ['a tools/call with id null', '{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"raw","arguments":{}}}', refusal(`Invalid Request: ${WHY}.`)],
  ['a ping with id null written with spaces', '{ "jsonrpc" : "2.0" , "id" : null , "method" : "ping" }', refusal(`Invalid Request: ${WHY}.`)],
  ['over 1 KiB (the scan reading)', `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"raw","arguments":{"pad":"${PAD}"}}}`, refusal(`Invalid Request: ${WHY}.`)],
  ['a batch of one ping with id null', '[{"jsonrpc":"2.0","id":null,"method":"ping"}]', refusal(`Invalid Request: batch element 0 is not a JSON-RPC message (${WHY}).`)],
  [
    'a batch whose second element has id null',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":null,"method":"tools/list"}]',
    refusal(`Invalid Request: batch element 1 is not a JSON-RPC message (${WHY}).`),
  ],
  [
    'a batch whose element over 1 KiB (scanned) has id null',
    `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"raw","arguments":{"pad":"${PAD}"}}}]`,
    refusal(`Invalid Request: batch element 1 is not a JSON-RPC message (${WHY}).`),
  ],
];

describe('host-null-id-request-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const msg = JSON.parse(req.body.toString('utf8')) as unknown;
        const requests = (Array.isArray(msg) ? msg : [msg]).filter((m): m is { id: unknown } => typeof m === 'object' && m !== null && 'method' in m && 'id' in m);
        if (requests.length === 0) return void res.writeHead(202).end();
        const answers = requests.map((m) => sellerResult(m.id));
        res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(msg) ? `[${answers.join(',')}]` : answers[0]);
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  for (const [label, body, expected] of REFUSED) {
    test(`${label}: 400 invalid_request for id null, the seller not contacted`, () => assertRefusedUnsent(stack, 's', body, expected));
  }

  const forwarded = (body: string): Promise<{ status: number; text: string }> => postForwardedAsWritten(stack, 's', body);

  test('control: a notification (no id member) is forwarded', async () => {
    assert.deepEqual(await forwarded('{"jsonrpc":"2.0","method":"notifications/initialized"}'), { status: 202, text: '' });
  });

  test('control: a request with id 0 is forwarded and answered', async () => {
    assert.deepEqual(await forwarded('{"jsonrpc":"2.0","id":0,"method":"ping"}'), { status: 200, text: sellerResult(0) });
  });

  test("control: a host's error response with id null is forwarded", async () => {
    assert.deepEqual(await forwarded('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'), { status: 202, text: '' });
  });
});
