/**
 * Reported failure (a new user's hostile trial 12, L1): "the serving log on stdout writes
 * seller- and host-chosen C1 controls, bidi characters (U+202E) and U+2028/U+2029 raw; `probe
 * --verbose` escapes them, the main log does not". An exchange line carried a seller's SSE
 * event name (`answer_event`) and a host's tool name (`tool`) holding U+202E (right-to-left
 * override: a terminal shows the text after it reversed), U+2028, U+0085 and U+009B (CSI) as
 * they were. Now every logger the gateway makes (src/observability/logger.ts loggerOptions)
 * writes its lines through inert-json.ts `inertJson`: those characters as `\uhhhh`, the same
 * JSON value, so a reader parsing the lines still gets each string exact.
 *
 * Input: the real gateway with the real logger factory (createLogger) writing into a list; a
 * raw seller answering on SSE in an event named with those characters; host calls whose tool
 * names hold them. Expectation: no raw character of that kind in any line, each written as
 * `\uhhhh`, and the parsed fields exact.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/observability/logger.js';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const UNSAFE = 'x\u202eTIXE\u2028\u0085\u009b31m\u2066\u200b\u007f';
const RAW_UNSAFE = /[\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;
const lines: string[] = [];

describe('serving log lines with seller- and host-chosen control and bidi characters', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const id = (JSON.parse(req.body.toString()) as { id: number }).id;
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: ${UNSAFE}\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[]}}\n\n`);
      }),
    (seller) => startGateway(agentsYaml({ s: seller.url }, ['log_level: info']), { logger: createLogger('info', { destination: { write: (line: string) => void lines.push(line) } }) }),
  );

  const exchangeLine = async (id: number): Promise<{ raw: string; entry: Record<string, unknown> }> => {
    for (let i = 0; i < 100; i++) {
      for (const raw of lines) {
        const entry = JSON.parse(raw) as Record<string, unknown>;
        if (entry.msg === 'exchange' && entry.rpc_id === id) return { raw, entry };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no exchange line for id ${id}: ${lines.join('')}`);
  };

  test("a seller's SSE event name and a host's tool name are written escaped, and read back exact", async () => {
    const headers = { 'mcp-protocol-version': '2025-06-18', accept: 'application/json, text/event-stream' };
    await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(1, 'get_x'), headers));
    await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(2, `host${UNSAFE}`), headers));
    const first = await exchangeLine(1);
    assert.equal(first.entry.answer_event, UNSAFE);
    assert.doesNotMatch(first.raw, RAW_UNSAFE);
    assert.ok(first.raw.includes('x\\u202eTIXE\\u2028\\u0085\\u009b31m\\u2066\\u200b\\u007f'), first.raw);
    const second = await exchangeLine(2);
    assert.equal(second.entry.tool, `host${UNSAFE}`);
    assert.doesNotMatch(second.raw, RAW_UNSAFE);
    for (const raw of lines) assert.doesNotMatch(raw, RAW_UNSAFE, raw);
  });
});
