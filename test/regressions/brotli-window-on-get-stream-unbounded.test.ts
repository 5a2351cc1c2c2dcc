/**
 * Regression (a hostile new user's trial 15, H2): a seller's brotli windows sat outside every
 * bound. A brotli decoder fills the window its stream declares (up to 16 MiB, lgwin 24) and
 * keeps it for as long as its stream lives; the standalone GET stream has no deadline, and a
 * comment every 2 s kept it open (the MCP SDK client opens one per session). 30 GET streams
 * with one br layer took the gateway from 94 to 655 MB RSS, held while idle; `br, br, br, br`
 * x 10 streams from 78 to 701 MB.
 *
 * Input: a raw seller (node:http) -> the real gateway (buildApp) -> the host (fetch / a raw
 * POST), on 127.0.0.1, every agent with the default `accept_encoding` (gzip, deflate, br).
 * - `getbr`: the standalone GET stream, answered with br at lgwin 24 whatever was asked (the
 *   trial's seller), one notification flushed, then held open. `getgz`: the same in gzip.
 * - `brbr`: a JSON answer with `Content-Encoding: br, br`. `br1`: one br layer.
 * Expectation (docs/configuration.md accept_encoding, src/response/decode.ts, exchange.ts
 * offeredCodings):
 * 1. The GET stream is not offered br (`Accept-Encoding: gzip, deflate`): the br answer is
 *    refused `unsupported_encoding` (HTTP 502, id null), nothing decoded. The gzip one flows.
 * 2. A call (a POST) is still offered br (`gzip, deflate, br`), and one br layer decodes.
 * 3. `br, br` is refused `unsupported_encoding` (at most one br layer).
 * Before the fix: the GET stream was offered and served br (HTTP 200, the notification), and
 * `br, br` decoded.
 * A request's answer (JSON, or a POST's SSE stream) still decodes one br layer: its decoder is
 * charged to the agent's max_buffered_response_bytes
 * (test/regressions/brotli-window-outside-buffer-bound.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import type { SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, messageFrame, resultMessage } from '../support/hostile-seller.js';
import { HEADERS, brotli, note, sseEvent, writeFlushed } from '../helpers/brotli-seller.js';
import { openAnswer, type OpenAnswer } from '../helpers/open-answer.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { until, useRawSellerAndGateway } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const mode = new URL(req.url, 'http://seller').searchParams.get('mode');
  if (mode === 'get') {
    const coding = new URL(req.url, 'http://seller').searchParams.get('enc')!;
    const enc = coding === 'br' ? brotli(24) : zlib.createGzip({ level: 1 });
    res.on('close', () => enc.destroy());
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': coding });
    await writeFlushed(enc, res, sseEvent(note('get')));
    return; // held open until the host leaves
  }
  const msg = JSON.parse(req.body.toString('utf8')) as { id: number };
  const json = resultMessage(msg.id, { content: [{ type: 'text', text: mode === 'brbr' ? 'twice' : 'once' }] });
  const body = mode === 'brbr' ? zlib.brotliCompressSync(zlib.brotliCompressSync(json)) : zlib.brotliCompressSync(json);
  res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': mode === 'brbr' ? 'br, br' : 'br', 'content-length': body.length });
  res.end(body);
}

const stack = useRawSellerAndGateway(answer, (seller) => [
  `  getbr: { url: "${seller.url}?mode=get&enc=br" }`,
  `  getgz: { url: "${seller.url}?mode=get&enc=gzip" }`,
  `  brbr: { url: "${seller.url}?mode=brbr" }`,
  `  br1: { url: "${seller.url}?mode=br1", dedupe_text: off }`,
]);

/** A host's GET whose answer is read as it arrives. */
const openGet = (agent: string): Promise<OpenAnswer> => openAnswer(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream', ...HEADERS } }, `${agent}: the head`);

describe('brotli windows: the GET stream is not offered br; at most one br layer', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the standalone GET stream is not offered br: a br answer is refused; a gzip one flows', async () => {
    const gz = await openGet('getgz');
    assert.equal(gz.status, 200);
    await until('the gzip GET stream has its notification', () => gz.text === messageFrame(note('get')));

    const br = await openGet('getbr');
    const brText = await withTimeout(br.done, undefined, 'the br GET answer');
    assert.equal(br.status, 502);
    assert.equal(brText, expectedErrorJson({ id: null, method: '', reason: 'unsupported_encoding' }));

    const gets = stack.seller.requests.filter((q) => q.method === 'GET');
    assert.deepEqual(
      gets.map((q) => q.headers['accept-encoding']),
      ['gzip, deflate', 'gzip, deflate'],
    );
    gz.cancel();
    await gz.done;
  });

  test('a call is still offered br, and one br layer decodes', async () => {
    const r = await rawPost(stack.gateway.agentUrl('br1'), toolCall(3, 'get_products'), HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), resultMessage(3, { content: [{ type: 'text', text: 'once' }] }));
    const post = stack.seller.requests.filter((q) => q.method === 'POST').at(-1)!;
    assert.equal(post.headers['accept-encoding'], 'gzip, deflate, br');
  });

  test('`br, br` is refused unsupported_encoding (at most one br layer)', async () => {
    const r = await rawPost(stack.gateway.agentUrl('brbr'), toolCall(4, 'get_products'), HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedErrorJson({ id: 4, method: 'tools/call', toolName: 'get_products', reason: 'unsupported_encoding' }));
  });
});
