/**
 * Regression: a resume token named its agent, not its seller, so a resume after a reload that
 * pointed the agent at another seller went to the new seller.
 *
 * Reported failure (a hostile new user's trial 10, F7): agent `acme` points at seller A; a
 * call's SSE stream breaks after an event with id `A-cursor-…`, and the host holds the
 * gateway's token for it. A reload points `acme` at seller B. The host resumes with
 * `Last-Event-ID: <token>`: seller B got a GET with seller A's event id (an opaque cursor that
 * may encode seller A's internal state), and its answer for request 3 was forwarded as the
 * answer to the call seller A started.
 *
 * Now (src/resume/token.ts) a token's signature covers the url of the seller its stream came
 * from (the agent's `url` as configured when the stream started: scheme, host, port, path and
 * query), without growing the token: a resume verifies it against the agent's url in force, so
 * a token from before a reload that changed the url is refused `resume_token_invalid` (HTTP
 * 400), neither seller contacted, as a token minted with another secret is. The agent's
 * headers are not part of it: rotating a key keeps the streams resumable.
 *
 * Input: two raw sellers on 127.0.0.1. Each answers a POSTed tools/call with one progress
 * notification as `id: <tag>-cursor-1`, then ends its stream before the result (a break); a
 * GET gets the result as `id: <tag>-2`. The gateway runs a resume secret and is reloaded from
 * its file (src/reload.ts, the reloader a SIGHUP or a file change runs).
 * Expectation, exact bytes:
 * - after a reload to seller B, the token of seller A's stream is refused 400
 *   `resume_token_invalid` with the message naming a reload that changed the url; no GET
 *   reaches seller A or seller B; the refusal is logged;
 * - the same for a reload that keeps the seller's origin and changes only the url's path, or
 *   only its query (`?account=one` -> `?account=two`: a query can select another account's
 *   stream on the same server);
 * - controls: a token of seller B's stream resumes at seller B with B's event id; a reload
 *   back to seller A's url makes A's token resume at A again (the binding is the url, not the
 *   reload); a reload that changes only the agent's headers (a rotated key) and limits keeps
 *   the token resuming at A, which gets the new header.
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
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createReloader, type Reloader } from '../../src/reload.js';
import { rewriteAndReload } from '../helpers/config-reload.js';

const SECRET = 'resume-after-repoint-goes-to-new-seller-0123456789';
const VERSION = '2025-06-18';
const REFUSED_MESSAGE =
  "Last-Event-ID resume token does not verify: minted with another resume secret, or for another seller url than this agent's (another agent's, or this agent's before a reload changed its url).";

const resultData = (id: number, tag: string): string => toolResponse(id, { content: [{ type: 'text', text: `answer from seller ${tag}` }] });
const progressData = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });

/** A seller: a POST gets `id: <tag>-cursor-1` and a progress notification, then its stream ends; a GET gets the result as `id: <tag>-2`. */
function seller(tag: string): Promise<RawSeller> {
  return startRawSeller((req: SeenRequest, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.method === 'POST') {
      res.end(`id: ${tag}-cursor-1\ndata: ${progressData}\n\n`);
    } else {
      const id = Number(new URL(req.url, 'http://x').searchParams.get('rpc') ?? 'NaN');
      res.end(`id: ${tag}-2\ndata: ${resultData(id, tag)}\n\n`);
    }
  });
}

/** The config: agent `acme` at `url`, with `extra` YAML lines under it. */
const yaml = (url: string, extra: readonly string[] = []): string =>
  ['log_level: info', 'resume:', `  secret: ${SECRET}`, 'agents:', '  acme:', `    url: ${url}`, ...extra.map((l) => `    ${l}`), ''].join('\n');

let sellerA: RawSeller;
let sellerB: RawSeller;
let gw: ObservedGateway;
let dir: string;
let file: string;
let reloader: Reloader;

before(async () => {
  sellerA = await seller('A');
  sellerB = await seller('B');
  gw = await startObservedGateway(yaml(sellerA.url));
  dir = await mkdtemp(join(tmpdir(), 'gw-repoint-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, yaml(sellerA.url));
  reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: captureLog().logger, watch: false });
});
after(async () => {
  reloader.close();
  await gw.close();
  await sellerA.close();
  await sellerB.close();
  await rm(dir, { recursive: true, force: true });
});

/** Rewrites the config file in one step and reloads it as a SIGHUP would; asserts it applied. */
const reloadTo = (text: string): Promise<void> => rewriteAndReload(file, text, reloader);

