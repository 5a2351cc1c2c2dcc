/**
 * What a graceful shutdown's phases do to each kind of open SSE stream (`endStreams('grace')`,
 * `'no_requests'`, `'final'`: src/shutdown-streams.ts; response/pipeline.ts SseShutdownPhase):
 * in-process gateways, with and without a resume secret, on a raw seller on 127.0.0.1. The
 * process-level behaviour (SIGTERM, the grace's end, the exit code) is
 * test/regressions/shutdown-answers-unresumable-sse-call-at-once.test.ts,
 * restart-with-secret-loses-answered-sse-call.test.ts and
 * drain-ends-get-stream-into-draining-refusals.test.ts.
 *
 * - A request's stream is left running during the grace (0 ended), and gets the seller's
 *   answer, byte for byte; it counts in `requestsInFlight`;
 * - with a configured secret and an event id sent it is still left running during the grace
 *   (a hostile operator's trial 49, finding 1; before, the first sweep after the id ended it),
 *   and at `final` ends plainly, its last id a token;
 * - without one, a seller that ends its stream after an event id gets `gateway_shutdown` for
 *   the call (no gateway verifies the token: a plain end would send the client into resume
 *   refusals), not a plain end;
 * - the standalone GET stream does not count in `requestsInFlight`; it is left running during
 *   the grace and ends plainly at `no_requests` (trial 49, finding 2; before, at once);
 * - every stream ended plainly gets `retry: <shutdown_sse_retry_ms>` (default 5000) just
 *   before its end, at most half of `resume.ttl_ms`; none with 0 (a hostile operator's trial 53,
 *   F1: test/regressions/slow-restart-leaves-resumable-sse-call-hanging.test.ts).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { buildAdcpError, localErrorMessage } from '../../src/mcp/local-error.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { sseIds, sseMessages, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

const SECRET = 'shutdown-grace-sse-streams-secret-0123456789';
const PROTOCOL = '2025-11-25';
const RESULT = { content: [{ type: 'text', text: 'done' }] };
const PROGRESS = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';

let seller: RawSeller;
let withSecret: RunningGateway;
let perProcess: RunningGateway;
/** The seller's open answer to the last tools/call or GET. */
let open: { res: ServerResponse; id: unknown } | undefined;
let opened: () => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => {
    if (req.method === 'GET') res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
    else {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(PROGRESS);
    }
    open = { res, id: req.method === 'POST' ? (JSON.parse(req.body.toString('utf8')) as { id: unknown }).id : undefined };
    opened();
  });
  const agents = `agents:\n  s:\n    url: ${seller.url}\n`;
  withSecret = await startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\n${agents}`);
  perProcess = await startGateway(`log_level: silent\n${agents}`);
});

after(async () => {
  await withSecret.close();
  await perProcess.close();
  await seller.close();
});

/** Opens a stream through `gw` (a tools/call POST with id `id`, or the standalone GET) and waits for its first bytes. */
async function openStream(gw: RunningGateway, id?: number): Promise<{ reader: ReadableStreamDefaultReader<Uint8Array>; first: string }> {
  const atSeller = new Promise<void>((resolve) => (opened = resolve));
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL };
  const res = await fetch(
    gw.agentUrl('s'),
    id === undefined ? { headers } : { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(toolCall(id, 'report')) },
  );
  assert.equal(res.status, 200);
  await atSeller;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let first = '';
  // The first frame, whole: the progress event (a blank line ends it), or the GET's comment line.
  while (!first.endsWith(id === undefined ? '\n' : '\n\n')) {
    const { value, done } = await withTimeout(reader.read(), 5_000, 'the first frame');
    assert.equal(done, false);
    first += decoder.decode(value, { stream: true });
  }
  return { reader, first };
}

/** The rest of the stream, to its end. */
async function rest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await withTimeout(reader.read(), 5_000, 'stream end');
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

describe('SSE streams during the shutdown phases (endStreams)', () => {
  it('no event id sent: left running, the seller result reaches the host', async () => {
    for (const gw of [withSecret, perProcess]) {
      const { reader, first } = await openStream(gw, 1);
      assert.equal(first, PROGRESS);
      assert.deepEqual([gw.app.gateway.openExchanges, gw.app.gateway.requestsInFlight], [1, 1]);
      assert.equal(gw.app.gateway.endStreams('grace'), 0);
      assert.equal(gw.app.gateway.endStreams('no_requests'), 0, 'a request stream waits for final');
      open!.res.end(`event: message\ndata: ${toolResponse(1, RESULT)}\n\n`);
      assert.equal(await rest(reader), `event: message\ndata: ${toolResponse(1, RESULT)}\n\n`);
    }
  });

  it('a configured secret: left running after an event id went out, ended plainly at final', async () => {
    const { reader } = await openStream(withSecret, 2);
    assert.equal(withSecret.app.gateway.endStreams('grace'), 0);
    const sent = new Promise<void>((resolve) => open!.res.write(`id: p1\n${PROGRESS}`, () => resolve()));
    await sent;
    // The event reaches the host; the grace leaves the stream, final ends it (resumable: its id a token).
    let text = '';
    while (sseIds(text).length === 0) text += new TextDecoder().decode((await withTimeout(reader.read(), 5_000, 'the id event')).value);
    assert.equal(withSecret.app.gateway.endStreams('grace'), 0);
    assert.equal(withSecret.app.gateway.endStreams('final'), 1);
    text += await rest(reader);
    assert.equal(sseMessages(text).length, 1);
    assert.doesNotMatch(text, /adcp_error/);
    assert.match(sseIds(text)[0]!, /^agw1\./);
    assert.ok(text.endsWith(`${PROGRESS}retry: 5000\n\n`), JSON.stringify(text.slice(-40)));
  });

  it('no secret: the seller ending its stream after an event id gets gateway_shutdown, not a plain end', async () => {
    const { reader } = await openStream(perProcess, 3);
    assert.equal(perProcess.app.gateway.endStreams('grace'), 0);
    open!.res.end(`id: p1\n${PROGRESS}`);
    const text = await rest(reader);
    const err = buildAdcpError({ reason: 'gateway_shutdown', method: 'tools/call', toolName: 'report' });
    const token = sseIds(text)[0] ?? '';
    assert.equal(text, `id: ${token}\n${PROGRESS}event: message\ndata: ${JSON.stringify(localErrorMessage(3, 'tools/call', err, PROTOCOL))}\n\n`);
  });

  it('the standalone GET stream: no request in flight; left during the grace, ended plainly once none is', async () => {
    for (const gw of [withSecret, perProcess]) {
      const { reader, first } = await openStream(gw);
      assert.equal(first, ': open\n');
      assert.deepEqual([gw.app.gateway.openExchanges, gw.app.gateway.requestsInFlight], [1, 0]);
      assert.equal(gw.app.gateway.endStreams('grace'), 0);
      assert.equal(gw.app.gateway.endStreams('no_requests'), 1);
      assert.equal(await rest(reader), 'retry: 5000\n\n');
      open!.res.end();
    }
  });

  it('shutdown_sse_retry_ms: 0 writes no retry:, a value over half of resume.ttl_ms goes out as that half', async () => {
    const agents = `agents:\n  s:\n    url: ${seller.url}\n`;
    for (const [settings, tail] of [
      ['shutdown_sse_retry_ms: 0', ''],
      ['shutdown_sse_retry_ms: 300000\nresume:\n  ttl_ms: 60000', 'retry: 30000\n\n'],
    ] as const) {
      const gw = await startGateway(`log_level: silent\n${settings}\n${agents}`);
      try {
        const { reader } = await openStream(gw);
        assert.equal(gw.app.gateway.endStreams('no_requests'), 1);
        assert.equal(await rest(reader), tail, settings);
        open!.res.end();
      } finally {
        await gw.close();
      }
    }
  });
});
