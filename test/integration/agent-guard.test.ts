/**
 * The agent guard over real sockets (src/admission/agent-guard.ts; issue 5, "Fairness" and
 * "Memory under attack"): a seller that keeps breaking bounds is backed off without touching
 * other agents, and a tiny buffered-bytes cap still lets every response complete in full.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { expectedErrorJson } from '../support/hostile-seller.js';

/** What the seller does per agent path: `/bad`, `/slowbad`, `/good`, `/chunky`. */
let badIsHealthy = false;
let inFlight = 0;
let maxInFlight = 0;
const CHUNKY_BYTES = 64 * 1024;

function idOf(req: SeenRequest): number {
  return (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
}

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const id = idOf(req);
  const json = { 'content-type': 'application/json' };
  if (req.url.startsWith('/bad') || req.url.startsWith('/slowbad')) {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 30)); // long enough for concurrent requests to overlap
    inFlight--;
    const text = badIsHealthy ? 'ok' : 'x'.repeat(4096); // over the agent's 1024-byte limit
    res.writeHead(200, json).end(toolResponse(id, { content: [{ type: 'text', text }] }));
    return;
  }
  if (req.url.startsWith('/chunky')) {
    // A 64 KiB result written 4 KiB at a time, yielding between writes.
    const body = toolResponse(id, { content: [{ type: 'text', text: 'y'.repeat(CHUNKY_BYTES) }] });
    res.writeHead(200, json);
    for (let i = 0; i < body.length; i += 4096) {
      res.write(body.slice(i, i + 4096));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
    return;
  }
  res.writeHead(200, json).end(toolResponse(id, { content: [{ type: 'text', text: 'good' }] }));
}

const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) => {
    const base = seller.url.replace(/\/mcp$/, '');
    return startGateway(
      [
        'log_level: silent',
        'agents:',
        `  bad: { url: ${base}/bad/mcp, max_response_bytes: 1024, backoff_after_breaches: 2, backoff_base_ms: 20, backoff_max_ms: 40 }`,
        `  slowbad: { url: ${base}/slowbad/mcp, max_response_bytes: 1024, backoff_after_breaches: 1, backoff_base_ms: 600000, backoff_max_ms: 600000, response_deadline_ms: 200 }`,
        `  good: { url: ${base}/good/mcp }`,
        `  chunky: { url: ${base}/chunky/mcp, max_buffered_response_bytes: 1024, accept_encoding: [identity] }`,
        '',
      ].join('\n'),
    );
  },
);

type ToolErr = { result: { structuredContent: { adcp_error: { code: string; details: { reason: string } } } } };
const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-11-25' });
const reasonOf = (text: string): string => (JSON.parse(text) as ToolErr).result.structuredContent.adcp_error.details.reason;

describe('agent guard', () => {
  test('a seller that keeps breaking bounds is backed off: its requests go one at a time; other agents are not held back; a clean answer ends it', async () => {
    badIsHealthy = false;
    // Two consecutive breaches start the backoff.
    assert.equal(reasonOf((await call('bad', 1)).text()), 'raw_bytes');
    assert.equal(reasonOf((await call('bad', 2)).text()), 'raw_bytes');
    maxInFlight = 0;
    const seen = stack.seller.requests.length;
    const good = call('good', 3);
    const three = [call('bad', 4), call('bad', 5), call('bad', 6)];
    assert.match((await good).text(), /"text":"good"/);
    // After the backoff the oldest goes as the probe; it breaches again, so the two that
    // waited for it are answered at once without being sent.
    const texts = (await Promise.all(three)).map((r) => r.text());
    assert.deepEqual(texts.map(reasonOf), ['raw_bytes', 'agent_backoff', 'agent_backoff']);
    assert.equal(texts[1], expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff' }));
    assert.equal(maxInFlight, 1);
    assert.equal(stack.seller.requests.length, seen + 2, 'the good call and the probe only');

    // The next request waits for the next probe (the backoff doubled).
    assert.equal(reasonOf((await call('bad', 13)).text()), 'raw_bytes');

    // A clean answer ends the backoff: concurrent requests overlap at the seller again.
    badIsHealthy = true;
    assert.match((await call('bad', 7)).text(), /"text":"ok"/);
    maxInFlight = 0;
    await Promise.all([call('bad', 8), call('bad', 9), call('bad', 10)]);
    assert.equal(maxInFlight, 3);
  });

  test('a request that waits longer than response_deadline_ms for its turn is answered agent_backoff, never sent', async () => {
    badIsHealthy = false;
    assert.equal(reasonOf((await call('slowbad', 11)).text()), 'raw_bytes'); // starts a 10-minute backoff
    const seen = stack.seller.requests.length;
    const probe = await call('slowbad', 12);
    assert.equal(probe.status, 200);
    assert.equal(probe.text(), expectedErrorJson({ id: 12, method: 'tools/call', toolName: 'get_products', reason: 'agent_backoff' }));
    assert.match(probe.text(), /did not send this request/);
    assert.doesNotMatch(probe.text(), /may have completed/, 'the request was never sent, so nothing can have run');
    assert.equal(stack.seller.requests.length, seen, 'the seller never saw it');
  });

  test('a buffered-bytes cap far below one response: 6 concurrent 64 KiB responses all complete, byte for byte', async () => {
    const results = await Promise.all([20, 21, 22, 23, 24, 25].map((id) => call('chunky', id)));
    for (const [i, r] of results.entries()) {
      assert.equal(r.status, 200);
      assert.equal(r.text(), toolResponse(20 + i, { content: [{ type: 'text', text: 'y'.repeat(CHUNKY_BYTES) }] }));
    }
  });
});
