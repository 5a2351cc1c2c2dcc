/**
 * Regression (a hostile operator's trial 45, finding 3): a request refused `invalid_request`
 * on agent `a` (a bad `X-Max-Response-Bytes`, a tools/call whose params repeat `name`) was
 * counted only in `adcp_gateway_refusals_total{reason}`: nothing tied it to `a`; and the README
 * listed `refused` among the outcomes of `adcp_gateway_exchanges_total`, where a refusal never
 * showed.
 *
 * Now `adcp_gateway_refusals_total` has an `agent` label: the configured agent the request's
 * path names, `_unknown` for a path `/agents/<name>/mcp` whose name the config does not have
 * (a name no agent can take: agent names start with a letter or digit), `_none` for a request
 * on no agent's path; a refusal is counted there only, never in `adcp_gateway_exchanges_total`
 * (README, Metrics). Expected: the exact series after four refusals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';

const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };

let seller: RawSeller;
let gw: RunningGateway;

before(async () => {
  seller = await startRawSeller((_req, res) => void res.writeHead(500).end());
  gw = await startGateway(`log_level: silent\nagents:\n  a:\n    url: ${seller.url}\n  b:\n    url: ${seller.url}\n`);
});

after(async () => {
  await gw.close();
  await seller.close();
});

async function metricLines(prefix: string): Promise<string[]> {
  const text = await (await fetch(`${gw.baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .sort();
}

describe('adcp_gateway_refusals_total by agent', () => {
  test("two invalid_request refusals on agent a, an unknown agent's, one on no agent's path: exact series; none in exchanges_total", async () => {
    const badLimit = await rawPost(gw.agentUrl('a'), toolCall(1, 'x'), { ...PROTOCOL, 'x-max-response-bytes': 'lots' });
    const repeatedName = await rawPost(gw.agentUrl('a'), '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","name":"y"}}', PROTOCOL);
    const unknown = await rawPost(gw.agentUrl('nobody'), toolCall(3, 'x'), PROTOCOL);
    const noAgent = await fetch(`${gw.baseUrl}/nothere`);
    await noAgent.arrayBuffer();
    assert.deepEqual([badLimit.status, repeatedName.status, unknown.status, noAgent.status], [400, 400, 404, 404]);
    assert.deepEqual(seller.requests, [], 'the seller got nothing');
    assert.deepEqual(await metricLines('adcp_gateway_refusals_total{'), [
      'adcp_gateway_refusals_total{agent="_none",reason="not_found"} 1',
      'adcp_gateway_refusals_total{agent="_unknown",reason="unknown_agent"} 1',
      'adcp_gateway_refusals_total{agent="a",reason="invalid_request"} 2',
    ]);
    assert.deepEqual(await metricLines('adcp_gateway_exchanges_total{'), []);
  });
});
