/**
 * Regression (hostile trial 36, F5): a reload that changed an agent's `url` only in spelling
 * counted as a move. `https://seller/mcp` -> `https://seller/mcp?` (an empty query) or
 * `https://seller/m%63p` (an unreserved character percent-encoded) names the same resource
 * (RFC 3986 §6.2.2), yet the reload compared `URL.href`s: the agent's open standalone GET
 * streams ended (outcome `resumable_end`, reason `agent_url_changed`) and resume tokens signed
 * for the old spelling were refused `resume_token_invalid`. Host case, dot segments and a
 * default port were already the same (the URL parser writes them one way).
 *
 * Now one function says whether two agent urls name the same resource
 * (src/config/same-resource.ts sameAgentUrl: an empty query is none, percent-encoded
 * unreserved characters are decoded, the others' hex upper-cased, a fragment ignored), and both
 * the reload's moved check (routing/open-streams.ts) and the resume token's url
 * (resume/token.ts: signed for that function's key) use it, so they agree.
 *
 * Input: a raw seller whose every GET is an endless SSE stream (an event `id: e<n>` every
 * 20 ms, counting on from a `Last-Event-ID` `e<n>`); a gateway with a resume secret, agent
 * `acme` at `<seller>/mcp`, reloaded from its file as a SIGHUP does (src/reload.ts).
 * Expected: after a reload to `<seller>/mcp?`, or to `<seller>/m%63p`, a standalone GET stream
 * opened before it goes on receiving events, no exchange line ends it; a token of a stream
 * minted before such a reload resumes at the seller with the seller's event id (200, the seller
 * gets `Last-Event-ID: e<n>`). Control: a reload to `<seller>/elsewhere` still ends the stream
 * (`resumable_end`, `agent_url_changed`).
 */
import { until } from '../helpers/raw-stack.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { createReloader, type Reloader } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';
import { rewriteAndReload } from '../helpers/config-reload.js';
import { sseIds } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';

const SECRET = 'reload-url-spelling-counts-as-moved-0123456789';

/** The seller's open streams, ended by the suite's end. */
const open = new Set<http.ServerResponse>();

/** Every GET is an endless stream: `id: e<n>` every 20 ms, from one past a `Last-Event-ID` `e<n>`. */
function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    open.add(res);
    const last = /^e(\d+)$/.exec(String(req.headers['last-event-id'] ?? ''));
    let n = last ? Number(last[1]) : 0;
    const timer = setInterval(() => res.write(`id: e${++n}\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`), 20);
    res.on('close', () => {
      clearInterval(timer);
      open.delete(res);
    });
  });
}

const yaml = (url: string): string => ['log_level: info', 'resume:', `  secret: ${SECRET}`, 'agents:', '  acme:', `    url: "${url}"`, ''].join('\n');

/** A standalone GET stream through the gateway. */
interface HostStream {
  text(): string;
  events(): number;
  ended: Promise<void>;
  isEnded(): boolean;
  close(): void;
}

function openStream(url: string, headers: Record<string, string> = {}): Promise<HostStream> {
  return withTimeout(
    new Promise<HostStream>((resolve, reject) => {
      const req = http.request(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        assert.equal(res.statusCode, 200);
        let text = '';
        let done = false;
        const ended = new Promise<void>((r) => {
          const end = (): void => {
            done = true;
            r();
          };
          res.on('end', end).on('close', end);
        });
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        resolve({
          text: () => text,
          events: () => text.split('\n\n').filter((b) => b.includes('data:')).length,
          ended,
          isEnded: () => done,
          close: () => req.destroy(),
        });
      });
      req.on('error', reject);
      req.end();
    }),
  );
}


let seller: RawSeller;
let gw: ObservedGateway;
let dir: string;
let file: string;
let reloader: Reloader;
let base: string;
const streams: HostStream[] = [];

