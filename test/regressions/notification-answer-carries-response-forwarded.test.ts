/**
 * Regression: the answer to a POSTed notification or JSON-RPC response (MCP expects 202 with
 * no body) carried JSON-RPC responses to pending calls, and they reached the host unchecked,
 * un-normalized and at the agent's limit, logged ok.
 *
 * Reported failure (a new user's trial 8, F4): a notification POST answered with SSE carried
 * a response for pending call 1 (whose tool had a 500-byte limit), one for id "abc" and an
 * array holding one; the JSON answer to a notification POST and the SSE and JSON answers to a
 * host response POST did the same, and a GET resuming the notification's stream with its
 * token brought one too. The same answer to a batch of only that notification was already
 * refused, and on the standalone GET stream such events are dropped (`get_stream_response`).
 *
 * Input: a raw seller answers POSTs of notifications (by method) and of host responses (by
 * id): SSE streams mixing notifications with responses (an id, a string id, an array holding
 * one, no id, `NaN` in it), a JSON body holding a response, and an SSE stream with an event id
 * whose resume (GET with the gateway's token) brings a response and a notification.
 * Expectation: on SSE exactly the notifications reach the host, as the seller's bytes, each
 * response dropped, reason `notification_stream_response` (the stream's first drop logged with
 * the `SSE stream: event dropped` warning, the others in the summary at its end:
 * src/response/sse-drop-log.ts), counted in adcp_gateway_sse_events_dropped_total; outcome
 * ok. A JSON body holding a response: HTTP 502 with the `upstream_not_mcp` error for id null.
 * Controls: a JSON body holding only a notification, and a 202, pass as before.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson, RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost } from '../helpers/raw.js';
import { droppedInLines, droppedInMetrics } from '../helpers/drop-lines.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const SERVER_REQUEST = '{"jsonrpc":"2.0","id":"srv-9","method":"ping"}';
const RESPONSE = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"answer for call 1"}]}}';
/** Responses a stream answering no request must not carry. */
const RESPONSES = [
  RESPONSE,
  '{"jsonrpc":"2.0","id":"abc","error":{"code":-32000,"message":"m"}}',
  '[{"jsonrpc":"2.0","id":7,"result":{}}]',
  '{"jsonrpc":"2.0","result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{"content":[],"score":NaN}}',
  '{"jsonrpc":"2.0","id":1,"\\u0072esult":{}}',
];
const STREAM = [NOTE, ...RESPONSES, SERVER_REQUEST, NOTE];
const PASSED = frame(NOTE) + frame(SERVER_REQUEST) + frame(NOTE);
const DROPPED = 'SSE stream: event dropped';
const REASON = 'notification_stream_response';

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') {
      // A resume of the notification's stream (Last-Event-ID: the gateway's token for n-1).
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(frame(RESPONSE) + frame(NOTE));
    }
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: string; method?: string };
    const name = msg.method ?? msg.id;
    if (name === 'notifications/sse' || name === 'srv-sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(STREAM.map(frame).join(''));
    }
    if (name === 'notifications/json' || name === 'srv-json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(RESPONSE);
    if (name === 'notifications/json_array') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`[${NOTE},${RESPONSE}]`);
    if (name === 'notifications/json_note') return void res.writeHead(200, { 'content-type': 'application/json' }).end(NOTE);
    if (name === 'notifications/resumable') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(`id: n-1\n${frame(NOTE)}`);
    }
    res.writeHead(202).end();
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url }, RESUME_YAML)));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

async function dropped(): Promise<number> {
  return droppedInMetrics(await gw().app.gateway.metrics.render(), 'seller', REASON);
}

const notification = (method: string): Record<string, unknown> => ({ jsonrpc: '2.0', method });
const hostResponse = (id: string): Record<string, unknown> => ({ jsonrpc: '2.0', id, result: {} });

describe('the answer to a POST without a request never carries a response', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [what, body] of [
    ['a notification', notification('notifications/sse')],
    ['a host response', hostResponse('srv-sse')],
  ] as const) {
    test(`SSE answer to ${what}: the responses are dropped, the notifications and requests pass`, async () => {
      const before = await dropped();
      const seen = gw().lines.length;
      const r = await rawPost(gw().agentUrl('seller'), body, HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.text(), PASSED);
      const line = await gw().waitForLine(
        // This POST's line (`rpc_kind` notification or response), not an earlier test's.
        (l) => l.msg === 'exchange' && l.agent === 'seller' && l.http_method === 'POST' && gw().lines.indexOf(l) >= seen,
      );
      assert.deepEqual(
        { rpc_kind: line.rpc_kind, outcome: line.outcome, reason: line.reason, events_dropped: line.events_dropped },
        { rpc_kind: what === 'a notification' ? 'notification' : 'response', outcome: 'ok', reason: REASON, events_dropped: { [REASON]: RESPONSES.length } },
      );
      // The drop warnings are throttled per stream (the first drop's line, then a summary: a new
      // user's trial 9, F5); they account for every drop.
      assert.deepEqual(droppedInLines(gw().lines.slice(seen), 'seller'), { [REASON]: RESPONSES.length });
      assert.equal(gw().lines.slice(seen).filter((l) => l.msg === DROPPED && l.agent === 'seller').length, 1, "the stream's first drop");
      assert.equal(await dropped(), before + RESPONSES.length);
    });
  }

  for (const [what, body] of [
    ['a notification', notification('notifications/json')],
    ['a notification, an array', notification('notifications/json_array')],
    ['a host response', hostResponse('srv-json')],
  ] as const) {
    test(`JSON answer to ${what} holding a response: 502 upstream_not_mcp for id null`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), body, HEADERS);
      assert.equal(r.status, 502);
      assert.equal(r.text(), expectedErrorJson({ id: null, method: '', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    });
  }

  test('a GET resuming the notification\'s stream: the response is dropped, the notification passes', async () => {
    const first = await rawPost(gw().agentUrl('seller'), notification('notifications/resumable'), HEADERS);
    const token = /^id: (\S+)$/m.exec(first.text())?.[1];
    assert.ok(token !== undefined && token !== 'n-1', 'the event id went out as a gateway token');
    const before = await dropped();
    const resumed = await fetch(gw().agentUrl('seller'), { headers: { ...HEADERS, accept: 'text/event-stream', 'last-event-id': token } });
    assert.equal(resumed.status, 200);
    assert.equal(await withTimeout(resumed.text(), 5_000, 'resumed stream'), frame(NOTE));
    assert.equal(await dropped(), before + 1);
  });

  test('controls: a JSON answer holding only a notification, and a 202, pass as before', async () => {
    const note = await rawPost(gw().agentUrl('seller'), notification('notifications/json_note'), HEADERS);
    assert.deepEqual({ status: note.status, text: note.text() }, { status: 200, text: NOTE });
    const accepted = await rawPost(gw().agentUrl('seller'), notification('notifications/initialized'), HEADERS);
    assert.deepEqual({ status: accepted.status, text: accepted.text() }, { status: 202, text: '' });
  });
});
