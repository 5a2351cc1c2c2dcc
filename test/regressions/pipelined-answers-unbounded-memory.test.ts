/**
 * Regression (a hostile new-user trial 15, H1): answers waiting behind a pipelined answer had
 * no bound. With HTTP/1.1 pipelining, a request whose response was queued behind an earlier
 * one on its connection was still forwarded to its seller at once, and its whole answer then
 * sat in the queued response's output buffer, outside max_buffered_response_bytes (which
 * counts bytes only while they are received) and outside any other bound: 3 connections x 100
 * pipelined `tools/call` with 2 MB answers took the gateway's RSS from 94 MB to 1,236 MB; a
 * slow call at the head and 100 calls of 3 MB behind it, 682 MB; 100 calls behind a GET
 * stream, 674 MB for as long as the stream lived.
 *
 * Now a pipelined request is sent to its seller only at its turn, once the answer before it
 * was written (src/routing/pipelined-turn.ts): one answer per connection is received or held
 * at a time. At most 16 requests wait per connection; one more is refused
 * `pipeline_too_deep` (503, its id), unsent, the connection kept; a request whose
 * response_deadline_ms (from its arrival) is nearly gone when its turn comes is answered
 * `pipeline_wait`, unsent.
 *
 * Input: a real seller (node:http) -> gateway -> raw host (node:net), on 127.0.0.1, one
 * connection per case, every request of a case in one write:
 * - agent `big` (max_response_bytes 32 MiB, response_deadline_ms 8000: the answer takes a
 *   second or more to arrive and be handed to the host's connection on a loaded 2-core VM,
 *   and must, for the deadline to find the host not reading it): calls 201-203, each
 *   answered with a 16 MiB result (more than loopback's socket buffers take), to a host that
 *   never reads;
 * - agent `m`: calls 101-106, each answered with a 200 KB result 100 ms after it arrives, to a
 *   host that reads;
 * - agent `h`: calls 1-19, call 1 held by the seller until the test lets it go, the others
 *   answered at once; then call 20 on the same connection;
 * - agent `d` (response_deadline_ms 1000): call 41, which the seller never answers, then 42.
 * Expected:
 * - `big`: the seller gets 201 only (202 and 203 wait behind its answer, which the host never
 *   takes); 201 ends `host_not_reading`, its connection reset, and 202 and 203 are released:
 *   no line, nothing waiting, no exchange open.
 * - `m`: the seller never has two of the calls at once (each arrives after the answer before
 *   it was written), and the host gets the six answers in order.
 * - `h`: while call 1 is held, 16 calls wait (`adcp_gateway_pipelined_requests_waiting` 16);
 *   the host gets 1-17 (the seller's answers), then for 18 and 19 the exact 503
 *   `pipeline_too_deep` refusal for their ids, on a connection that stays open (call 20 is
 *   answered); the seller got 1-17 and 20 only; two `refused` lines, counted.
 * - `d`: 41 gets `deadline_exceeded`, then 42 `pipeline_wait` (limit_ms 1000), and the seller
 *   never got 42; 42's line says so, its duration_ms covering its wait.
 * Before the fix: the seller got 202 and 203 at once (3 x 16 MiB held), had all six `m` calls
 * at once, got 18, 19 and 42, and nothing waited (no gauge).
 * Timeouts here are hang guards, never timings; the `m` seller's 100 ms only lets calls
 * forwarded at once overlap.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse, toolResponseOfSize, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson, observedMsAtLeast, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { openRawConnection, parseResponses, toolCallRequest, type Parsed, type RawConnection } from '../helpers/http-wire.js';
import { refusalCount } from '../helpers/refusal-count.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const MIB = 1024 * 1024;
const BIG_ANSWER_BYTES = 16 * MIB;
const BIG_DEADLINE_MS = 8000;
const M_ANSWER_BYTES = 200_000;
const D_DEADLINE_MS = 1000;
const OPTIONS = { timeout: TEST_TIMEOUT_MS * 2 };

/** The small answer the seller gives call `id`. */
const answerOf = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: `answer ${id}` }] });

