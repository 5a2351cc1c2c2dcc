/**
 * Regression (a new user's trial, 2026-12-03, and a reviewer): "the answer to a JSON-RPC batch
 * the host sent (MCP 2025-03-26) is not checked against the batch's request ids". A host POSTed
 * `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`:
 * - a JSON answer `[r1, r2, r999, r1]` went to the host whole, logged `ok` (r999 answers no
 *   request of the batch: a client routes each response by id alone, so it could answer
 *   another pending call; the second r1 is a second answer to request 1);
 * - a single JSON object answering only id 1 went to the host, logged `ok` (request 2 is never
 *   answered: the host waits until its own timeout);
 * - on an SSE stream answering the batch, a response for an id not in it was forwarded.
 * A single request's answer already gets `upstream_not_mcp` for a response to another id, JSON
 * and SSE (test/regressions/sse-response-for-another-id.test.ts).
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway (agent `s`, resume secret set),
 * batches POSTed raw with no MCP-Protocol-Version or with `2025-03-26` (the only revision with
 * batches), answered as each test says.
 * Expectation:
 * - JSON (application/json, 200): a response element (one with `result` or `error`) whose id is
 *   not one of the batch's request ids (compared exactly: `"1"` is not `1`, `2.0` is `2`), a
 *   second response for an id, an element with both `result` and `error`, or an answer that
 *   leaves a request without its response (a lone object for one of two requests, an array of
 *   notifications only) gets the batch's local error: HTTP 200, a JSON array of one JSON-RPC
 *   error for each of the batch's requests (-32027, SERVICE_UNAVAILABLE, `upstream_not_mcp`,
 *   `upstream_status` 200), byte for byte (test/regressions/batch-local-error-answers-no-request.test.ts);
 *   the exchange line says `local_error` / `upstream_not_mcp`. A batch of notifications only
 *   answered with a response gets it for id null, HTTP 502 (it has no request to answer).
 * - SSE: the events before the foreign or duplicate response go out as the seller's bytes, then
 *   that same error as one final event for each request still awaited (id null for a batch of
 *   notifications only), nothing of the offending event; outcome `local_error`, reason
 *   `upstream_not_mcp`.
 * - Controls: the responses in any order, as one JSON array or split over SSE events (with
 *   notifications between), go out as the seller's bytes, outcome `ok`; a batch of
 *   notifications only answered with an empty 202, or an SSE stream of notifications, `ok`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import {
  RESUME_YAML,
  expectedBatchErrorFrames,
  expectedBatchErrorJson,
  expectedErrorFrame,
  expectedErrorJson,
  startObservedGateway,
  type BatchRequestId,
  type LogLine,
  type ObservedGateway,
} from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const LIST = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';
const BATCH = `[${PING},${LIST}]`;
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const CANCELLED = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';
const R999 = '{"jsonrpc":"2.0","id":999,"result":{"content":[{"type":"text","text":"for another call"}]}}';
const data = (json: string): string => `data: ${json}\n\n`;
const V2025_03_26 = { 'mcp-protocol-version': '2025-03-26' };

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 2000 } }, RESUME_YAML)),
);

/** The seller answers the next POST 200 `application/json` with `body`. */
function sellerJson(body: string): void {
  answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
}

/** The seller answers the next POST 200 `text/event-stream`, writing each of `writes` 20 ms apart, then closes. */
function sellerStreams(...writes: string[]): void {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let k = 0;
    const next = (): void => {
      if (res.destroyed) return;
      if (k === writes.length - 1) return void res.end(writes[k]);
      res.write(writes[k++]);
      setTimeout(next, 20);
    };
    next();
  };
}

/** POSTs `batch` raw (`headers`: none, or MCP-Protocol-Version 2025-03-26): the response and its exchange line. */
async function postBatch(batch: string, headers: Record<string, string> = {}): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const requests = stack.seller.requests.length;
  const r = await rawPost(stack.gateway.agentUrl('s'), batch, headers);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  // Forwarded as the host wrote it: the seller's answer is what is judged.
  assert.equal(stack.seller.requests.length, requests + 1);
  assert.equal(stack.seller.requests.at(-1)?.body.toString('utf8'), batch);
  return { r, line };
}

