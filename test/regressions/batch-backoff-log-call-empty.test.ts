/**
 * Regression (a hostile new-user trial 14, L4): "The backoff warning for a batch names no call:
 * `"call":""`." A JSON-RPC batch is one kind of call of its own for the agent guard
 * (docs/configuration.md, `backoff_after_breaches`), but its kind was the empty string (a batch
 * has no method), so the warning said `"call":""` where a tool's says
 * `"call":"tools/call small_tool"`, and the operator could not tell what backed off.
 *
 * Input: an agent with `max_response_bytes: 1000` and `backoff_after_breaches: 1`, and a batch
 * of one `tools/call` and one `ping` whose answer is over the limit.
 * Expected: the warning `agent backing off: its answers keep breaking size limits` with exactly
 * `agent`, `call: "batch"` (as the metrics' `method` label names it), `consecutive_breaches: 1`
 * and `backoff_ms: 250`; and, once a batch is answered within limits, the `agent backoff ended`
 * line with `call: "batch"`. Control: a lone `tools/call` breaching on another agent names its
 * tool.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine } from '../support/hostile-seller.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{}}}';
const BATCH = `[${CALL},{"jsonrpc":"2.0","id":2,"method":"ping"}]`;
const BACKING_OFF = 'agent backing off: its answers keep breaking size limits';
const ENDED = 'agent backoff ended: an answer came within limits';

/** A log line without the fields pino adds to every line. */
function fieldsOf(line: LogLine): Record<string, unknown> {
  const { time: _time, pid: _pid, hostname: _hostname, ...rest } = line;
  return rest;
}

describe('batch-backoff-log-call-empty', { timeout: TEST_TIMEOUT_MS }, () => {
  /** The seller answers over 1000 bytes while true. */
  let large = true;
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const body = req.body.toString('utf8');
        const text = large ? 'x'.repeat(2000) : 'ok';
        const result = { content: [{ type: 'text', text }] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body.startsWith('[') ? JSON.stringify([{ jsonrpc: '2.0', id: 1, result }, { jsonrpc: '2.0', id: 2, result: {} }]) : JSON.stringify({ jsonrpc: '2.0', id: 1, result }));
      }),
    (seller) =>
      startObservedGateway(
        agentsYaml({
          b: { url: seller.url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 250 },
          t: { url: seller.url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 250 },
        }),
      ),
  );

  test('a batch that breaches: the warning says call "batch", and so does the end of its backoff', async () => {
    large = true;
    const r = await rawPost(stack.gateway.agentUrl('b'), BATCH);
    assert.equal(r.status, 200);
    const warn = await stack.gateway.waitForLine((l) => l.msg === BACKING_OFF && l.agent === 'b');
    assert.deepEqual(fieldsOf(warn), { level: 40, agent: 'b', call: 'batch', consecutive_breaches: 1, backoff_ms: 250, msg: BACKING_OFF });

    large = false;
    // The next batch waits out the 250 ms backoff, is sent as the probe and is answered cleanly.
    const clean = await rawPost(stack.gateway.agentUrl('b'), BATCH);
    assert.equal(clean.status, 200);
    assert.match(clean.text(), /"text":"ok"/);
    const ended = await stack.gateway.waitForLine((l) => l.msg === ENDED && l.agent === 'b');
    assert.deepEqual(fieldsOf(ended), { level: 30, agent: 'b', call: 'batch', msg: ENDED });
  });

  test('control: a lone tools/call names its tool', async () => {
    large = true;
    await rawPost(stack.gateway.agentUrl('t'), CALL, { 'mcp-protocol-version': '2025-06-18' });
    const warn = await stack.gateway.waitForLine((l) => l.msg === BACKING_OFF && l.agent === 't');
    assert.deepEqual(fieldsOf(warn), { level: 40, agent: 't', call: 'tools/call get_products', consecutive_breaches: 1, backoff_ms: 250, msg: BACKING_OFF });
  });
});
