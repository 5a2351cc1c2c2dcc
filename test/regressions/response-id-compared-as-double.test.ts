/**
 * Regression (a new user's trial, low severity): a seller's response id was compared with the
 * request's as a JavaScript double. A seller answering id `9007199254740992` to a host
 * request with id `9007199254740993` was accepted and forwarded as the response to that
 * request; `12345678901234567890123` matched `1.2345678901234568e+22`. A host with exact
 * integers (Python, Go's json.Number) would never match that answer to its call. JSON-RPC 2.0
 * §5: the response id "MUST be the same as the value of the id member in the Request Object".
 *
 * The rule now (docs/errors.md): ids are the same JSON-RPC id exactly: strings the same
 * string; numbers the same mathematical value, compared as written (`1.0` and `1e0` are `1`;
 * `9007199254740993` is not `9007199254740992`).
 *
 * Input: a raw node:http seller on 127.0.0.1, behind the real gateway (each case its own
 * agent), answering a `tools/call` whose id the host wrote exactly as given below:
 * (a) JSON body, id one below the request's (scan fast path, json-stage.ts answersExchange);
 * (b) the same with the `id` key written `"\u0069d"` (the parse path after JSON.parse);
 * (c) JSON body `1.2345678901234568e+22` for a request `12345678901234567890123`;
 * (d) JSON body `1` for a request `0.99999999999999999999` (JSON.parse reads both as 1);
 * (e) SSE: an event carrying the response for the id one below (sse-message.ts);
 * (f) SSE with the escaped `id` key;
 * (g) a resumed stream (`Last-Event-ID`): the first stream sent one event and dropped, the
 *     resume's event carries the response for the id one below (the resume token held the
 *     id parsed, so the exact text was lost across the resume).
 * Expected: each gets the gateway's `upstream_not_mcp` error (upstream_status 200) for the
 * request's id written exactly as the host wrote it (a JSON body, or the stream's final
 * event), never the seller's message; the exchange line says local_error / upstream_not_mcp.
 * Controls: the same answers with the request's own id as written (`9007199254740993` over
 * JSON, SSE and a resume; `0.99999999999999999999`), and the same value written otherwise
 * (`1.0` and `1e0` for `1`, `1e2` for `100`) are forwarded byte for byte, outcome ok.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway, type ObservedGateway, type LogLine } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, sseIds } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const BIG = '9007199254740993';
const BELOW = '9007199254740992';
const RESULT = '"result":{"content":[{"type":"text","text":"the answer"}]}';
/** A seller's response with `id` written as `idText` (and the key as `key`). */
const response = (idText: string, key = '"id"'): string => `{"jsonrpc":"2.0",${key}:${idText},${RESULT}}`;
const ESCAPED_ID_KEY = '"\\u0069d"';
const frame = (data: string, eventId?: string): string => `${eventId === undefined ? '' : `id: ${eventId}\n`}event: message\ndata: ${data}\n\n`;
const PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}';

interface Case {
  /** The request's id as the host writes it. */
  readonly request: string;
  /** The seller's answer to the POST. */
  readonly json?: string;
  readonly sse?: string;
  /** For a resumed stream: the seller's SSE answer to the GET that resumes (the POST's stream sends one event and drops). */
  readonly resumed?: string;
}

const REFUSED: Record<string, Case> = {
  'json_below': { request: BIG, json: response(BELOW) },
  'json_below_escaped_key': { request: BIG, json: response(BELOW, ESCAPED_ID_KEY) },
  'json_rounded_exponent': { request: '12345678901234567890123', json: response('1.2345678901234568e+22') },
  'json_fraction_read_as_1': { request: '0.99999999999999999999', json: response('1') },
  'sse_below': { request: BIG, sse: frame(PROGRESS) + frame(response(BELOW)) },
  'sse_below_escaped_key': { request: BIG, sse: frame(PROGRESS) + frame(response(BELOW, ESCAPED_ID_KEY)) },
  'resumed_below': { request: BIG, resumed: frame(response(BELOW)) },
};

const ACCEPTED: Record<string, Case> = {
  'json_exact': { request: BIG, json: response(BIG) },
  'json_exact_escaped_key': { request: BIG, json: response(BIG, ESCAPED_ID_KEY) },
  'json_exact_fraction': { request: '0.99999999999999999999', json: response('0.99999999999999999999') },
  'json_1.0_for_1': { request: '1', json: response('1.0') },
  'json_1e0_for_1': { request: '1', json: response('1e0') },
  'json_1e2_for_100': { request: '100', json: response('1e2') },
  'sse_exact': { request: BIG, sse: frame(PROGRESS) + frame(response(BIG)) },
  'resumed_exact': { request: BIG, resumed: frame(response(BIG)) },
};

