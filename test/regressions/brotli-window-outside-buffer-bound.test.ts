/**
 * Regression (a hostile new user's trial 15, H2): a seller's brotli windows sat outside every
 * bound. Each `br` layer keeps a window of up to 16 MiB (lgwin 24) for as long as its stream
 * lives; the standalone GET stream has no deadline, and a comment every 2 s kept it open (the
 * MCP SDK client opens one per session). 30 GET streams with one br layer took the gateway
 * from 94 to 655 MB RSS, held while idle; `br, br, br, br` x 10 streams from 78 to 701 MB;
 * `adcp_gateway_agent_buffered_response_bytes` stayed 0. docs/configuration.md bounds what an
 * agent's responses hold by `max_buffered_response_bytes` "whatever its seller sends".
 *
 * Input: a raw seller (node:http) -> the real gateway (buildApp) -> the host (fetch), on
 * 127.0.0.1. Every agent has `max_buffered_response_bytes` 8 MiB and the default
 * `accept_encoding` (gzip, deflate, br).
 * - `getbr`: the standalone GET stream, answered with br at lgwin 24 whatever was asked (the
 *   trial's seller), one notification flushed, then held open. `getgz`: the same in gzip.
 * - `calls`: tools/call answered by an SSE stream in br at the lgwin the call asks for (one
 *   notification flushed, then held until the test releases it: the response event, the end).
 * - `brbr`: a JSON answer with `Content-Encoding: br, br`.
 * Expectation (docs/configuration.md max_buffered_response_bytes and accept_encoding,
 * src/response/decode.ts):
 * 1. The GET stream is not offered br (`Accept-Encoding: gzip, deflate`): the br answer is
 *    refused `unsupported_encoding` (HTTP 502, id null), nothing decoded, nothing held. The
 *    gzip one flows, and holds exactly its decoder's 64 KiB while open.
 * 2. A call's lgwin-24 stream holds exactly 16 MiB + 2.75 MiB (19,660,800 bytes) while open,
 *    its event dispatched. A second one, over the 8 MiB cap, waits before its decoder is made
 *    (one buffer wait; it holds only its first wire chunk; the host has its head, no event),
 *    and goes on once the first ends: both get their events and responses byte for byte.
 * 3. A legitimate lgwin-22 stream (the encoders' default) alone: works byte for byte, holding
 *    4 MiB + 2.75 MiB (7,077,888 bytes) while open.
 * 4. `br, br` is refused `unsupported_encoding` (at most one br layer).
 * After each, the agent holds 0 bytes. Before the fix: the GET stream was served br (HTTP 200,
 * the notification), every held count was 0, the second call never waited, and `br, br`
 * decoded. No memory is measured here (the counts are what the gateway charges); the RSS of
 * the process is printed as a diagnostic only.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, messageFrame, resultMessage } from '../support/hostile-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const MIB = 1024 * 1024;
const CAP = 8 * MIB;
/** What one br layer is charged (decode.ts decoderBytes): its window + BROTLI_STATE_BYTES (2.75 MiB). */
const BR24_BYTES = 16 * MIB + 2_883_584; // 19,660,800
const BR22_BYTES = 4 * MIB + 2_883_584; // 7,077,888
/** ... and a gzip or deflate layer (decode.ts ZLIB_DECODER_BYTES). */
const GZIP_BYTES = 64 * 1024;
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };

const note = (n: number | string): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `note ${n}` } });
const sseEvent = (data: string): string => `event: message\ndata: ${data}\n\n`;

/** The calls the seller holds open, by JSON-RPC id: call to write the response and end. */
const held = new Map<number, () => void>();
/** The wire bytes of each call's first write (its compressed notification), by id. */
const firstWrite = new Map<number, number>();

function brotli(lgwin: number): zlib.BrotliCompress {
  return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin, [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
}

/** Writes `text` through `enc`, flushed, as ONE write to `res` (its compressed bytes); resolves with their length. */
function writeFlushed(enc: zlib.BrotliCompress | zlib.Gzip, res: ServerResponse, text: string): Promise<number> {
  const out: Buffer[] = [];
  const onData = (c: Buffer): void => void out.push(c);
  enc.on('data', onData);
  enc.write(text);
  return new Promise((resolve) => {
    enc.flush(() => {
      enc.off('data', onData);
      const bytes = Buffer.concat(out);
      if (!res.destroyed) res.write(bytes);
      resolve(bytes.length);
    });
  });
}

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
  const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { arguments: { lgwin?: number } } };
  if (mode === 'brbr') {
    const body = zlib.brotliCompressSync(zlib.brotliCompressSync(resultMessage(msg.id, { content: [{ type: 'text', text: 'twice' }] })));
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br, br', 'content-length': body.length });
    res.end(body);
    return;
  }
  const enc = brotli(msg.params.arguments.lgwin ?? 22);
  res.on('close', () => enc.destroy());
  res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'br' });
  firstWrite.set(msg.id, await writeFlushed(enc, res, sseEvent(note(msg.id))));
  held.set(msg.id, () => {
    void writeFlushed(enc, res, sseEvent(resultMessage(msg.id, { content: [{ type: 'text', text: `done ${msg.id}` }] }))).then(() => {
      enc.end();
      enc.on('data', (c: Buffer) => res.write(c));
      enc.on('end', () => res.end());
    });
  });
}

