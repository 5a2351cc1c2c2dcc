/**
 * Regression (hostile trial 34, F2): the metric series of an agent a reload removed were never
 * dropped: 25 reloads, each adding an agent and dropping the one before, grew `/metrics` by ~550
 * lines (~23 series, ~2 KB per retired agent name), gauges such as
 * `adcp_gateway_agent_buffered_response_bytes{agent="dyn_r1_3"} 0` among them, for the process's
 * life; and the agent guard kept each retired agent's state.
 *
 * Now (app.ts setConfig): the guard forgets an idle removed agent (admission/agent-guard.ts
 * applySettings), and the metrics drop every series whose `agent` the new config does not
 * have (observability/metrics.ts forgetAgents).
 *
 * Input: a gateway with agents `keep` and `gone` before one raw seller; a tools/call through
 * each (so each has exchange, byte, duration and guard series); then the config replaced
 * (setConfig, what a reload applies) by one with `keep` only.
 * Expected: before, `/metrics` has `agent="gone"` series; after, none (the drop is
 * asynchronous: read again until gone, at most 5 s), and `keep`'s exchange count is still 1;
 * a call to `gone` in flight across the reload brings none back when it ends (hostile trial
 * 36, F4: its exchange, duration and guard series came back and stayed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const answer = () => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}');
      // `slow`: answered once the test lets it (it is in flight across the reload).
      if (req.body.toString('utf8').includes('"slow"')) held.push(answer);
      else answer();
    }),
  (seller) => startObservedGateway(agentsYaml({ keep: seller.url, gone: seller.url })),
);

/** The answers of `slow` calls, held until the test sends them. */
const held: Array<() => void> = [];

const metricsText = async (): Promise<string> => (await fetch(`${stack.gateway.baseUrl}/metrics`)).text();
const seriesOf = (text: string, agent: string): string[] => text.split('\n').filter((l) => !l.startsWith('#') && l.includes(`agent="${agent}"`));

describe('removed-agent-metric-series-kept', { timeout: TEST_TIMEOUT_MS }, () => {
  test("a reload that removes an agent drops its metric series; a kept agent's stay", async () => {
    for (const agent of ['keep', 'gone']) assert.equal((await rawPost(stack.gateway.agentUrl(agent), toolCall(1, 'x'))).status, 200);
    await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'gone', 5_000);
    await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'keep', 5_000);
    const before = await metricsText();
    assert.ok(seriesOf(before, 'gone').length >= 10, seriesOf(before, 'gone').join('\n'));
    assert.ok(before.includes('adcp_gateway_agent_buffered_response_bytes{agent="gone"}'));

    // A call to `gone` in flight across the reload (hostile trial 36, F4: when it ended, its
    // series came back and stayed until a later reload).
    const slow = rawPost(stack.gateway.agentUrl('gone'), toolCall(2, 'slow'));
    while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
    stack.gateway.app.gateway.setConfig(parseConfig(agentsYaml({ keep: stack.seller.url }), { env: {} }));

    let after = await metricsText();
    for (const stop = Date.now() + 5_000; seriesOf(after, 'gone').length > 0 && Date.now() < stop; ) {
      await new Promise((r) => setTimeout(r, 20));
      after = await metricsText();
    }
    assert.deepEqual(seriesOf(after, 'gone'), []);
    held.shift()!();
    assert.equal((await slow).status, 200);
    await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'gone' && l.rpc_id === 2, 5_000);
    assert.deepEqual(seriesOf(await metricsText(), 'gone'), [], 'no series back for the call that ended after the reload');
    assert.ok(after.includes('adcp_gateway_exchanges_total{agent="keep",method="tools/call",outcome="ok",status_class="2xx"} 1'), seriesOf(after, 'keep').join('\n'));
    assert.ok(after.includes('adcp_gateway_agent_buffered_response_bytes{agent="keep"} 0'));
  });
});
