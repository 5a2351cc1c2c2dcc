/**
 * Reported failure (hostile trial 23, H1, High): a host that sends an oversized body without
 * waiting usually never got the gateway's 413 `request_too_large`: a plain `fetch` POST of an
 * 8 MB `tools/call` to an agent with the default 4 MiB max_request_bytes failed EPIPE/reset 9
 * times in 10; a raw socket writing head and body at once read a reset, not the answer. The
 * gateway wrote the 413 with `Connection: close`, Node's HTTP server destroyed the connection
 * as soon as it was written, and the kernel answered the body bytes still arriving with RST,
 * which discarded the 413 the host had not read yet.
 *
 * Now (src/routing/lingering-close.ts): the connection half-closes after such an answer and
 * reads and discards the rest of the body (bounded: LINGER_MS, LINGER_MAX_BYTES) until the
 * host closes, so the host reads the 413.
 *
 * Input: a gateway on 127.0.0.1 with agent `roomy` (the default bound, 4 MiB) and agent `tight`
 * (200 bytes), its seller unreachable (no request reaches it). Expectation: every try of a
 * bounded loop reads the exact 413 status line and body.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { captureLog } from '../helpers/capture-log.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const CONFIG = `log_level: info
listen: { host: 127.0.0.1, port: 0 }
agents:
  roomy:
    url: http://127.0.0.1:9/mcp
  tight:
    url: http://127.0.0.1:9/mcp
    max_request_bytes: 200
`;

const run = promisify(execFile);
const TRIES = 10;
const MiB = 1024 * 1024;

const tooLarge = (message: string, limit: number): string =>
  JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason: 'request_too_large', limit_bytes: limit } } });
const OVER_DEFAULT = tooLarge(`Request body is over max_request_bytes (${4 * MiB}).`, 4 * MiB);
const OVER_200 = tooLarge("Request body is over this agent's max_request_bytes (200).", 200);

/**
 * Runs `tries` sends of a tools/call about `bytes` long to `agent` in a child process (the host
 * is another process, as in the trial: in the gateway's own process the host's reads ran before
 * the reset came), each `raw` (head and body in one socket write, read until the close) or by
 * `fetch`; the status line (raw) or status and the body of each, or what was thrown.
 */
async function sendFromHost(port: number, agent: string, bytes: number, how: 'raw' | 'fetch'): Promise<string[]> {
  const script = `
    import net from 'node:net';
    const [port, agent, bytes, how, tries] = process.argv.slice(2);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: { s: 'a'.repeat(Number(bytes)) } } });
    const raw = () => new Promise((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      const chunks = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('latin1');
        const end = text.indexOf('\\r\\n\\r\\n');
        resolve(end < 0 ? 'no answer (' + text.length + ' bytes read)' : text.slice(0, text.indexOf('\\r\\n')) + ' ' + text.slice(end + 4));
      });
      socket.end('POST /agents/' + agent + '/mcp HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nAccept: application/json, text/event-stream\\r\\nContent-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body);
    });
    const viaFetch = async () => {
      try {
        const answer = await fetch('http://127.0.0.1:' + port + '/agents/' + agent + '/mcp', {
          method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body, signal: AbortSignal.timeout(5000),
        });
        return answer.status + ' ' + (await answer.text());
      } catch (err) {
        return 'threw ' + err.message + ' ' + (err.cause?.code ?? '');
      }
    };
    const seen = [];
    for (let i = 0; i < Number(tries); i++) seen.push(how === 'raw' ? await raw() : await viaFetch());
    process.stdout.write(JSON.stringify(seen));
  `;
  const file = join(await mkdtemp(join(tmpdir(), 'host-')), 'host.mjs');
  await writeFile(file, script);
  const { stdout } = await run(process.execPath, [file, String(port), agent, String(bytes), how, String(TRIES)], { timeout: 15_000 });
  return JSON.parse(stdout) as string[];
}

describe('an oversized body sent without waiting gets its 413, not a reset', { timeout: TEST_TIMEOUT_MS }, () => {
  let gateway: RunningGateway;
  let port: number;
  const log = captureLog('info');
  before(async () => {
    gateway = await startGateway(CONFIG, { logger: log.logger });
    port = Number(new URL(gateway.baseUrl).port);
  });
  after(async () => {
    await gateway.close();
  });

  test(`raw socket, head + 6 MiB body in one write, default bound: the 413 every time (${TRIES} tries)`, async () => {
    assert.deepEqual(await sendFromHost(port, 'roomy', 6 * MiB, 'raw'), Array(TRIES).fill(`HTTP/1.1 413 Payload Too Large ${OVER_DEFAULT}`));
  });

  test(`raw socket, head + 4 MiB body in one write, bound 200: the 413 every time (${TRIES} tries)`, async () => {
    assert.deepEqual(await sendFromHost(port, 'tight', 4 * MiB, 'raw'), Array(TRIES).fill(`HTTP/1.1 413 Payload Too Large ${OVER_200}`));
  });

  test(`fetch POST of an 8 MB tools/call, default bound: the 413 every time (${TRIES} tries)`, async () => {
    assert.deepEqual(await sendFromHost(port, 'roomy', 8_000_000, 'fetch'), Array(TRIES).fill(`413 ${OVER_DEFAULT}`));
  });
});