const CASES: Record<string, Case> = { ...REFUSED, ...ACCEPTED };
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };

function answer(req: SeenRequest, res: ServerResponse): void {
  const c = CASES[req.url.split('/')[1]!]!;
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(c.resumed);
    return;
  }
  if (c.json !== undefined) return void res.writeHead(200, { 'content-type': 'application/json' }).end(c.json);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (c.sse !== undefined) return void res.end(c.sse);
  // A stream to resume: one event with an id, then the connection drops before the response.
  res.write(frame(PROGRESS, 'e1'));
  setTimeout(() => res.destroy(), 20);
}

const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) =>
    startObservedGateway(
      agentsYaml(
        Object.fromEntries(Object.keys(CASES).map((name) => [name, `${seller.url.replace(/\/mcp$/, '')}/${name}/mcp`])),
        ['resume:', '  secret: response-id-exact-secret-0123456789abcdef'],
      ),
    ),
);
const gw = (): ObservedGateway => stack.gateway;

/** The host's tools/call with its id written as `idText` (JSON.stringify would round it). */
const callBody = (idText: string): string => `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"get_products","arguments":{}}}`;

/** The gateway's upstream_not_mcp answer to this tools/call, its id written as `idText`. */
function expectedError(idText: string): string {
  const json = expectedErrorJson({ id: 0, method: 'tools/call', toolName: 'get_products', reason: 'upstream_not_mcp', upstreamStatus: 200 });
  const head = '{"jsonrpc":"2.0","id":0,';
  assert.ok(json.startsWith(head));
  return `{"jsonrpc":"2.0","id":${idText},${json.slice(head.length)}`;
}

/** The body the host gets for case `name`: the POST's, or (a resumed case) the resuming GET's. */
async function hostAnswer(name: string, c: Case): Promise<{ status: number; contentType: string | null; text: string }> {
  const posted = await rawPost(gw().agentUrl(name), callBody(c.request), HEADERS);
  if (c.resumed === undefined) return { status: posted.status, contentType: posted.headers.get('content-type'), text: posted.text() };
  // The first stream ended plainly after its event id: the host resumes from that event's token.
  const [token] = sseIds(posted.text());
  assert.ok(token, `the first stream's event carries a resume token: ${posted.text()}`);
  const r = await fetch(gw().agentUrl(name), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } });
  return { status: r.status, contentType: r.headers.get('content-type'), text: await r.text() };
}

/** The exchange line of the host's last exchange on agent `name` (the resuming GET's for a resumed case). */
function lastExchange(name: string, resumed: boolean): Promise<LogLine> {
  return gw().waitForLine((l) => l.msg === 'exchange' && l.agent === name && (!resumed || l.method !== 'tools/call' || l.outcome !== 'resumable_end'));
}

describe('a seller response id is the request id only when it is the same JSON-RPC id exactly', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(REFUSED)) {
    test(`${name}: upstream_not_mcp for the request's id ${c.request} as written, not the seller's answer`, async () => {
      const r = await hostAnswer(name, c);
      assert.equal(r.status, 200);
      const sse = c.json === undefined;
      assert.equal(r.contentType, sse ? 'text/event-stream' : 'application/json; charset=utf-8');
      const error = expectedError(c.request);
      if (sse) {
        // The stream's last event is the error; nothing of the seller's response reached the host.
        assert.ok(r.text.endsWith(`event: message\ndata: ${error}\n\n`), r.text);
        assert.equal(r.text.includes('the answer'), false, r.text);
      } else {
        assert.equal(r.text, error);
      }
      const line = await lastExchange(name, c.resumed !== undefined);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
    });
  }

  for (const [name, c] of Object.entries(ACCEPTED)) {
    test(`${name}: the seller's answer is forwarded as it is`, async () => {
      const r = await hostAnswer(name, c);
      assert.equal(r.status, 200);
      if (c.json !== undefined) assert.equal(r.text, c.json);
      else if (c.sse !== undefined) assert.equal(r.text, c.sse);
      else assert.equal(r.text, c.resumed);
      const line = await lastExchange(name, c.resumed !== undefined);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
    });
  }
});
