/**
 * Regression (hostile trial 55, F5): "a notifications/cancelled whose params repeat `requestId`,
 * or write it in another case, is forwarded and matches nothing here". With request 0 in
 * flight, `{"requestId":0,"requestId":5}` (JSON.parse reads 5: the gateway marked nothing) and
 * `{"RequestId":0}` (the gateway read no `requestId`) went to the seller; a seller that reads
 * the first member (gjson, simdjson) or matches names case-insensitively (Go's encoding/json,
 * the MCP Go SDK) cancels request 0, and the gateway, unaware, then minted `sse_idle` for it.
 *
 * The gateway now acts on `params.requestId` of a `notifications/cancelled`
 * (routing/in-flight-requests.ts), so the names rule for members it acts on
 * (request/repeated-request-names.ts; docs/errors.md "Repeated and case-folded member names")
 * covers it, as `params.name` of a `tools/call`: refused `invalid_request`, HTTP 400, id null
 * (a notification has none), the message naming the member and its writings, nothing sent to
 * the seller. Both readings of the peek (a body under 1 KiB parsed, a longer one scanned) and a
 * batch element (2025-03-26); `params` of more than 1000 members are refused for their width, as
 * a `tools/call`'s are (the objects whose members the gateway reads). A lone escaped writing (`"\u0072equestId"`) is the name to every
 * parser: it passes and cancels request 0. Input: a raw seller on 127.0.0.1 holding request 0's
 * SSE stream open after one progress event.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = { 'mcp-session-id': 'session-f5', 'mcp-protocol-version': '2025-06-18' };
const PROGRESS_FRAME = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } })}\n\n`;

let open: ServerResponse | undefined;

function answer(req: SeenRequest, res: ServerResponse): void {
  const text = req.body.toString('utf8');
  if (text.includes('"tools/call"')) {
    open = res;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(PROGRESS_FRAME);
    return;
  }
  res.writeHead(202).end();
  // A cancellation the gateway forwards ends the open call without a response (MCP: none is sent).
  if (text.includes('notifications/cancelled')) open?.end();
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 1500 } })),
);

/** A refusal body for a notification (id null) with `message`. */
function refusal(message: string): unknown {
  return { jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason: 'invalid_request' } } };
}

const TWICE = 'Invalid Request: the member "requestId" of "params" is written twice ("requestId", "requestId"); send it once.';
const VARIANT = 'Invalid Request: the member "requestId" of "params" is written "RequestId" (a case-insensitive reader takes it for "requestId"); send it as "requestId".';
const BOTH = 'Invalid Request: the member "requestId" of "params" is written twice ("requestId", "REQUESTID"); send it once.';
/** A `reason` long enough to take the body over 1 KiB (the peek's scan reading). */
const LONG = 'x'.repeat(1200);

describe('cancel-repeated-requestid-not-refused', { timeout: TEST_TIMEOUT_MS }, () => {
  test('request 0 in flight: each cancellation repeating or case-folding requestId is refused 400, id null, never forwarded', async () => {
    const call = fetch(stack.gateway.agentUrl('s'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...SESSION },
      body: JSON.stringify(toolCall(0, 'get_products')),
    });
    const res = await withTimeout(call, 5_000, 'call head');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    assert.equal(Buffer.from(first.value ?? []).toString('utf8'), PROGRESS_FRAME);
    const sentBefore = stack.seller.requests.length;
    const cases: Array<[string, string]> = [
      ['{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"requestId":5}}', TWICE],
      ['{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"RequestId":0}}', VARIANT],
      ['{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"REQUESTID":0}}', BOTH],
      [`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"requestId":5,"reason":"${LONG}"}}`, TWICE],
      [`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"${LONG}","RequestId":0}}`, VARIANT],
    ];
    const got: Array<[number, unknown]> = [];
    for (const [body] of cases) {
      const r = await rawPost(stack.gateway.agentUrl('s'), body, SESSION);
      got.push([r.status, r.text() === '' ? '' : r.json()]);
    }
    assert.deepEqual(
      got,
      cases.map(([, message]) => [400, refusal(message)]),
    );
    // A batch element (2025-03-26, which has batches) is refused the same way, the batch whole.
    const batch = await rawPost(
      stack.gateway.agentUrl('s'),
      '[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"requestId":5}}]',
      { ...SESSION, 'mcp-protocol-version': '2025-03-26' },
    );
    assert.deepEqual(
      [batch.status, batch.json()],
      [400, refusal(`Invalid Request: batch element 0 is not a JSON-RPC message (${TWICE.slice('Invalid Request: '.length, -1)}).`)],
    );
    // `params` wider than the 1000 members the gateway reads: refused for its width, as a tools/call's.
    const wideParams = Array.from({ length: 1001 }, (_, i) => `"k${i}":0`).join(',');
    const wide = await rawPost(stack.gateway.agentUrl('s'), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{${wideParams},"requestId":0}}`, SESSION);
    assert.deepEqual([wide.status, wide.json()], [400, refusal('Invalid Request: "params" has 1002 members, more than the 1000 the gateway reads.')]);
    assert.equal(stack.seller.requests.length, sentBefore, 'nothing reached the seller');
    // The lone escaped writing is `requestId` to every parser: forwarded, and it cancels request 0.
    const escaped = await rawPost(stack.gateway.agentUrl('s'), '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"\\u0072equestId":0}}', SESSION);
    assert.equal(escaped.status, 202);
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString('utf8');
    assert.equal(rest, '', 'request 0 ends plainly: cancelled');
    const line = await stack.gateway.exchangeLine('s', 0);
    assert.deepEqual([line.outcome, line.reason], ['cancelled', 'upstream_reset']);
  });
});
