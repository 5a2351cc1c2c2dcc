/**
 * Regression (a code review of the response side, review 30, finding 1): stacked codings on a
 * stream without a cumulative bound pinned a CPU core. The standalone GET stream and a
 * long-lived stream have no total (exchange.ts hasCumulativeBound), so their body was opened
 * with no raw and no decoded limit, and every intermediate decoding layer took that limit:
 * unbounded. The undelivered count and the idle timer see only the last layer's output. With
 * `Content-Encoding: gzip, gzip` the outer layer inflated an endless run of empty stored
 * blocks (`00 00 00 FF FF`) that the inner layer turned into nothing, a 5-byte comment now and
 * then resetting the idle timer: 97,782 wire bytes per 64 MiB inflated; at ~1 MB/s of wire the
 * gateway used 8.78 s of CPU in 10 s (0.28 s for plain comments at the same wire rate), and
 * 4 such streams raised another agent's max latency from 108 to 430 ms.
 *
 * Input: a raw seller -> the real gateway (buildApp) -> the host (fetch), on 127.0.0.1.
 * - `gzgz`: the GET stream (and `subscriptions/listen`) answered `Content-Encoding: gzip, gzip`:
 *   an outer gzip layer that inflates a run of empty stored blocks, then one notification,
 *   flushed (Z_SYNC_FLUSH), then held open (the review's seller, one period, made small).
 * - `gz`: the same notification under one `gzip` layer, held open.
 * - `br`: the same under `br`, which these streams are not offered (the refusal to match).
 * Expectation (docs/configuration.md accept_encoding, docs/errors.md unsupported_encoding):
 * 1. More than one coding on a stream without a total is refused like `br` there:
 *    `unsupported_encoding` before any decoder is made (the GET: HTTP 502, the error for id
 *    null; the long-lived call: the error for its id), the exchange line as for `br`.
 * 2. One `gzip` layer still streams (HTTP 200, the notification).
 * 3. A request's stream, which has the cumulative bound, still decodes `gzip, gzip`.
 * Before the fix: `gzip, gzip` was decoded on both streams (HTTP 200, the notification).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import type { SeenRequest } from '../support/raw-seller.js';
import { startRawSeller } from '../support/raw-seller.js';
import { expectedErrorJson, messageFrame, resultMessage, startObservedGateway, type LogLine } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { openAnswer, type OpenAnswer } from '../helpers/open-answer.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty stored deflate block, not the last (what Z_SYNC_FLUSH writes with no input). */
const EMPTY_BLOCK = Buffer.from([0, 0, 0, 0xff, 0xff]);
/** Empty blocks in the inner layer: 64 KiB of them (the review's period held 64 MiB). */
const EMPTY_BLOCKS = Buffer.concat(Array.from({ length: 13_107 }, () => EMPTY_BLOCK));
const SYNC = { finishFlush: zlib.constants.Z_SYNC_FLUSH };

const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } });
const EVENT = `event: message\ndata: ${NOTE}\n\n`;

/** A stored deflate block (not the last) carrying `data` (at most 65,535 bytes). */
function storedBlock(data: Buffer): Buffer {
  const n = data.length;
  return Buffer.concat([Buffer.from([0, n & 0xff, n >> 8, ~n & 0xff, (~n >> 8) & 0xff]), data]);
}

/** `text` as an open (unfinished, flushed) gzip stream inside another: `gzip, gzip`. */
function gzipGzipOpen(text: string): Buffer {
  const inner = Buffer.concat([GZIP_HEADER, EMPTY_BLOCKS, storedBlock(Buffer.from(text))]);
  return Buffer.concat([GZIP_HEADER, zlib.deflateRawSync(inner, SYNC)]);
}

/** `text` as an open (unfinished, flushed) gzip stream. */
const gzipOpen = (text: string): Buffer => Buffer.concat([GZIP_HEADER, zlib.deflateRawSync(Buffer.from(text), SYNC)]);

const CODED: Record<string, { coding: string; bytes: Buffer }> = {
  gzgz: { coding: 'gzip, gzip', bytes: gzipGzipOpen(EVENT) },
  gz: { coding: 'gzip', bytes: gzipOpen(EVENT) },
  br: { coding: 'br', bytes: zlib.brotliCompressSync(EVENT) },
};

