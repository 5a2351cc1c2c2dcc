/**
 * Regression (Defect A of a hostile review): an MCP request with no Host header (HTTP/1.1) or
 * with two gets 400 `malformed_http` with `Connection: close` from the handler. Valid
 * requests the host pipelined behind it in the same write were still routed and FORWARDED TO
 * THEIR SELLERS, and their answers never written: Node's HTTP server destroys the connection
 * once the `close` answer is written, and writes nothing queued behind it. A `tools/call`
 * such as `create_media_buy` ran at the seller while the host, seeing no answer, sends it
 * again (RFC 9112 §9.3.2): a duplicated state-changing call. RFC 9112 §9.6: a server that
 * sends `close` MUST NOT process any further request on that connection. The same held behind
 * the 417 `expectation_failed` (also `Connection: close`).
 *
 * Now a request queued behind an answer that closes the connection is not processed: not
 * sent to any seller, not refused, not logged, not counted (src/routing/closing-answers.ts).
 *
 * Input: a real seller (node:http) that records every request it receives and answers call 1
 * after 200 ms (so the answers behind it queue on the host's connection), any other at once
 * -> gateway (agent `s`) -> raw host (node:net), on 127.0.0.1. Each case writes its requests
 * in one write on a new connection and reads until the gateway closes it:
 * - call 1, a POST with no Host (id 2), calls 3 and 4;
 * - call 1, a POST with two Host fields (id 2), call 3;
 * - call 1, a POST with no Host (id 2), a DELETE and a GET (no body: their handler runs
 *   before the POST's, whose body is still being read);
 * - a POST with no Host first (its answer not queued), call 3, a DELETE;
 * - behind a POST with no Host (after a slow call, or first): a PUT and a call to an unknown
 *   agent, which get refusals (405, 404) that are never written;
 * - call 1, a POST with `Expect: something-else` (id 2), call 3;
 * - control, order kept: call 1, call 3, a GET with no Host, call 4 (3 is before the 400).
 * Expected: on the wire, the answers before the closing one, the exact closing answer
 * (`connection: close`), nothing after, the connection closed; the seller received only the
 * requests before the closing one; one `refused` line and one count for the closing answer,
 * an `exchange` line for each call answered and no line for any request behind it.
 * Before the fix: the requests behind the 400 or the 417 reached the seller (and were logged
 * `host_aborted`), and the refusals behind the 400 were logged `refused` and counted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { exchangeUntilClose, parseResponses, toolCallRequest, type Parsed } from '../helpers/http-wire.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const SLOW_ID = 1;

/** The seller's answer to call `id`. */
const answerOf = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: `answer ${id}` }] });

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(200).end();
      return;
    }
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    const send = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(answerOf(id));
    // The first call is slow: the answers behind it queue on the host's connection.
    if (id === SLOW_ID) setTimeout(send, 200);
    else send();
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ s: seller.url })));
const gw = (): ObservedGateway => stack.gateway;

/** A `tools/call` (id `id`) as toolCallRequest writes it, with its Host line replaced by `hostLines`. */
function callWithHosts(id: number, hostLines: readonly string[]): string {
  return toolCallRequest(id).replace('Host: 127.0.0.1\r\n', hostLines.map((h) => `Host: ${h}\r\n`).join(''));
}
const noHost = (id: number): string => callWithHosts(id, []);
const twoHosts = (id: number): string => callWithHosts(id, ['127.0.0.1', '127.0.0.1']);
const unmetExpect = (id: number): string => toolCallRequest(id).replace('Host: 127.0.0.1\r\n', 'Host: 127.0.0.1\r\nexpect: something-else\r\n');
const DELETE = 'DELETE /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nmcp-session-id: session-1\r\n\r\n';
const GET_STREAM = 'GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n';
const GET_NO_HOST = 'GET /agents/s/mcp HTTP/1.1\r\naccept: text/event-stream\r\n\r\n';
const PUT = 'PUT /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/** The exact body of a refusal for id null. */
const refusalBody = (reason: string, message: string): string => JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason } } });
const NO_HOST_400 = { status: 400, connection: 'close', body: refusalBody('malformed_http', 'Bad request: an HTTP/1.1 request must carry a Host header.') };
const TWO_HOSTS_400 = { status: 400, connection: 'close', body: refusalBody('malformed_http', 'Bad request: a request must carry one Host header, not several (RFC 9112 §3.2).') };
const UNMET_417 = { status: 417, connection: 'close', body: refusalBody('expectation_failed', 'Expectation failed: the gateway meets no Expect header but 100-continue.') };

/** What the seller received: `POST <id>` or the method. */
function received(seller: RawSeller, from: number): string[] {
  return seller.requests.slice(from).map((r) => (r.method === 'POST' ? `POST ${(JSON.parse(r.body.toString('utf8')) as { id: number }).id}` : r.method));
}

/** A response as the cases compare it. */
function shown(r: Parsed): { status: number; connection: string | undefined; body: string } {
  return { status: r.status, connection: r.headers.connection, body: r.body };
}

/** A call's answer as the seller gave it (keep-alive). */
const answered = (id: number): ReturnType<typeof shown> => ({ status: 200, connection: 'keep-alive', body: answerOf(id) });

/** The refusal reasons whose counts the cases compare. */
const COUNTED = ['malformed_http', 'expectation_failed', 'method_not_allowed', 'unknown_agent'];

