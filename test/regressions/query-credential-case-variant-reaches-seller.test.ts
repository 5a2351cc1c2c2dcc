/**
 * Regression: a host query parameter naming the agent URL's credential in another spelling
 * reached the seller beside it.
 *
 * Reported failure (a hostile new user's trial 11, F3): with `url: http://seller/mcp?api_key=${K}`,
 * a host POST to `/agents/s/mcp?api_key=host1&API_KEY=host2&api.key=host3&Api_Key=host4`
 * reached the seller as `/mcp?api_key=<K>&API_KEY=host2&api.key=host3&Api_Key=host4`: only
 * the exact spelling was dropped (src/routing/query.ts). A seller on ASP.NET reads query names
 * case-insensitively (`Request.QueryString["api_key"]` is `<K>,host2,host4`), and PHP reads
 * `api.key`, `api key` and `api[key` as `api_key` and `api_key[]` as an array under it (the
 * last one wins: `$_GET['api_key']` is host-chosen). Now a host parameter is dropped when its
 * name reads as one of the agent URL's under those rules (query.ts sellerReadName).
 *
 * Input: a real seller on 127.0.0.1 recording each request target; a gateway with agents
 * `keyed` (`?api_key=s3cret`), `dotted` (`?Api.Key=s3cret`: the configured name itself is
 * mangled) and `plain` (no query); host POSTs with the queries below.
 * Expectation: the exact target the seller received.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mergeQuery, sellerReadName } from '../../src/routing/query.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };

describe('sellerReadName: the name a case-insensitive or PHP seller reads', () => {
  for (const [name, read] of [
    ['api_key', 'api_key'],
    ['API_KEY', 'api_key'],
    ['Api_Key', 'api_key'],
    ['api.key', 'api_key'],
    ['api key', 'api_key'],
    ['  api_key', 'api_key'],
    ['api[key', 'api_key'],
    ['api[key.x y[z', 'api_key_x_y_z'],
    ['api_key[]', 'api_key'],
    ['api_key[x]', 'api_key'],
    ['API.KEY[0][1]', 'api_key'],
    ['api[key]', 'api'],
    ['Ké', 'ké'],
  ] as const) {
    test(`${JSON.stringify(name)} -> ${JSON.stringify(read)}`, () => assert.equal(sellerReadName(name), read));
  }
});

describe('mergeQuery drops host parameters read as a configured name', () => {
  for (const [agent, host, expected] of [
    ['?api_key=s3cret', '/agents/a/mcp?API_KEY=h&api.key=h&api%20key=h&api+key=h&api[key=h&api_key[]=h&trace=1', 'api_key=s3cret&trace=1'],
    ['?api_key=s3cret', '/agents/a/mcp?api%5Bkey%5D=h', 'api_key=s3cret&api%5Bkey%5D=h'],
    ['?Api.Key=s3cret', '/agents/a/mcp?api_key=h&API%2EKEY=h&apikey=h', 'Api.Key=s3cret&apikey=h'],
    ['?api_key=s3cret', '/agents/a/mcp', 'api_key=s3cret'],
  ] as const) {
    test(`agent ${agent}, host ${host} -> ${expected}`, () => assert.equal(mergeQuery(agent, host), expected));
  }
});

describe('through the gateway: the seller gets the configured credential alone', () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}')),
    (seller) =>
      startObservedGateway(agentsYaml({ keyed: `"${seller.url}?api_key=s3cret"`, dotted: `"${seller.url}?Api.Key=s3cret"`, plain: seller.url })),
  );

  for (const [agent, hostQuery, expected] of [
    // The trial's request.
    ['keyed', '?api_key=host1&API_KEY=host2&api.key=host3&Api_Key=host4', '/mcp?api_key=s3cret'],
    ['keyed', '?api%20key=h&api+key=h&%20api_key=h&api[key=h&api_key[]=h&API_KEY[x]=h&trace=on', '/mcp?api_key=s3cret&trace=on'],
    // PHP reads `api[key]` as key `key` of an array `api`: no credential, forwarded.
    ['keyed', '?api[key]=h&apikey=h', '/mcp?api_key=s3cret&api%5Bkey%5D=h&apikey=h'],
    ['dotted', '?api_key=h&API.KEY=h&trace=on', '/mcp?Api.Key=s3cret&trace=on'],
    ['keyed', '', '/mcp?api_key=s3cret'],
    // No query in the agent's url: the host's goes as written, whatever its names.
    ['plain', '?API_KEY=h&api.key=h', '/mcp?API_KEY=h&api.key=h'],
  ] as const) {
    test(`${agent} agent, host query ${JSON.stringify(hostQuery)}: the seller gets ${expected}`, OPTIONS, async () => {
      const seen = stack.seller.requests.length;
      const res = await withTimeout(rawPost(`${stack.gateway.agentUrl(agent)}${hostQuery}`, toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-11-25' }));
      assert.equal(res.status, 200);
      assert.deepEqual(
        stack.seller.requests.slice(seen).map((r) => r.url),
        [expected],
      );
    });
  }
});
