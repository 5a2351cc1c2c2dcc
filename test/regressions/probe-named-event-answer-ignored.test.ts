/**
 * Regression (a hostile new user's trial): `probe` skipped an SSE event named other than
 * `message` (`event: x-custom`), as the MCP TypeScript SDK client does, so a seller that sent
 * its answer in one, keeping the stream open, left the probe waiting until its timeout. Through
 * its in-process gateway (which judges every event by its data whatever its name and refuses
 * the request's own response in a named event: test/regressions/sse-named-event-unchecked.test.ts)
 * the probe got `SERVICE_UNAVAILABLE (upstream_not_mcp)` at once, with nothing saying that the
 * answer was there under a name MCP clients do not read.
 * Now the gateway keeps the refused event's name on the exchange (the exchange line's
 * `answer_event`), the probe's row names it (probe/answer-events.ts), and the probe's own SSE
 * reader reports a response in a named event at once, by its name, instead of skipping it
 * (probe/rpc.ts).
 *
 * Input: a raw node:http seller on 127.0.0.1 answering one method in a named event and never
 * ending that stream: tools/list in `event: x-custom`, initialize in `event:  message` (two
 * spaces: the type " message"), tools/call get_adcp_capabilities in an event with a
 * 100-character name; probed with the real CLI (table, `--json`) and `runProbe`; and the
 * probe's SSE reader (`createRpcClient`) pointed at the seller itself.
 * Expected: each such row is an error `SERVICE_UNAVAILABLE (upstream_not_mcp): the answer came
 * in an SSE event named "<name>"; MCP clients read only unnamed or `message` events` (the name's
 * first 64 characters, then `…`), exit 1; the exchange line carries `answer_event`; the
 * reader's reply has that problem and no message. A named event holding a response to another
 * id, or a notification, is still skipped for the unnamed answer after it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { runProbe } from '../../src/probe/probe.js';
import { createRpcClient } from '../../src/probe/rpc.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { captureLog } from '../helpers/capture-log.js';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LONG_NAME = 'r'.repeat(100);
const why = (name: string): string => `the answer came in an SSE event named ${JSON.stringify(name)}; MCP clients read only unnamed or \`message\` events`;
const REFUSED = 'SERVICE_UNAVAILABLE (upstream_not_mcp)';

/** Per seller path: the method answered in a named event, and the event's name. */
const NAMED: Readonly<Record<string, readonly [method: string, name: string]>> = {
  '/tools': ['tools/list', 'x-custom'],
  '/init': ['initialize', ' message'],
  '/caps': ['tools/call', LONG_NAME],
  '/others': ['tools/list', 'x-custom'],
};

const INIT = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } };
const TOOLS = { tools: [{ name: 'get_adcp_capabilities', inputSchema: { type: 'object' } }] };
const CAPS = { content: [{ type: 'text', text: '{"adcp":{"major_versions":[3]}}' }], structuredContent: { adcp: { major_versions: [3] } } };

let seller: RawSeller;
let origin: string;
let dir: string;
let configFile: string;