interface Case {
  name: string;
  text: string;
  /** The answers on the wire, in order; the last one closes the connection. */
  wire: ReturnType<typeof shown>[];
  /** What the seller received. */
  seller: string[];
  /** The `exchange` lines (rpc ids) and the one `refused` line. */
  exchanges: number[];
  refused: { reason: string; status: number; http_method: string };
}

const CASES: Case[] = [
  {
    name: 'a POST with no Host behind a slow call, then calls 3 and 4: 1, the 400, the close; 3 and 4 never reach the seller',
    text: toolCallRequest(1) + noHost(2) + toolCallRequest(3) + toolCallRequest(4),
    wire: [answered(1), NO_HOST_400],
    seller: ['POST 1'],
    exchanges: [1],
    refused: { reason: 'malformed_http', status: 400, http_method: 'POST' },
  },
  {
    name: 'a POST with two Host fields behind a slow call, then call 3: 1, the 400, the close; 3 never reaches the seller',
    text: toolCallRequest(1) + twoHosts(2) + toolCallRequest(3),
    wire: [answered(1), TWO_HOSTS_400],
    seller: ['POST 1'],
    exchanges: [1],
    refused: { reason: 'malformed_http', status: 400, http_method: 'POST' },
  },
  {
    name: 'a POST with no Host, then a DELETE and a GET, whose handlers run before the POST has its body: neither reaches the seller',
    text: toolCallRequest(1) + noHost(2) + DELETE + GET_STREAM,
    wire: [answered(1), NO_HOST_400],
    seller: ['POST 1'],
    exchanges: [1],
    refused: { reason: 'malformed_http', status: 400, http_method: 'POST' },
  },
  {
    name: 'a POST with no Host first (its answer not queued), then call 3 and a DELETE: the 400, the close; nothing reaches the seller',
    text: noHost(2) + toolCallRequest(3) + DELETE,
    wire: [NO_HOST_400],
    seller: [],
    exchanges: [],
    refused: { reason: 'malformed_http', status: 400, http_method: 'POST' },
  },
  {
    name: 'refusals behind the 400 (a PUT: 405; a call to an unknown agent: 404) are never written: neither logged nor counted',
    text: toolCallRequest(1) + noHost(2) + PUT + toolCallRequest(5, 'nobody'),
    wire: [answered(1), NO_HOST_400],
    seller: ['POST 1'],
    exchanges: [1],
    refused: { reason: 'malformed_http', status: 400, http_method: 'POST' },
  },
  {
    name: 'the same with the 400 first: the PUT and the call, parsed once the 400 is written, are neither logged nor counted',
    text: noHost(2) + PUT + toolCallRequest(5, 'nobody'),
    wire: [NO_HOST_400],
    seller: [],
    exchanges: [],
    refused: { reason: 'malformed_http', status: 400, http_method: 'POST' },
  },
  {
    name: 'an unmet Expect behind a slow call, then call 3: 1, the 417, the close; 3 never reaches the seller',
    text: toolCallRequest(1) + unmetExpect(2) + toolCallRequest(3),
    wire: [answered(1), UNMET_417],
    seller: ['POST 1'],
    exchanges: [1],
    refused: { reason: 'expectation_failed', status: 417, http_method: 'POST' },
  },
  {
    name: 'control, order kept: call 3 before a GET with no Host is answered; call 4 after it never reaches the seller',
    text: toolCallRequest(1) + toolCallRequest(3) + GET_NO_HOST + toolCallRequest(4),
    wire: [answered(1), answered(3), NO_HOST_400],
    seller: ['POST 1', 'POST 3'],
    exchanges: [1, 3],
    refused: { reason: 'malformed_http', status: 400, http_method: 'GET' },
  },
];

describe('requests pipelined behind an answer that closes the connection', () => {
  for (const c of CASES) {
    test(c.name, OPTIONS, async () => {
      const sellerBefore = stack.seller.requests.length;
      const linesBefore = gw().lines.length;
      const metricsBefore = await gw().app.gateway.metrics.render();

      const wire = await withTimeout(exchangeUntilClose(gw().baseUrl, c.text), 10_000, 'the close of the connection');
      const { responses, rest } = parseResponses(Buffer.from(wire, 'utf8'), c.wire.length);
      assert.deepEqual(responses.map(shown), c.wire);
      assert.equal(rest, '', 'nothing after the closing answer');

      // Every exchange answered has written its line (each ends once its answer is written).
      for (const id of c.exchanges) await gw().exchangeLine('s', id, 5_000);
      assert.deepEqual(received(stack.seller, sellerBefore), c.seller);
      const lines = gw().lines.slice(linesBefore);
      assert.deepEqual(
        lines.filter((l) => l.msg === 'exchange').map((l) => ({ rpc_id: l.rpc_id, outcome: l.outcome, status: l.status })),
        c.exchanges.map((id) => ({ rpc_id: id, outcome: 'ok', status: 200 })),
      );
      assert.deepEqual(
        lines.filter((l) => l.msg === 'refused').map((l) => ({ reason: l.reason, status: l.status, http_method: l.http_method })),
        [c.refused],
      );
      // One count, the closing answer's; none for a refusal never written.
      const metricsAfter = await gw().app.gateway.metrics.render();
      assert.deepEqual(
        COUNTED.filter((reason) => refusalCountIn(metricsAfter, reason) !== refusalCountIn(metricsBefore, reason)).map((reason) => [reason, refusalCountIn(metricsAfter, reason) - refusalCountIn(metricsBefore, reason)]),
        [[c.refused.reason, 1]],
      );
    });
  }
});
