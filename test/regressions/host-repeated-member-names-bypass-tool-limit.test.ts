/**
 * Regression (a hostile new-user trial 11, F1, Low): a host request that repeats a member the
 * gateway acts on was forwarded as written while the gateway read the last copy
 * (`JSON.parse`). A seller whose parser reads another copy (the first: gjson, simdjson's
 * `find_field`, fastjson; or Go's encoding/json, which matches `Name` to `name`) ran a
 * different tool than the one the gateway limited, normalized and logged: with
 * `get_report: { max_response_bytes: 1000 }`, `"params":{"name":"get_report","name":"ping_tool"}`,
 * `"method":"tools/call","method":"ping"` and `{"name":"ping_tool","Name":"get_report"}` each
 * got 5,073 bytes of get_report to the host, logged as `ping_tool` or `ping`.
 *
 * Input: a raw seller on 127.0.0.1 that reads the FIRST `name` of `params` (and answers
 * get_report with 5,000 bytes of text, any other tool with `small`) behind the real gateway,
 * agent `s` with `tools: { get_report: { max_response_bytes: 1000 } }`; real POSTs.
 * Expected: a request writing `jsonrpc`, `id`, `method`, `params`, `result` or `error`, or a
 * `tools/call`'s `params.name`, twice (as written, escaped, or in another ASCII case: Go's
 * case-insensitive match) is refused before it is forwarded: HTTP 400, the JSON-RPC error
 * -32600 `invalid_request` naming the member and its writings, for the request's id (null when
 * the id is the member written twice, or for a batch, whose element is named); one `refused`
 * line; the seller never contacted. Over 1 KiB (the peek's scan reading) the same.
 * Controls: a request repeating names only inside `arguments` (they belong to the tool) and a
 * normal request are forwarded as written and answered with the seller's bytes; a plain
 * get_report call still gets the tool's limit.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { assertRefusedUnsent, postForwardedAsWritten } from '../helpers/refused-unsent.js';

/** The seller's answer for request `id` calling `tool` (as the seller read it). */
function sellerAnswer(id: unknown, tool: string | undefined): string {
  const text = tool === 'get_report' ? 'R'.repeat(5000) : 'small';
  return JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
}

/** `params.name` as a first-wins reader reads it: the first `"name"` after `"params"`. */
function firstName(body: string): string | undefined {
  const m = /"name"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(body.slice(body.indexOf('"params"')));
  return m === null ? undefined : (JSON.parse(`"${m[1]!}"`) as string);
}

/** The refusal's bytes: the error for the id written `idText`, its message as JSON string content. */
function refusal(idText: string, message: string): string {
  return `{"jsonrpc":"2.0","id":${idText},"error":{"code":-32600,"message":${JSON.stringify(message)},"data":{"reason":"invalid_request"}}}`;
}

const PAD = 'p'.repeat(1500);

const REFUSED: ReadonlyArray<readonly [label: string, body: string, expected: string]> = [
  [
    'params.name twice (first get_report, last ping_tool)',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_report","name":"ping_tool","arguments":{}}}',
    refusal('2', 'Invalid Request: the member "name" of "params" is written twice ("name", "name"); send it once.'),
  ],
  [
    'method twice (tools/call, then ping)',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"ping","params":{"name":"get_report","arguments":{}}}',
    refusal('3', 'Invalid Request: the member "method" is written twice ("method", "method"); send it once.'),
  ],
  [
    'name and Name (Go matches names case-insensitively)',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ping_tool","Name":"get_report","arguments":{}}}',
    refusal('4', 'Invalid Request: the member "name" of "params" is written twice ("name", "Name"); send it once.'),
  ],
  [
    'a lone Name (the gateway reads no tool name, a Go seller reads get_report)',
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"Name":"get_report","arguments":{}}}',
    refusal('5', 'Invalid Request: the member "name" of "params" is written "Name" (a case-insensitive reader takes it for "name"); send it as "name".'),
  ],
  [
    'name written plainly and escaped',
    '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_report","\\u006eame":"ping_tool","arguments":{}}}',
    refusal('6', 'Invalid Request: the member "name" of "params" is written twice ("name", "\\u006eame"); send it once.'),
  ],
  [
    'id twice: refused for id null',
    '{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call","params":{"name":"get_report","arguments":{}}}',
    refusal('null', 'Invalid Request: the member "id" is written twice ("id", "id"); send it once.'),
  ],
  [
    'over 1 KiB (the scan reading): name and NAME',
    `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"pad":"${PAD}"},"name":"get_report","NAME":"ping_tool"}}`,
    refusal('9', 'Invalid Request: the member "name" of "params" is written twice ("name", "NAME"); send it once.'),
  ],
  [
    'a batch (MCP 2025-03-26) whose second element writes name twice',
    '[{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ping_tool"}},{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"get_report","name":"ping_tool"}}]',
    refusal('null', 'Invalid Request: batch element 1 is not a JSON-RPC message (the member "name" of "params" is written twice ("name", "name"); send it once).'),
  ],
];

describe('host-repeated-member-names-bypass-tool-limit', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const text = req.body.toString('utf8');
        const m = JSON.parse(text) as { id?: unknown };
        res.writeHead(200, { 'content-type': 'application/json' }).end(sellerAnswer(m.id, firstName(text)));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, tools: '{ get_report: { max_response_bytes: 1000 } }' } })),
  );

  for (const [label, body, expected] of REFUSED) {
    test(`${label}: 400 invalid_request, the seller not contacted`, () => assertRefusedUnsent(stack, 's', body, expected));
  }

  const forwarded = (body: string): Promise<{ status: number; text: string }> => postForwardedAsWritten(stack, 's', body);

  test('control: names repeated only inside arguments are forwarded as written', async () => {
    const body = '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"ping_tool","arguments":{"name":"a","name":"b","Name":"c","id":1,"id":2,"method":"m"}}}';
    assert.deepEqual(await forwarded(body), { status: 200, text: sellerAnswer(12, 'ping_tool') });
  });

  test('control: a normal request is forwarded and answered with the seller\'s bytes', async () => {
    const body = '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"ping_tool","arguments":{}}}';
    assert.deepEqual(await forwarded(body), { status: 200, text: sellerAnswer(13, 'ping_tool') });
  });

  test('control: a plain get_report call gets the tool\'s 1000-byte limit', async () => {
    const r = await forwarded('{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"get_report","arguments":{}}}');
    assert.equal(r.status, 200);
    const m = JSON.parse(r.text) as { id: unknown; result: { isError: boolean; structuredContent: { adcp_error: { code: string; details: unknown } } } };
    const error = m.result.structuredContent.adcp_error;
    assert.deepEqual(
      { id: m.id, isError: m.result.isError, code: error.code, details: error.details },
      { id: 14, isError: true, code: 'RESPONSE_TOO_LARGE', details: { reason: 'raw_bytes', limit_bytes: 1000, observed_bytes: 5074 } },
    );
  });
});
