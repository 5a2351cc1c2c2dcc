/**
 * Regression (a re-read of 502540d, hostile trial 54, F3's fix): a host reading slowly but
 * steadily was reset `host_not_reading` by the stall rule. That fix cut, while an agent was over
 * `max_buffered_response_bytes`, the hosts whose response's `writableLength` had not gone down
 * for HOST_STALL_MS (1 s); but Node does not lower `writableLength` while one write is in
 * progress: a 4 MiB `res.end(buf)` reads 4194464 until the socket has taken all of it, so a host
 * taking the answer at ~640 KB/s looked stalled the whole time. Probe (the reviewer's): host A
 * reading 32 KiB every 50 ms was reset at 1.75 s with 1,147,904 bytes read, exchange line
 * `local_error host_not_reading`, once two non-reading hosts called the same agent.
 *
 * Input: seller (node:http) answering every tools/call with a 4 MiB JSON result -> gateway
 * (agent `a`: max_buffered_response_bytes 6 MiB, response_deadline_ms and sse_idle_timeout_ms
 * 60 s) -> raw hosts on 127.0.0.1: A reads 32 KiB every 50 ms from the start; 1.5 s in, host B calls and reads
 * nothing; 0.5 s later host C does the same (A's and B's answers, 4 MiB each as Node counts a
 * write in progress, take the agent over its cap).
 * Expectation (docs/configuration.md max_buffered_response_bytes): nothing cuts a host before
 * its own timeouts; A gets its whole answer, byte for byte, and its exchange line says `ok`.
 * Before the fix both assertions failed (A was reset: a short read, `local_error`
 * `host_not_reading`). The sleeps only place B and C while A is mid-answer (A needs ~6.5 s);
 * the waits are hang guards, never timings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ObservedGateway } from '../support/hostile-seller.js';
import { assertWholeAnswer, holdsWholeResponse, pausedHost, useSizedAnswerStack } from '../helpers/paused-host.js';
import { withTimeout } from '../helpers/timeout.js';

const MIB = 1024 * 1024;
const ANSWER_BYTES = 4 * MIB;
/** bytes A reads per tick, and the tick (ms): ~640 KB/s, steady. */
const READ_BYTES = 32 * 1024;
const READ_EVERY_MS = 50;

const stack = useSizedAnswerStack(ANSWER_BYTES, { a: 6 * MIB });
const gw = (): ObservedGateway => stack.gateway;

/** A host that calls agent `a` with JSON-RPC id `id`, paused before any byte arrives. */
const host = (id: number): Promise<net.Socket> => pausedHost(gw().baseUrl, 'a', id);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('a host reading slowly but steadily gets its whole answer while non-reading hosts take its agent over the cap', { timeout: 60_000 }, async () => {
  const reader = await host(21);
  const chunks: Buffer[] = [];
  let closed = false;
  reader.once('close', () => (closed = true));
  /** Whether A holds its whole answer (head and Content-Length body). */
  const whole = (): boolean => holdsWholeResponse(Buffer.concat(chunks));
  let tick: NodeJS.Timeout | undefined = undefined;
  const done = new Promise<void>((resolve) => {
    // At most 800 ticks (40 s): a hang guard; A needs ~130.
    let ticks = 0;
    tick = setInterval(() => {
      const n = Math.min(READ_BYTES, reader.readableLength);
      // read(0) only asks the socket for more (a paused socket reads nothing until asked).
      const chunk = n > 0 ? (reader.read(n) as Buffer | null) : reader.read(0);
      if (chunk !== null) chunks.push(chunk);
      if (whole() || (closed && reader.readableLength === 0) || ++ticks >= 800) resolve();
    }, READ_EVERY_MS);
  });
  await sleep(1500);
  const others = [await host(22)];
  await sleep(500);
  others.push(await host(23));
  await withTimeout(done, 45_000, "A's answer");
  clearInterval(tick);

  const wire = Buffer.concat(chunks);
  assert.ok(whole(), `A read ${wire.length} bytes, then its connection ${closed ? 'closed' : 'stalled'}`);
  await assertWholeAnswer(gw(), 'a', 21, wire, ANSWER_BYTES);
  reader.destroy();
  for (const socket of others) socket.destroy();
});