function answer(req: SeenRequest, res: ServerResponse): void {
  const mode = new URL(req.url, 'http://seller').searchParams.get('mode')!;
  const call = req.method === 'POST' ? (JSON.parse(req.body.toString('utf8')) as { id: number; method: string }) : undefined;
  if (call?.method === 'tools/call') {
    // A request's stream (it has the cumulative bound): `gzip, gzip`, ended.
    const body = zlib.gzipSync(zlib.gzipSync(messageFrame(resultMessage(call.id, { content: [{ type: 'text', text: 'twice' }] }))));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip, gzip', 'content-length': body.length });
    res.end(body);
    return;
  }
  const { coding, bytes } = CODED[mode]!;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': coding });
  res.write(bytes); // then held open: only the host ends it
}

const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        gzgz: `"${seller.url}?mode=gzgz"`,
        gz: `"${seller.url}?mode=gz"`,
        br: `"${seller.url}?mode=br"`,
      }),
    ),
);

const HEADERS = { 'mcp-protocol-version': '2026-07-28' };
const openGet = (agent: string): Promise<OpenAnswer> => openAnswer(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream', ...HEADERS } }, `${agent}: the head`);
const openListen = (agent: string, id: number): Promise<OpenAnswer> =>
  openAnswer(
    stack.gateway.agentUrl(agent),
    { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HEADERS }, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: {} }) },
    `${agent}: the head`,
  );

/** The whole answer when the gateway ended it; else (a stream held open: the bug) what came before leaving it. */
async function settle(a: OpenAnswer): Promise<string> {
  if (a.status === 200) {
    await new Promise((r) => setTimeout(r, 200));
    a.cancel();
  }
  return withTimeout(a.done, undefined, 'the answer');
}

/** The exchange line's fields a refusal is judged by. */
const verdict = (l: LogLine) => ({ status: l.status, upstream_status: l.upstream_status, outcome: l.outcome, reason: l.reason, bytes_decoded: l.bytes_decoded, bytes_to_host: l.bytes_to_host });
const getLine = (agent: string): Promise<LogLine> => stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent && l.http_method === 'GET', 5_000);

describe('stacked codings on a stream without a total: refused like br', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the GET stream answered `gzip, gzip`: unsupported_encoding, as br is', async () => {
    const br = await openGet('br');
    const brText = await settle(br);
    const gzgz = await openGet('gzgz');
    const text = await settle(gzgz);
    assert.equal(gzgz.status, 502);
    assert.equal(text, expectedErrorJson({ id: null, method: '', reason: 'unsupported_encoding' }));
    assert.deepEqual({ status: gzgz.status, text }, { status: br.status, text: brText });
    const line = verdict(await getLine('gzgz'));
    assert.deepEqual(line, { status: 502, upstream_status: 200, outcome: 'local_error', reason: 'unsupported_encoding', bytes_decoded: 0, bytes_to_host: text.length });
    assert.deepEqual(line, verdict(await getLine('br')));
  });

  test('the GET stream answered `gzip` alone still streams', async () => {
    const gz = await openGet('gz');
    const text = await settle(gz);
    assert.equal(gz.status, 200);
    assert.equal(text, messageFrame(NOTE));
  });

  test('a long-lived stream (subscriptions/listen) answered `gzip, gzip`: unsupported_encoding, as br is', async () => {
    const br = await openListen('br', 7);
    const brText = await settle(br);
    const gzgz = await openListen('gzgz', 8);
    const text = await settle(gzgz);
    assert.equal(gzgz.status, br.status);
    assert.equal(text, expectedErrorJson({ id: 8, method: 'subscriptions/listen', reason: 'unsupported_encoding' }));
    assert.equal(brText, expectedErrorJson({ id: 7, method: 'subscriptions/listen', reason: 'unsupported_encoding' }));
    const line = verdict(await stack.gateway.exchangeLine('gzgz', 8));
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_decoded: line.bytes_decoded }, { outcome: 'local_error', reason: 'unsupported_encoding', bytes_decoded: 0 });
    assert.deepEqual(line, verdict(await stack.gateway.exchangeLine('br', 7)));
  });

  test("a request's stream (bounded) still decodes `gzip, gzip`", async () => {
    const r = await rawPost(stack.gateway.agentUrl('gzgz'), toolCall(9, 'get_products'), HEADERS);
    assert.equal(r.status, 200);
    assert.deepEqual(sseMessages(r.text()), [JSON.parse(resultMessage(9, { content: [{ type: 'text', text: 'twice' }] }))]);
  });
});
