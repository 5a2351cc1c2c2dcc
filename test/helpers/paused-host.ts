/**
 * What the regressions on answers held for hosts that do not read (or read slowly) share: the
 * agents' held-bytes gauges and max_buffered_response_bytes
 * (test/regressions/non-reading-hosts-hold-unbounded-answers,
 * slow-reading-host-cut-by-stall-rule, host-never-reads-the-answer). A raw host on 127.0.0.1
 * that sends one `tools/call` and reads nothing until the test says; a seller answering each
 * call with a JSON result of an exact size, behind agents that cut nothing by time in a test's
 * span; and the check that a host got that whole answer. One copy of what they each wrote
 * (`duplicates`).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponseOfSize, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from './gateway.js';
import { parseResponses, toolCallRequest } from './http-wire.js';
import { useSellerAndGateway, type SellerAndGateway } from './stack.js';
import { withTimeout } from './timeout.js';

/**
 * A host that connects to the gateway at `baseUrl`, writes a `tools/call` with JSON-RPC id `id`
 * to `agent` (toolCallRequest) and reads nothing: its socket is paused before any byte arrives
 * (`resume()` or `read()` to read). A socket error (a reset) is swallowed: 'close' follows it.
 * Resolves once the request is written; hang guard: 10 s to connect.
 */
export async function pausedHost(baseUrl: string, agent: string, id: number): Promise<net.Socket> {
  const socket = net.connect(Number(new URL(baseUrl).port), '127.0.0.1');
  socket.pause();
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => {}); // a reset: 'close' follows
  await withTimeout(connected, 10_000, 'connect');
  socket.write(toolCallRequest(id, agent));
  return socket;
}

/** Whether `wire` holds one whole response: its head and a body as long as its Content-Length. */
export function holdsWholeResponse(wire: Buffer): boolean {
  const s = wire.toString('latin1');
  const head = s.indexOf('\r\n\r\n');
  if (head < 0) return false;
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(s.slice(0, head))?.[1]);
  return s.length - head - 4 >= length;
}

/** Answers call `id` with HTTP 200 and a JSON result of exactly `bytes` ({@link toolResponseOfSize}). */
export function answerOfSize(res: ServerResponse, id: number, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(toolResponseOfSize(id, bytes));
}

/**
 * A raw seller answering each call by its JSON-RPC id: `answer(res, id)` where it returns true,
 * else {@link answerOfSize} of `bytes`; behind an observed gateway whose agents (name ->
 * max_buffered_response_bytes) each take a response of up to 2 x `bytes`, with
 * response_deadline_ms and sse_idle_timeout_ms 60 s (no cut in these tests is a timeout's).
 */
export function useSizedAnswerStack(
  bytes: number,
  caps: Readonly<Record<string, number>>,
  answer: (res: ServerResponse, id: number) => boolean = () => false,
): SellerAndGateway<RawSeller, ObservedGateway> {
  return useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
        if (!answer(res, id)) answerOfSize(res, id, bytes);
      }),
    (seller) =>
      startObservedGateway(
        agentsYaml(
          Object.fromEntries(
            Object.entries(caps).map(([agent, cap]) => [
              agent,
              { url: seller.url, max_buffered_response_bytes: cap, max_response_bytes: 2 * bytes, response_deadline_ms: 60000, sse_idle_timeout_ms: 60000 },
            ]),
          ),
        ),
      ),
  );
}

/**
 * Asserts that `wire` is the seller's whole answer to call `id`: one 200 response whose body is,
 * byte for byte, {@link toolResponseOfSize} of `bytes`; and that `agent`'s exchange line for it
 * says `ok`, no reason, status 200 (waited for 10 s at most).
 */
export async function assertWholeAnswer(gateway: ObservedGateway, agent: string, id: number, wire: Buffer, bytes: number): Promise<void> {
  const { responses } = parseResponses(wire, 1);
  assert.equal(responses[0]!.status, 200);
  assert.ok(responses[0]!.body === toolResponseOfSize(id, bytes), 'the whole answer, byte for byte');
  const line = await gateway.exchangeLine(agent, id, 10_000);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'ok', reason: null, status: 200 });
}
