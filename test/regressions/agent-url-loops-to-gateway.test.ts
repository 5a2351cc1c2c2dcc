/**
 * Regression (a hostile new user's trial 10, F4, Low): an agent `url` that points back at the
 * gateway (`listen.port: P`, `url: http://127.0.0.1:P/agents/acme/mcp`: the host's URL pasted
 * into the seller field) passed `--check-config` with no note, and one `tools/call` then
 * recursed through the gateway about 10,000 times (about 1,000 at `ulimit -n 2048`), one socket
 * and one exchange line per hop, until connections failed.
 *
 * Input, 1: the trial's config through the CLI's `--check-config` (in process: helpers/check-config.ts), and more spellings of
 * the gateway's own address (and its ops_listen address) parsed in-process.
 * Expected: exit 2 and one problem at `agents.<agent>.url` saying why (hosts never echoed);
 * `listen.port: 0`, another port or an address no connection shares still pass.
 *
 * Input, 2: what the config cannot see. Real gateway processes on 127.0.0.1, port 0, an agent
 * url leading back through a TCP port forward (which stops forwarding after 20 connections, so
 * the loop it makes without the fix stays small); a real seller recording what it receives.
 * Expected: the gateway sends `Via: <host's Via>, 1.1 adcp-gw-<16 hex>` (RFC 9110 §7.6.3)
 * and refuses a request whose Via carries its own entry, `request_loop` (400, the request's id,
 * one `refused` line), without forwarding it: one hop through the forward, and the host gets the
 * refusal as it is. Two gateway processes in series still work (each appends its own entry),
 * and a loop through both ends at the first gateway's second pass.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { assertCheckConfigProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
/** Listen port of the `--check-config` runs (nothing binds it). */
const PORT = 38791;
/** Connections a port forward passes before it refuses more: bounds the loop without the fix. */
const FORWARD_CAP = 20;

const LOOP_HEAD = "is the gateway's own listen address, so each call would come back to the gateway and be forwarded to it again, in a loop, until connections run out: ";
const LOOP_TAIL = "; set the seller's MCP endpoint here, not the gateway's";
const SAME_ADDRESS = 'takes the same address as listen.host (localhost is 127.0.0.1 and ::1; an IPv4-mapped IPv6 address ::ffff:a.b.c.d is a.b.c.d)';
const listenProblem = (port: number, host: string, portIsDefault = false): string =>
  `${LOOP_HEAD}its port is listen.port (${port}${portIsDefault ? ', the default' : ''}) and its host ${host}${LOOP_TAIL}`;

const REFUSAL_MESSAGE =
  "Request loop: this request has already passed through this gateway (its Via header carries the gateway's own entry), so an agent's url leads back to the gateway, directly or through a DNS name, a proxy or a port forward. It was not forwarded again: point that agent's url at the seller's MCP endpoint.";
const OWN_ENTRY = /^1\.1 adcp-gw-[0-9a-f]{16}$/;

