/**
 * Regression (a hostile new-user trial 23, L6, Low): to an agent with a tool whose own
 * `max_json_nodes` / `max_json_depth` bound its `tools/call` requests (request/request-json-bounds.ts),
 * a body that is no JSON (a `tools/call` cut in the middle of its params) and a `tools/call`
 * writing its `name` twice were refused "the request body is over max_json_nodes (20)" (or
 * max_json_depth), the agent's bound, though the body was within the bound of the tool it
 * names, and the same bytes sent to an agent at that tool's bounds with no tools of its own
 * got the usual refusals: the parse error for a body that is not JSON (400, -32700, id null,
 * docs/errors.md `parse_error`) and the repeated-name refusal for the `name`
 * (request/repeated-request-names.ts). The host was told to shrink a body that was broken.
 *
 * Input: a raw seller on 127.0.0.1 (answering anything with a short tool result) behind the
 * real gateway; agent `b` (`max_json_nodes: 20`, `max_json_depth: 5`; tools `big` 1000 values
 * and 50 levels, `tight` 8 values) and agent `loose` at `big`'s bounds with no tools; real
 * POSTs, under and over 1 KiB (the peek's parse and scan readings: request/peek.ts).
 * Expected: the cut calls of `big` (30 values, or 8 levels) get 400 -32700
 * `Parse error: the request body is not valid JSON.`, id null, from `b` as from `loose`; a
 * call writing `name` twice (`"name":"big","name":"tight"`, or `"Name"`) gets 400 -32600
 * naming the member, for its id, from `b` as from `loose`. Controls: a cut body over every
 * bound of `b` (1,200 values, over `big`'s 1000) and a complete call over its tool's bound
 * are still refused for the bound. The seller gets none of these.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

/** A JSON array of `n` values plus itself. */
const values = (n: number): string => `[${Array.from({ length: n }, () => '1').join(',')}]`;
/** Over 1 KiB with it: the peek's scan reading. */
const PAD = `,"note":"${'p'.repeat(1500)}"`;
const call = (id: number, name: string, args: string): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
/** `body` cut in the middle of its params: the last two `}` and the arguments' closing bytes gone. */
const cut = (body: string): string => body.slice(0, -4);

const PARSE_ERROR = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is not valid JSON.', data: { reason: 'parse_error' } } });
const invalid = (id: unknown, message: string): string => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message, data: { reason: 'invalid_request' } } });

describe('truncated-tools-call-reported-over-json-nodes', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}');
      }),
    (seller) =>
      startGateway(
        [
          'log_level: silent',
          'agents:',
          '  b:',
          `    url: ${seller.url}`,
          '    max_json_nodes: 20',
          '    max_json_depth: 5',
          '    tools:',
          '      big: { max_json_nodes: 1000, max_json_depth: 50 }',
          '      tight: { max_json_nodes: 8 }',
          '  loose:',
          `    url: ${seller.url}`,
          '    max_json_nodes: 1000',
          '    max_json_depth: 50',
          '',
        ].join('\n'),
      ),
  );

  async function post(agent: string, body: string): Promise<{ status: number; text: string; forwarded: boolean }> {
    const seen = stack.seller.requests.length;
    const r = await withTimeout(
      fetch(stack.gateway.agentUrl(agent), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body,
      }),
    );
    return { status: r.status, text: await withTimeout(r.text()), forwarded: stack.seller.requests.length > seen };
  }

  const CASES: ReadonlyArray<readonly [label: string, body: string, status: number, answer: string]> = [
    ['big cut in its params, 30 values, under 1 KiB', cut(call(1, 'big', `{"x":${values(22)}}`)), 400, PARSE_ERROR],
    ['big cut in its params, 30 values, over 1 KiB', cut(call(2, 'big', `{"x":${values(21)}${PAD}}`)), 400, PARSE_ERROR],
    ['big cut in its params, 8 levels, under 1 KiB', cut(call(3, 'big', '{"x":[[[[[1]]]]]}')), 400, PARSE_ERROR],
    ['big cut in its params, 8 levels, over 1 KiB', cut(call(4, 'big', `{"x":[[[[[1]]]]]${PAD}}`)), 400, PARSE_ERROR],
    [
      '"name" written twice (big, tight), 30 values, under 1 KiB',
      `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"big","name":"tight","arguments":{"x":${values(21)}}}}`,
      400,
      invalid(5, 'Invalid Request: the member "name" of "params" is written twice ("name", "name"); send it once.'),
    ],
    [
      '"name" written twice (big, tight), 30 values, over 1 KiB',
      `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"big","name":"tight","arguments":{"x":${values(20)}${PAD}}}}`,
      400,
      invalid(6, 'Invalid Request: the member "name" of "params" is written twice ("name", "name"); send it once.'),
    ],
    [
      '"name" and "Name" (big, tight), 8 levels, over 1 KiB',
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big","Name":"tight","arguments":{"x":[[[[[1]]]]]${PAD}}}}`,
      400,
      invalid(7, 'Invalid Request: the member "name" of "params" is written twice ("name", "Name"); send it once.'),
    ],
  ];
  for (const [label, body, status, answer] of CASES) {
    test(`${label}: the usual refusal from b, as from an agent at big's bounds with no tools`, async () => {
      assert.deepEqual(await post('b', body), { status, text: answer, forwarded: false });
      assert.deepEqual(await post('loose', body), { status, text: answer, forwarded: false }, 'the same bytes to agent loose');
    });
  }

  test('control: a cut body over every bound of b (1,200 values) is refused for the bound, id null', async () => {
    const body = cut(call(8, 'big', `{"x":${values(1200)}}`));
    assert.deepEqual(await post('b', body), { status: 400, text: invalid(null, 'Invalid Request: the request body is over max_json_nodes (20).'), forwarded: false });
  });

  test('control: a whole call over its tool\'s bound (tight, 9 values) is refused for that bound, for its id', async () => {
    assert.deepEqual(await post('b', call(9, 'tight', '{"x":[1]}')), { status: 400, text: invalid(9, 'Invalid Request: the request body is over max_json_nodes (8).'), forwarded: false });
    assert.deepEqual(await post('b', call(10, 'tight', `{"x":[1]${PAD}}`)), { status: 400, text: invalid(10, 'Invalid Request: the request body is over max_json_nodes (8).'), forwarded: false });
  });
});
