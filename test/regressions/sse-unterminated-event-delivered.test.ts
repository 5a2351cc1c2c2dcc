/**
 * Regression (a hostile new user's trial 10, F5, Low): "An SSE event cut off before its blank
 * line is delivered as the answer". The seller answered a `tools/call` with `text/event-stream`
 * whose whole body was `data: {"jsonrpc":"2.0","id":9,"result":{…}}\n`, then ended the stream
 * cleanly (no blank line). The gateway's line feeder completed the stream with a line break
 * (sse-boundaries.ts SseLineFeeder.finish), which after that LF is a blank line: the event was
 * dispatched, went to the host as `data: …\n\n`, the call's answer, logged `ok`. The same cut
 * without the line's LF got `upstream_reset`. WHATWG HTML §9.2.6: "If the file ends in the
 * middle of an event, before the final empty line, the incomplete event is not dispatched";
 * docs/configuration.md: "A block the seller's response cuts off before its blank line sets
 * nothing"; the MCP SDK client reading the seller directly never saw an answer.
 *
 * Input (raw seller on 127.0.0.1, agent `s`, resume secret set): each test's seller body, in
 * one write and a clean end unless it says otherwise.
 * Expectation: an event the stream ends before its blank line is never dispatched, on every
 * stream. On a call's stream, with nothing forwarded before it, the host gets exactly the
 * `upstream_reset` error event for the call's id (as for the cut without the LF), outcome
 * `local_error`, reason `upstream_reset`; after an event with an id, the stream ends plainly
 * for a resume (`resumable_end`), nothing of the cut event sent. On the standalone GET stream
 * and a long-lived stream (`subscriptions/listen`) the complete events pass and the cut one
 * does not; the stream ends plainly, outcome `ok`, reason null.
 * Controls: the same response completed by its blank line is the answer (`ok`).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, expectedErrorFrame, startObservedGateway, withToken, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const response = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'order 123 confirmed' }] } });

/** What the seller writes for the next request: pieces written 20 ms apart, then a clean end. */
let pieces: (id: number) => string[] = () => [];

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const id = req.method === 'POST' ? (JSON.parse(req.body.toString('utf8')) as { id: number }).id : 0;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const parts = pieces(id);
  for (const [k, part] of parts.entries()) {
    if (k > 0) await new Promise((r) => setTimeout(r, 20));
    res.write(part);
  }
  res.end();
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url } }, RESUME_YAML)),
);

const outcome = (line: LogLine): Record<string, unknown> => ({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

/** Calls get_order with `id`: the host's body and the exchange line. */
async function call(id: number): Promise<{ text: string; bytes: number; line: LogLine }> {
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'get_order'), HEADERS), 5_000, 'the call');
  assert.equal(r.status, 200);
  return { text: r.text(), bytes: r.bytes, line: await stack.gateway.exchangeLine('s', id) };
}

/** The call gets exactly the upstream_reset error event for its id, logged so. */
async function assertReset(id: number): Promise<void> {
  const { text, bytes, line } = await call(id);
  assert.equal(text, expectedErrorFrame({ id, method: 'tools/call', toolName: 'get_order', reason: 'upstream_reset' }));
  assert.deepEqual(outcome(line), { outcome: 'local_error', reason: 'upstream_reset', bytes_to_host: bytes });
}

describe('sse-unterminated-event-delivered', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the response\'s data line and its LF, then a clean end: upstream_reset, nothing of the event sent (was: the answer, ok)', async () => {
    pieces = (id) => [`data: ${response(id)}\n`];
    await assertReset(9);
  });

  test('the same with `event: message` and CR LF line breaks: upstream_reset', async () => {
    pieces = (id) => [`event: message\r\ndata: ${response(id)}\r\n`];
    await assertReset(10);
  });

  test('the block held across chunks (`event: message`, one `data:` line), cut after its LF: upstream_reset', async () => {
    pieces = (id) => {
      const block = `event: message\ndata: ${response(id)}\n`;
      return [block.slice(0, 30), block.slice(30)];
    };
    await assertReset(11);
  });

  test('a complete notification, then the response cut after its LF: the notification, then upstream_reset', async () => {
    pieces = (id) => [`data: ${NOTE}\n\n`, `data: ${response(id)}\n`];
    const { text, bytes, line } = await call(12);
    assert.equal(text, `data: ${NOTE}\n\n` + expectedErrorFrame({ id: 12, method: 'tools/call', toolName: 'get_order', reason: 'upstream_reset' }));
    assert.deepEqual(outcome(line), { outcome: 'local_error', reason: 'upstream_reset', bytes_to_host: bytes });
  });

  test('after an event with an id, the response cut after its LF: the stream ends plainly for a resume (resumable_end)', async () => {
    pieces = (id) => [`id: e1\ndata: ${NOTE}\n\n`, `id: e2\ndata: ${response(id)}\n`];
    const { text, bytes, line } = await call(13);
    const tokens = sseIds(text);
    assert.equal(tokens.length, 1, text);
    assert.match(tokens[0]!, RESUME_TOKEN);
    assert.equal(text, withToken(`id: e1\ndata: ${NOTE}\n\n`, tokens[0]!));
    assert.deepEqual(outcome(line), { outcome: 'resumable_end', reason: null, bytes_to_host: bytes });
  });

  test('control: the same cut without the LF was upstream_reset already', async () => {
    pieces = (id) => [`data: ${response(id)}`];
    await assertReset(14);
  });

  test('control: the response completed by its blank line is the answer', async () => {
    pieces = (id) => [`data: ${response(id)}\n\n`];
    const { text, bytes, line } = await call(15);
    assert.equal(text, `data: ${response(15)}\n\n`);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: bytes });
  });

  test('the standalone GET stream: the complete notification passes, the one cut after its LF does not; ok', async () => {
    pieces = () => [`data: ${NOTE}\n\n`, `data: ${NOTE}\n`];
    const seen = stack.gateway.lines.length;
    const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', ...HEADERS } });
    assert.equal(res.status, 200);
    const text = await withTimeout(res.text(), 5_000, 'GET stream');
    assert.equal(text, `data: ${NOTE}\n\n`);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && stack.gateway.lines.indexOf(l) >= seen);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(text) });
  });

  test('a long-lived stream (subscriptions/listen): the notification cut after its LF does not pass; ok', async () => {
    pieces = () => [`data: ${NOTE}\n\n`, `event: message\ndata: ${NOTE}\n`];
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', id: 16, method: 'subscriptions/listen', params: {} }, { 'mcp-protocol-version': '2026-07-28' }), 5_000, 'the listen');
    assert.equal(r.text(), `data: ${NOTE}\n\n`);
    const line = await stack.gateway.exchangeLine('s', 16);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });
});
