/**
 * Regression (hostile trial 35, leftover 2, real Chromium against the gateway): a POST with an
 * `Origin` and `Content-Type: application/json garbage` (no media type: the subtype holds a
 * space) was refused 403 `origin_not_allowed` saying the POST "must be labelled Content-Type:
 * application/json", while it was labelled so, unparseably. Fastify refuses such a value before
 * any route (FST_ERR_CTP_INVALID_MEDIA_TYPE); the gateway then serves the request as one
 * without Content-Type (request/unreadable-content-type.ts), and the head refusal
 * (request/head-refusal.ts) found no Content-Type at all. Now the removed value is kept on the
 * request, and the refusal says the Content-Type could not be parsed, quoting it (first 64
 * characters). Still refused: what a page may send without a preflight is not told apart from
 * a value no parser reads.
 *
 * Input: a gateway (agent `acme` before a raw seller), POSTs of a `tools/call` with
 * `Origin: http://127.0.0.1:9101` (a loopback origin: served when its POST is labelled JSON),
 * no Sec-Fetch-*, and the Content-Type values below.
 * Expected: 403 with exactly the JSON-RPC error below for id null, the seller not contacted;
 * controls (`text/plain`, none) keep the "must be labelled" message.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { sendCallOrStream } from '../helpers/call-or-stream.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const PAGE = 'http://127.0.0.1:9101';
const SERVED = 'the gateway serves buyer agents, not browsers (allowed_origins lists the browser origins it serves besides localhost).';

const refusedBody = (message: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `${message}: ${SERVED}`, data: { reason: 'origin_not_allowed' } } });
const unparsed = (value: string): string =>
  `A POST with an Origin ("${PAGE}") has a Content-Type that could not be parsed ("${value}"): it must be labelled Content-Type: application/json; a page's request without CORS is not allowed`;
const notJson = `A POST with an Origin ("${PAGE}") must be labelled Content-Type: application/json: a page's request without CORS is not allowed`;

describe('a POST with an Origin and an unparseable Content-Type is refused saying so (was: "must be labelled application/json")', () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}')),
    (s) => startObservedGateway(agentsYaml({ acme: s.url })),
  );

  const cases: Array<[label: string, headers: Record<string, string | undefined>, message: string]> = [
    ['application/json garbage (the trial)', { 'content-type': 'application/json garbage' }, unparsed('application/json garbage')],
    ['application/json garbage, with Expect: 100-continue', { 'content-type': 'application/json garbage', expect: '100-continue' }, unparsed('application/json garbage')],
    ['json (no subtype)', { 'content-type': 'json' }, unparsed('json')],
    ['json, with Expect: 100-continue (refused from the head, before Fastify reads the label)', { 'content-type': 'json', expect: '100-continue' }, unparsed('json')],
    ['a list, application/json, text/plain', { 'content-type': 'application/json, text/plain' }, unparsed('application/json, text/plain')],
    ['only a parameter, ;', { 'content-type': ';' }, unparsed(';')],
    [`a long one, quoted to 64 characters`, { 'content-type': `application/json ${'x'.repeat(80)}` }, unparsed(`application/json ${'x'.repeat(47)}…`)],
    ['control: text/plain keeps "must be labelled"', { 'content-type': 'text/plain' }, notJson],
    ['control: no Content-Type keeps "must be labelled"', { 'content-type': undefined }, notJson],
  ];
  for (const [label, headers, message] of cases) {
    test(`${label}: 403 origin_not_allowed, the exact message, the seller not contacted`, OPTIONS, async () => {
      const before = stack.seller.requests.length;
      const url = stack.gateway.agentUrl('acme');
      const res = await sendCallOrStream('POST', url, { host: new URL(url).host, origin: PAGE, ...headers });
      assert.deepEqual(res, { status: 403, text: refusedBody(message) });
      assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
    });
  }
});