before(async () => {
  seller = await startSeller();
  base = seller.url; // http://127.0.0.1:<port>/mcp
  gw = await startObservedGateway(yaml(base));
  dir = await mkdtemp(join(tmpdir(), 'gw-spelling-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, yaml(base));
  reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: captureLog().logger, watch: false });
});
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  // Each test starts from the agent at `<seller>/mcp`.
  await rewriteAndReload(file, yaml(base), reloader);
});
after(async () => {
  reloader.close();
  for (const res of open) res.destroy();
  await gw.close();
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

/** The exchange lines of `acme`'s GET streams a reload ended. */
const reconfiguredLines = (): unknown[] => gw.lines.filter((l) => l.msg === 'exchange' && l.agent === 'acme' && (l.reason === 'agent_url_changed' || l.reason === 'agent_removed'));

/** Opens a GET stream, reloads to `url`, and asserts the stream goes on receiving events. */
async function assertStreamSurvives(url: string): Promise<void> {
  const stream = await openStream(gw.agentUrl('acme'));
  streams.push(stream);
  await until('events on the stream', () => stream.events() >= 2);
  await rewriteAndReload(file, yaml(url), reloader);
  const before = stream.events();
  await until('more events on the stream, or its end', () => stream.events() >= before + 3 || stream.isEnded());
  assert.equal(stream.isEnded(), false, `the stream ended at the reload to ${url}`);
  assert.deepEqual(reconfiguredLines(), [], 'no exchange line says the reload ended a stream');
  assert.equal(gw.app.gateway.openStreams, 1);
}

/** A token minted before a reload to `url` resumes after it, at the seller, with the seller's event id. */
async function assertTokenResumes(url: string): Promise<void> {
  const first = await openStream(gw.agentUrl('acme'));
  streams.push(first);
  await until('events on the stream', () => first.events() >= 2);
  first.close();
  const token = sseIds(first.text()).at(-1)!;
  const sellerIdOfToken = `e${sseIds(first.text()).length}`;
  await rewriteAndReload(file, yaml(url), reloader);

  const gets = seller.requests.length;
  const resumed = await withTimeout(fetch(gw.agentUrl('acme'), { headers: { accept: 'text/event-stream', 'last-event-id': token } }), undefined, 'the resume');
  const status = resumed.status;
  const body = status === 200 ? '' : await resumed.text();
  if (status === 200) await resumed.body?.cancel();
  assert.equal(status, 200, `the resume after the reload to ${url} was refused: ${body}`);
  await until('the resume at the seller', () => seller.requests.length > gets);
  assert.equal(seller.requests.at(-1)!.headers['last-event-id'], sellerIdOfToken);
}

describe('reload-url-spelling-counts-as-moved', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the reported failure: a reload to `<url>?` (an empty query) keeps the open GET stream', async () => {
    await assertStreamSurvives(`${base}?`);
  });

  test('a reload to `/m%63p` (an unreserved character percent-encoded) keeps the open GET stream', async () => {
    await assertStreamSurvives(base.replace(/\/mcp$/, '/m%63p'));
  });

  test('a token minted before a reload that only respells the url resumes after it, at the seller', async () => {
    await assertTokenResumes(`${base.replace(/\/mcp$/, '/m%63p')}?`);
  });

  test('control: a reload that really moves the agent still ends the stream, agent_url_changed', async () => {
    const stream = await openStream(gw.agentUrl('acme'));
    streams.push(stream);
    await until('events on the stream', () => stream.events() >= 2);
    await rewriteAndReload(file, yaml(base.replace(/\/mcp$/, '/elsewhere')), reloader);
    await withTimeout(stream.ended, 5_000, 'the moved stream ends');
    const line = await gw.waitForLine((l) => l.msg === 'exchange' && l.agent === 'acme' && l.reason === 'agent_url_changed');
    assert.deepEqual([line.outcome, line.http_method, line.rpc_kind], ['resumable_end', 'GET', 'none']);
  });
});
