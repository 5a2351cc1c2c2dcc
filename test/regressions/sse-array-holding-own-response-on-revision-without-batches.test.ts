/**
 * Regression: on a single request's SSE stream, an event whose data is a JSON array holding
 * the call's own response was forwarded as the answer to a host on MCP 2025-06-18 or later,
 * which has no JSON-RPC batches.
 *
 * Reported failure (a new user's trial, 2026-12-03): the MCP SDK client (1.32.2) reads one
 * JSON-RPC message per event, could not parse the array, and the call hung until its timeout
 * while the gateway logged `ok`; the same array as a JSON body is refused `upstream_not_mcp`.
 * MCP 2025-06-18 removed batching, so such an event is no message of the host's revision: now
 * (sse-message.ts batchVerdict) it ends the stream with `upstream_not_mcp` for the request's
 * id, on a POST's stream and on one resumed with Last-Event-ID (its revision from the token).
 *
 * Input: a raw seller answers each tools/call over SSE with one event: (a) `[the response]`;
 * (b) `[notification, the response]`; (c) tool `resumed`: an event with an id and empty
 * data, then the end; the host resumes with the gateway's token (no MCP-Protocol-Version
 * header: the token's revision counts) and the seller answers the GET with `[the response]`.
 * Controls: the same on MCP 2025-03-26 ("These responses MAY be batched"): the array is the
 * answer, the seller's bytes, outcome ok, for (a) and for the resumed stream.
 * Expectation: (a)-(c) on 2025-06-18 and 2025-11-25: exactly the gateway's `upstream_not_mcp`
 * error event (upstream_status 200) for the request's id, nothing of the array, its message
 * saying batches were removed in 2025-06-18 (cause `batch_removed`: a hostile new-user trial 13,
 * L1, test/regressions/seller-batch-json-answer-refused.test.ts); outcome local_error, reason
 * upstream_not_mcp.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const small = (id: number | string): string => toolResponse(id, { content: [{ type: 'text', text: 'own answer' }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
/** The seller event ids of `resumed` calls, to the call's id. */
const primed = new Map<string, number>();

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.method === 'GET') {
      const id = primed.get(String(req.headers['last-event-id']))!;
      return void res.end(frame(`[${small(id)}]`));
    }
    const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
    const id = msg.id;
    switch (msg.params.name) {
      case 'own_array':
        return void res.end(frame(`[${small(id)}]`));
      case 'note_and_own_array':
        return void res.end(frame(`[${NOTE},${small(id)}]`));
      default:
        primed.set(`r-${id}`, id);
        return void res.end(`id: r-${id}\nretry: 500\ndata: \n\n`);
    }
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url }, RESUME_YAML)));
const gw = (): ObservedGateway => stack.gateway;

/** POSTs tool `resumed` (revision `version`, or none), then resumes its stream with the gateway's token: the GET's answer. */
async function resume(id: number, version: string | undefined): Promise<{ status: number; text: string }> {
  const first = await rawPost(gw().agentUrl('seller'), toolCall(id, 'resumed'), version === undefined ? {} : { 'mcp-protocol-version': version });
  const [token] = sseIds(first.text());
  assert.ok(token, 'the gateway minted a resume token');
  const res = await fetch(gw().agentUrl('seller'), { headers: { accept: 'text/event-stream', 'last-event-id': token } });
  return { status: res.status, text: await res.text() };
}

describe('SSE array holding the own response on a revision without batches', { timeout: TEST_TIMEOUT_MS }, () => {
  const refused: Array<[string, number, string]> = [
    ['own_array', 7, '2025-06-18'],
    ['note_and_own_array', 8, '2025-06-18'],
    ['own_array', 9, '2025-11-25'],
  ];
  for (const [tool, id, version] of refused) {
    test(`${tool} on ${version}: upstream_not_mcp for the request's id, the array not forwarded`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool), { 'mcp-protocol-version': version });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      assert.equal(r.text(), expectedErrorFrame({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200, cause: 'batch_removed' }));
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('a stream resumed with Last-Event-ID (revision 2025-06-18 from the token): upstream_not_mcp for the id', async () => {
    const r = await resume(10, '2025-06-18');
    assert.equal(r.status, 200);
    assert.equal(r.text, expectedErrorFrame({ id: 10, method: 'tools/call', toolName: 'resumed', reason: 'upstream_not_mcp', upstreamStatus: 200, cause: 'batch_removed' }));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.rpc_id === 10 && l.reason === 'upstream_not_mcp');
    assert.equal(line.outcome, 'local_error');
  });

  test('control: on 2025-03-26 (responses MAY be batched) the array is the answer, outcome ok', async () => {
    const r = await rawPost(gw().agentUrl('seller'), toolCall(11, 'own_array'));
    assert.equal(r.text(), frame(`[${small(11)}]`));
    const line = await gw().exchangeLine('seller', 11);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });

  test('control: a resumed 2025-03-26 stream takes the array as the answer', async () => {
    const r = await resume(12, undefined);
    assert.equal(r.text, frame(`[${small(12)}]`));
  });
});
