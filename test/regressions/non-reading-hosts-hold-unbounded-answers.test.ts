/**
 * Regression (hostile trial 54, F3): answers held for hosts that do not read were bounded by
 * nothing. `max_buffered_response_bytes` counted an answer only while it was received from the
 * seller; once written to the host's response (Node's writable buffer), nothing counted it, and
 * it stayed until the host took it or its time ran out (response_deadline_ms for a JSON answer,
 * sse_idle_timeout_ms after an SSE stream's end or since its last drain: 5 minutes by default).
 * 150 hosts with a 4 KiB receive buffer each calling a ~4 MB tool took the gateway's RSS from
 * 396 to 744 MB, with `adcp_gateway_agent_buffered_response_bytes` at 0.
 *
 * Input: seller (node:http) -> gateway -> raw hosts (net.connect, paused before any byte
 * arrives: the kernel buffers a few MiB, so answers are ANSWER_BYTES, 16 MiB), all on
 * 127.0.0.1. Agents `count` (max_buffered_response_bytes 64 MiB: the answers below stay
 * under it) and `a` (CAP, 1 MiB); response_deadline_ms and sse_idle_timeout_ms 60 s for both
 * (never reached here: no cut below is a timeout's). The seller answers by the id's last digit:
 * 1 and 4 a JSON result, 2 an SSE stream of one large progress event left open, 3 an SSE
 * stream of the result.
 * Expectation (docs/configuration.md max_buffered_response_bytes; agent-guard.ts HostHold):
 * 1. (`count`) a JSON answer the gateway ended, and an SSE stream waiting for its host to drain
 *    an event, count what the host's response still holds (its socket's `writableLength`,
 *    exactly, and nothing else: the stream's event is no longer counted as received) in
 *    `adcp_gateway_agent_buffered_response_bytes` and `adcp_gateway_agent_host_held_response_bytes`;
 * 2. (`a`, CAP 1 MiB) two non-reading hosts' answers take the agent over its cap and are
 *    counted (the gauges: what their responses hold, exactly); a third call's answer is still
 *    received meanwhile (over the cap the agent's answers are received one at a time, oldest
 *    first, and it is the only one being received) and counted too; nothing cuts a host for
 *    holding that room (its own timeouts do, 60 s here): the first host, reading at last, gets
 *    its whole answer, exchange line `ok`;
 * 3. a host that reads gets its whole answer meanwhile: non-readers never stall the agent.
 * Before 502540d all 3 failed: the gauges counted 0; and the reading host's answer waited out
 * its 10 s guard: the paused stream's lease still counted its 16 MiB event, already written
 * to its host, while the stream waited for the drain, so that stream was the agent's "oldest"
 * and every other answer waited behind it until its sse_idle_timeout_ms (the stage now sets
 * its lease before waiting for the host). Case 2 asserted a cut then (hosts that took nothing
 * for 1 s while the agent was over its cap were reset); that cut also reset hosts reading
 * slowly but steadily (test/regressions/slow-reading-host-cut-by-stall-rule.test.ts) and is
 * gone. Waits here are hang guards, never timings.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { toolResponseOfSize } from '../support/raw-seller.js';
import type { ObservedGateway } from '../support/hostile-seller.js';
import { toolCallRequest } from '../helpers/http-wire.js';
import { assertWholeAnswer, holdsWholeResponse, pausedHost as startPausedHost, useSizedAnswerStack } from '../helpers/paused-host.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const MIB = 1024 * 1024;
const ANSWER_BYTES = 16 * MIB;
const CAP = MIB;

/** A progress notification event of exactly `bytes`. */
function progressEvent(bytes: number): string {
  const head = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"`;
  const tail = '"}}\n\n';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

/** The SSE streams the seller left open. */
const open: ServerResponse[] = [];
/** The seller's SSE answers, by the JSON-RPC id's last digit (module doc); the others a JSON result of ANSWER_BYTES. */
function sseAnswer(res: ServerResponse, id: number): boolean {
  if (id % 10 === 2) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(progressEvent(ANSWER_BYTES));
    open.push(res);
    return true;
  }
  if (id % 10 === 3) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`event: message\ndata: ${toolResponseOfSize(id, ANSWER_BYTES)}\n\n`);
    return true;
  }
  return false;
}

const stack = useSizedAnswerStack(ANSWER_BYTES, { count: 64 * MIB, a: CAP }, sseAnswer);
const gw = (): ObservedGateway => stack.gateway;

/** The gateway's socket to each host, by the host's port. */
const hostSockets = new Map<number, net.Socket>();
const gatewaySide = (host: net.Socket): net.Socket => hostSockets.get(host.localPort!)!;

