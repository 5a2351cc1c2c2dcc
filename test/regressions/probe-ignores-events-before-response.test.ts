/**
 * Regression (a hostile new user's trial 15, L1, Low/Medium): `probe` understated what a host
 * receives. A seller answering a `tools/list` page over SSE with 3,000 `notifications/progress`
 * events before the result was reported `tools/list page 1  sse  195  131,072  pass`, `total: 2
 * messages, 335 bytes`, `result: all within target`, while the same request through the
 * gateway delivered 311,093 bytes (3,001 events) to a host. The probe counted the data of the
 * event that carried the response, nothing else; the README says it "measures what a host
 * would receive".
 * Now a row counts every byte of the answer through the response, as the gateway delivered it
 * (probe/rpc.ts `answerBytes`: the events, comments and blank lines before the response's
 * event, and that event whole), judges the target on that, and says what came before the
 * response: `events_before` and `bytes_before` in `--json`, `(3,000 events before the response:
 * 310,890 bytes)` after the row's result in the table (probe/report.ts). The capabilities row
 * keeps measuring the document (AdCP's budget is on it), with what came before its answer
 * beside it, counted in the total.
 *
 * Input: a raw node:http seller on 127.0.0.1: `/flood` answers tools/list with 3,000 progress
 * events, then the page (two tools), in one write each; `/few` answers tools/list with 3
 * progress events and a comment before the page (which lists
 * get_adcp_capabilities), and the capabilities call with 2 events before its result; `/split`
 * answers tools/list a byte at a time, then keeps the stream open with a comment after the
 * response. Probed with the CLI (table, `--json`), and the probe's SSE reader pointed at the
 * seller itself; the same tools/list sent through a gateway (`startGateway`) for the bytes it
 * delivers.
 * Expected: the flood page's row is 311,089 bytes, the bytes the gateway delivers, `over`, with
 * the note; exit 1. The `/few` rows and totals exact (below); the reader's counts exact, not
 * one byte past the response's blank line.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createRpcClient } from '../../src/probe/rpc.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const INIT = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } };
const TOOL = (name: string) => ({ name, description: 'dddddddddd', inputSchema: { type: 'object' } });
const CAPS = { content: [{ type: 'text', text: '{"adcp":{"major_versions":[3]}}' }], structuredContent: { adcp: { major_versions: [3] } } };

const progress = (i: number): string => `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${i}}}\n\n`;
const message = (id: number, result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, result });
const event = (id: number, result: unknown): string => `data: ${message(id, result)}\n\n`;

/** What `/flood` sends before the page, and the page: 3,000 events. */
const FLOOD_BEFORE = Array.from({ length: 3000 }, (_, i) => progress(i)).join('');
const FLOOD_PAGE = (id: number): string => event(id, { tools: [TOOL('t0'), TOOL('t1')] });
/** What `/few` sends before its page (3 events and a comment) and before its capabilities result (2 events). */
const FEW_BEFORE = `${progress(0)}${progress(1)}:working\n\n${progress(2)}`;
const FEW_PAGE = (id: number): string => event(id, { tools: [TOOL('get_adcp_capabilities')] });
const CAPS_BEFORE = `${progress(0)}${progress(1)}`;

let seller: RawSeller;
let origin: string;
let dir: string;
let configFile: string;