/** The problems (`path: message`) of a config, or [] when it is accepted. */
function problems(yaml: string): string[] {
  try {
    parseConfig(yaml, { env: { SELLER_HOST: 'localhost' } });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

/** `listen` (a YAML flow mapping, or '' for none) and agent `a`'s url. */
const config = (listen: string, url: string, more = ''): string => `${listen === '' ? '' : `listen: ${listen}\n`}${more}agents:\n  a:\n    url: "${url}"\n`;

describe('an agent url that names the gateway itself: a config error', OPTIONS, () => {
  it("--check-config, the trial's config: agents.acme.url refused, the other agent passes (was: exit 0, no note)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loop-check-'));
    try {
      const file = join(dir, 'gateway.yaml');
      await writeFile(file, `listen: { host: 127.0.0.1, port: ${PORT} }\nagents:\n  acme:\n    url: http://127.0.0.1:${PORT}/agents/acme/mcp\n  other:\n    url: http://127.0.0.1:${PORT + 1}/mcp\n`);
      await assertCheckConfigProblems(file, [`  agents.acme.url (line 4, column 10): ${listenProblem(PORT, 'is listen.host')}`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('every spelling a connection takes to the same listener, the default port and ops_listen included', () => {
    const p = PORT;
    const cases: [string, string, string, string?][] = [
      [`{host: 127.0.0.1, port: ${p}}`, `http://localhost:${p}/agents/a/mcp`, `${SAME_ADDRESS}`],
      [`{host: 127.0.0.1, port: ${p}}`, `http://[::ffff:127.0.0.1]:${p}/agents/a/mcp`, SAME_ADDRESS],
      // The URL parser reads 127.1 as 127.0.0.1.
      [`{host: 127.0.0.1, port: ${p}}`, `http://127.1:${p}/agents/a/mcp`, 'is listen.host'],
      [`{host: "::ffff:7f00:1", port: ${p}}`, `http://127.0.0.1:${p}/agents/a/mcp`, SAME_ADDRESS],
      [`{host: localhost, port: ${p}}`, `http://[::1]:${p}/agents/a/mcp`, SAME_ADDRESS],
      [`{host: "::1", port: ${p}}`, `http://[0:0:0:0:0:0:0:1]:${p}/agents/a/mcp`, 'is listen.host'],
      [`{host: LocalHost, port: ${p}}`, `HTTP://localhost:${p}/agents/a/mcp`, 'is listen.host'],
      // ${VAR} expanded first (SELLER_HOST=localhost).
      [`{host: 127.0.0.1, port: ${p}}`, `http://\${SELLER_HOST}:${p}/agents/a/mcp`, SAME_ADDRESS],
      [`{host: 127.0.0.1, port: ${p}}`, `http://0.0.0.0:${p}/agents/a/mcp`, "is a wildcard address (0.0.0.0 or ::), which a connection takes as this machine's loopback (127.0.0.1 or ::1)"],
      [`{host: 0.0.0.0, port: ${p}}`, `http://127.0.0.2:${p}/agents/a/mcp`, 'is a loopback address, which listen.host, a wildcard address (0.0.0.0 or ::), takes too'],
      [`{host: "::", port: ${p}}`, `http://[::1]:${p}/agents/a/mcp`, 'is a loopback address, which listen.host, a wildcard address (0.0.0.0 or ::), takes too'],
      // https to the gateway's port reaches it too (and fails its TLS handshake).
      [`{host: 127.0.0.1, port: ${p}}`, `https://127.0.0.1:${p}/agents/a/mcp`, 'is listen.host'],
      [`{port: 80}`, 'http://127.0.0.1/agents/a/mcp', 'is listen.host'],
    ];
    for (const [listen, url, host] of cases) {
      const port = listen.includes('port: 80}') ? 80 : p;
      assert.deepEqual(problems(config(listen, url)), [`agents.a.url: ${listenProblem(port, host)}`], `${listen} ${url}`);
    }
    // No listen block: the default, 127.0.0.1:8787.
    assert.deepEqual(problems(config('', 'http://localhost:8787/agents/a/mcp')), [`agents.a.url: ${listenProblem(8787, SAME_ADDRESS, true)}`]);
    // The ops listener serves no MCP.
    assert.deepEqual(problems(config(`{port: ${p}}`, `http://127.0.0.1:${p + 5}/metrics`, `ops_listen: {port: ${p + 5}}\n`)), [
      `agents.a.url: is the gateway's own ops_listen address, which serves /healthz, /readyz and /metrics, not MCP: its port is ops_listen.port (${p + 5}) and its host is ops_listen.host; set the seller's MCP endpoint here, not the gateway's`,
    ]);
  });

  it('still accepted: port 0, another port, an address no connection to the listener takes, a host name', () => {
    const p = PORT;
    const accepted: [string, string][] = [
      // (A url on port 0 itself is refused since review 36, F5: agent-url-port-zero-every-call-fails.test.ts.)
      ['{host: 127.0.0.1, port: 0}', `http://127.0.0.1:${p}/agents/a/mcp`],
      [`{host: 127.0.0.1, port: ${p}}`, `http://127.0.0.1:${p + 1}/agents/a/mcp`],
      [`{host: 127.0.0.1, port: ${p}}`, `http://127.0.0.2:${p}/agents/a/mcp`],
      [`{host: 127.0.0.1, port: ${p}}`, `http://[::1]:${p}/agents/a/mcp`],
      [`{host: "::1", port: ${p}}`, `http://127.0.0.1:${p}/agents/a/mcp`],
      [`{host: 0.0.0.0, port: ${p}}`, `http://[::1]:${p}/agents/a/mcp`],
      [`{host: 0.0.0.0, port: ${p}}`, `http://10.1.2.3:${p}/agents/a/mcp`],
      [`{host: 0.0.0.0, port: ${p}}`, `http://gateway.internal:${p}/agents/a/mcp`],
      [`{host: 127.0.0.1, port: ${p}}`, `http://seller.example:${p}/mcp`],
      [`{host: 127.0.0.1, port: 443}`, `http://127.0.0.1/mcp`],
    ];
    for (const [listen, url] of accepted) assert.deepEqual(problems(config(listen, url)), [], `${listen} ${url}`);
    // ops_listen on port 0: skipped as well.
    assert.deepEqual(problems(config(`{port: ${p}}`, `http://127.0.0.1:${p + 5}/metrics`, 'ops_listen: {port: 0}\n')), []);
  });

  it('an agent may not configure `via`: the gateway sets it', () => {
    assert.deepEqual(problems(`listen: {port: 0}\nagents:\n  a:\n    url: "http://127.0.0.1:9/mcp"\n    headers: {Via: "1.1 corp"}\n`), [
      "agents.a.headers.Via: header `via` may not be configured: set by the gateway: the host's Via with the gateway's own entry appended, by which it recognizes a request that loops back to it (RFC 9110 §7.6.3)",
    ]);
  });
});

/** A TCP port forward on 127.0.0.1 to `target` (set later), passing at most FORWARD_CAP connections (counted from 0 again by each test). */
interface Forward {
  readonly port: number;
  target: number;
  /** Connections accepted so far, forwarded or not. */
  connections: number;
  close(): Promise<void>;
}

async function startForward(): Promise<Forward> {
  const sockets = new Set<net.Socket>();
  const forward: Forward = {
    port: 0,
    target: 0,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((inbound) => {
    sockets.add(inbound);
    inbound.on('close', () => sockets.delete(inbound));
    forward.connections += 1;
    if (forward.connections > FORWARD_CAP || forward.target === 0) {
      inbound.destroy();
      return;
    }
    const outbound = net.connect(forward.target, '127.0.0.1');
    sockets.add(outbound);
    outbound.on('close', () => sockets.delete(outbound));
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (forward as { port: number }).port = (server.address() as AddressInfo).port;
  return forward;
}

const portOf = (address: string): number => Number(new URL(address).port);
/** Polls `gw`'s log (written asynchronously) until `done` holds: every 20 ms, 500 times at most. */
async function logSettles(gw: GatewayProcess, done: (logs: GatewayProcess['logs']) => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(gw.logs); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}
const refusedLines = (gw: GatewayProcess) => gw.logs.filter((l) => l.msg === 'refused');
const exchangeLines = (gw: GatewayProcess, agent: string) => gw.logs.filter((l) => l.msg === 'exchange' && l.agent === agent);

describe('an agent url leading back through what the config cannot see: refused at the second pass', OPTIONS, () => {
  let dir: string;
  let seller: RawSeller;
  let forward: Forward;
  let a: GatewayProcess | undefined;
  let b: GatewayProcess | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loop-runtime-'));
    seller = await startRawSeller((req, res) => {
      const body = toolResponse((JSON.parse(req.body.toString('utf8')) as { id: number }).id, { content: [{ type: 'text', text: 'ok' }] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    forward = await startForward();
    // B: `acme` -> the seller; `ring` -> the forward (-> A's `ring`).
    const fileB = join(dir, 'b.yaml');
    await writeFile(fileB, `listen: { host: 127.0.0.1, port: 0 }\nagents:\n  acme:\n    url: ${seller.url}\n  ring:\n    url: http://127.0.0.1:${forward.port}/agents/ring/mcp\n`);
    b = await startGatewayProcess(fileB);
    // A: `loop` -> the forward (-> A itself); `acme` -> B's `acme`; `ring` -> B's `ring`; `direct` -> the seller.
    const fileA = join(dir, 'a.yaml');
    await writeFile(
      fileA,
      `listen: { host: 127.0.0.1, port: 0 }\nagents:\n  loop:\n    url: http://127.0.0.1:${forward.port}/agents/loop/mcp\n` +
        `  acme:\n    url: ${b.address}/agents/acme/mcp\n  ring:\n    url: ${b.address}/agents/ring/mcp\n  direct:\n    url: ${seller.url}\n`,
    );
    a = await startGatewayProcess(fileA);
    forward.target = portOf(a.address);
  });

  after(async () => {
    a?.kill();
    b?.kill();
    await forward.close();
    await seller.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("one gateway: the host's Via gets the gateway's entry appended for the seller", async () => {
    const res = await rawPost(`${a!.address}/agents/direct/mcp`, toolCall(7, 'get_products'), { via: '1.0 corp-proxy' });
    assert.equal(res.status, 200, res.text());
    const via = String(seller.requests.at(-1)?.headers.via);
    assert.match(via, /^1\.0 corp-proxy, 1\.1 adcp-gw-[0-9a-f]{16}$/, via);
  });

  it('a loop through a port forward: one hop, then request_loop for the call\'s id (was: 20 hops until the forward refused)', async () => {
    forward.connections = 0;
    const res = await rawPost(`${a!.address}/agents/loop/mcp`, toolCall(1, 'get_products'));
    assert.equal(forward.connections, 1, 'connections to the forward');
    assert.equal(res.status, 400, res.text());
    assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 1, error: { code: -32600, message: REFUSAL_MESSAGE, data: { reason: 'request_loop' } } });
    // One refused line (the second pass), one exchange line (the host's call).
    await logSettles(a!, () => refusedLines(a!).length >= 1 && exchangeLines(a!, 'loop').length >= 1);
    assert.deepEqual(
      refusedLines(a!).map((l) => [l.agent, l.reason, l.status]),
      [['loop', 'request_loop', 400]],
    );
    // The first pass passes the seller's (its own second pass's) 4xx on, as it passes any seller's.
    assert.deepEqual(
      exchangeLines(a!, 'loop').map((l) => [l.rpc_id, l.status, l.upstream_status, l.outcome]),
      [[1, 400, 400, 'ok']],
    );
  });

  it('two gateway processes in series: answered, each appends its own entry', async () => {
    const res = await rawPost(`${a!.address}/agents/acme/mcp`, toolCall(2, 'get_products'));
    assert.equal(res.status, 200, res.text());
    assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'ok' }] } });
    const entries = String(seller.requests.at(-1)?.headers.via).split(', ');
    assert.equal(entries.length, 2, entries.join(', '));
    for (const entry of entries) assert.match(entry, OWN_ENTRY);
    assert.notEqual(entries[0], entries[1]);
  });

  it('a loop through two gateways: refused by the first at its second pass, passed back as it is', async () => {
    const refusedBefore = refusedLines(a!).length;
    forward.connections = 0;
    const res = await rawPost(`${a!.address}/agents/ring/mcp`, toolCall('r-1', 'get_products'));
    assert.equal(forward.connections, 1, 'connections to the forward');
    assert.equal(res.status, 400, res.text());
    assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 'r-1', error: { code: -32600, message: REFUSAL_MESSAGE, data: { reason: 'request_loop' } } });
    await logSettles(a!, () => refusedLines(a!).length > refusedBefore && exchangeLines(a!, 'ring').length >= 1);
    await logSettles(b!, () => exchangeLines(b!, 'ring').length >= 1);
    assert.equal(refusedLines(a!).length, refusedBefore + 1);
    assert.deepEqual(refusedLines(b!), []);
  });
});
