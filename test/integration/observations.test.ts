/**
 * What the gateway observes without rejecting: refusals (one log line and a metric each),
 * discovery responses over their size target (warning + metric, the body untouched), events
 * dropped from a stream that answers no request (metric), and a long-lived
 * `subscriptions/listen` stream (MCP 2026-07-28) that is not cut by the cumulative bound.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway(() => startRawSeller((req, res) => answer(req, res)), (seller) =>
  startObservedGateway(
    `agents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: 300000\n    max_sse_event_bytes: 1000\n  small:\n    url: ${seller.url}\n    max_response_bytes: 2000\n`,
  ),
);

async function metric(name: string, labels: string): Promise<number> {
  const text = await stack.gateway.app.gateway.metrics.render();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('observations', () => {
  test('a refusal gets one `refused` log line and a refusals_total count', async () => {
    const r = await rawPost(`${stack.gateway.baseUrl}/agents/nope/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(r.status, 404);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'refused' && l.reason === 'unknown_agent');
    assert.equal(line.status, 404);
    assert.equal(line.agent, 'nope');
    assert.equal(await metric('adcp_gateway_refusals_total', 'agent="_unknown",reason="unknown_agent"'), 1);
  });

  test('a tools/list page over 128 KiB passes untouched, with a warning and a metric', async () => {
    const tools = Array.from({ length: 300 }, (_, i) => ({ name: `tool_${i}`, description: 'd'.repeat(500), inputSchema: { type: 'object' } }));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools, nextCursor: 'c2' } });
    assert.ok(body.length > 131_072 && body.length < 300_000);
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    const r = await rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.text(), body);
    const warn = await stack.gateway.waitForLine((l) => l.surface === 'tools_list_page');
    assert.equal(warn.bytes, body.length);
    assert.equal(warn.target_bytes, 131_072);
    assert.equal(await metric('adcp_gateway_discovery_size_overshoot_total', 'agent="s",surface="tools_list_page"'), 1);
  });

  test('an oversized event on the standalone GET stream is dropped and counted', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'z'.repeat(1200)}"}}\n\n`);
      res.end('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"small"}}\n\n');
    };
    const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream' } });
    const text = await res.text();
    assert.equal(text, 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"small"}}\n\n');
    assert.equal(await metric('adcp_gateway_sse_events_dropped_total', 'agent="s",reason="sse_event"'), 1);
  });

  test('a subscriptions/listen stream is long-lived: no cumulative bound, events keep flowing', async () => {
    const event = (n: number) => `data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"r://${n}"}}\n\n`;
    let total = 0;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; total < 5000; i++) {
        res.write(event(i));
        total += Buffer.byteLength(event(i));
      }
      res.end();
    };
    const r = await rawPost(stack.gateway.agentUrl('small'), { jsonrpc: '2.0', id: 9, method: 'subscriptions/listen', params: {} }, { 'mcp-protocol-version': '2026-07-28' });
    assert.equal(r.status, 200);
    assert.equal(r.bytes, total, 'every event went through: 5 KB over a 2000-byte max_response_bytes');
    assert.ok(!r.text().includes('adcp_error'));
  });
});
