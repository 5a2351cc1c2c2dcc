/**
 * `adcp-buyer-gateway probe <agent>`: discovery sizes measured through the gateway's own
 * pipeline, against the demo seller (examples/seller.ts) and a raw seller whose second
 * tools/list page is 200 KiB and whose capabilities document is 70 KiB.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDemoSeller, type DemoSeller } from '../../examples/seller.js';
import { parseConfig } from '../../src/config/load.js';
import { runProbe, type ProbeReport } from '../../src/probe/probe.js';
import { withTakenPort } from '../helpers/ports.js';
import { runCli } from '../helpers/process.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';

const PAGE_2_BYTES = 200 * 1024;
const CAPS_BYTES = 70 * 1024;
const PUBLISHER_DOMAINS_BYTES = 9_000;
const DATA_PROVIDER_DOMAINS_BYTES = 4_000;

const bytesOf = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

/** A JSON array of strings serializing to exactly `bytes`. */
function domains(bytes: number, prefix: string): string[] {
  const out: string[] = [];
  while (bytesOf([...out, `${prefix}${out.length}.example`]) + 40 < bytes) out.push(`${prefix}${out.length}.example`);
  out.push('');
  out[out.length - 1] = 'x'.repeat(bytes - bytesOf(out));
  assert.equal(bytesOf(out), bytes);
  return out;
}

/** The capabilities document: exactly CAPS_BYTES serialized, with both counterparty-asserted fields. */
const CAPABILITIES: Record<string, unknown> = (() => {
  const base = {
    adcp: { major_versions: [3] },
    supported_protocols: ['media_buy', 'signals'],
    media_buy: { portfolio: { publisher_domains: domains(PUBLISHER_DOMAINS_BYTES, 'pub'), publisher_domains_complete: false } },
    signals: { data_provider_domains: domains(DATA_PROVIDER_DOMAINS_BYTES, 'dp') },
    notes: '',
  };
  const doc = { ...base, notes: 'n'.repeat(CAPS_BYTES - bytesOf(base)) };
  assert.equal(bytesOf(doc), CAPS_BYTES);
  return doc;
})();

const tool = (name: string, description = ''): Record<string, unknown> => ({ name, description, inputSchema: { type: 'object' } });

/** A JSON-RPC response of exactly `bytes`, padding the last tool's description. */
function pageOfSize(id: unknown, tools: Record<string, unknown>[], nextCursor: string | undefined, bytes: number): string {
  const make = (pad: string) =>
    JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [...tools, tool('padding_tool', pad)], ...(nextCursor ? { nextCursor } : {}) } });
  const text = make('d'.repeat(bytes - Buffer.byteLength(make(''))));
  assert.equal(Buffer.byteLength(text), bytes);
  return text;
}

let raw: RawSeller;
let demo: DemoSeller;
let dir: string;

before(async () => {
  raw = await startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8') || 'null') as { id?: unknown; method?: string; params?: { cursor?: string; name?: string } } | null;
    const send = (body: string): void => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
    if (req.method === 'DELETE') return void res.writeHead(405).end();
    if (msg?.id === undefined) return void res.writeHead(202).end();
    const id = msg.id;
    switch (msg.method) {
      case 'initialize':
        return send(JSON.stringify({ jsonrpc: '2.0', id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw-seller', version: '9.9.9' } } }));
      case 'tools/list': {
        const cursor = msg.params?.cursor;
        if (cursor === undefined) return send(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [tool('list_products')], nextCursor: 'p2' } }));
        if (cursor === 'p2') return send(pageOfSize(id, [tool('get_adcp_capabilities')], 'p3', PAGE_2_BYTES));
        return send(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [tool('create_media_buy')] } }));
      }
      case 'tools/call':
        return send(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'Capabilities.' }], structuredContent: CAPABILITIES } }));
      default:
        return send(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
    }
  });
  demo = await startDemoSeller();
  dir = await mkdtemp(join(tmpdir(), 'gw-probe-'));
  await writeFile(join(dir, 'gateway.yaml'), `log_level: info\n${AGENTS()}`);
});

after(async () => {
  await raw.close();
  await demo.close();
  await rm(dir, { recursive: true, force: true });
});

/** The agents every test uses: the demo seller's two endpoints, the raw seller with three limits. */
const AGENTS = (): string =>
  [
    'agents:',
    '  demo:',
    `    url: ${demo.url}`,
    '  demo-sse:',
    `    url: ${demo.sseUrl}`,
    '  raw:',
    `    url: ${raw.url}`,
    '  raw-small:',
    `    url: ${raw.url}`,
    '    max_response_bytes: 150000',
    '  raw-caps-small:',
    `    url: ${raw.url}`,
    '    tools:',
    '      get_adcp_capabilities: { max_response_bytes: 50000 }',
    '',
  ].join('\n');

const config = () => parseConfig(AGENTS(), { env: {}, source: 'probe.yaml' });

