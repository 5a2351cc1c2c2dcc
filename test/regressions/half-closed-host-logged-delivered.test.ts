/**
 * Regression (hostile trial 43, F1): a host that sent a complete request and then half-closed
 * its side (a FIN: `nc -N`, Python `socket.shutdown(SHUT_WR)`) got no answer at all, 0 bytes,
 * as Node's HTTP server ends the connection on a client's FIN (the gateway keeps it so:
 * src/routing/unreached-answer.ts says why), yet its exchange line said the answer went
 * out: `status` 200, `bytes_to_host` 103, outcome `host_aborted` for the seller's answer, and
 * `status` 200, `bytes_to_host` 612, outcome `local_error`, reason `upstream_unreachable`
 * with the seller down. Now such a line has `status` null, `bytes_to_host` 0, outcome
 * `host_aborted` (a minted error's reason kept), and a host that keeps its side open still
 * gets its answer, logged as delivered.
 *
 * The seller is the MCP TypeScript SDK's server (stateless, SSE answers), behind a relay that
 * holds its answer until the host's FIN has been sent: the answer then reaches the gateway just
 * after the FIN, in the moment between Node ending the host's connection and its 'close', as a
 * seller answering within a few milliseconds did in the trial (every run the same way: one
 * process, loopback).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { captureLog, type CapturedLog, type LogEntry } from '../helpers/capture-log.js';
import { closedPort } from '../helpers/ports.js';
import { until } from '../helpers/raw-stack.js';
import { withTimeout } from '../helpers/timeout.js';

let seller: Server;
let relay: ReturnType<typeof createServer>;
let gw: RunningGateway;
let log: CapturedLog;
/** The ids of the `tools/call` requests the seller ran. */
const ran: Array<string | number> = [];
/** While true, the relay holds what the seller sends (`held`, for `heldFor`) until {@link release}. */
let holding = false;
const held: Buffer[] = [];
let heldFor: Socket | undefined;
const relayed = new Set<Socket>();

function release(): void {
  holding = false;
  for (const chunk of held.splice(0)) heldFor?.write(chunk);
}

