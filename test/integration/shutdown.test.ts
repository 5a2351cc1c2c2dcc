/**
 * Graceful shutdown of the real process (node dist/main.js): on SIGTERM an
 * in-flight JSON exchange completes, an open SSE stream the seller does not answer is left
 * running and, at the grace's margin (src/shutdown-streams.ts), ends plainly with its last
 * event id a resume token that a fresh gateway with the same secret accepts (before a hostile
 * operator's trial 49, finding 1, it ended at the signal), and the process exits 0;
 * a request that hangs past shutdown_grace_ms makes it exit 1.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { sseMessages, toolCall, sseIds } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';

const SECRET = 'shutdown-test-resume-secret-0123456789';

let seller: RawSeller;
let dir: string;
/** Per tool name: what the seller does with a POSTed tools/call. */
const behaviours = new Map<string, (req: SeenRequest, res: ServerResponse, id: unknown) => void>();
/** GET with Last-Event-ID (a resumed stream). */
let onResume: (req: SeenRequest, res: ServerResponse) => void = (_req, res) => void res.writeHead(500).end();

before(async () => {
  seller = await startRawSeller((req, res) => {
    if (req.method === 'GET') return onResume(req, res);
    const msg = JSON.parse(req.body.toString('utf8')) as { id: unknown; params: { name: string } };
    const behaviour = behaviours.get(msg.params.name);
    if (!behaviour) return void res.writeHead(500).end();
    behaviour(req, res, msg.id);
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-shutdown-'));
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

/** The gateway as its own process on `<name>.yaml`: resume secret SECRET, `extra` YAML, agent `s` -> the seller. */
async function startNamedGateway(name: string, extra: string): Promise<GatewayProcess & { url: string }> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nresume:\n  secret: ${SECRET}\n${extra}agents:\n  s:\n    url: ${seller.url}\n`);
  const gw = await startGatewayProcess(file, { stdin: 'pipe' });
  return { ...gw, url: `${gw.address}/agents/s/mcp` };
}

const post = (url: string, message: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(message),
  });

/** Reads an SSE body until `until` holds for the text so far, or to its end. */
async function readSse(reader: ReadableStreamDefaultReader<Uint8Array>, soFar: string, until?: (text: string) => boolean): Promise<{ text: string; ended: boolean }> {
  const decoder = new TextDecoder();
  let text = soFar;
  while (!until?.(text)) {
    const { value, done } = await reader.read();
    if (done) return { text, ended: true };
    text += decoder.decode(value, { stream: true });
  }
  return { text, ended: false };
}

describe('graceful shutdown (SIGTERM)', () => {
  it('in-flight JSON completes, the SSE stream ends plainly at the grace margin with a resumable token, exit 0', async () => {
    let releaseJson!: () => void;
    const jsonReleased = new Promise<void>((resolve) => (releaseJson = resolve));
    let jsonArrived!: () => void;
    const jsonAtSeller = new Promise<void>((resolve) => (jsonArrived = resolve));
    const JSON_RESULT = { content: [{ type: 'text', text: 'slow but complete' }] };
    behaviours.set('slow_json', (_req, res, id) => {
      jsonArrived();
      void jsonReleased.then(() => {
        const body = toolResponse(id as number, JSON_RESULT);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      });
    });
    behaviours.set('streaming', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: s1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      // ... and the seller keeps the stream open.
    });

    // The margin: 1 s before the grace runs out (src/shutdown-streams.ts).
    const gw = await startNamedGateway('clean', 'shutdown_grace_ms: 3000\n');
    try {
      const jsonResponse = post(gw.url, toolCall(1, 'slow_json'));
      await jsonAtSeller;
      const sse = await post(gw.url, toolCall(2, 'streaming'));
      assert.equal(sse.status, 200);
      assert.match(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
      const reader = sse.body!.getReader();
      const first = await readSse(reader, '', (t) => sseIds(t).length === 1 && t.endsWith('\n\n'));
      assert.equal(first.ended, false);

      gw.child.kill('SIGTERM');
      const shuttingDown = await gw.waitForLog('shutting down');
      assert.equal(shuttingDown.signal, 'SIGTERM');
      assert.deepEqual([shuttingDown.sse_streams_ended, shuttingDown.sse_streams_finishing], [0, 1]);

      // The JSON exchange in flight completes.
      releaseJson();
      const json = await jsonResponse;
      assert.equal(json.status, 200);
      assert.deepEqual(await json.json(), { jsonrpc: '2.0', id: 1, result: JSON_RESULT });

      // The SSE stream ends plainly at the margin: no error event, its last id a resume token.
      const rest = await withTimeout(readSse(reader, first.text), 10_000, 'SSE end');
      const nearlyOver = await gw.waitForLog('shutdown_grace_ms nearly over: ending the SSE streams still open');
      assert.deepEqual([nearlyOver.sse_streams_ended, nearlyOver.margin_ms], [1, 1000]);
      assert.equal(rest.ended, true);
      const messages = sseMessages(rest.text) as Array<{ method?: string; id?: unknown }>;
      assert.deepEqual(
        messages.map((m) => m.method ?? m.id),
        ['notifications/progress'],
      );
      assert.doesNotMatch(rest.text, /adcp_error/);
      const token = sseIds(rest.text).at(-1) ?? '';
      assert.match(token, /^agw1\./);

      assert.equal(await withTimeout(gw.exited, 30_000, 'exit'), 0);
      assert.ok(gw.logs.some((e) => e.msg === 'stopped'));
      assert.equal(gw.logs.some((e) => (e.level ?? 0) >= 50), false, 'nothing logged at error level');

      // A fresh gateway with the same secret accepts the token and resumes the stream at the seller's id.
      let resumedFrom: string | undefined;
      onResume = (req, res) => {
        resumedFrom = req.headers['last-event-id'] as string;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`id: s2\nevent: message\ndata: ${toolResponse(2, { content: [{ type: 'text', text: 'done' }] })}\n\n`);
      };
      const fresh = await startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n`);
      try {
        const resumed = await fetch(fresh.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': '2025-11-25' } });
        assert.equal(resumed.status, 200);
        const text = await resumed.text();
        assert.equal(resumedFrom, 's1');
        assert.deepEqual(sseMessages(text), [{ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'done' }] } }]);
      } finally {
        await fresh.close();
      }
    } finally {
      gw.kill();
    }
  });

  it('a request still hanging after shutdown_grace_ms: exit 1 with an error line', async () => {
    let arrived!: () => void;
    const atSeller = new Promise<void>((resolve) => (arrived = resolve));
    behaviours.set('hang', () => arrived()); // never answers

    const gw = await startNamedGateway('hang', 'shutdown_grace_ms: 300\n');
    try {
      const pending = post(gw.url, toolCall(7, 'hang')).then(
        (r) => r.status,
        () => 'reset',
      );
      await atSeller;
      gw.child.kill('SIGINT');
      assert.equal(await withTimeout(gw.exited, 30_000, 'exit'), 1);
      const line = gw.logs.find((e) => e.msg === 'shutdown_grace_ms is over with requests still open: exiting anyway');
      assert.ok(line, JSON.stringify(gw.logs.map((e) => e.msg)));
      assert.equal(line.grace_ms, 300);
      assert.equal(await pending, 'reset');
    } finally {
      gw.kill();
    }
  });

  it('a second signal while shutting down exits 1 at once', async () => {
    let arrived!: () => void;
    const atSeller = new Promise<void>((resolve) => (arrived = resolve));
    behaviours.set('hang2', () => arrived());
    const gw = await startNamedGateway('twice', 'shutdown_grace_ms: 60000\n');
    try {
      void post(gw.url, toolCall(8, 'hang2')).catch(() => {});
      await atSeller;
      gw.child.kill('SIGTERM');
      await gw.waitForLog('shutting down');
      gw.child.kill('SIGTERM');
      assert.equal(await withTimeout(gw.exited, 30_000, 'exit'), 1);
      assert.ok(gw.logs.some((e) => e.msg === 'second signal while shutting down: exiting now'));
    } finally {
      gw.kill();
    }
  });
});
