/**
 * Regression (a hostile trial 47, F2): the MCP TypeScript SDK's InMemoryEventStore can replay
 * its empty priming event (data `{}`) after real events on a resume; the gateway drops it
 * (`message_without_kind`, 2 bytes), rightly, but logged the drop at warn, `SSE stream: event
 * dropped`: noise for ordinary SDK traffic. Now the drop of an event whose data is exactly an
 * empty JSON object (JSON whitespace around and inside allowed) is logged at debug; every
 * other dropped event keeps its warn line (src/response/sse-drop-log.ts). Counting is
 * unchanged: the exchange line's `events_dropped` and the metric count it.
 *
 * Input: a raw node:http seller behind the real gateway (logging at debug into memory);
 * `tools/call` answered over SSE: a progress notification (`id: e1`), then one event with the
 * data under test (`id: e2`), then the result (`id: e3`); the data: `{}`, ` { \t} ` and, as
 * controls, `{"jsonrpc":"2.0"}` and `{"status":"working"}` (no kind either, no SDK's priming
 * event). Last, a stream with `{}` and then `{"status":"working"}`.
 * Expectation: the host gets the progress and the result, outcome ok; one line
 * `SSE stream: event dropped` for the drop, `reason` `message_without_kind`, `observed_bytes`
 * the data's bytes, at level 20 (debug) for the empty objects, 40 (warn) for the controls; on
 * the mixed stream, the `{}` drop at debug and the other one at warn (its own first line),
 * `events_dropped` 2. Was: level 40 for every one.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { captureLog, type CapturedLog } from '../helpers/capture-log.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { FIRST_DROP_MSG } from '../../src/response/sse-drop-log.js';

const REASON = 'message_without_kind';
const DEBUG = pino.levels.values.debug!;
const WARN = pino.levels.values.warn!;
const PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}';
const RESULT = { content: [{ type: 'text', text: 'done' }] };

/** The data of the event(s) under test, by tool name. */
const DATA: Record<string, readonly string[]> = {
  empty: ['{}'],
  spaced: [' { \t} '],
  jsonrpc_only: ['{"jsonrpc":"2.0"}'],
  status: ['{"status":"working"}'],
  mixed: ['{}', '{"status":"working"}'],
};

let log: CapturedLog;

const stack = useSellerAndGateway<RawSeller, RunningGateway>(
  () =>
    startRawSeller((req, res) => {
      const m = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
      const middle = (DATA[m.params.name] ?? []).map((d, i) => `id: m${i}\ndata: ${d}\n\n`).join('');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`id: e1\ndata: ${PROGRESS}\n\n${middle}id: e3\nevent: message\ndata: ${toolResponse(m.id, RESULT)}\n\n`);
    }),
  (seller) => {
    log = captureLog('debug');
    return startGateway(`agents:\n  s:\n    url: ${seller.url}\n`, { logger: log.logger });
  },
);

/** Calls `tool` (JSON-RPC id `id`); returns its drop lines and its exchange line once written. */
async function call(tool: string, id: number): Promise<{ drops: Array<{ level: number; reason: unknown; observed_bytes: unknown }>; line: Record<string, unknown> }> {
  const seen = log.entries.length;
  const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(r.status, 200);
  assert.deepEqual(sseMessages(r.text()), [JSON.parse(PROGRESS), JSON.parse(toolResponse(id, RESULT))]);
  const line = await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === id, `exchange ${id}`);
  const drops = log.entries
    .slice(seen)
    .filter((e) => e.msg === FIRST_DROP_MSG)
    .map((e) => ({ level: e.level, reason: e.reason, observed_bytes: e.observed_bytes }));
  return { drops, line };
}

describe('sdk-priming-event-replayed-warns', () => {
  const cases: Array<[string, number, number]> = [
    ['empty', DEBUG, 2],
    ['spaced', DEBUG, 6],
    ['jsonrpc_only', WARN, 17],
    ['status', WARN, 20],
  ];
  let id = 0;
  for (const [tool, level, bytes] of cases) {
    test(`${tool}: dropped, its line at ${level === DEBUG ? 'debug' : 'warn'}`, async () => {
      const { drops, line } = await call(tool, ++id);
      assert.deepEqual(drops, [{ level, reason: REASON, observed_bytes: bytes }]);
      assert.deepEqual([line.outcome, line.events_dropped], ['ok', { [REASON]: 1 }]);
    });
  }

  test('an empty object and another kindless event on one stream: debug for the first, warn for the other', async () => {
    const { drops, line } = await call('mixed', 10);
    assert.deepEqual(drops, [
      { level: DEBUG, reason: REASON, observed_bytes: 2 },
      { level: WARN, reason: REASON, observed_bytes: 20 },
    ]);
    assert.deepEqual([line.outcome, line.events_dropped], ['ok', { [REASON]: 2 }]);
  });
});