const summary = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, status: line.status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });
const ERROR = { reason: 'upstream_not_mcp', upstreamStatus: 200 } as const;
/** The batch's local error for its requests `ids` (one JSON-RPC error each, HTTP 200), or for id null, HTTP 502, when it has none. */
const notMcp = (ids: readonly BatchRequestId[]): { status: number; body: string } =>
  ids.length === 0 ? { status: 502, body: expectedErrorJson({ id: null, method: '', ...ERROR }) } : { status: 200, body: expectedBatchErrorJson(ids, ERROR) };
/** The same as the final events of the batch's stream, for the requests still awaited (`ids`), or for id null. */
const notMcpFrames = (ids: readonly BatchRequestId[]): string =>
  ids.length === 0 ? expectedErrorFrame({ id: null, method: '', ...ERROR }) : expectedBatchErrorFrames(ids, ERROR);

describe('batch-answer-for-other-ids-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  /** The batch's requests, each answered by the error. */
  const BOTH = [1, 2];
  const JSON_REFUSED: ReadonlyArray<readonly [label: string, batch: string, body: string, ids: readonly BatchRequestId[]]> = [
    ['the reported answer [r1, r2, r999, r1]', BATCH, `[${R1},${R2},${R999},${R1}]`, BOTH],
    ['a response for an id not in the batch, every request answered', BATCH, `[${R2},${R999},${R1}]`, BOTH],
    ['a second response for id 1', BATCH, `[${R1},${R2},${R1}]`, BOTH],
    ['a lone object answering id 1 of two requests', BATCH, R1, BOTH],
    ['an array answering id 1 of two requests', BATCH, `[${R1}]`, BOTH],
    ['an array of notifications only', BATCH, `[${NOTE},${NOTE}]`, BOTH],
    ['a lone notification', BATCH, NOTE, BOTH],
    ['"1" for request 1 ("1" is not 1)', BATCH, `[{"jsonrpc":"2.0","id":"1","result":{}},${R2}]`, BOTH],
    ['9007199254740992 for request 9007199254740993 (the same double, not the same id)', `[{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}]`, '[{"jsonrpc":"2.0","id":9007199254740992,"result":{}}]', [{ id: 9007199254740992, idText: '9007199254740993' }]],
    ['an error for id null beside the responses', BATCH, `[${R1},${R2},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]`, BOTH],
    ['both result and error for id 1', BATCH, `[{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}},${R2}]`, BOTH],
    ['a response answering a batch of notifications only', `[${INITIALIZED},${CANCELLED}]`, '[{"jsonrpc":"2.0","id":5,"result":{}}]', []],
  ];
  for (const [label, batch, body, ids] of JSON_REFUSED) {
    for (const headers of [{}, V2025_03_26]) {
      const expected = notMcp(ids);
      test(`JSON, ${label} (${headers === V2025_03_26 ? '2025-03-26' : 'no MCP-Protocol-Version'}): ${expected.status} upstream_not_mcp for ${ids.length === 0 ? 'id null' : 'each request'}`, async () => {
        sellerJson(body);
        const { r, line } = await postBatch(batch, headers);
        assert.equal(r.status, expected.status);
        assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.equal(r.text(), expected.body);
        assert.deepEqual(summary(line), { rpc_kind: 'batch', status: expected.status, outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: Buffer.byteLength(expected.body) });
      });
    }
  }

  const JSON_PASSED: ReadonlyArray<readonly [label: string, batch: string, body: string]> = [
    ['the responses in the batch\'s order', BATCH, `[${R1},${R2}]`],
    ['the responses in the other order', BATCH, `[${R2},${R1}]`],
    ['2.0 answers 2, an error answers 1', BATCH, '[{"jsonrpc":"2.0","id":2.0,"result":{}},{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}]'],
    ['one id requested twice, answered twice', `[${PING},${PING}]`, `[${R1},${R1}]`],
    ['a lone object answering a batch of a notification and one request', `[${INITIALIZED},${PING}]`, R1],
  ];
  for (const [label, batch, body] of JSON_PASSED) {
    test(`control, JSON, ${label}: the seller's bytes, outcome ok`, async () => {
      sellerJson(body);
      const { r, line } = await postBatch(batch, V2025_03_26);
      assert.equal(r.status, 200);
      assert.equal(r.text(), body);
      assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(body) });
    });
  }

  test('control, a batch of notifications only answered 202 with no body: passed on, outcome ok', async () => {
    answer = (_req, res) => {
      res.removeHeader('content-type');
      res.writeHead(202).end();
    };
    const { r, line } = await postBatch(`[${INITIALIZED},${CANCELLED}]`);
    assert.equal(r.status, 202);
    assert.equal(r.bytes, 0);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 202, outcome: 'ok', reason: null, bytes_to_host: 0 });
  });

  // `awaited`: the requests still without a forwarded response when the stream ends (those
  // answered in the refused event included: the host never gets that event).
  const SSE_REFUSED: ReadonlyArray<readonly [label: string, batch: string, writes: readonly string[], forwarded: string, awaited: readonly BatchRequestId[]]> = [
    ['a response for an id not in the batch in a later event', BATCH, [data(R1), data(R999) + data(R2)], data(R1), [2]],
    ['a response for an id not in the batch after both answers, in one array', BATCH, [data(NOTE), data(`[${R2},${R1},${R999}]`)], data(NOTE), BOTH],
    ['a second response for id 1 in a later event', BATCH, [data(R1), data(R1) + data(R2)], data(R1), [2]],
    ['a second response for id 1 in one array', BATCH, [data(`[${R1},${R1}]`), data(R2)], '', BOTH],
    ['"2" for request 2', BATCH, [data(R1), data('{"jsonrpc":"2.0","id":"2","result":{}}')], data(R1), [2]],
    ['a response on the stream of a batch of notifications only', `[${INITIALIZED},${CANCELLED}]`, [data(NOTE), data('{"jsonrpc":"2.0","id":5,"result":{}}')], data(NOTE), []],
  ];
  for (const [label, batch, writes, forwarded, awaited] of SSE_REFUSED) {
    for (const headers of [{}, V2025_03_26]) {
      test(`SSE, ${label} (${headers === V2025_03_26 ? '2025-03-26' : 'no MCP-Protocol-Version'}): the events before it, then upstream_not_mcp for ${awaited.length === 0 ? 'id null' : 'each request still awaited'}`, async () => {
        sellerStreams(...writes);
        const { r, line } = await postBatch(batch, headers);
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('content-type'), 'text/event-stream');
        assert.equal(r.text(), forwarded + notMcpFrames(awaited));
        assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
      });
    }
  }

  const SSE_PASSED: ReadonlyArray<readonly [label: string, batch: string, writes: readonly string[]]> = [
    ['the responses in the other order, one event each', BATCH, [data(R2), data(R1)]],
    ['the responses split over events and writes, notifications between', BATCH, [data(NOTE) + data(R2), data(NOTE), `id: e3\n${data(R1)}`]],
    ['the responses as one array, in the other order', BATCH, [data(`[${R2},${R1}]`)]],
    ['a batch of notifications only, answered with notifications', `[${INITIALIZED},${CANCELLED}]`, [data(NOTE), data(NOTE)]],
  ];
  for (const [label, batch, writes] of SSE_PASSED) {
    test(`control, SSE, ${label}: the seller's events, outcome ok`, async () => {
      sellerStreams(...writes);
      const { r, line } = await postBatch(batch, V2025_03_26);
      // An `id:` goes out as a resume token: compared without the id lines.
      assert.equal(r.text().replace(/^id: [^\n]*\n/gm, ''), writes.join('').replace(/^id: [^\n]*\n/gm, ''));
      assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'ok', reason: null, bytes_to_host: r.bytes });
    });
  }
});
