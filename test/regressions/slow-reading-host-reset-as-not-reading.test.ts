/**
 * Regression (hostile trial 55, F3): a host reading an SSE stream slowly but steadily was reset
 * `host_not_reading`. The gateway counted only Node's signal as the host taking bytes (a
 * 'drain', an answer's 'finish'), which Linux gives only once a third of the socket's send
 * buffer is free again (~1 MB on loopback): a host reading ~117 KB/s with a 4 KiB receive buffer
 * was reset 3.1 s into a 3 s sse_idle_timeout_ms, 3 of 3 times, having read ~390 KB, the
 * answer's last event never sent. docs/errors.md promised a reset only for a host taking "none
 * of it for sse_idle_timeout_ms". Now any byte the host's TCP stack takes counts (the kernel's
 * send queue: src/response/host-take-watch.ts, kernel-send-queue.ts).
 *
 * Input: a raw seller answering a tools/call with SSE: progress notifications of EVENT_BYTES
 * each (call 1: 40, ~4 MB, more than loopback's send buffer takes, so the gateway waits for its
 * host during the stream and holds the rest once it has ended it; call 2: 320), written as fast
 * as TCP takes them, then the result -> gateway (agent `s`: sse_idle_timeout_ms IDLE_MS) -> a
 * python3 host on 127.0.0.1 with SO_RCVBUF 4096, as in the trial (Node gives TCP sockets no
 * receive-buffer setting, and a Node host's buffer grows as it reads: Node's signal then came
 * often enough and the old rule passed): call 1 read steadily, a recv every SLOW_PACE_S (the
 * stream in ~4-7 s); call 2 not read at all for NEVER_STALL_S.
 * Expectation: call 1's host gets the whole stream, every event in order then the result, and
 * the chunked body's end; the exchange line says `ok`. Call 2's host, which reads nothing, is
 * still reset `host_not_reading` (exchange line: outcome local_error, status 200; the host's
 * recv fails ConnectionResetError, the stream's end never read). Linux only (elsewhere the
 * gateway has only Node's signal), with python3.
 * Before the fix the first test failed, 3 of 3 runs (the host reset after ~480 KB: outcome
 * local_error, host_not_reading, ConnectionResetError), the second passed. Timeouts are hang
 * guards, never timings; the only pace is the host's.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { sseMessages } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { drainOrClose } from '../../src/response/drain.js';

const IDLE_MS = 500;
const EVENT_BYTES = 100_000;
/** Events answering each call id: the slow host's stream (~4 MB), the non-reader's (~32 MB: far more than the kernel holds). */
const EVENTS: Readonly<Record<number, number>> = { 1: 40, 2: 320 };
/** The slow host's pause between reads (s): with its 4 KiB receive buffer, ~0.6-1 MB/s. */
const SLOW_PACE_S = 0.005;
/** The non-reader's stall before it reads anything (s): past its reset (~IDLE_MS + 125 ms). */
const NEVER_STALL_S = 4;

const PYTHON = spawnSync('python3', ['-c', 'import socket'], { timeout: 5000 }).status === 0;

/**
 * The host (python3: Node gives TCP sockets no receive-buffer setting): SO_RCVBUF 4096, sends
 * the request, reads nothing for `stall` s, then reads at most 64 KiB per recv with `pace` s
 * between recvs until the chunked body ends, the connection closes or resets, or 30 s pass.
 * stdout: the bytes read; stderr: `{"error": <exception name or null>}`.
 */
const PY_HOST = `
import json, socket, sys, time
port, req, stall, pace = int(sys.argv[1]), sys.argv[2].encode('latin1'), float(sys.argv[3]), float(sys.argv[4])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(('127.0.0.1', port))
s.sendall(req)
time.sleep(stall)
wire, err, t0 = bytearray(), None, time.time()
while time.time() - t0 < 30:
    try:
        d = s.recv(65536)
    except OSError as e:
        err = type(e).__name__
        break
    if not d:
        break
    wire += d
    if wire.endswith(b'0\\r\\n\\r\\n'):
        break
    time.sleep(pace)
sys.stderr.write(json.dumps({'error': err}))
sys.stdout.buffer.write(bytes(wire))
`;

function progress(n: number): string {
  const head = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n},"message":"`;
  const tail = '"}}\n\n';
  return head + 'x'.repeat(EVENT_BYTES - head.length - tail.length) + tail;
}
const result = (id: number): string => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`;

const stack = useSellerAndGateway(
  (): Promise<RawSeller> =>
    startRawSeller((req, res) => {
      const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
      let closed = false;
      res.once('close', () => (closed = true));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void (async () => {
        for (let n = 1; n <= EVENTS[id]! && !closed; n++) if (!res.write(progress(n))) await drainOrClose(res);
        if (!closed) res.end(result(id));
      })();
    }),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: IDLE_MS, sse_deadline_ms: 60000, max_response_bytes: 64 * 1024 * 1024 } })),
);
const gw = (): ObservedGateway => stack.gateway;

/** Whether `wire` ends with the chunked body's last chunk. */
const ended = (wire: Buffer): boolean => wire.length >= 5 && wire.subarray(wire.length - 5).toString('latin1') === '0\r\n\r\n';

/** Runs the python host for call `id` to agent `s` (PY_HOST: `stall`, then `pace`): what it read, and its error. */
function pythonHost(id: number, stall: number, pace: number): Promise<{ wire: Buffer; error: string | null }> {
  const port = new URL(gw().baseUrl).port;
  return new Promise((resolve, reject) => {
    execFile('python3', ['-c', PY_HOST, port, toolCallRequest(id, 's'), String(stall), String(pace)], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 40_000 }, (err, stdout, stderr) => {
      if (err) return reject(err);
      resolve({ wire: stdout, error: (JSON.parse(stderr.toString('utf8')) as { error: string | null }).error });
    });
  });
}

describe('a host reading an SSE stream slowly but steadily is not reset as not reading', { skip: process.platform !== 'linux' ? 'the kernel send queue is read on Linux only' : PYTHON ? false : 'python3 is not installed', timeout: 90_000 }, () => {
  test('the slow, steady host gets the whole stream and its result; outcome ok', async () => {
    const { wire, error } = await withTimeout(pythonHost(1, 0, SLOW_PACE_S), 45_000, 'the slow host');
    const line = await gw().exchangeLine('s', 1, 10_000);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, error }, { outcome: 'ok', reason: null, error: null }, `the host read ${wire.length} bytes`);
    assert.ok(ended(wire), 'the chunked body ended');
    const { responses, rest } = parseResponses(wire, 1);
    assert.equal(rest, '');
    assert.equal(responses[0]!.status, 200);
    const messages = sseMessages(responses[0]!.body) as Array<{ id?: unknown; params?: { progress: number } }>;
    assert.equal(messages.length, EVENTS[1]! + 1, 'every event, then the result');
    messages.slice(0, -1).forEach((m, k) => assert.equal(m.params?.progress, k + 1));
    assert.equal(messages.at(-1)!.id, 1);
  });

  test('a host that never reads is still reset host_not_reading', async () => {
    const host = pythonHost(2, NEVER_STALL_S, 0);
    const line = await gw().exchangeLine('s', 2, 20_000);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'local_error', reason: 'host_not_reading', status: 200 });
    const { wire, error } = await withTimeout(host, 45_000, 'the non-reading host');
    assert.equal(error, 'ConnectionResetError');
    assert.equal(ended(wire), false, 'a stream cut short never looks complete');
  });
});