before(async () => {
  seller = await startRawSeller((req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(405).end();
    const msg = JSON.parse(req.body.toString('utf8') || 'null') as { id?: number; method?: string } | null;
    if (msg?.id === undefined) return void res.writeHead(202).end();
    if (msg.method === 'initialize') return void res.writeHead(200, { 'content-type': 'application/json' }).end(message(msg.id, INIT));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url === '/flood') {
      res.write(FLOOD_BEFORE);
      return void res.end(FLOOD_PAGE(msg.id));
    }
    if (req.url === '/few') return void res.end(msg.method === 'tools/list' ? `${FEW_BEFORE}${FEW_PAGE(msg.id)}` : `${CAPS_BEFORE}${event(msg.id, CAPS)}`);
    // `/split`: a byte at a time, then a comment in the same write as the response's blank line, the stream left open.
    const bytes = Buffer.from(`${progress(0)}${FLOOD_PAGE(msg.id)}: after\n\n`);
    let i = 0;
    const timer = setInterval(() => {
      if (i >= bytes.length || res.destroyed) return void clearInterval(timer);
      const n = i === bytes.length - 11 ? 11 : 1;
      res.write(bytes.subarray(i, i + n));
      i += n;
    }, 1);
  });
  origin = new URL(seller.url).origin;
  dir = await mkdtemp(join(tmpdir(), 'probe-events-before-'));
  configFile = join(dir, 'gateway.yaml');
  await writeFile(configFile, ['agents:', ...['flood', 'few'].flatMap((a) => [`  ${a}:`, `    url: ${origin}/${a}`]), ''].join('\n'));
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

/** 311089 -> `311,089` */
const n = (v: number): string => v.toLocaleString('en-US');

describe('probe: every byte of an SSE answer is counted, the events before the response said apart', () => {
  test('the table: 3,000 progress events before a tools/list page (was: 195 bytes, all within target)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    // What a host gets through the gateway for the same request (id 2, as the probe's).
    const gateway = await startGateway(`agents:\n  flood:\n    url: ${origin}/flood\n`);
    let delivered: Buffer;
    try {
      const res = await fetch(gateway.agentUrl('flood'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
      });
      delivered = Buffer.from(await res.arrayBuffer());
    } finally {
      await gateway.close();
    }
    const page = Buffer.byteLength(FLOOD_BEFORE) + Buffer.byteLength(FLOOD_PAGE(2));
    assert.deepEqual([delivered.length, page], [311_089, 311_089], 'the gateway delivers the seller bytes as they are');

    const run = await runCli(['probe', 'flood', '--config', configFile]);
    const init = Buffer.byteLength(message(1, INIT));
    const result = `over (3,000 events before the response: ${n(Buffer.byteLength(FLOOD_BEFORE))} bytes)`;
    assert.equal(result, 'over (3,000 events before the response: 310,890 bytes)');
    assert.deepEqual(run, {
      code: 1,
      stderr: '',
      stdout: [
        `probe: agent flood -> ${origin}/flood, through the gateway's pipeline`,
        'server: raw 1, MCP 2025-11-25',
        '',
        `surface                via     bytes   target  ${'result'.padEnd(result.length)}`.trimEnd(),
        `---------------------  ----  -------  -------  ${'-'.repeat(result.length)}`,
        `initialize             json  ${n(init).padStart(7)}        -  -`,
        `tools/list page 1      sse   311,089  131,072  ${result}`,
        'get_adcp_capabilities                  65,536  not offered',
        '',
        'tools/list: 1 page, 2 tools, 311,089 bytes',
        `total: 2 messages, ${n(init + 311_089)} bytes`,
        'result: 1 over target',
        '',
      ].join('\n'),
    });
  });

  test('--json: a page and a capabilities answer with events and a comment before them', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const run = await runCli(['probe', 'few', '--json', '--config', configFile]);
    assert.deepEqual([run.code, run.stderr], [0, '']);
    const init = Buffer.byteLength(message(1, INIT));
    const page = Buffer.byteLength(FEW_BEFORE) + Buffer.byteLength(FEW_PAGE(2));
    const caps = Buffer.byteLength(JSON.stringify(CAPS.structuredContent));
    const report = JSON.parse(run.stdout) as { surfaces: unknown[]; totals: unknown };
    assert.deepEqual(report.surfaces, [
      { surface: 'initialize', transport: 'json', bytes: init, target_bytes: null, status: 'info' },
      // 3 events: the comment dispatches none (nor does a host's SSE reader); its bytes count.
      { surface: 'tools_list_page', page: 1, transport: 'sse', bytes: page, events_before: 3, bytes_before: Buffer.byteLength(FEW_BEFORE), target_bytes: 131072, status: 'pass', tools: 1 },
      { surface: 'get_adcp_capabilities', transport: 'sse', bytes: caps, events_before: 2, bytes_before: Buffer.byteLength(CAPS_BEFORE), target_bytes: 65536, status: 'pass' },
    ]);
    assert.deepEqual(report.totals, { tools: 1, tools_list_pages: 1, tools_list_bytes: page, messages: 3, bytes: init + page + caps + Buffer.byteLength(CAPS_BEFORE), over: 0, errors: 0 });
  });

  test("the probe's SSE reader: counts to the response's blank line exactly, a byte at a time, and nothing after it", { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = createRpcClient({ url: `${origin}/split`, timeoutMs: 10_000, maxBodyBytes: 1024 * 1024 });
    await client.call('initialize', {});
    const reply = await client.call('tools/list', {});
    const data = message(2, { tools: [TOOL('t0'), TOOL('t1')] });
    assert.deepEqual(
      { transport: reply.transport, bytes: reply.bytes, answerBytes: reply.answerBytes, before: reply.before, problem: reply.problem },
      {
        transport: 'sse',
        bytes: Buffer.byteLength(data),
        answerBytes: Buffer.byteLength(progress(0)) + Buffer.byteLength(FLOOD_PAGE(2)),
        before: { events: 1, bytes: Buffer.byteLength(progress(0)) },
        problem: undefined,
      },
    );
    assert.deepEqual(reply.message, JSON.parse(data));
  });
});