const summary = (report: ProbeReport) => report.rows.map((r) => [r.surface, r.page ?? null, r.bytes ?? null, r.target_bytes, r.status, r.error ?? null]);

describe('runProbe', { concurrency: true }, () => {
  it('demo seller, JSON endpoint: initialize and one tools/list page, no capabilities tool, all within target', async () => {
    const report = await runProbe({ config: config(), agent: 'demo', logger: false });
    assert.equal(report.protocol_version, '2025-11-25');
    assert.deepEqual(report.server, { name: 'adcp-demo-seller', version: '1.0.0' });
    assert.deepEqual(
      report.rows.map((r) => [r.surface, r.page ?? null, r.transport ?? null, r.status]),
      [
        ['initialize', null, 'json', 'info'],
        ['tools_list_page', 1, 'json', 'pass'],
        ['get_adcp_capabilities', null, null, 'not_offered'],
      ],
    );
    assert.equal(report.rows[1]?.tools, 5);
    assert.equal(report.totals.tools, 5);
    assert.equal(report.totals.messages, 2);
    assert.equal(report.totals.bytes, (report.rows[0]?.bytes ?? 0) + (report.rows[1]?.bytes ?? 0));
    assert.equal(report.within_target, true);
  });

  it("demo seller, SSE endpoint: the same page, and its event's framing, which a host receives too", async () => {
    const [json, sse] = await Promise.all([
      runProbe({ config: config(), agent: 'demo', logger: false }),
      runProbe({ config: config(), agent: 'demo-sse', logger: false }),
    ]);
    assert.deepEqual(
      sse.rows.map((r) => [r.surface, r.transport ?? null, r.status]),
      [
        ['initialize', 'sse', 'info'],
        ['tools_list_page', 'sse', 'pass'],
        ['get_adcp_capabilities', null, 'not_offered'],
      ],
    );
    // Every byte of the answer (trial 15, L1): the page's message as on the JSON endpoint,
    // plus `event: message`, `data: ` and the blank line of the one event that carried it.
    assert.equal(sse.rows[1]?.bytes, (json.rows[1]?.bytes ?? 0) + Buffer.byteLength('event: message\ndata: \n\n'));
    assert.deepEqual([sse.rows[1]?.events_before, sse.rows[1]?.bytes_before], [undefined, undefined]);
  });

  it('raw seller: follows nextCursor to the end, measures the 200 KiB page and the 70 KiB document, over target', async () => {
    const report = await runProbe({ config: config(), agent: 'raw', logger: false });
    const page1 = JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools: [tool('list_products')], nextCursor: 'p2' } });
    const page3 = JSON.stringify({ jsonrpc: '2.0', id: 4, result: { tools: [tool('create_media_buy')] } });
    assert.deepEqual(summary(report).slice(1), [
      ['tools_list_page', 1, Buffer.byteLength(page1), 131_072, 'pass', null],
      ['tools_list_page', 2, PAGE_2_BYTES, 131_072, 'over', null],
      ['tools_list_page', 3, Buffer.byteLength(page3), 131_072, 'pass', null],
      ['get_adcp_capabilities', null, CAPS_BYTES, 65_536, 'over', null],
      ['publisher_domains', null, PUBLISHER_DOMAINS_BYTES, 8_192, 'over', null],
      ['data_provider_domains', null, DATA_PROVIDER_DOMAINS_BYTES, 8_192, 'pass', null],
      ['counterparty_fields_total', null, PUBLISHER_DOMAINS_BYTES + DATA_PROVIDER_DOMAINS_BYTES, 16_384, 'pass', null],
    ]);
    assert.equal(report.totals.tools_list_pages, 3);
    assert.equal(report.totals.tools, 4);
    assert.equal(report.totals.over, 3);
    assert.equal(report.totals.errors, 0);
    assert.equal(report.within_target, false);
  });

  it('a page over the agent limit: the gateway answers RESPONSE_TOO_LARGE (content_length), reported as an error row', async () => {
    const report = await runProbe({ config: config(), agent: 'raw-small', logger: false });
    const rows = summary(report);
    assert.deepEqual(rows[2]?.slice(0, 2), ['tools_list_page', 2]);
    assert.deepEqual(rows[2]?.slice(3), [131_072, 'error', 'RESPONSE_TOO_LARGE (content_length)']);
    assert.ok(typeof rows[2]?.[2] === 'number' && rows[2][2] < 2_000, 'the bytes of the error message the host got');
    // tools/list did not complete and get_adcp_capabilities was on the failed page: not asked.
    assert.deepEqual(rows.slice(3), [['get_adcp_capabilities', null, null, 65_536, 'skipped', null]]);
    assert.equal(report.totals.errors, 1);
    assert.equal(report.within_target, false);
  });

  it('a capabilities document over the tool limit: error row for get_adcp_capabilities', async () => {
    const report = await runProbe({ config: config(), agent: 'raw-caps-small', logger: false });
    const caps = report.rows.filter((r) => r.surface === 'get_adcp_capabilities');
    assert.equal(caps.length, 1);
    assert.equal(caps[0]?.status, 'error');
    assert.equal(caps[0]?.error, 'RESPONSE_TOO_LARGE (content_length)');
    assert.equal(report.rows.some((r) => r.surface === 'publisher_domains'), false);
  });
});