/** Seller-side state the cases read. */
let releaseHeld: (() => void) | undefined;
let inFlight = 0;
let maxInFlight = 0;

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    const json = (text: string): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    if (id >= 201) json(toolResponseOfSize(id, BIG_ANSWER_BYTES));
    else if (id >= 101) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.once('finish', () => inFlight--);
      setTimeout(() => json(toolResponseOfSize(id, M_ANSWER_BYTES)), 100);
    } else if (id === 1) releaseHeld = () => json(answerOf(id));
    else if (id === 41) res.writeHead(200, { 'content-type': 'application/json' }); // never ends
    else json(answerOf(id));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) =>
  startObservedGateway(
    agentsYaml({
      big: { url: seller.url, max_response_bytes: 32 * MIB, response_deadline_ms: BIG_DEADLINE_MS },
      m: { url: seller.url },
      h: { url: seller.url },
      d: { url: seller.url, response_deadline_ms: D_DEADLINE_MS },
    }),
  ),
);
const gw = (): ObservedGateway => stack.gateway;

/** The JSON-RPC ids of the calls the seller received with an id in [from, to]. */
function sellerGot(from: number, to: number): number[] {
  return stack.seller.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { id: number }).id).filter((id) => id >= from && id <= to);
}

/** Waits for `ready`: at most 1500 looks, 10 ms apart (a hang guard, not a timing). */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let k = 0; k < 1500 && !ready(); k++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(ready(), what);
}

/**
 * The first `n` responses on `conn` once each body is as long as its Content-Length (the
 * gateway's answers here carry one; responsesWhenWhole waits for whole heads only).
 */
async function wholeResponses(conn: RawConnection, n: number, what: string): Promise<{ responses: Parsed[]; rest: string }> {
  let got: { responses: Parsed[]; rest: string } | undefined;
  await until(() => {
    try {
      got = parseResponses(Buffer.from(conn.text(), 'latin1'), n);
    } catch {
      return false;
    }
    return got.responses.every((r) => Buffer.byteLength(r.body) === Number(r.headers['content-length']));
  }, what);
  return got!;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const pipelined = (ids: readonly number[], agent: string): string => ids.map((id) => toolCallRequest(id, agent)).join('');

/** The exact body of the `pipeline_too_deep` refusal of call `id`. */
const tooDeepBody = (id: number): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32027,
      message:
        'Too many requests pipelined on one connection: 16 already wait for the answers before them. This one was not sent to any seller: send it again once earlier answers have arrived, or on another connection.',
      data: { reason: 'pipeline_too_deep', limit_requests: 16 },
    },
  });

