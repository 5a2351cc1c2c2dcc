/**
 * Regression (a new user's trial, 2026-12-03, F1): a host pipelined valid POSTs on one
 * HTTP/1.1 connection, in one write, followed by a malformed request line
 * (`GARBAGE / HTTP/1.1`). The gateway's 400 `malformed_http` refusal was the first and only
 * answer on the connection, written at once by its clientError handler, which then closed
 * the connection; the valid calls, already forwarded (four of five reached their sellers),
 * were logged `host_aborted`, `status` null, their answers thrown away. A pipelining host
 * matches answers by order: it read the 400 as the answer to its first call, believed
 * nothing was sent, and could retry a state-changing call (`create_media_buy`) and buy twice.
 * RFC 9112 §9.3.2: a server answers pipelined requests in order.
 *
 * Input: seller (node:http) -> gateway -> raw host (node:net), on 127.0.0.1. The host writes,
 * in one write: calls 1 (answered after 100 ms), 2 (unknown agent: refused 404 by the
 * gateway), 3 and 4 (answered at once), then `GARBAGE / HTTP/1.1`.
 * Expected: on the wire, in order, the answers to 1, 2, 3, 4, then the exact 400
 * `malformed_http` refusal (id null, `connection: close`), nothing after, and the connection
 * closed; the exchange lines of 1, 3 and 4 say `ok`, status 200; one `refused` line
 * `malformed_http` (`http_error` HPE_INVALID_METHOD).
 * Bounded: a call whose seller never answers ends by its own response_deadline_ms (its
 * `deadline_exceeded` answer), then the 400 goes out; more bad bytes while it waits get no second
 * refusal. Control: the garbage alone is refused at once, as before.
 * Before the fix: the 400 alone came first (every ordered case failed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson, observedMsAtLeast, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const GARBAGE = 'GARBAGE / HTTP/1.1\r\n\r\n';
const STALL_DEADLINE_MS = 300;

/** The seller's answer to call `id`. */
const answerOf = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: `answer ${id}` }] });

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    if (id === 9) return; // never answered: the gateway's deadline ends it
    const send = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(answerOf(id));
    // The first call is the slowest: the later answers wait behind it on the host's connection.
    if (id === 1) setTimeout(send, 100);
    else send();
  });
}

const stack = useSellerAndGateway(startSeller, (seller) =>
  startObservedGateway(agentsYaml({ s: seller.url, stall: { url: seller.url, response_deadline_ms: STALL_DEADLINE_MS } })),
);
const gw = (): ObservedGateway => stack.gateway;

/** The exact 400 `malformed_http` refusal (errors/client-error.ts). */
const REFUSAL_BODY = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad request: the HTTP request is malformed.', data: { reason: 'malformed_http' } } });
const REFUSAL_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-length': String(Buffer.byteLength(REFUSAL_BODY)), connection: 'close' };

/**
 * Writes `first` on a new connection (then each of `later`, 50 ms apart); resolves with every
 * byte the gateway wrote once it closed the connection (a hang guard rejects after 10 s).
 */
function sendRaw(first: string, later: readonly string[] = []): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the gateway did not close the connection; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`));
    }, 10_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {}); // a write after the gateway closed: what it wrote is what counts
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.write(first);
    later.forEach((bytes, k) => setTimeout(() => socket.writable && socket.write(bytes), 50 * (k + 1)));
  });
}

/** The `refused` lines for a parser rejection (agent null) logged so far. */
const parserRefusals = (): LogLine[] => gw().lines.filter((l) => l.msg === 'refused' && l.http_error !== undefined);

/** Asserts `r` is the exact 400 `malformed_http` refusal. */
function assertRefusal(r: { status: number; headers: Record<string, string>; body: string }): void {
  assert.deepEqual(r, { status: 400, headers: REFUSAL_HEADERS, body: REFUSAL_BODY });
}

describe('a malformed request pipelined after valid ones', () => {
  test('the answers to the calls before it come first, in order, then the 400, then the connection closes', { timeout: TEST_TIMEOUT_MS }, async () => {
    const refusalsBefore = parserRefusals().length;
    const wire = await sendRaw(toolCallRequest(1) + toolCallRequest(2, 'nosuch') + toolCallRequest(3) + toolCallRequest(4) + GARBAGE);
    const { responses, rest } = parseResponses(wire, 5);
    assert.deepEqual(
      responses.slice(0, 4).map((r) => ({ status: r.status, body: r.body })),
      [
        { status: 200, body: answerOf(1) },
        {
          status: 404,
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'Unknown agent "nosuch": no such agent in the gateway config.', data: { reason: 'unknown_agent', agent: 'nosuch' } } }),
        },
        { status: 200, body: answerOf(3) },
        { status: 200, body: answerOf(4) },
      ],
    );
    assertRefusal(responses[4]!);
    assert.equal(rest, '', 'nothing after the 400');

    const lines = await Promise.all([1, 3, 4].map((id) => gw().exchangeLine('s', id)));
    assert.deepEqual(
      lines.map((l) => ({ id: l.rpc_id, outcome: l.outcome, status: l.status })),
      [1, 3, 4].map((id) => ({ id, outcome: 'ok', status: 200 })),
    );
    const refusals = parserRefusals().slice(refusalsBefore);
    assert.deepEqual(
      refusals.map((l) => ({ reason: l.reason, status: l.status, http_error: l.http_error, agent: l.agent })),
      [{ reason: 'malformed_http', status: 400, http_error: 'HPE_INVALID_METHOD', agent: null }],
    );
  });

  test('a call whose seller never answers ends by its deadline (deadline_exceeded), then the 400; more bad bytes meanwhile get no second refusal', { timeout: TEST_TIMEOUT_MS }, async () => {
    const refusalsBefore = parserRefusals().length;
    const wire = await sendRaw(toolCallRequest(8) + toolCallRequest(9, 'stall') + GARBAGE, ['MORE GARBAGE\r\n\r\n', GARBAGE]);
    const { responses, rest } = parseResponses(wire, 3);
    assert.deepEqual({ status: responses[0]!.status, body: responses[0]!.body }, { status: 200, body: answerOf(8) });
    const stalled = responses[1]!;
    assert.equal(stalled.status, 200); // a tools/call's minted error is a tool result (ADCP error)
    const observedMs = observedMsAtLeast(stalled.body, STALL_DEADLINE_MS);
    assert.equal(stalled.body, expectedErrorJson({ id: 9, method: 'tools/call', toolName: 'x', reason: 'deadline_exceeded', limitMs: STALL_DEADLINE_MS, observedMs }));
    assertRefusal(responses[2]!);
    assert.equal(rest, '', 'one 400, nothing after it');

    const stalledLine = await gw().exchangeLine('stall', 9);
    assert.deepEqual({ outcome: stalledLine.outcome, reason: stalledLine.reason, status: stalledLine.status }, { outcome: 'local_error', reason: 'deadline_exceeded', status: 200 });
    assert.equal((await gw().exchangeLine('s', 8)).outcome, 'ok');
    assert.equal(parserRefusals().length - refusalsBefore, 1, 'one refusal logged for the connection');
  });

  test('control: the malformed request alone is refused at once, the connection closed', { timeout: TEST_TIMEOUT_MS }, async () => {
    const refusalsBefore = parserRefusals().length;
    const wire = await sendRaw(GARBAGE);
    const { responses, rest } = parseResponses(wire, 1);
    assertRefusal(responses[0]!);
    assert.equal(rest, '');
    assert.equal(parserRefusals().length - refusalsBefore, 1);
  });
});