/** POSTs tools/call `rpcId` (the seller's GET is told the id in its query), asserted to reach seller `tag`; returns the token of `<tag>-cursor-1`. */
async function brokenStream(rpcId: number, tag: 'A' | 'B'): Promise<string> {
  const posts = (s: RawSeller): number => s.requests.filter((q) => q.method === 'POST').length;
  const before = [posts(sellerA), posts(sellerB)];
  const r = await withTimeout(rawPost(`${gw.agentUrl('acme')}?rpc=${rpcId}`, toolCall(rpcId, 'get_delivery'), { 'mcp-protocol-version': VERSION }), undefined, 'the POST');
  assert.equal(r.status, 200);
  const [token] = sseIds(r.text());
  assert.ok(token !== undefined && token.startsWith('agw1.'), r.text());
  assert.equal(r.text(), `id: ${token}\ndata: ${progressData}\n\n`);
  assert.deepEqual([posts(sellerA), posts(sellerB)], tag === 'A' ? [before[0]! + 1, before[1]] : [before[0], before[1]! + 1]);
  const line = await gw.exchangeLine('acme', rpcId);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'resumable_end', reason: null });
  return token;
}

function resume(token: string, rpcId: number): Promise<Response> {
  return fetch(`${gw.agentUrl('acme')}?rpc=${rpcId}`, { headers: { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': VERSION } });
}

const gets = (s: RawSeller): SeenRequest[] => s.requests.filter((q) => q.method === 'GET');

/** The resume is refused 400 resume_token_invalid, exact body, logged; no seller gets a GET. */
async function assertRefused(token: string, rpcId: number): Promise<void> {
  const before = [gets(sellerA).length, gets(sellerB).length];
  const linesBefore = gw.lines.length;
  const resumed = await withTimeout(resume(token, rpcId), undefined, 'the resume');
  assert.equal(resumed.status, 400);
  assert.equal(await resumed.text(), JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: REFUSED_MESSAGE, data: { reason: 'resume_token_invalid' } } }));
  assert.deepEqual([gets(sellerA).length, gets(sellerB).length], before, 'no seller got the resume');
  const line = await gw.waitForLine((l) => l.msg === 'refused' && gw.lines.indexOf(l) >= linesBefore);
  assert.deepEqual({ reason: line.reason, status: line.status }, { reason: 'resume_token_invalid', status: 400 });
}

/** The resume goes to `s` with `<tag>-cursor-1` and the host gets its answer; returns the seller's GET. */
async function assertResumes(token: string, rpcId: number, s: RawSeller, tag: string): Promise<SeenRequest> {
  const before = gets(s).length;
  const resumed = await withTimeout(resume(token, rpcId), undefined, 'the resume');
  const text = await resumed.text();
  assert.equal(resumed.status, 200, text);
  const [resultToken] = sseIds(text);
  assert.ok(resultToken !== undefined, text);
  assert.equal(text, `id: ${resultToken}\ndata: ${resultData(rpcId, tag)}\n\n`);
  assert.equal(gets(s).length, before + 1);
  const get = gets(s).at(-1)!;
  assert.equal(get.headers['last-event-id'], `${tag}-cursor-1`);
  return get;
}

describe("a resume token only resumes against the seller url it was minted for", { timeout: TEST_TIMEOUT_MS }, () => {
  test("the reported failure: after a reload points the agent at seller B, seller A's token is refused and reaches no seller", async () => {
    await reloadTo(yaml(sellerA.url));
    const token = await brokenStream(3, 'A');
    await reloadTo(yaml(sellerB.url));
    await assertRefused(token, 3);
  });

  test("B's own token resumes at B; back at A's url, A's token resumes at A again (control) and B's is refused", async () => {
    await reloadTo(yaml(sellerA.url));
    const tokenA = await brokenStream(4, 'A');
    await reloadTo(yaml(sellerB.url));
    const tokenB = await brokenStream(5, 'B');
    await assertResumes(tokenB, 5, sellerB, 'B');
    await reloadTo(yaml(sellerA.url));
    await assertResumes(tokenA, 4, sellerA, 'A');
    await assertRefused(tokenB, 5);
  });

  test('a reload that changes only the path of the url (same origin) refuses the token', async () => {
    await reloadTo(yaml(sellerA.url));
    const token = await brokenStream(6, 'A');
    await reloadTo(yaml(`${sellerA.url}/v2`));
    await assertRefused(token, 6);
  });

  test('a reload that changes only the query of the url (?account=one -> ?account=two) refuses the token', async () => {
    await reloadTo(yaml(`${sellerA.url}?account=one`));
    const token = await brokenStream(7, 'A');
    await reloadTo(yaml(`${sellerA.url}?account=two`));
    await assertRefused(token, 7);
  });

  test("control: a reload that changes only the agent's headers (a rotated key) and limits keeps the token resuming", async () => {
    await reloadTo(yaml(sellerA.url, ['headers:', '  authorization: Bearer old-key-0123456789']));
    const token = await brokenStream(8, 'A');
    await reloadTo(yaml(sellerA.url, ['max_request_bytes: 500000', 'headers:', '  authorization: Bearer new-key-9876543210']));
    const get = await assertResumes(token, 8, sellerA, 'A');
    assert.equal(get.headers.authorization, 'Bearer new-key-9876543210');
  });
});
