/**
 * Regression: a seller's SSE `retry:` made the host wait longer than its resume token lives.
 *
 * Reported failure (the brief of this fix): the gateway clamped a seller's `retry:` to
 * [500, 300000] ms whatever `resume.ttl_ms` was. The host's EventSource / MCP SDK client waits
 * `retry` before it resumes with `Last-Event-ID` holding the token of the last event it got,
 * and the gateway refuses a token older than `resume.ttl_ms` (`resume_token_expired`, HTTP
 * 400). With `ttl_ms` under 5 minutes, a seller's `retry: 300000` (forwarded as it was)
 * brought the host back with an expired token: its resume refused, its answer lost.
 *
 * Now (src/response/sse-encode.ts sseRetryCeilingMs, computed once per resume codec in
 * routing/handler.ts) the ceiling is also half of `resume.ttl_ms`, never under the 500 ms
 * floor: with `ttl_ms: 2000`, 1000 ms. The ceiling follows the lifetime the running codec
 * verifies with: a reload that changes `resume.ttl_ms` takes effect only after a restart
 * (reload.ts), and so does the ceiling.
 *
 * Input: a raw seller answers a tools/call (MCP 2025-11-25) over SSE with the priming event
 * `id: p-0` / `retry: <v>` / empty data, then ends its stream before the result (a break);
 * a GET resuming with `Last-Event-ID: p-0` gets the result event `id: p-1`.
 * Expectation, exact bytes:
 * - `retry: 300000` reaches the host as `retry: 1000`, then the priming event with its token;
 *   the stream ends plainly (`resumable_end`). The host waits the 1000 ms it was told and
 *   resumes: the token is accepted, the seller gets `p-0` back, the host gets the result
 *   (outcome ok).
 * - the failure the old ceiling caused: a host resuming after more than `ttl_ms` (as one
 *   waiting 300000 ms would) is refused `resume_token_expired`, the seller not contacted.
 * - controls: 1001 -> 1000; 1000 and 700 unchanged; 1 -> 500 (the floor holds).
 * - after a reload to a config whose `resume.ttl_ms` is 1 h (not applied until a restart),
 *   `retry: 300000` still goes out as `retry: 1000`: tokens still live 2000 ms.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { parseConfig } from '../../src/config/load.js';

const SECRET = 'sse-retry-outlives-resume-token-secret-0123456789';
const TTL_MS = 2000;
const CEILING_MS = TTL_MS / 2;
const VERSION = '2025-11-25';
const yaml = (ttlMs: number, sellerUrl: string): string => agentsYaml({ s: sellerUrl }, ['resume:', `  secret: ${SECRET}`, `  ttl_ms: ${ttlMs}`]);

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(yaml(TTL_MS, seller.url)),
);
const gw = (): ObservedGateway => stack.gateway;
const seller = (): RawSeller => stack.seller;

const resultData = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'done' }] });

/** The seller: a POST gets the priming event with `retry: <sent>`, then its stream ends; a GET gets the result as `id: p-1`. */
function sellerSends(sent: string, rpcId: number): void {
  answer = (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.method === 'POST') res.end(`id: p-0\nretry: ${sent}\ndata: \n\n`);
    else res.end(`id: p-1\nevent: message\ndata: ${resultData(rpcId)}\n\n`);
  };
}

/** POSTs tools/call `rpcId`; returns the host's body, asserted to be `retry: <forwarded>` and the priming event, and its token. */
async function primed(rpcId: number, sent: string, forwarded: number): Promise<string> {
  sellerSends(sent, rpcId);
  const r = await withTimeout(rawPost(gw().agentUrl('s'), toolCall(rpcId, 'get_products'), { 'mcp-protocol-version': VERSION }), undefined, 'the POST');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  const [token] = sseIds(r.text());
  assert.ok(token !== undefined, r.text());
  assert.equal(r.text(), `retry: ${forwarded}\n\nid: ${token}\ndata: \n\n`);
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.rpc_id === rpcId && l.http_method === 'POST');
  assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'resumable_end', reason: null });
  return token;
}

function resume(token: string): Promise<Response> {
  return fetch(gw().agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': VERSION } });
}

describe("a seller's SSE retry: is at most half the resume token lifetime", { timeout: TEST_TIMEOUT_MS }, () => {
  test(`retry: 300000 with resume.ttl_ms ${TTL_MS} reaches the host as retry: ${CEILING_MS}; a host waiting that long resumes`, async () => {
    const rpcId = 1;
    const token = await primed(rpcId, '300000', CEILING_MS);
    const gets = seller().requests.filter((q) => q.method === 'GET').length;
    await sleep(CEILING_MS);
    const resumed = await withTimeout(resume(token), undefined, 'the resume');
    const text = await resumed.text();
    assert.equal(resumed.status, 200);
    const [resultToken] = sseIds(text);
    assert.ok(resultToken !== undefined, text);
    assert.equal(text, `id: ${resultToken}\nevent: message\ndata: ${resultData(rpcId)}\n\n`);
    const get = seller().requests.filter((q) => q.method === 'GET');
    assert.equal(get.length, gets + 1);
    assert.equal(get.at(-1)!.headers['last-event-id'], 'p-0');
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.rpc_id === rpcId && l.http_method === 'GET');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });

  test(`the failure the old ceiling caused: a resume after more than ${TTL_MS} ms is refused resume_token_expired`, async () => {
    const rpcId = 2;
    const token = await primed(rpcId, '300000', CEILING_MS);
    const gets = seller().requests.filter((q) => q.method === 'GET').length;
    await sleep(TTL_MS + 200);
    const resumed = await withTimeout(resume(token), undefined, 'the resume');
    assert.equal(resumed.status, 400);
    assert.equal(
      await resumed.text(),
      JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Last-Event-ID resume token has expired.', data: { reason: 'resume_token_expired' } } }),
    );
    assert.equal(seller().requests.filter((q) => q.method === 'GET').length, gets);
    const line = await gw().waitForLine((l) => l.msg === 'refused' && l.reason === 'resume_token_expired');
    assert.equal(line.status, 400);
  });

  const controls: Array<[string, number]> = [
    ['1001', CEILING_MS],
    [String(CEILING_MS), CEILING_MS],
    ['700', 700],
    ['1', 500],
  ];
  let rpcId = 10;
  for (const [sent, forwarded] of controls) {
    const id = rpcId++;
    test(`retry: ${sent} reaches the host as retry: ${forwarded}`, async () => {
      await primed(id, sent, forwarded);
    });
  }

  test('a reload to resume.ttl_ms 1 h (applied only after a restart) leaves the ceiling at half the running lifetime', async () => {
    const control = gw().app.gateway;
    const running = control.config;
    control.setConfig(parseConfig(yaml(3_600_000, seller().url), { env: {} }));
    try {
      await primed(20, '300000', CEILING_MS);
    } finally {
      control.setConfig(running);
    }
  });
});
