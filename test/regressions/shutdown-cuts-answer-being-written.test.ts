/**
 * Reported failure (a new user's trial, 2026-12-02): on SIGTERM a JSON answer the gateway
 * had ended but Node was still writing (a host reading slowly, a 12 MB answer: ~4 MB in the
 * kernel, the rest in Node) was cut after ~4 MB, yet its exchange line said `ok` and the
 * process exited 0 within a second. The README promises in-flight JSON exchanges finish,
 * "closing each connection once its response is out".
 *
 * Cause: Node's `server.close()` (Fastify's close) also closes every connection it deems
 * idle, and a response already ended counts as idle even while its bytes are still queued.
 * src/app.ts now keeps such connections until their answers are out (then they close).
 *
 * Input: a real seller answering a 12 MiB JSON result; a raw host that reads the head and
 * stops reading until the gateway holds MiBs for it; then the gateway's close starts (what
 * SIGTERM does: src/main.ts), and the host reads on. Expectation: the host gets the whole
 * answer (Content-Length bytes), the exchange line is `ok`, and the close completes once the
 * answer is out. Before the fix: the host's connection closed after ~4 MB.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const ANSWER_BYTES = 12 * 1024 * 1024;

function resultOf(id: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
  const tail = '"}]}}';
  return head + 'x'.repeat(ANSWER_BYTES - head.length - tail.length) + tail;
}

describe('a JSON answer still being written when the gateway shuts down', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the host gets all of it, the exchange is ok, then the close completes (it was cut after ~4 MB, logged ok)', async () => {
    const seller = await startRawSeller((req, res) => {
      const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(resultOf(id));
    });
    let gw: ObservedGateway | undefined;
    try {
      gw = await startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: 2 * ANSWER_BYTES, response_deadline_ms: 60000 } }));
      const gatewaySockets: net.Socket[] = [];
      gw.app.server.on('connection', (socket: net.Socket) => gatewaySockets.push(socket));

      const host = net.connect(Number(new URL(gw.baseUrl).port), '127.0.0.1');
      const wire: Buffer[] = [];
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          host.once('error', reject);
          host.once('data', (c: Buffer) => {
            wire.push(c);
            host.pause();
            resolve();
          });
          host.write(toolCallRequest(1));
        }),
        10_000,
        'the response head',
      );
      // The gateway has ended the answer and holds MiBs of it for the paused host (at most 1000 looks, 10 ms apart: a hang guard).
      for (let k = 0; k < 1000 && (gatewaySockets[0]?.writableLength ?? 0) < 1024 * 1024; k++) await new Promise((r) => setTimeout(r, 10));
      assert.ok((gatewaySockets[0]?.writableLength ?? 0) >= 1024 * 1024, 'the gateway holds the rest of the answer for the host');

      const closed = gw.app.close();
      const ended = new Promise<boolean>((resolve) => {
        host.on('data', (c: Buffer) => wire.push(c));
        host.once('end', () => resolve(true));
        host.once('close', () => resolve(false));
        host.on('error', () => {});
      });
      host.resume();
      await withTimeout(ended, 15_000, 'the end of the answer');
      const { responses } = parseResponses(Buffer.concat(wire), 1);
      assert.equal(responses[0]!.status, 200);
      assert.equal(Buffer.byteLength(responses[0]!.body), ANSWER_BYTES, 'the whole answer');
      await withTimeout(closed, 15_000, 'the close');
      const line = await gw.exchangeLine('s', 1, 5_000);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'ok', reason: null, status: 200 });
      host.destroy();
    } finally {
      await gw?.close().catch(() => {});
      await seller.close();
    }
  });
});