before(async () => {
  seller = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const server = new McpServer({ name: 'half-close-seller', version: '1.0.0' });
      server.registerTool('create_media_buy', { description: 'Books a media buy.' }, async (extra) => {
        ran.push(extra.requestId);
        return { content: [{ type: 'text', text: 'booked' }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      void server.connect(transport).then(() => transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
  });
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
  const sellerPort = (seller.address() as AddressInfo).port;
  relay = createServer((inbound) => {
    relayed.add(inbound);
    const outbound = connect(sellerPort, '127.0.0.1');
    inbound.on('data', (d: Buffer) => outbound.write(d));
    inbound.on('error', () => outbound.destroy());
    inbound.on('close', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    outbound.on('data', (d: Buffer) => {
      if (!holding) return void inbound.write(d);
      heldFor = inbound;
      held.push(d);
    });
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const relayPort = (relay.address() as AddressInfo).port;
  log = captureLog('info');
  const yaml = ['agents:', '  s:', `    url: http://127.0.0.1:${relayPort}/mcp`, '  down:', `    url: http://127.0.0.1:${await closedPort()}/mcp`, ''];
  gw = await startGateway(yaml.join('\n'), { logger: log.logger });
});
after(async () => {
  await gw.close();
  for (const s of relayed) s.destroy();
  await new Promise<void>((resolve) => relay.close(() => resolve()));
  seller.closeAllConnections();
  await new Promise<void>((resolve) => seller.close(() => resolve()));
});

/**
 * A raw host: writes `raw` on a new connection, then half-closes it (`end()`: a FIN, its read
 * side kept open) at once, or once `finAfter` resolves, calling `onFinSent` when the FIN is out;
 * resolves with every byte it received until the gateway closed the connection.
 */
function halfClosingHost(raw: string, finAfter?: Promise<void>, onFinSent?: () => void): Promise<string> {
  return withTimeout(
    new Promise<string>((resolve) => {
      const s = connect(Number(new URL(gw.baseUrl).port), '127.0.0.1');
      let got = '';
      s.setEncoding('latin1');
      s.on('data', (d: string) => (got += d));
      s.on('error', () => {});
      s.on('close', () => resolve(got));
      if (onFinSent) s.once('finish', onFinSent);
      s.write(raw);
      if (finAfter) void finAfter.then(() => s.end());
      else s.end();
    }),
    10_000,
    'the gateway closing the connection',
  );
}

function post(agent: string, id: number): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'create_media_buy', arguments: {} } });
  return [
    `POST /agents/${agent}/mcp HTTP/1.1`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    'MCP-Protocol-Version: 2025-06-18',
    `Content-Length: ${body.length}`,
    '',
    body,
  ].join('\r\n');
}

function lineFor(id: number): Promise<LogEntry> {
  return log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === id, `the exchange line of id ${id}`);
}

/** The fields that say what the host got. */
function delivery(line: LogEntry): Record<string, unknown> {
  const { agent, method, tool, rpc_id, status, upstream_status, bytes_to_host, outcome, reason } = line;
  return { agent, method, tool, rpc_id, status, upstream_status, bytes_to_host, outcome, reason };
}

test('half-closed-host-logged-delivered: the seller answers after the host half-closed: nothing reaches the host, the line says so', async () => {
  holding = true;
  // The seller's whole SSE answer (its last chunk, `0\r\n\r\n`) is held before the host half-closes.
  const answerHeld = until('the seller answered into the relay', () => Buffer.concat(held).toString('latin1').endsWith('0\r\n\r\n'));
  const got = await halfClosingHost(post('s', 10), answerHeld, release);
  assert.equal(got, '');
  assert.deepEqual(ran, [10]); // it reached the seller before the FIN, and ran
  assert.deepEqual(delivery(await lineFor(10)), {
    agent: 's',
    method: 'tools/call',
    tool: 'create_media_buy',
    rpc_id: 10,
    status: null, // was 200
    upstream_status: 200,
    bytes_to_host: 0, // was 103
    outcome: 'host_aborted',
    reason: null,
  });
  // Info: the host's own leaving (hostile trial 53, F2: README, Logs, "Levels").
  assert.equal((await lineFor(10)).level, 30);
});

test('half-closed-host-logged-delivered: the seller down: the minted error reaches no one, logged as not delivered', async () => {
  const got = await halfClosingHost(post('down', 20));
  assert.equal(got, '');
  assert.deepEqual(delivery(await lineFor(20)), {
    agent: 'down',
    method: 'tools/call',
    tool: 'create_media_buy',
    rpc_id: 20,
    status: null, // was 200
    upstream_status: null,
    bytes_to_host: 0, // was 612
    outcome: 'host_aborted', // was local_error
    reason: 'upstream_unreachable',
  });
  // Warn: the minted error's level, the seller down whatever the host did (hostile trial 53, F2).
  assert.equal((await lineFor(20)).level, 40);
});

test('half-closed-host-logged-delivered: two pipelined requests then a FIN: no answer, the second never processed, no line says delivered', async () => {
  const before = ran.length;
  const got = await halfClosingHost(post('s', 30) + post('s', 31));
  assert.equal(got, '');
  await until('no exchange open', () => gw.app.gateway.openExchanges === 0);
  assert.ok(!ran.includes(31), `the second request reached the seller (ran: ${JSON.stringify(ran.slice(before))})`);
  const lines = log.entries.filter((e) => e.msg === 'exchange' && (e.rpc_id === 30 || e.rpc_id === 31));
  assert.ok(lines.every((l) => l.rpc_id === 30), `a line for the second request: ${JSON.stringify(lines)}`);
  for (const line of lines) assert.deepEqual([line.status, line.bytes_to_host, line.outcome], [null, 0, 'host_aborted']);
});

test('half-closed-host-logged-delivered: a host that keeps its side open gets its answer, logged as delivered', async () => {
  const body = await withTimeout(
    new Promise<string>((resolve) => {
      const s = connect(Number(new URL(gw.baseUrl).port), '127.0.0.1');
      let got = '';
      s.setEncoding('latin1');
      s.on('data', (d: string) => {
        got += d;
        if (got.endsWith('0\r\n\r\n')) s.destroy();
      });
      s.on('error', () => {});
      s.on('close', () => resolve(got));
      s.write(post('s', 40));
    }),
    10_000,
    'the answer',
  );
  assert.match(body, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(body, /"text":"booked"/);
  const line = await lineFor(40);
  assert.deepEqual([line.status, line.outcome, line.reason], [200, 'ok', null]);
  assert.ok((line.bytes_to_host as number) > 0);
});
