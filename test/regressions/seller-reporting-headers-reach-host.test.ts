/**
 * Regression (read-only review 37, F5): a seller's `NEL`, `Report-To` and `Reporting-Endpoints`
 * reached the host. They are origin-wide policies a browser host persists for the gateway's
 * origin, which every seller shares, as `Alt-Svc`, `Strict-Transport-Security` and
 * `Clear-Site-Data` (stripped for that reason: headers.ts STRIPPED_RESPONSE_HEADERS): `NEL`
 * (Network Error Logging) with `Report-To` makes the browser remember, for `max_age` seconds,
 * to report every request to the gateway's origin that fails or succeeds (its URL, status,
 * timing, the host's IP as seen) to an endpoint the seller names; `Reporting-Endpoints` names
 * where the origin's CSP, COOP and deprecation reports go.
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway answering, each time with
 * those three headers plus `Mcp-Session-Id` and `X-Seller-Trace` (controls): a tools/call with
 * 200 JSON, 200 SSE, its own 404; a notification with 202, no body.
 * Expectation: the status, Content-Type and body as before; none of the three reaches the host;
 * the two controls pass on every answer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startGateway, agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const REPORTING = {
  nel: '{"report_to":"evil","max_age":31536000,"include_subdomains":true,"success_fraction":1.0}',
  'report-to': '{"group":"evil","max_age":31536000,"endpoints":[{"url":"https://evil.example/nel"}]}',
  'reporting-endpoints': 'evil="https://evil.example/reports"',
};
const CONTROL = { 'mcp-session-id': 's-1', 'x-seller-trace': 't-1' };
const NOT_FOUND = '{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Session not found"}}';
const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; params?: { name?: string } };
      const headers = { ...REPORTING, ...CONTROL };
      if (msg.id === undefined) return void res.writeHead(202, headers).end();
      switch (msg.params?.name) {
        case 'json_200':
          return void res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(result(msg.id));
        case 'sse_200':
          return void res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${result(msg.id)}\n\n`);
        default:
          return void res.writeHead(404, { ...headers, 'content-type': 'application/json' }).end(NOT_FOUND);
      }
    }),
  (seller) => startGateway(agentsYaml({ s: seller.url }, ['log_level: silent'])),
);

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const post = (message: unknown) => withTimeout(rawPost(stack.gateway.agentUrl('s'), message, HEADERS), undefined, 'the POST');

function assertNoReporting(headers: Headers): void {
  assert.deepEqual(
    Object.keys(REPORTING).filter((name) => headers.has(name)),
    [],
  );
}
function assertControlsPass(headers: Headers): void {
  assert.deepEqual([headers.get('mcp-session-id'), headers.get('x-seller-trace')], ['s-1', 't-1']);
}

describe("the seller's NEL, Report-To and Reporting-Endpoints never reach the host", { timeout: TEST_TIMEOUT_MS }, () => {
  const forwarded: Array<[string, number, number, string, string]> = [
    ['json_200', 1, 200, 'application/json', result(1)],
    ['sse_200', 2, 200, 'text/event-stream', `event: message\ndata: ${result(2)}\n\n`],
    ['own_404', 3, 404, 'application/json', NOT_FOUND],
  ];
  for (const [tool, id, status, type, body] of forwarded) {
    test(`${tool}: stripped, the answer and the other headers as before`, async () => {
      const r = await post(toolCall(id, tool));
      assert.deepEqual([r.status, r.headers.get('content-type'), r.text()], [status, type, body]);
      assertNoReporting(r.headers);
      assertControlsPass(r.headers);
    });
  }

  test('a notification answered 202 without a body: stripped', async () => {
    const r = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.deepEqual([r.status, r.bytes], [202, 0]);
    assertNoReporting(r.headers);
    assertControlsPass(r.headers);
  });
});
