/**
 * Regression (carried from an earlier review): the `sse_cumulative` error that ends an SSE
 * stream answering a POSTed notification or JSON-RPC response (no request: the error goes
 * out for id null) said "The seller's SSE stream for this request exceeded the N-byte limit
 * in total", and the `sse_deadline` one on such a stream "did not deliver the response",
 * though there is neither a request nor a response there. The messages now hold for every
 * stream answering a POST (src/mcp/local-error.ts): "The seller's SSE stream exceeded the
 * N-byte limit in total" and "The seller's SSE stream did not finish within N ms".
 *
 * Input (raw seller on 127.0.0.1, agent max_response_bytes 1000, sse_deadline_ms 300): a
 * POSTed `notifications/initialized` answered by an SSE stream of three 500-byte events (the
 * third crosses the limit); the same notification answered by one event then an open stream
 * (the deadline runs out); a tools/call (id 5, `get_products`) answered by the three events.
 * Expected: the host's body is the events within the limit (the open stream's event) then the
 * final event with the exact message above (id null for the notification, id 5 with the
 * narrowing hint for the tools/call), byte for byte.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorFrame, observedMsAtLeast } from '../support/hostile-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 1000;
const DEADLINE_MS = 300;
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const NOTIFICATION = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

/** Event `n`: exactly 500 bytes, in the form MCP servers write. */
function event(n: number): string {
  const head = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n},"data":"`;
  const tail = '"}}\n\n';
  return head + 'x'.repeat(500 - head.length - tail.length) + tail;
}
const EVENTS = event(1) + event(2) + event(3);

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: LIMIT, sse_deadline_ms: DEADLINE_MS } }, ['log_level: silent'])),
);

/** The `message` of the adcp_error in the final event of `text` (a JSON-RPC error's or a tool result's). */
function messageOf(text: string): string {
  const m = /"message":"((?:[^"\\]|\\.)*)","recovery"/.exec(text.replace(/\\"/g, '"').replace(/\\\\/g, '\\'));
  assert.ok(m, text);
  return m[1]!;
}

describe('SSE error messages on a stream answering no request', { timeout: TEST_TIMEOUT_MS }, () => {
  test('sse_cumulative on a notification stream: no "for this request"', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(EVENTS);
    };
    const r = await rawPost(stack.gateway.agentUrl('s'), NOTIFICATION, HEADERS);
    assert.equal(r.status, 200);
    const text = r.text();
    assert.ok(text.startsWith(event(1) + event(2)));
    const error = text.slice(1000);
    assert.equal(messageOf(error), "The seller's SSE stream exceeded the 1000-byte limit in total.");
    assert.equal(error, expectedErrorFrame({ id: null, method: '', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: 1500 }));
  });

  test('sse_deadline on a notification stream: no "the response"', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event(1));
    };
    const r = await rawPost(stack.gateway.agentUrl('s'), NOTIFICATION, HEADERS);
    assert.equal(r.status, 200);
    const text = r.text();
    assert.ok(text.startsWith(event(1)));
    const error = text.slice(500);
    const observedMs = observedMsAtLeast(error, DEADLINE_MS);
    assert.equal(messageOf(error), `The seller's SSE stream did not finish within ${DEADLINE_MS} ms.`);
    assert.equal(error, expectedErrorFrame({ id: null, method: '', reason: 'sse_deadline', limitMs: DEADLINE_MS, observedMs }));
  });

  test("sse_cumulative on a request's stream: the same sentence, with the narrowing hint", async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(EVENTS);
    };
    const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(5, 'get_products'), HEADERS);
    const error = r.text().slice(1000);
    assert.equal(messageOf(error), "The seller's SSE stream exceeded the 1000-byte limit in total; narrow the request with fields, max_results or a cursor.");
    assert.equal(error, expectedErrorFrame({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: 1500 }));
  });
});
