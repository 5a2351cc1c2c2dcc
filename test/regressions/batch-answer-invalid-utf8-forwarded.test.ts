/**
 * Regression (a team note): "A batch answer with invalid UTF-8 is forwarded unrepaired, where
 * single answers are repaired." A host on MCP 2025-03-26 POSTed a JSON-RPC batch
 * `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
 * and the seller answered it with a JSON array whose second response holds the bytes C3 28 FF
 * in a string (a truncated 2-byte sequence, then a byte never valid in UTF-8). The gateway
 * sent those bytes to the host as they were, logged `ok`, where a single request's JSON
 * answer gets U+FFFD in place of each ill-formed sequence (README "Hosts on 2025-03-26";
 * json-stage.ts wellFormedUtf8; RFC 8259 §8.1: JSON between systems MUST be UTF-8, and a
 * host's parser may refuse anything else: test/regressions/invalid-utf8.test.ts).
 *
 * Input: a raw HTTP seller on 127.0.0.1 behind the real gateway (agent `s`, default limits;
 * agent `tight`, the same seller with max_response_bytes 1000), batches POSTed raw with no
 * MCP-Protocol-Version or with `2025-03-26`, answered as each test says.
 * Expectation, by the single answer's rule: a JSON answer to a batch goes out as the seller's
 * bytes with EF BF BD (U+FFFD) in place of each ill-formed sequence (C3, then FF), labelled
 * `application/json` (other bytes than the seller's: json-stage.ts sendJsonAnswer), outcome
 * `ok`, `bytes_to_host` the repaired length; when that repair would be over
 * `max_response_bytes`, the seller's bytes under the seller's label (control, as a single
 * answer). An SSE stream answering a batch already carried U+FFFD for such bytes (every
 * event holding them is decoded: sse-raw-events.ts, sse-raw-plan.ts): controls, one event
 * per response and one array event.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, type RawResponse } from '../helpers/raw.js';
import { jsonAnswer, sseWritesAnswer } from '../helpers/seller-answers.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 1000;
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const LIST = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';
const BATCH = `[${PING},${LIST}]`;
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const V2025_03_26 = { 'mcp-protocol-version': '2025-03-26' };

/** The seller's ill-formed bytes: C3 (a 2-byte lead cut short by `(`), `(`, FF (never UTF-8). */
const ILL_FORMED = Buffer.from([0xc3, 0x28, 0xff]);
/** What the host gets for them: U+FFFD (EF BF BD) for C3, `(`, U+FFFD for FF (WHATWG UTF-8 decode). */
const REPAIRED = Buffer.from([0xef, 0xbf, 0xbd, 0x28, 0xef, 0xbf, 0xbd]);

/** `parts` as bytes, each `null` standing for the ill-formed sequence (`bad`) or its repair. */
const bytesOf = (parts: ReadonlyArray<string | null>, bad: Buffer): Buffer => Buffer.concat(parts.map((p) => (p === null ? bad : Buffer.from(p, 'utf8'))));

/** Response 2 (tools/list) holding the ill-formed sequence in a tool's name, as parts for {@link bytesOf}. */
const R2_PARTS = ['{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"caf', null, '","inputSchema":{"type":"object"}}]}}'] as const;
/** Response 1 (ping) holding it in a member of its result. */
const R1_PARTS = ['{"jsonrpc":"2.0","id":1,"result":{"note":"caf', null, '"}}'] as const;

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        s: { url: seller.url, sse_idle_timeout_ms: 2000 },
        tight: { url: seller.url, max_response_bytes: LIMIT, sse_idle_timeout_ms: 2000 },
      }),
    ),
);

/** POSTs `batch` raw to `agent`: the response and its exchange line. */
async function postBatch(agent: string, batch: string, headers: Record<string, string> = {}): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const r = await rawPost(stack.gateway.agentUrl(agent), batch, headers);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  return { r, line };
}

const summary = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, status: line.status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });
const ok = (bytes: number): Record<string, unknown> => ({ rpc_kind: 'batch', status: 200, outcome: 'ok', reason: null, bytes_to_host: bytes });

describe('batch-answer-invalid-utf8-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const JSON_CASES: ReadonlyArray<readonly [label: string, batch: string, parts: ReadonlyArray<string | null>, headers: Record<string, string>]> = [
    ['the reported answer [r1, r2 holding C3 28 FF] (no MCP-Protocol-Version)', BATCH, [`[${R1},`, ...R2_PARTS, ']'], {}],
    ['the same (2025-03-26)', BATCH, [`[${R1},`, ...R2_PARTS, ']'], V2025_03_26],
    ['both responses holding it, in the other order', BATCH, ['[', ...R2_PARTS, ',', ...R1_PARTS, ']'], V2025_03_26],
    ['a lone object answering a batch of a notification and one request', `[${INITIALIZED},${PING}]`, R1_PARTS, V2025_03_26],
  ];
  for (const [label, batch, parts, headers] of JSON_CASES) {
    test(`JSON, ${label}: the seller's bytes with U+FFFD for the ill-formed ones, application/json (was forwarded byte for byte)`, async () => {
      answer = jsonAnswer(bytesOf(parts, ILL_FORMED));
      const { r, line } = await postBatch('s', batch, headers);
      const want = bytesOf(parts, REPAIRED);
      assert.deepEqual([r.status, r.headers.get('content-type'), r.body.toString('hex')], [200, 'application/json', want.toString('hex')]);
      assert.deepEqual(summary(line), ok(want.length));
    });
  }

  test("control, JSON, a repair over max_response_bytes: the seller's bytes under the seller's label, as a single answer", async () => {
    // 400 FF bytes: 400 + the envelope within 1000 bytes; their repair (3 bytes each) is not.
    const parts = [`[${R1},{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"`, null, '"}]}}]'];
    const seller = bytesOf(parts, Buffer.alloc(400, 0xff));
    assert.ok(seller.length <= LIMIT && seller.length + 800 > LIMIT);
    answer = (_req, res) => void res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': seller.length }).end(seller);
    const { r, line } = await postBatch('tight', BATCH, V2025_03_26);
    assert.deepEqual([r.status, r.headers.get('content-type'), r.body.toString('hex')], [200, 'application/json; charset=utf-8', seller.toString('hex')]);
    assert.deepEqual(summary(line), ok(seller.length));
  });

  const SSE_CASES: ReadonlyArray<readonly [label: string, writes: ReadonlyArray<ReadonlyArray<string | null>>]> = [
    ['one event per response', [[`data: ${R1}\n\n`], ['data: ', ...R2_PARTS, '\n\n']]],
    ['both in one array event', [[`data: [${R1},`, ...R2_PARTS, ']\n\n']]],
    ['each holding it, one event each', [['data: ', ...R1_PARTS, '\n\n'], ['data: ', ...R2_PARTS, '\n\n']]],
  ];
  for (const [label, writes] of SSE_CASES) {
    test(`control, SSE, ${label}: U+FFFD for the ill-formed bytes, as before`, async () => {
      answer = sseWritesAnswer(writes.map((w) => bytesOf(w, ILL_FORMED)));
      const { r, line } = await postBatch('s', BATCH, V2025_03_26);
      const want = Buffer.concat(writes.map((w) => bytesOf(w, REPAIRED)));
      assert.deepEqual([r.status, r.headers.get('content-type'), r.body.toString('hex')], [200, 'text/event-stream', want.toString('hex')]);
      assert.deepEqual(summary(line), ok(want.length));
    });
  }
});