const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) =>
    startGateway(
      [
        'log_level: silent',
        'agents:',
        `  getbr: { url: "${seller.url}?mode=get&enc=br", max_buffered_response_bytes: ${CAP} }`,
        `  getgz: { url: "${seller.url}?mode=get&enc=gzip", max_buffered_response_bytes: ${CAP} }`,
        `  calls: { url: "${seller.url}?mode=call", max_buffered_response_bytes: ${CAP}, dedupe_text: off }`,
        `  brbr: { url: "${seller.url}?mode=brbr", max_buffered_response_bytes: ${CAP} }`,
        '',
      ].join('\n'),
    ),
);
const guard = () => stack.gateway.app.gateway.guard;

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), `timed out waiting until ${what}`);
}

/** A host's request whose answer is read as it arrives: `text` so far, `done` at its end. */
interface OpenAnswer {
  status: number;
  text: string;
  readonly done: Promise<string>;
  cancel(): void;
}

async function open(agent: string, init: RequestInit): Promise<OpenAnswer> {
  const ac = new AbortController();
  const res = await withTimeout(fetch(stack.gateway.agentUrl(agent), { ...init, signal: ac.signal }), undefined, `${agent}: the head`);
  const got = { status: res.status, text: '', cancel: () => ac.abort() };
  const done = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) got.text += decoder.decode(chunk as Uint8Array, { stream: true });
    } catch {
      // cancelled by the test
    }
    return got.text;
  })();
  return Object.assign(got, { done });
}

const postCall = (id: number, lgwin: number): Promise<OpenAnswer> =>
  open('calls', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HEADERS },
    body: JSON.stringify(toolCall(id, 'get_products', { lgwin })),
  });

const rssMb = (): string => (process.memoryUsage.rss() / MIB).toFixed(0);

describe('brotli decoder windows count against max_buffered_response_bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the standalone GET stream is not offered br: a br answer is refused; a gzip one flows, holding its decoder', async (t) => {
    const gz = await open('getgz', { headers: { accept: 'text/event-stream', ...HEADERS } });
    assert.equal(gz.status, 200);
    await until('the gzip GET stream has its notification', () => gz.text === messageFrame(note('get')));
    assert.equal(guard().heldBytes('getgz'), GZIP_BYTES);

    const br = await open('getbr', { headers: { accept: 'text/event-stream', ...HEADERS } });
    const brText = await withTimeout(br.done, undefined, 'the br GET answer');
    t.diagnostic(`br GET: HTTP ${br.status}; gateway process RSS ${rssMb()} MB`);
    assert.equal(br.status, 502);
    assert.equal(brText, expectedErrorJson({ id: null, method: '', reason: 'unsupported_encoding' }));
    assert.equal(guard().heldBytes('getbr'), 0);

    const gets = stack.seller.requests.filter((q) => q.method === 'GET');
    assert.deepEqual(
      gets.map((q) => q.headers['accept-encoding']),
      ['gzip, deflate', 'gzip, deflate'],
    );
    gz.cancel();
    await gz.done;
    await until('the gzip GET stream gave its decoder back', () => guard().heldBytes('getgz') === 0);
  });

  test('a br stream holds its window; a second one over the cap waits before its decoder is made, then flows', async (t) => {
    const waitsBefore = guard().bufferWaits('calls');
    const first = await postCall(1, 24);
    await until('the first stream has its notification', () => first.text === messageFrame(note(1)));
    assert.equal(guard().heldBytes('calls'), BR24_BYTES);

    const second = await postCall(2, 24);
    await until('the second stream waits for room', () => guard().bufferWaits('calls') === waitsBefore + 1);
    assert.equal(second.status, 200);
    assert.ok(firstWrite.has(2));
    // It holds its first wire chunk while it waits (nothing decoded), the first its decoder.
    assert.equal(guard().heldBytes('calls'), BR24_BYTES + firstWrite.get(2)!);
    assert.equal(second.text, '');
    t.diagnostic(`two lgwin-24 streams open, one waiting: held ${guard().heldBytes('calls')} bytes; RSS ${rssMb()} MB`);

    held.get(1)!();
    assert.equal(await withTimeout(first.done, undefined, 'the first stream'), messageFrame(note(1)) + messageFrame(resultMessage(1, { content: [{ type: 'text', text: 'done 1' }] })));
    await until('the second stream has its notification', () => second.text === messageFrame(note(2)));
    assert.equal(guard().heldBytes('calls'), BR24_BYTES);
    assert.equal(guard().bufferWaits('calls'), waitsBefore + 1);

    held.get(2)!();
    assert.equal(await withTimeout(second.done, undefined, 'the second stream'), messageFrame(note(2)) + messageFrame(resultMessage(2, { content: [{ type: 'text', text: 'done 2' }] })));
    await until('both gave their decoders back', () => guard().heldBytes('calls') === 0);
  });

  test('a legitimate lgwin-22 stream works, holding 4 MiB + 2.75 MiB while open', async () => {
    const call = await postCall(3, 22);
    await until('the stream has its notification', () => call.text === messageFrame(note(3)));
    assert.equal(guard().heldBytes('calls'), BR22_BYTES);
    held.get(3)!();
    assert.equal(await withTimeout(call.done, undefined, 'the stream'), messageFrame(note(3)) + messageFrame(resultMessage(3, { content: [{ type: 'text', text: 'done 3' }] })));
    await until('it gave its decoder back', () => guard().heldBytes('calls') === 0);
  });

  test('`br, br` is refused unsupported_encoding (at most one br layer)', async () => {
    const r = await rawPost(stack.gateway.agentUrl('brbr'), toolCall(4, 'get_products'), HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedErrorJson({ id: 4, method: 'tools/call', toolName: 'get_products', reason: 'unsupported_encoding' }));
    assert.equal(guard().heldBytes('brbr'), 0);
  });
});

