/**
 * Regression (a hostile trial 54, Medium): a host request whose message object or `params`
 * object has very many members stalled every agent. The peek's structure scan records the
 * first 64 members of an object and left one with more to `JSON.parse` of the whole body, and
 * V8 parses an object of many distinct keys slowly:
 * `{"jsonrpc":"2.0","id":1,"method":"ping","k0":0,…,"k99989":0,"ID":2}` (1.09 MB, inside the
 * default 4 MiB `max_request_bytes` and 100,000-node bound) was refused `invalid_request`
 * correctly but held the event loop 200-506 ms (the same inside a `tools/call`'s `params`;
 * 4-19 ms inside `arguments`, which the scan skips), and two connections sending it back to
 * back took another agent's p99 from 200 ms to 2,704 ms. Now a message object, the `params`
 * of a `tools/call` or `tasks/result`, a response's `error` and a batch element may have at
 * most 1000 members (request/message-members.ts MAX_MESSAGE_MEMBERS); the scan counts them
 * and an object over the table is walked for the members the peek reads, so no body reaches
 * `JSON.parse` for its width.
 *
 * Input: a gateway (one agent `s`, default limits) in front of a raw seller answering
 * `{"result":{}}`; `JSON.parse` wrapped for the test, counting calls on a text of 512 KiB or
 * more. The trial's bodies: 99,990 keys `k0`…`k99989` in the message object (with a trailing
 * `"ID":2`, and without), in a `tools/call`'s `params` (with a trailing `"nAme":"x"`), in a
 * batch's only element.
 * Expected: each refused 400 with the exact JSON-RPC error (-32600, `Invalid Request: the
 * message has 99994 members, more than the 1000 the gateway reads.`, for id 1, or id null
 * where `id` is written twice, or for a batch), one `refused` line, the seller never
 * contacted, and no `JSON.parse` of the body. Control: a message of exactly 1000 members,
 * and 99,990 keys inside `arguments`, forwarded as written. No timing asserted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countBigParses } from '../helpers/big-parses.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { assertRefusedUnsent } from '../helpers/refused-unsent.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';

const KEYS = Array.from({ length: 99_990 }, (_, i) => `"k${i}":0`).join(',');

/** The refusal's bytes for an id written `idText` (JSON) and its message (JSON-escaped). */
function refusalBody(idText: string, message: string): string {
  return `{"jsonrpc":"2.0","id":${idText},"error":{"code":-32600,"message":"${message}","data":{"reason":"invalid_request"}}}`;
}

const CASES: ReadonlyArray<readonly [label: string, body: string, expected: string]> = [
  [
    'the message object, "ID" written after its keys (the trial body)',
    `{"jsonrpc":"2.0","id":1,"method":"ping",${KEYS},"ID":2}`,
    refusalBody('null', 'Invalid Request: the message has 99994 members, more than the 1000 the gateway reads.'),
  ],
  ['the message object', `{"jsonrpc":"2.0","id":1,"method":"ping",${KEYS}}`, refusalBody('1', 'Invalid Request: the message has 99993 members, more than the 1000 the gateway reads.')],
  [
    "a tools/call's params",
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",${KEYS},"nAme":"x"}}`,
    refusalBody('1', 'Invalid Request: \\"params\\" has 99992 members, more than the 1000 the gateway reads.'),
  ],
  [
    'a batch element',
    `[{"jsonrpc":"2.0","id":1,"method":"ping",${KEYS}}]`,
    refusalBody('null', 'Invalid Request: batch element 0 is not a JSON-RPC message (the message has 99993 members, more than the 1000 the gateway reads).'),
  ],
];

/** A text of this many characters or more is the body: `JSON.parse` of one is counted. */
const BIG = 512 * 1024;

describe('wide-request-object-stalls-event-loop', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const m = JSON.parse(req.body.toString('utf8')) as { id?: unknown };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );
  const bigParses = countBigParses(BIG);

  for (const [label, body, expected] of CASES) {
    test(`${label}: 400 invalid_request for its width, the seller not contacted, no JSON.parse of the body`, async () => {
      bigParses.reset();
      await assertRefusedUnsent(stack, 's', body, expected);
      assert.equal(bigParses.count, 0, 'JSON.parse of the body');
    });
  }

  // Re-read of the fix (Medium): one byte less, the body is no JSON; the scan said so, and the
  // peek fell through to JSON.parse of the whole body (140-270 ms, 761 ms through the gateway).
  const PARSE_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the request body is not valid JSON.","data":{"reason":"parse_error"}}}';
  for (const [label, body] of [
    ['its closing brace missing', `{"jsonrpc":"2.0","id":1,"method":"ping",${KEYS}`],
    ['a trailing comma', `{"jsonrpc":"2.0","id":1,"method":"ping",${KEYS},}`],
  ] as const) {
    test(`the wide message object, ${label}: 400 parse_error, the seller not contacted, no JSON.parse of the body`, async () => {
      bigParses.reset();
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), body);
      assert.deepEqual([r.status, r.text()], [400, PARSE_ERROR]);
      assert.equal(stack.seller.requests.length, seen, 'the seller was contacted');
      assert.equal(bigParses.count, 0, 'JSON.parse of the body');
    });
  }

  test('the wide message object without its closing brace, to an unknown agent: 404 for id null, no JSON.parse of the body', async () => {
    bigParses.reset();
    const r = await rawPost(stack.gateway.agentUrl('nope'), `{"jsonrpc":"2.0","id":1,"method":"ping",${KEYS}`);
    assert.equal(r.status, 404);
    assert.equal((r.json() as { id: unknown }).id, null);
    assert.equal(bigParses.count, 0, 'JSON.parse of the body');
  });

  test('control: a message of 1000 members, and 99,990 keys inside arguments, are forwarded as written', async () => {
    const atBound = `{"jsonrpc":"2.0","id":3,"method":"ping",${KEYS.split(',').slice(0, 997).join(',')}}`;
    const inArguments = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{${KEYS}}}}`;
    for (const [body, answer] of [
      [atBound, '{"jsonrpc":"2.0","id":3,"result":{}}'],
      [inArguments, '{"jsonrpc":"2.0","id":4,"result":{}}'],
    ] as const) {
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), body);
      assert.equal(r.status, 200);
      assert.equal(r.text(), answer);
      assert.equal(stack.seller.requests.length, seen + 1);
      assert.ok(stack.seller.requests.at(-1)!.body.equals(Buffer.from(body)), 'forwarded as written');
    }
  });
});
