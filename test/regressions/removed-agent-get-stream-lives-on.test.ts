/**
 * Regression (hostile trial 34, F1): a reload that removed an agent left its open standalone GET
 * streams forwarding the removed seller's events to their hosts: they have no deadline, so they
 * lived as long as the hosts stayed connected (32 s and counting in the trial; weeks in a
 * sidecar), `adcp_gateway_sse_streams_open` unchanged, while every new request to the agent got
 * 404 `unknown_agent`. The same for an agent moved to another `url`.
 *
 * Now (src/routing/open-streams.ts, app.ts setConfig): such a stream ends at the reload, plainly
 * and resumable (its last event id already out), outcome `resumable_end`, reason
 * `agent_removed` or `agent_url_changed`; a stream of an agent the reload keeps where it was
 * stays open.
 *
 * Input: a raw seller whose every GET is an endless SSE stream (an event with an id every
 * 20 ms); a gateway with agents `gone`, `moved` and `kept` at it; one standalone GET stream
 * through each; then the config replaced (setConfig, what a reload applies) by one without
 * `gone`, with `moved` at another path of the same seller, and `kept` unchanged.
 * Expected: the `gone` and `moved` streams end (the host's response ends) with their exchange
 * lines' outcome and reason as above; `kept` still receives events after them; a new GET to
 * `gone` gets 404.
 */
import { until } from '../helpers/raw-stack.js';
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

/** The seller's streams, ended by the test's end. */
const open = new Set<http.ServerResponse>();

const stack = useSellerAndGateway(
  () =>
    startRawSeller((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      open.add(res);
      let n = 0;
      const timer = setInterval(() => res.write(`id: e${++n}\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`), 20);
      res.on('close', () => {
        clearInterval(timer);
        open.delete(res);
      });
    }),
  (seller) => startObservedGateway(agentsYaml({ gone: seller.url, moved: seller.url, kept: seller.url })),
);

/** A standalone GET stream through the gateway: its events so far, and a promise of its end. */
interface HostStream {
  events(): number;
  ended: Promise<void>;
  close(): void;
}

function openStream(url: string): Promise<HostStream> {
  return withTimeout(
    new Promise<HostStream>((resolve, reject) => {
      const req = http.request(url, { method: 'GET', headers: { accept: 'text/event-stream' } }, (res) => {
        assert.equal(res.statusCode, 200);
        let text = '';
        const ended = new Promise<void>((r) => res.on('end', () => r()).on('close', () => r()));
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        resolve({ events: () => text.split('\n\n').filter((b) => b.includes('data:')).length, ended, close: () => req.destroy() });
      });
      req.on('error', reject);
      req.end();
    }),
  );
}


describe('removed-agent-get-stream-lives-on', { timeout: TEST_TIMEOUT_MS }, () => {
  after(() => {
    for (const res of open) res.destroy();
  });

  test("a reload ends the GET streams of an agent it removes or moves, resumable; a kept agent's stays open", async () => {
    const gw = stack.gateway;
    const [gone, moved, kept] = await Promise.all(['gone', 'moved', 'kept'].map((a) => openStream(gw.agentUrl(a))));
    await until('events on every stream', () => gone!.events() >= 2 && moved!.events() >= 2 && kept!.events() >= 2);

    const movedUrl = `${stack.seller.url}/elsewhere`;
    gw.app.gateway.setConfig(parseConfig(agentsYaml({ moved: movedUrl, kept: stack.seller.url }), { env: {} }));

    await withTimeout(Promise.all([gone!.ended, moved!.ended]), 5_000, 'the removed and moved streams end');
    const lineOf = (agent: string) => gw.waitForLine((l) => l.msg === 'exchange' && l.agent === agent, 5_000);
    const [goneLine, movedLine] = await Promise.all([lineOf('gone'), lineOf('moved')]);
    assert.deepEqual([goneLine.outcome, goneLine.reason], ['resumable_end', 'agent_removed']);
    assert.deepEqual([movedLine.outcome, movedLine.reason], ['resumable_end', 'agent_url_changed']);

    // The kept stream goes on.
    const before = kept!.events();
    await until('more events on the kept stream', () => kept!.events() >= before + 2);
    assert.equal(gw.app.gateway.openStreams, 1);
    kept!.close();

    const res = await fetch(gw.agentUrl('gone'), { headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 404);
    await res.body?.cancel();
  });
});
