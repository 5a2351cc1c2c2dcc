/**
 * Regression (a new user's hostile trial 12, M2): a seller that acknowledges notifications with
 * a body works with the MCP SDK client directly, but the SDK client cannot connect through the
 * gateway. The seller answered `notifications/initialized` with 202 `Accepted`, 202
 * `{"status":"accepted"}`, 200 `{}`, 200 `null` or 200 `text/plain` `OK`; the gateway answered
 * HTTP 502 `upstream_not_mcp` and `client.connect()` failed with `Streamable HTTP error: Error
 * POSTing to endpoint: {... -32027 ...}`. MCP Streamable HTTP (2025-06-18, "Sending Messages to
 * the Server") wants "202 Accepted with no body" for a POST without a request; the SDK client
 * (1.32.2) discards the body of such a POST, so that body can never reach a host through it.
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway (agent `s`), answering
 * requests (`initialize`, `tools/list`) with their JSON responses, GET with 405, and every POST
 * without a request with the acknowledgement under test; the real MCP SDK client
 * (Client + StreamableHTTPClientTransport) connecting directly and through the gateway; raw
 * POSTs of a notification, a host's response and a batch of notifications (2025-03-26).
 * Expectation: an acknowledgement body that is no JSON-RPC message (no JSON text, or JSON that
 * names no JSON-RPC member; any Content-Type or none) goes to the host as 202 Accepted with no
 * body and no Content-Type, outcome `ok`, the exchange line's `ack_body_dropped_bytes` its size;
 * the SDK client connects and lists the seller's tool. A body holding a JSON-RPC response is
 * refused as before: HTTP 502, `upstream_not_mcp` for id null, byte for byte, whatever its
 * Content-Type; a body holding a notification passes as before; a request answered with an
 * acknowledgement body still gets `upstream_not_mcp` for its id (its host awaits a response).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, type RawResponse } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** An acknowledgement: status, Content-Type (none when undefined), body. */
type Ack = readonly [status: number, contentType: string | undefined, body: string | Buffer];

/** The trial's five acknowledgements. */
const TRIAL_ACKS: Readonly<Record<string, Ack>> = {
  '202 text/plain Accepted': [202, 'text/plain', 'Accepted'],
  '202 JSON {"status":"accepted"}': [202, 'application/json', '{"status":"accepted"}'],
  '200 JSON {}': [200, 'application/json', '{}'],
  '200 JSON null': [200, 'application/json', 'null'],
  '200 text/plain OK': [200, 'text/plain', 'OK'],
};

/** More acknowledgements that are no JSON-RPC message. */
const MORE_ACKS: Readonly<Record<string, Ack>> = {
  '200 no Content-Type OK': [200, undefined, 'OK'],
  '202 no Content-Type {"ok":true}': [202, undefined, '{"ok":true}'],
  '200 text/html': [200, 'text/html', '<html><body>accepted</body></html>'],
  '200 JSON []': [200, 'application/json', '[]'],
  '200 JSON "accepted"': [200, 'application/json', '"accepted"'],
  '200 JSON, not JSON': [200, 'application/json', '{accepted'],
  '200 JSON, a BOM and {}': [200, 'application/json', Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])],
  '200 application/problem+json, objects with other names': [200, 'application/problem+json', '{"status":"ok","data":[{"a":1}]}'],
};

const RESPONSE = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}';
/** Bodies holding a JSON-RPC response: still refused upstream_not_mcp, whatever the Content-Type. */
const REFUSED: Readonly<Record<string, Ack>> = {
  'JSON, a response': [200, 'application/json', RESPONSE],
  'JSON, an array holding a response': [200, 'application/json', `[{"ok":1},${RESPONSE}]`],
  'text/plain, a response': [200, 'text/plain', RESPONSE],
  'no Content-Type, a response': [202, undefined, RESPONSE],
  'JSON, an id only': [200, 'application/json', '{"id":1}'],
  'JSON, case variants': [200, 'application/json', '{"ID":1,"Result":{}}'],
  'JSON, a response with NaN (a lenient host reads it)': [200, 'application/json', '{"jsonrpc":"2.0","id":1,"result":{"score":NaN}}'],
  'text/plain, a nested array holding a response': [200, 'text/plain', `[[${RESPONSE}]]`],
};

const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}';

let ack: Ack = TRIAL_ACKS['200 JSON {}']!;

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const m = JSON.parse(req.body.toString('utf8')) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
    // Every POST without a request, and the request `x/ack`, gets the acknowledgement under test.
    if (Array.isArray(m) || m.id === undefined || m.method === undefined || m.method === 'x/ack') {
      const [status, contentType, body] = ack;
      return void res.writeHead(status, contentType === undefined ? {} : { 'content-type': contentType }).end(body);
    }
    const result =
      m.method === 'initialize'
        ? { protocolVersion: m.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'ack-seller', version: '1' } }
        : m.method === 'tools/list'
          ? { tools: [{ name: 't', inputSchema: { type: 'object' } }] }
          : {};
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ s: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

