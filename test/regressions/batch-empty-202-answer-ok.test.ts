/**
 * Regression (a reviewer, "An empty 202 Accepted answering a batch that holds requests is
 * logged ok"): a host on MCP 2025-03-26 POSTed a JSON-RPC batch holding requests
 * (`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)
 * and the seller answered `202 Accepted` with no body. The gateway passed the empty 202 on and
 * logged the exchange `ok`: the host waits for responses to ids 1 and 2 that will never come.
 * A single request answered so gets `upstream_not_mcp` (docs/errors.md: an empty answer to a
 * request is not MCP, its host waits for a response; MCP 2025-03-26 Streamable HTTP: a POST
 * holding any request is answered with `text/event-stream` or `application/json`, 202 only
 * when it holds no request).
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway (agent `s`), batches sent with no
 * MCP-Protocol-Version (2025-03-26), each answered with an empty body: 202 without a
 * Content-Type, 202 with `Content-Type: application/json` (the Python MCP SDK's form), 200 and
 * 204.
 * Expectation: a batch holding at least one request (an element with a `method` and an `id`,
 * id 0 included; id null is refused before: host-null-id-request-forwarded.test.ts) gets the batch's local error, as every local error of a batch: HTTP 200
 * with a JSON array of one JSON-RPC error for each of its requests, for that request's id
 * (-32027, SERVICE_UNAVAILABLE, `upstream_not_mcp`, `upstream_status` the seller's status),
 * byte for byte (test/regressions/batch-local-error-answers-no-request.test.ts: before, one
 * error for id null, HTTP 502); the exchange line says `local_error` / `upstream_not_mcp`. A batch of notifications and host responses only still
 * gets the seller's empty answer, outcome `ok`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedBatchErrorJson, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const LIST = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const CANCELLED = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}';
const HOST_RESPONSE = '{"jsonrpc":"2.0","id":"srv-1","result":{}}';

/** The empty answers a seller may give: status, and its Content-Type (none, or JSON). */
const EMPTY_ANSWERS: ReadonlyArray<readonly [status: number, contentType: string | undefined]> = [
  [202, undefined],
  [202, 'application/json'],
  [200, undefined],
  [204, undefined],
];

/** The seller answers the next POST with `status`, an empty body and `contentType` (none when undefined). */
function sellerEmpty(status: number, contentType: string | undefined): void {
  answer = (_req, res) => {
    res.removeHeader('content-type');
    res.writeHead(status, contentType === undefined ? {} : { 'content-type': contentType }).end();
  };
}

/** POSTs `batch` as a 2025-03-26 host: the response and its exchange line. */
async function postBatch(batch: string): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const requests = stack.seller.requests.length;
  const r = await rawPost(stack.gateway.agentUrl('s'), batch);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  // Forwarded as the host wrote it: the seller's answer is what is judged.
  assert.equal(stack.seller.requests.length, requests + 1);
  assert.equal(stack.seller.requests.at(-1)?.body.toString('utf8'), batch);
  return { r, line };
}

const summary = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, upstream_status: line.upstream_status, status: line.status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

describe('batch-empty-202-answer-ok', { timeout: TEST_TIMEOUT_MS }, () => {
  const HOLDING_REQUESTS: ReadonlyArray<readonly [label: string, batch: string, ids: readonly (number | null)[]]> = [
    ['two requests', `[${PING},${LIST}]`, [1, 2]],
    ['a notification and one request', `[${INITIALIZED},${LIST}]`, [2]],
    ['a host response, then a request with id 0', `[${HOST_RESPONSE},{"jsonrpc":"2.0","id":0,"method":"ping"}]`, [0]],
  ];
  for (const [label, batch, ids] of HOLDING_REQUESTS) {
    for (const [status, contentType] of EMPTY_ANSWERS) {
      test(`${label}, answered ${status} empty (${contentType ?? 'no Content-Type'}): upstream_not_mcp for each request, not the empty answer`, async () => {
        sellerEmpty(status, contentType);
        const { r, line } = await postBatch(batch);
        const expected = expectedBatchErrorJson(ids, { reason: 'upstream_not_mcp', upstreamStatus: status });
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.equal(r.text(), expected);
        assert.deepEqual(summary(line), { rpc_kind: 'batch', upstream_status: status, status: 200, outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: Buffer.byteLength(expected) });
      });
    }
  }

  test('the error, pinned once: SERVICE_UNAVAILABLE, -32027, transient, details upstream_status', async () => {
    sellerEmpty(202, undefined);
    const { r } = await postBatch(`[${PING},${LIST}]`);
    const [m, ...more] = r.json() as Array<{ id: unknown; error: { code: number; data: { adcp_error: { code: string; recovery: string; details: unknown } } } }>;
    assert.equal(more.length, 1);
    assert.equal(m!.id, 1);
    assert.equal(m!.error.code, -32027);
    assert.equal(m!.error.data.adcp_error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(m!.error.data.adcp_error.recovery, 'transient');
    assert.deepEqual(m!.error.data.adcp_error.details, { reason: 'upstream_not_mcp', upstream_status: 202 });
  });

  for (const [status, contentType] of EMPTY_ANSWERS) {
    test(`control, a batch of notifications and a host response, answered ${status} empty (${contentType ?? 'no Content-Type'}): passed on, outcome ok`, async () => {
      sellerEmpty(status, contentType);
      const { r, line } = await postBatch(`[${INITIALIZED},${CANCELLED},${HOST_RESPONSE}]`);
      assert.equal(r.status, status);
      assert.equal(r.bytes, 0);
      assert.deepEqual(summary(line), { rpc_kind: 'batch', upstream_status: status, status, outcome: 'ok', reason: null, bytes_to_host: 0 });
    });
  }
});