before(async () => {
  seller = await startRawSeller((req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(405).end();
    const msg = JSON.parse(req.body.toString('utf8') || 'null') as { id?: number; method?: string } | null;
    if (msg?.id === undefined) return void res.writeHead(202).end();
    const result = msg.method === 'initialize' ? INIT : msg.method === 'tools/list' ? TOOLS : CAPS;
    const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
    const [method, name] = NAMED[req.url] ?? [];
    if (msg.method !== method) return void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url === '/others') {
      // Skipped, as before: a named response to another id and a named notification; then the answer, unnamed.
      res.end(`event: x-custom\ndata: {"jsonrpc":"2.0","id":999,"result":{}}\n\nevent: x-custom\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\ndata: ${body}\n\n`);
      return;
    }
    // The answer under a name, and the stream kept open (the seller never ends it).
    res.write(`event: ${name}\ndata: ${body}\n\n`);
  });
  origin = new URL(seller.url).origin;
  dir = await mkdtemp(join(tmpdir(), 'probe-named-event-'));
  configFile = join(dir, 'gateway.yaml');
  await writeFile(configFile, ['agents:', ...['tools', 'init', 'caps'].flatMap((a) => [`  ${a}:`, `    url: ${origin}/${a}`]), ''].join('\n'));
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The bytes of the gateway's `upstream_not_mcp` answer to request `id` of `method` on the SSE
 * stream: its event whole (`event: message`, `data: ` and the blank line around the message),
 * every byte a host receives (trial 15, L1).
 */
const SSE_FRAMING = Buffer.byteLength('event: message\ndata: \n\n');
const refusalBytes = (id: number, method: string): number => Buffer.byteLength(expectedErrorJson({ id, method, reason: 'upstream_not_mcp', upstreamStatus: 200 })) + SSE_FRAMING;

describe('probe: an answer in a named SSE event is reported at once, by its name', () => {
  test('the table: tools/list answered in `event: x-custom` (stream left open) names the event (was: upstream_not_mcp alone)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const run = await runCli(['probe', 'tools', '--config', configFile]);
    const error = `error: ${REFUSED}: ${why('x-custom')}`;
    const bytes = String(refusalBytes(2, 'tools/list'));
    assert.deepEqual(run, {
      code: 1,
      stderr: '',
      stdout: [
        `probe: agent tools -> ${origin}/tools, through the gateway's pipeline`,
        'server: raw 1, MCP 2025-11-25',
        '',
        `surface                via   bytes   target  ${'result'.padEnd(error.length)}`.trimEnd(),
        `---------------------  ----  -----  -------  ${'-'.repeat(error.length)}`,
        `initialize             json  ${String(JSON.stringify({ jsonrpc: '2.0', id: 1, result: INIT }).length).padStart(5)}        -  -`,
        `tools/list page 1      sse   ${bytes.padStart(5)}  131,072  ${error}`,
        'get_adcp_capabilities                65,536  skipped: tools/list did not complete',
        '',
        'tools/list: 0 pages, 0 tools, 0 bytes',
        `total: 2 messages, ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: INIT }).length + Number(bytes)} bytes`,
        'result: 1 error',
        '',
      ].join('\n'),
    });
  });

  test('--json: initialize answered in `event:  message` (the type " message") names it', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const run = await runCli(['probe', 'init', '--json', '--config', configFile]);
    assert.deepEqual([run.code, run.stderr], [1, '']);
    const report = JSON.parse(run.stdout) as { surfaces: unknown[] };
    assert.deepEqual(report.surfaces, [
      { surface: 'initialize', transport: 'sse', bytes: refusalBytes(1, 'initialize'), target_bytes: null, status: 'error', error: `${REFUSED}: ${why(' message')}` },
    ]);
  });

  test('runProbe: get_adcp_capabilities in an event with a 100-character name: its first 64 in the row and the exchange line', { timeout: TEST_TIMEOUT_MS }, async () => {
    const config = parseConfig(['agents:', '  caps:', `    url: ${origin}/caps`, ''].join('\n'), { env: {}, source: 'probe.yaml' });
    const log = captureLog('info');
    const report = await runProbe({ config, agent: 'caps', logger: log.logger, timeoutMs: TEST_TIMEOUT_MS });
    const shown = `${'r'.repeat(64)}\u2026`;
    assert.deepEqual(report.rows.at(-1), {
      surface: 'get_adcp_capabilities',
      transport: 'sse',
      bytes: Buffer.byteLength(expectedErrorJson({ id: 3, method: 'tools/call', toolName: 'get_adcp_capabilities', reason: 'upstream_not_mcp', upstreamStatus: 200 })) + SSE_FRAMING,
      target_bytes: 65536,
      status: 'error',
      error: `${REFUSED}: ${why(shown)}`,
    });
    const lines = log.entries.filter((e) => e.msg === 'exchange').map((e) => [e.method, e.reason, e.answer_event]);
    assert.deepEqual(lines, [
      ['initialize', null, undefined],
      ['notifications/initialized', null, undefined],
      ['tools/list', null, undefined],
      ['tools/call', 'upstream_not_mcp', shown],
    ]);
  });

  test("the probe's SSE reader: the response in a named event is a problem naming it, at once (was: skipped until the timeout)", { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = createRpcClient({ url: `${origin}/tools`, timeoutMs: 5_000, maxBodyBytes: 1024 * 1024 });
    await client.call('initialize', {});
    const reply = await client.call('tools/list', {});
    assert.deepEqual([reply.status, reply.transport, reply.message, reply.bytes, reply.problem], [200, 'sse', undefined, 0, why('x-custom')]);
  });

  test("the probe's SSE reader: a named response to another id and a named notification are skipped for the unnamed answer", { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = createRpcClient({ url: `${origin}/others`, timeoutMs: 5_000, maxBodyBytes: 1024 * 1024 });
    await client.call('initialize', {});
    const reply = await client.call('tools/list', {});
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, result: TOOLS });
    assert.deepEqual([reply.status, reply.transport, reply.message, reply.bytes, reply.problem], [200, 'sse', JSON.parse(body), body.length, undefined]);
  });
});