/** Connects the MCP SDK client to `url` and lists its tools: the tool names. */
async function connectAndList(url: string): Promise<string[]> {
  const client = new Client({ name: 'ack-test', version: '1' });
  try {
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(url))), 5_000, 'connect');
    const listed = await withTimeout(client.listTools(), 5_000, 'listTools');
    return listed.tools.map((t) => t.name);
  } finally {
    await client.close().catch(() => {});
  }
}

/** POSTs `message` through the gateway: the answer and its exchange line. */
async function post(message: unknown, headers: Record<string, string> = HEADERS): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = gw().lines.length;
  const r = await rawPost(gw().agentUrl('s'), message, headers);
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && gw().lines.indexOf(l) >= seen);
  return { r, line };
}

const byteLength = (body: string | Buffer): number => (typeof body === 'string' ? Buffer.byteLength(body) : body.length);

const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const HOST_RESPONSE = { jsonrpc: '2.0', id: 'srv-1', result: {} };
const BATCH = [INITIALIZED, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } }, HOST_RESPONSE];

describe('notification-ack-body-breaks-sdk-connect', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [label, a] of Object.entries(TRIAL_ACKS)) {
    test(`MCP SDK client, notifications acknowledged ${label}: connects and lists tools directly and through the gateway`, async () => {
      ack = a;
      assert.deepEqual(await connectAndList(stack.seller.url), ['t'], 'direct (control)');
      const seen = gw().lines.length;
      assert.deepEqual(await connectAndList(gw().agentUrl('s')), ['t'], 'through the gateway');
      const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.method === 'notifications/initialized' && gw().lines.indexOf(l) >= seen);
      assert.deepEqual(
        { status: line.status, upstream_status: line.upstream_status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host, ack_body_dropped_bytes: line.ack_body_dropped_bytes },
        { status: 202, upstream_status: a[0], outcome: 'ok', reason: null, bytes_to_host: 0, ack_body_dropped_bytes: byteLength(a[2]) },
      );
    });
  }

  for (const [label, a] of Object.entries({ ...TRIAL_ACKS, ...MORE_ACKS })) {
    for (const [what, message, headers] of [
      ['a notification', INITIALIZED, HEADERS],
      ['a host response', HOST_RESPONSE, HEADERS],
      ['a batch of notifications and a host response (2025-03-26)', BATCH, {}],
    ] as const) {
      test(`raw: ${what} acknowledged ${label}: 202, no body, no Content-Type; ack_body_dropped_bytes`, async () => {
        ack = a;
        const { r, line } = await post(message, headers);
        assert.deepEqual(
          { status: r.status, bytes: r.bytes, contentType: r.headers.get('content-type') },
          { status: 202, bytes: 0, contentType: null },
        );
        assert.deepEqual(
          { status: line.status, upstream_status: line.upstream_status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host, ack_body_dropped_bytes: line.ack_body_dropped_bytes },
          { status: 202, upstream_status: a[0], outcome: 'ok', reason: null, bytes_to_host: 0, ack_body_dropped_bytes: byteLength(a[2]) },
        );
      });
    }
  }

  for (const [label, a] of Object.entries(REFUSED)) {
    test(`raw: a notification answered with a body holding a JSON-RPC message (${label}): 502 upstream_not_mcp for id null, as before`, async () => {
      ack = a;
      const { r, line } = await post(INITIALIZED);
      assert.equal(r.status, 502);
      assert.equal(r.text(), expectedErrorJson({ id: null, method: '', reason: 'upstream_not_mcp', upstreamStatus: a[0] }));
      assert.deepEqual(
        { outcome: line.outcome, reason: line.reason, ack_body_dropped_bytes: line.ack_body_dropped_bytes },
        { outcome: 'local_error', reason: 'upstream_not_mcp', ack_body_dropped_bytes: undefined },
      );
    });
  }

  test('controls: a notification answered with a JSON notification passes as before; an empty 202 passes without the field', async () => {
    ack = [200, 'application/json', NOTE];
    const note = await post(INITIALIZED);
    assert.deepEqual({ status: note.r.status, text: note.r.text(), dropped: note.line.ack_body_dropped_bytes }, { status: 200, text: NOTE, dropped: undefined });
    ack = [202, undefined, ''];
    const empty = await post(INITIALIZED);
    assert.deepEqual({ status: empty.r.status, bytes: empty.r.bytes, dropped: empty.line.ack_body_dropped_bytes }, { status: 202, bytes: 0, dropped: undefined });
  });

  for (const label of ['200 JSON {}', '200 text/plain OK']) {
    test(`control: a request answered ${label} is still upstream_not_mcp for its id`, async () => {
      ack = TRIAL_ACKS[label]!;
      const { r, line } = await post({ jsonrpc: '2.0', id: 5, method: 'x/ack' });
      // A request's local error: HTTP 200 (an MCP client reads the body of a 2xx only), for its id.
      assert.equal(r.status, 200);
      assert.equal(r.text(), expectedErrorJson({ id: 5, method: 'x/ack', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      assert.equal(line.ack_body_dropped_bytes, undefined);
    });
  }
});
