/**
 * Regression (hostile trial 56, F2): "two agents whose urls only respell one seller endpoint do
 * not share its in-flight ids or its cancellations". docs/errors.md: "A url only respelled
 * (`/mcp?` or `/m%63p` for `/mcp`) is the same url", and resume tokens are signed for the
 * normalized url (config/agent-url-key.ts agentUrlKey); but the in-flight registry
 * (routing/in-flight-requests.ts) and the remembered cancellations (routing/cancelled-requests.ts)
 * keyed on `agent.url.href`. So a host reusing id 7, in flight through agent `a` (`/mcp`), through
 * agent `d` (`/mcp?`) had it forwarded to the seller (trial 54 F4's hang: an SDK seller answers
 * the second and the first call waits until sse_idle), a cancellation through `c` (`/m%63p`) did
 * not mark the call in flight through `a` (the host got a made-up `sse_idle` error for the id it
 * dropped), and a cancellation remembered through `d` did not stop a resume through `a` from
 * reaching the seller.
 *
 * Now both key on the agent's normalized url (config/agent-url-key.ts agentKeyOf, made once per
 * agent at config load).
 *
 * Input: a raw seller on 127.0.0.1 (a `tools/call` gets one event `id: e<id>`; id 9's stream then
 * ends, the others are held; a resume is answered with its response); agents `a` (`/mcp`), `c`
 * (`/m%63p`) and `d` (`/mcp?`), sse_idle_timeout_ms 1000, resume tokens on.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { resumeAnswer, sessionHost, startCutAndResumeSeller } from '../helpers/cut-and-resume.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-f2';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () =>
    startCutAndResumeSeller(
      (id) => (id === 9 ? 'cut' : 'hold'),
      (req, res) => {
        const id = Number(String(req.headers['last-event-id']).slice(1));
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(resumeAnswer(id));
      },
    ),
  (seller) =>
    startObservedGateway(
      agentsYaml(
        {
          a: { url: seller.url, sse_idle_timeout_ms: 1000 },
          c: { url: seller.url.replace(/\/mcp$/, '/m%63p'), sse_idle_timeout_ms: 1000 },
          d: { url: `${seller.url}?`, sse_idle_timeout_ms: 1000 },
        },
        RESUME_YAML,
      ),
    ),
);
const { openCall, cancel, resume } = sessionHost((agent) => stack.gateway.agentUrl(agent), HEADERS);

const callsAtSeller = (id: number): number =>
  stack.seller.requests.filter((r) => r.method === 'POST' && (JSON.parse(r.body.toString('utf8')) as { id?: unknown; method?: string }).method === 'tools/call' && (JSON.parse(r.body.toString('utf8')) as { id?: unknown }).id === id).length;

describe('respelled-agent-url-not-sharing-in-flight-ids', { timeout: TEST_TIMEOUT_MS }, () => {
  test('id 7 in flight through /mcp: the same id through /mcp? and /m%63p is refused 400, not sent', async () => {
    const call = await openCall('a', 7);
    for (const agent of ['d', 'c']) {
      const res = await rawPost(stack.gateway.agentUrl(agent), toolCall(7, 'get_products'), { ...HEADERS, accept: 'application/json, text/event-stream' });
      const body = res.body.toString('utf8');
      assert.equal(res.status, 400, `via ${agent}: ${body}`);
      assert.match(body, /request id 7 is already in flight in this session/, `via ${agent}`);
    }
    assert.equal(callsAtSeller(7), 1, 'only the first id 7 reached the seller');
    void call.rest.catch(() => undefined);
  });

  test('a cancellation through /m%63p marks the call in flight through /mcp: its stream ends plainly, outcome cancelled', async () => {
    const call = await openCall('a', 8);
    assert.equal(await cancel('c', 8), 202);
    assert.equal(await withTimeout(call.rest, 5_000, 'end of the cancelled stream'), '', 'no error made up for the dropped id');
    const line = await stack.gateway.exchangeLine('a', 8);
    assert.deepEqual([line.outcome, line.reason], ['cancelled', 'sse_idle']);
  });

  test('a cancellation remembered through /mcp?: the resume through /mcp is answered 405, not sent', async () => {
    const call = await openCall('a', 9);
    const [token] = sseIds(call.first);
    assert.ok(token !== undefined && token.startsWith('agw1.'), call.first);
    assert.equal(await withTimeout(call.rest, 5_000, 'end of the dropped stream'), '');
    assert.equal(await cancel('d', 9), 202);
    const res = await resume('a', token);
    assert.deepEqual([res.status, await res.text()], [405, '']);
    assert.equal(stack.seller.requests.filter((r) => r.method === 'GET').length, 0, 'no resume reached the seller');
  });
});
