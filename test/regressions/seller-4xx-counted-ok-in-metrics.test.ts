/**
 * Regression (a hostile operator's trial 45, finding 2): a seller that answers 401 text/html
 * (a revoked API key) had its answer passed to the host as documented (docs/errors.md: a
 * seller's 4xx goes through), the exchange line said `"status":401,"outcome":"ok"`, and
 * `adcp_gateway_exchanges_total{outcome="ok"}` went up: no metric carried the status, so an
 * agent whose every call was 401/403/429 looked healthy on a dashboard.
 *
 * Now `adcp_gateway_exchanges_total` has a `status_class` label: the class of the status the
 * host got (`1xx` .. `5xx`), `none` when the host got no response head. Input: one tools/call
 * the seller answers 200, one it answers 401 text/html, one the host abandons before the
 * seller answers. Expected: the exact exchange series, one per status class.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };

let seller: RawSeller;
let gw: RunningGateway;
/** The seller's answers to the `held` tool, released when the test is done with them. */
const held: ServerResponse[] = [];
let heldArrived: () => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
    if (msg.params.name === 'revoked') return void res.writeHead(401, { 'content-type': 'text/html', 'www-authenticate': 'Bearer' }).end('<h1>no</h1>');
    if (msg.params.name === 'held') {
      held.push(res);
      return heldArrived();
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(msg.id, { content: [{ type: 'text', text: 'fine' }] }));
  });
  gw = await startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n`);
});

after(async () => {
  for (const res of held) res.destroy();
  await gw.close();
  await seller.close();
});

/** Resolves once `n` more exchanges have ended (the metrics are counted before this listener runs). */
function exchangesEnded(n: number): Promise<void> {
  let left = n;
  return withTimeout(new Promise<void>((resolve) => gw.app.gateway.onExchangeEnd(() => void (--left === 0 && resolve()))), 10_000, `${n} exchanges`);
}

async function exchangeLines(): Promise<string[]> {
  const text = await (await fetch(`${gw.baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('adcp_gateway_exchanges_total{'))
    .sort();
}

describe("a seller's 4xx in adcp_gateway_exchanges_total", () => {
  test('a 200 and a 401 passed through: outcome ok, status_class 2xx and 4xx', async () => {
    const ended = exchangesEnded(2);
    const ok = await rawPost(gw.agentUrl('s'), toolCall(1, 'fine'), PROTOCOL);
    const revoked = await rawPost(gw.agentUrl('s'), toolCall(2, 'revoked'), PROTOCOL);
    await ended;
    assert.deepEqual([ok.status, revoked.status, revoked.text()], [200, 401, '<h1>no</h1>']);
    assert.deepEqual(await exchangeLines(), [
      'adcp_gateway_exchanges_total{agent="s",method="tools/call",outcome="ok",status_class="2xx"} 1',
      'adcp_gateway_exchanges_total{agent="s",method="tools/call",outcome="ok",status_class="4xx"} 1',
    ]);
  });

  test('a host that leaves before any response head: status_class none', async () => {
    const arrived = new Promise<void>((resolve) => (heldArrived = resolve));
    const ended = exchangesEnded(1);
    const abort = new AbortController();
    const call = fetch(gw.agentUrl('s'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...PROTOCOL },
      body: JSON.stringify(toolCall(3, 'held')),
      signal: abort.signal,
    });
    await withTimeout(arrived, 10_000, 'the held call at the seller');
    abort.abort();
    await call.catch(() => undefined);
    await ended;
    assert.deepEqual(await exchangeLines(), [
      'adcp_gateway_exchanges_total{agent="s",method="tools/call",outcome="host_aborted",status_class="none"} 1',
      'adcp_gateway_exchanges_total{agent="s",method="tools/call",outcome="ok",status_class="2xx"} 1',
      'adcp_gateway_exchanges_total{agent="s",method="tools/call",outcome="ok",status_class="4xx"} 1',
    ]);
  });
});