describe('adcp-buyer-gateway probe (CLI)', { concurrency: true }, () => {
  it('prints the aligned table against the demo seller and exits 0', async () => {
    const { code, stdout, stderr } = await runCli(['probe', 'demo', '--config', join(dir, 'gateway.yaml')]);
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
    const lines = stdout.split('\n');
    assert.equal(lines[0], `probe: agent demo -> ${demo.url}, through the gateway's pipeline`);
    assert.equal(lines[1], 'server: adcp-demo-seller 1.0.0, MCP 2025-11-25');
    assert.deepEqual(lines[3]?.split(/ {2,}/), ['surface', 'via', 'bytes', 'target', 'result']);
    assert.match(lines[4] ?? '', /^-+( {2}-+){4}$/);
    assert.match(lines[5] ?? '', /^initialize {2,}json {2,}\d+ {2,}- {2}-$/);
    assert.match(lines[6] ?? '', /^tools\/list page 1 {2,}json {2,}[\d,]+ {2}131,072 {2}pass$/);
    assert.match(lines[7] ?? '', /^get_adcp_capabilities {2,}65,536 {2}not offered$/);
    assert.match(stdout, /\ntools\/list: 1 page, 5 tools, [\d,]+ bytes\ntotal: 2 messages, [\d,]+ bytes\nresult: all within target\n$/);
    // Columns line up: every row is as wide as the rule up to its last column.
    const rule = lines[4] ?? '';
    const resultColumn = rule.lastIndexOf('  ') + 2;
    for (const line of lines.slice(5, 8)) assert.equal(line.length > resultColumn, true, line);
    assert.equal(lines[5]?.slice(resultColumn - 2, resultColumn), '  ');
  });

  it('--json prints one JSON object; over target exits 1', async () => {
    const { code, stdout } = await runCli(['probe', 'raw', '--json', '--config', join(dir, 'gateway.yaml')]);
    assert.equal(code, 1);
    assert.equal(stdout.split('\n').length, 2, 'one line');
    const out = JSON.parse(stdout) as { agent: string; within_target: boolean; totals: { over: number }; surfaces: Array<{ surface: string; bytes?: number; status: string }> };
    assert.equal(out.agent, 'raw');
    assert.equal(out.within_target, false);
    assert.equal(out.totals.over, 3);
    assert.deepEqual(
      out.surfaces.filter((s) => s.status === 'over').map((s) => [s.surface, s.bytes]),
      [
        ['tools_list_page', PAGE_2_BYTES],
        ['get_adcp_capabilities', CAPS_BYTES],
        ['publisher_domains', PUBLISHER_DOMAINS_BYTES],
      ],
    );
  });

  it('a gateway local error exits 1 with its code and reason in the table', async () => {
    const { code, stdout } = await runCli(['probe', 'raw-small', '--config', join(dir, 'gateway.yaml')]);
    assert.equal(code, 1);
    assert.match(stdout, /^tools\/list page 2 .* error: RESPONSE_TOO_LARGE \(content_length\)$/m);
    assert.match(stdout, /\nresult: 1 error\n$/);
  });

  it('never binds listen.port: it runs while that port is taken', async () => {
    await withTakenPort(async (port) => {
      const file = join(dir, 'busy.yaml');
      await writeFile(file, `listen: { host: 127.0.0.1, port: ${port} }\nagents:\n  demo:\n    url: ${demo.url}\n`);
      const { code, stdout } = await runCli(['probe', 'demo', '--json', '--config', file]);
      assert.equal(code, 0);
      assert.equal((JSON.parse(stdout) as { within_target: boolean }).within_target, true);
    });
  });

  it('an unknown agent, a missing agent argument or an invalid config exits 2', async () => {
    const unknown = await runCli(['probe', 'nope', '--config', join(dir, 'gateway.yaml')]);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /no agent "nope" in .*gateway\.yaml \(agents: demo, demo-sse, raw, raw-small, raw-caps-small\)/);

    const missing = await runCli(['probe', '--config', join(dir, 'gateway.yaml')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing required argument 'agent'/);

    const invalid = await runCli(['probe', 'demo', '--config', join(dir, 'nope.yaml')]);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /file not found/);
  });

  it('probe --help documents the targets and exit codes', async () => {
    const { code, stdout } = await runCli(['probe', '--help']);
    assert.equal(code, 0);
    for (const text of ['<agent>', '--json', '--config', '131,072', '65,536', '8,192', '16,384', 'Exit codes', 'never on listen.port']) {
      assert.ok(stdout.includes(text), `help mentions ${text}:\n${stdout}`);
    }
  });
});
