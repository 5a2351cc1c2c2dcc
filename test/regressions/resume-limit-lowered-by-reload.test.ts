/**
 * Reported failure (hostile trial 24, F2): a config reload that lowered an agent's
 * `max_response_bytes` applied to the resume of a stream started before it, though
 * docs/configuration.md says a resumed stream's "response limit itself comes from the token,
 * as for any stream" and the README "An exchange already in flight keeps the limits it
 * started with". A POST on agent `rs2` (4 MiB) got 60,722 bytes and tokens carrying
 * `"l":4194304`; a reload set `rs2` `max_response_bytes: 20000`; the resume with the old
 * token was answered RESPONSE_TOO_LARGE "exceeded the 20000-byte limit in total",
 * `sse_cumulative`: the handler passed the token's limit to resolveCallLimits as if it were an
 * `X-Max-Response-Bytes` header, which clamped it to the limit in force at the resume.
 * Now (config/resolve.ts CallLimitSource `token`) a resumed stream's response limit is its
 * token's, as is; its other limits are those in force at the resume (the documented rule),
 * an event limit the level sets capped by the token's limit.
 *
 * Input: a raw seller on 127.0.0.1: a POSTed tools/call gets `id: r-1` and `id: r-2`, each a
 * progress notification of 30,000 characters, then the stream ends; a GET (Last-Event-ID
 * `r-2`) gets `id: r-3`, a third such notification, then `id: r-4` with the result. The
 * gateway (a resume secret) is reloaded from its file as a SIGHUP would (src/reload.ts).
 * Expected:
 * - the POST before the reload: both notifications, each id a token with `l` 4194304;
 * - after a reload to `max_response_bytes: 20000`: the resume gets r-3 and the result, its
 *   tokens `l` 4194304, outcome ok; a new POST gets `sse_cumulative` at 20000 (the reload
 *   applies to new requests);
 * - after a reload that also sets `max_sse_event_bytes: 10000`: the resume of another stream
 *   started at 4 MiB gets `sse_event` at 10000 for r-3 (the event limit is the one in force),
 *   not `sse_cumulative` at 20000.
 * Was: `sse_cumulative`, limit_bytes 20000, on the first resume.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { captureLog } from '../helpers/capture-log.js';
import { finalSseError, rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createReloader, type Reloader } from '../../src/reload.js';
import { rewriteAndReload } from '../helpers/config-reload.js';

const SECRET = 'resume-limit-lowered-by-reload-0123456789abcdef';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const FOUR_MIB = 4_194_304;
const progress = (n: number): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: n, message: 'x'.repeat(30_000) } });
/** `id: <id>` and a progress notification, as the seller frames it (and the gateway forwards it, the id a token). */
const frame = (id: string, n: number): string => `id: ${id}\ndata: ${progress(n)}\n\n`;

/** The JSON-RPC id of the POST (the GET is told it in its query). */
const rpcOf = (req: SeenRequest): number => Number(new URL(req.url, 'http://x').searchParams.get('rpc') ?? 'NaN');

function seller(): Promise<RawSeller> {
  return startRawSeller((req: SeenRequest, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.method === 'POST') res.end(frame('r-1', 1) + frame('r-2', 2));
    else res.end(frame('r-3', 3) + `id: r-4\ndata: ${toolResponse(rpcOf(req), { content: [{ type: 'text', text: 'done' }] })}\n\n`);
  });
}

const yaml = (extra: readonly string[] = []): string =>
  ['log_level: info', 'resume:', `  secret: ${SECRET}`, 'agents:', '  rs2:', `    url: ${rs.url}`, ...extra.map((l) => `    ${l}`), ''].join('\n');

let rs: RawSeller;
let gw: ObservedGateway;
let dir: string;
let file: string;
let reloader: Reloader;

before(async () => {
  rs = await seller();
  gw = await startObservedGateway(yaml());
  dir = await mkdtemp(join(tmpdir(), 'gw-resume-limit-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, yaml());
  reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: captureLog().logger, watch: false });
});
after(async () => {
  reloader.close();
  await gw.close();
  await rs.close();
  await rm(dir, { recursive: true, force: true });
});

/** Rewrites the config file in one step and reloads it as a SIGHUP would; asserts it applied. */
const reloadTo = (text: string): Promise<void> => rewriteAndReload(file, text, reloader);

/** A token's `l` (the stream's response limit). */
const limitOf = (token: string): unknown => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { l: unknown }).l;

/** POSTs tools/call `rpcId`; returns the whole body and its tokens. */
async function post(rpcId: number): Promise<{ text: string; tokens: string[] }> {
  const r = await withTimeout(rawPost(`${gw.agentUrl('rs2')}?rpc=${rpcId}`, toolCall(rpcId, 'rs'), HEADERS), undefined, 'the POST');
  assert.equal(r.status, 200);
  return { text: r.text(), tokens: sseIds(r.text()) };
}

/** A stream started now (4 MiB): its two notifications forwarded, the last token returned. */
async function startedStream(rpcId: number): Promise<string> {
  const { text, tokens } = await post(rpcId);
  assert.equal(tokens.length, 2);
  assert.equal(text, frame(tokens[0]!, 1) + frame(tokens[1]!, 2));
  assert.deepEqual(tokens.map(limitOf), [FOUR_MIB, FOUR_MIB]);
  const line = await gw.exchangeLine('rs2', rpcId);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'resumable_end', reason: null });
  return tokens[1]!;
}

async function resume(token: string, rpcId: number): Promise<{ status: number; text: string }> {
  const res = await withTimeout(
    fetch(`${gw.agentUrl('rs2')}?rpc=${rpcId}`, { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } }),
    undefined,
    'the resume',
  );
  return { status: res.status, text: await res.text() };
}

describe('a reload that lowers the agent limits after a stream started', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the resume keeps the response limit in its token; new requests get the new one', async () => {
    const token = await startedStream(1);
    await reloadTo(yaml(['max_response_bytes: 20000']));

    const r = await resume(token, 1);
    assert.equal(r.status, 200);
    const tokens = sseIds(r.text);
    assert.equal(tokens.length, 2, r.text.slice(0, 300));
    assert.equal(r.text, frame(tokens[0]!, 3) + `id: ${tokens[1]}\ndata: ${toolResponse(1, { content: [{ type: 'text', text: 'done' }] })}\n\n`);
    assert.deepEqual(tokens.map(limitOf), [FOUR_MIB, FOUR_MIB]);
    const line = await gw.waitForLine((l) => l.msg === 'exchange' && l.agent === 'rs2' && l.rpc_id === 1 && l.outcome !== 'resumable_end');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });

    // A request after the reload is held to it.
    const fresh = await post(2);
    const { forwarded, err } = finalSseError(fresh.text, 2, 20_000);
    assert.equal(forwarded, '');
    assert.ok((err.details.observed_bytes as number) > 20_000);
  });

  test('its other limits are those in force at the resume: an event limit set since applies', async () => {
    await reloadTo(yaml());
    const token = await startedStream(3);
    await reloadTo(yaml(['max_response_bytes: 20000', 'max_sse_event_bytes: 10000']));
    const r = await resume(token, 3);
    assert.equal(r.status, 200);
    const { forwarded, err } = finalSseError(r.text, 3, 10_000, 'sse_event');
    assert.equal(forwarded, '');
    assert.equal(err.details.observed_bytes, Buffer.byteLength(progress(3)));
  });
});