describe('answers waiting behind a pipelined answer', () => {
  test('a host that never reads: the seller gets the first call only; the others are released, unsent, when its connection is reset', OPTIONS, async () => {
    const rssBefore = process.memoryUsage().rss;
    const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
    socket.pause(); // never reads
    socket.on('error', () => {});
    socket.write(pipelined([201, 202, 203], 'big'));
    await until(() => sellerGot(201, 203).length > 0, 'the seller got the first call');
    // The write's requests were all parsed in the read that gave call 201 (one small write).
    const waitingThen = gw().app.gateway.pipelinedWaiting;
    const line = await gw().exchangeLine('big', 201, BIG_DEADLINE_MS + 10_000);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'host_not_reading' });
    console.log(`RSS of the test process (gateway and seller in it): ${Math.round(rssBefore / MIB)} MB before, ${Math.round(process.memoryUsage().rss / MIB)} MB after`);
    assert.deepEqual(sellerGot(201, 203), [201], 'the seller got the first call only');
    assert.equal(waitingThen, 2, 'calls waiting for their turn while the first was answered');
    await until(() => gw().app.gateway.pipelinedWaiting === 0 && gw().app.gateway.openExchanges === 0, 'nothing waits, no exchange open');
    assert.equal(
      gw().lines.some((l) => l.rpc_id === 202 || l.rpc_id === 203),
      false,
      'no line for the calls never sent',
    );
    socket.destroy();
  });

  test('a host that reads: the seller never has two calls of the connection at once; the answers come in order', OPTIONS, async () => {
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    try {
      const ids = range(101, 106);
      conn.socket.write(pipelined(ids, 'm'));
      const { responses, rest } = await wholeResponses(conn, ids.length, 'the six answers');
      assert.equal(rest, '');
      assert.deepEqual(
        responses.map((r) => ({ status: r.status, id: (JSON.parse(r.body) as { id: number }).id })),
        ids.map((id) => ({ status: 200, id })),
      );
      assert.deepEqual(sellerGot(101, 106), ids);
      assert.equal(maxInFlight, 1, 'calls the seller had at once');
    } finally {
      conn.socket.destroy();
    }
  });

  test('16 wait; the 17th and 18th waiting get the exact 503 pipeline_too_deep for their ids, unsent; the connection stays open', OPTIONS, async () => {
    const before = await refusalCount(gw().baseUrl, 'pipeline_too_deep');
    const linesBefore = gw().lines.length;
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    try {
      conn.socket.write(pipelined(range(1, 19), 'h'));
      await until(() => releaseHeld !== undefined, 'the seller holds call 1');
      // The write's requests were all parsed in the read that gave call 1 (one 6 KB write);
      // a few turns of the event loop let nothing else change.
      for (let k = 0; k < 5; k++) await new Promise((resolve) => setImmediate(resolve));
      const waitingThen = gw().app.gateway.pipelinedWaiting;
      const metrics = await (await fetch(`${gw().baseUrl}/metrics`)).text();
      releaseHeld!();

      const { responses, rest } = await wholeResponses(conn, 19, 'the 19 answers');
      assert.equal(rest, '');
      assert.deepEqual(
        responses.slice(0, 17).map((r) => ({ status: r.status, body: r.body })),
        range(1, 17).map((id) => ({ status: 200, body: answerOf(id) })),
      );
      assert.deepEqual(
        responses.slice(17).map((r) => ({ status: r.status, type: r.headers['content-type'], connection: r.headers.connection, body: r.body })),
        [18, 19].map((id) => ({ status: 503, type: 'application/json', connection: 'keep-alive', body: tooDeepBody(id) })),
      );
      // The connection is open: the next call is answered.
      conn.socket.write(toolCallRequest(20, 'h'));
      const after = await wholeResponses(conn, 20, 'call 20');
      assert.deepEqual({ status: after.responses[19]!.status, body: after.responses[19]!.body }, { status: 200, body: answerOf(20) });
      assert.deepEqual(sellerGot(1, 20), [...range(1, 17), 20]);
      assert.equal(waitingThen, 16, 'calls waiting for their turn while call 1 was held');
      assert.match(metrics, /^adcp_gateway_pipelined_requests_waiting 16$/m);

      const refused = gw()
        .lines.slice(linesBefore)
        .filter((l) => l.msg === 'refused')
        .map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method }));
      assert.deepEqual(refused, [18, 19].map(() => ({ reason: 'pipeline_too_deep', status: 503, agent: 'h', http_method: 'POST' })));
      assert.equal(await refusalCount(gw().baseUrl, 'pipeline_too_deep'), before + 2);
      assert.equal(gw().app.gateway.pipelinedWaiting, 0);
    } finally {
      conn.socket.destroy();
    }
  });

  test('a call whose turn comes after its deadline is answered pipeline_wait, unsent', OPTIONS, async () => {
    const conn = await openRawConnection(Number(new URL(gw().baseUrl).port));
    try {
      conn.socket.write(pipelined([41, 42], 'd'));
      const { responses } = await wholeResponses(conn, 2, 'both answers');
      const expected = (id: number, reason: 'deadline_exceeded' | 'pipeline_wait', text: string, atLeast: number): string =>
        expectedErrorJson({ id, method: 'tools/call', toolName: 'x', reason, limitMs: D_DEADLINE_MS, observedMs: observedMsAtLeast(text, atLeast) });
      assert.deepEqual(
        responses.map((r) => ({ status: r.status, body: r.body })),
        [
          { status: 200, body: expected(41, 'deadline_exceeded', responses[0]!.body, D_DEADLINE_MS) },
          // It waited as long as 41 took, less the moment between their arrivals.
          { status: 200, body: expected(42, 'pipeline_wait', responses[1]!.body, 0) },
        ],
      );
      assert.deepEqual(sellerGot(41, 42), [41]);
      const line = await gw().exchangeLine('d', 42, 10_000);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'local_error', reason: 'pipeline_wait', status: 200 });
      // Its duration runs from its arrival, the wait included (observed_ms is rounded to 1 ms).
      const waited = observedMsAtLeast(responses[1]!.body, 0);
      assert.ok((line.duration_ms as number) >= waited - 1, `duration_ms ${String(line.duration_ms)} covers the ${waited} ms wait`);
    } finally {
      conn.socket.destroy();
    }
  });
});
