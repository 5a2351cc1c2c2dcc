/**
 * Regression (hostile trial 28, L1): a seller's status outside 100-599 (`HTTP/1.1 600 Weird`,
 * `999`) reached @fastify/reply-from, whose `reply.code(600)` threw: a Fastify warning
 * "response has invalid status code" with a stack, and the host got `upstream_reset` (the
 * exchange line too), which names a broken connection. `HTTP/1.1 099` was taken by undici for
 * an interim 1xx and tripped its assertion at the message's end: an "unexpected error" warning.
 *
 * RFC 9110 §15: a status code is three digits, and every valid one is within 100-599. Such a
 * status is no HTTP answer, so no MCP answer: the dispatcher refuses it as its head arrives
 * (src/routing/dispatcher.ts), before reply-from sees it, and the host gets
 * `upstream_not_mcp` with the status in `details.upstream_status` and a message saying so.
 *
 * Input: a real gateway logging into a capture, a raw seller writing each status line on its
 * socket; after each failing request a request the seller answers at once marks the end of
 * what the first one logged.
 * Expected: the host gets exactly that error; the exchange line (outcome `local_error`,
 * reason `upstream_not_mcp`, `upstream_status` the seller's) is the only line logged; the
 * gateway answers the next request as before.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { captureLog, type LogEntry } from '../helpers/capture-log.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const log = captureLog('trace');

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const { id, params } = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
      const body = toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });
      const status = /^status_(\d{3})$/.exec(params.name)?.[1];
      if (status === undefined) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      else res.socket!.end(`HTTP/1.1 ${status} Weird\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    }),
  (seller) => startGateway(agentsYaml({ s: seller.url }, ['log_level: trace']), { logger: log.logger }),
);

/** The lines logged for one request calling `tool`, up to the exchange line of a marker request sent after its own line (excluded). */
async function call(tool: string, id: number): Promise<{ text: string; lines: LogEntry[] }> {
  const from = log.entries.length;
  const res = await rawPost(stack.gateway.agentUrl('s'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(res.status, 200);
  await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === id, `exchange ${id}`);
  const markerId = id + 1000;
  const marker = await rawPost(stack.gateway.agentUrl('s'), toolCall(markerId, 'quick'), { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(marker.status, 200);
  assert.match(marker.text(), /"text":"ok"/);
  const markerLine = await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === markerId, `exchange ${markerId}`);
  return { text: res.text(), lines: log.entries.slice(from, log.entries.indexOf(markerLine)) };
}

const brief = (e: LogEntry) => ({ msg: e.msg, level: e.level, rpc_id: e.rpc_id, outcome: e.outcome, reason: e.reason, upstream_status: e.upstream_status });

describe('a seller status outside 100-599', () => {
  for (const [status, id] of [
    [600, 1],
    [999, 2],
    [99, 3],
    [0, 4],
  ] as const) {
    test(`${String(status).padStart(3, '0')}: upstream_not_mcp naming the status, one exchange line, nothing else`, OPTIONS, async () => {
      const { text, lines } = await call(`status_${String(status).padStart(3, '0')}`, id);
      assert.equal(
        text,
        expectedErrorJson({ id, method: 'tools/call', toolName: `status_${String(status).padStart(3, '0')}`, reason: 'upstream_not_mcp', upstreamStatus: status, cause: 'status_undefined' }),
      );
      assert.match(text, /The seller answered with an HTTP status outside 100-599/);
      assert.deepEqual(lines.map(brief), [{ msg: 'exchange', level: 40, rpc_id: id, outcome: 'local_error', reason: 'upstream_not_mcp', upstream_status: status }]);
    });
  }

  test('599 and 100-599 statuses are judged as before (a 599 is upstream_status)', OPTIONS, async () => {
    const { text } = await call('status_599', 5);
    assert.equal(text, expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'status_599', reason: 'upstream_status', upstreamStatus: 599 }));
  });
});