/** A host that sends a tools/call to `agent` and reads nothing (paused before any byte arrives). */
async function pausedHost(id: number, agent: string): Promise<net.Socket> {
  if (hostSockets.size === 0) gw().app.server.on('connection', (s: net.Socket) => hostSockets.set(s.remotePort!, s));
  return startPausedHost(gw().baseUrl, agent, id);
}

/** Both gauges of `agent` from one scrape (a missing series reads 0). */
async function gauges(agent: string): Promise<{ held: number; hostHeld: number }> {
  const text = await (await fetch(`${gw().baseUrl}/metrics`)).text();
  const value = (name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{agent="${agent}"} `));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return { held: value('adcp_gateway_agent_buffered_response_bytes'), hostHeld: value('adcp_gateway_agent_host_held_response_bytes') };
}

/** Waits (at most 1000 looks, 10 ms apart: a hang guard) until `ok()`. */
async function until(ok: () => boolean | Promise<boolean>): Promise<void> {
  for (let k = 0; k < 1000 && !(await ok()); k++) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Reads `socket` (resumed) until it holds one whole response (head and Content-Length body); its bytes. */
async function wholeAnswer(socket: net.Socket): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const whole = new Promise<void>((resolve, reject) => {
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size >= ANSWER_BYTES && holdsWholeResponse(Buffer.concat(chunks))) resolve();
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed after ${size} bytes`)));
  });
  socket.resume();
  await withTimeout(whole, 10_000, 'the whole answer');
  return Buffer.concat(chunks);
}

describe('answers held for hosts that do not read count against max_buffered_response_bytes', () => {
  const hosts: net.Socket[] = [];

  test('counted: an ended JSON answer and an SSE stream waiting for its drain, what their responses hold, exactly', { timeout: TEST_TIMEOUT_MS }, async () => {
    const json = await pausedHost(1, 'count');
    // Written (and so ended) once the gateway's socket holds what the kernel did not take.
    await until(() => (gatewaySide(json)?.writableLength ?? 0) > 4 * MIB);
    const one = gatewaySide(json).writableLength;
    assert.deepEqual(await gauges('count'), { held: one, hostHeld: one });

    const stream = await pausedHost(2, 'count');
    await until(() => (gatewaySide(stream)?.writableLength ?? 0) > 4 * MIB);
    const two = gatewaySide(stream).writableLength;
    assert.deepEqual(await gauges('count'), { held: one + two, hostHeld: one + two });
    json.destroy();
    stream.destroy();
    await until(async () => (await gauges('count')).held === 0);
    assert.deepEqual(await gauges('count'), { held: 0, hostHeld: 0 }, 'released once the hosts left');
  });

  test('over the cap, answers held for hosts are counted, a third call is still answered, and no host is cut for holding room', { timeout: TEST_TIMEOUT_MS }, async () => {
    hosts.push(await pausedHost(11, 'a'), await pausedHost(12, 'a'));
    await until(() => hosts.every((h) => (gatewaySide(h)?.writableLength ?? 0) > 4 * MIB));
    const two = gatewaySide(hosts[0]!).writableLength + gatewaySide(hosts[1]!).writableLength;
    assert.ok(two > CAP);
    assert.deepEqual(await gauges('a'), { held: two, hostHeld: two });

    // The agent is over its cap: the third call's answer, the only one being received, is.
    hosts.push(await pausedHost(13, 'a'));
    await until(() => (gatewaySide(hosts[2]!)?.writableLength ?? 0) > 4 * MIB);
    const three = two + gatewaySide(hosts[2]!).writableLength;
    assert.deepEqual(await gauges('a'), { held: three, hostHeld: three });
    assert.deepEqual(
      hosts.map((h) => gatewaySide(h).destroyed),
      [false, false, false],
      'no host cut for holding room',
    );

    // The first host reads at last: its whole answer, the exchange `ok`; its bytes released.
    const first = hosts.shift()!;
    await assertWholeAnswer(gw(), 'a', 11, await wholeAnswer(first), ANSWER_BYTES);
    first.destroy();
    const rest = gatewaySide(hosts[0]!).writableLength + gatewaySide(hosts[1]!).writableLength;
    await until(async () => (await gauges('a')).held === rest);
    assert.deepEqual(await gauges('a'), { held: rest, hostHeld: rest });
  });

  test('a host that reads gets its whole answer while others hold the agent over its cap', { timeout: TEST_TIMEOUT_MS }, async () => {
    const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
    socket.write(toolCallRequest(14, 'a'));
    const wire = await wholeAnswer(socket);
    socket.destroy();
    await assertWholeAnswer(gw(), 'a', 14, wire, ANSWER_BYTES);
    for (const host of hosts) host.destroy();
    for (const res of open) res.destroy();
  });
});
