/**
 * Regression (hostile trial 54, F4): "a second request with the id of a call still in flight
 * in the same session hangs the first call". MCP Basic, Requests (2025-03-26, 2025-06-18,
 * 2025-11-25): "The request ID MUST NOT have been previously used by the requestor within the
 * same session." A host that broke it, sending `tools/call` id 7 while its own id 7 was still
 * in flight in that `Mcp-Session-Id`, had both forwarded: the MCP TypeScript SDK seller's
 * StreamableHTTPServerTransport maps responses to streams by request id, so the second
 * request's stream took the mapping, got its answer, and the first stream never got one (the
 * SDK threw "No connection established for request ID: 7"); the first call waited until
 * sse_idle_timeout_ms and got a made-up `sse_idle` error.
 *
 * Now the gateway keeps the requests in flight per seller url and session
 * (src/routing/in-flight-requests.ts)
 * and refuses such a request before it reaches the seller: HTTP 400, `invalid_request`,
 * JSON-RPC -32600, for its id, with a message of its own (docs/errors.md, "invalid_request in
 * detail", "Request ids in flight"); so is a batch holding such an id, or one id twice, id
 * null. The first call gets its own result; the id is free again once its answer is over, on
 * every way it ends (answered, the host leaving, the gateway's timeout). Not refused: the same
 * id in another session, `"7"` beside 7 (JSON-RPC compares ids by type), and requests without
 * a session (a stateless seller: nothing to scope the rule to).
 *
 * Input: a real MCP SDK 1.x seller (sessions: test/helpers/sdk-session-seller.ts; `wait`
 * answers once the test releases its `key`, `echo` at once), raw HTTP requests from the test
 * (the SDK client never reuses an id).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseMessages, toolCall, type RawResponse } from '../helpers/raw.js';
import { startSdkSessionSeller } from '../helpers/sdk-session-seller.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

interface WaitSeller {
  /** The stateful endpoint (`/mcp`); `/stateless` serves each request with a fresh transport, no session. */
  readonly url: string;
  readonly statelessUrl: string;
  /** Resolves once a `wait` call with this key has reached the tool. */
  started(key: string): Promise<void>;
  /** Lets the `wait` call with this key return `<key> done`. */
  release(key: string): void;
  /** The ids of the `tools/call` requests that reached the seller, in order. */
  readonly callIds: readonly unknown[];
  close(): Promise<void>;
}

/** A deferred: one per `wait` key. */
interface Gate {
  started: () => void;
  readonly startedP: Promise<void>;
  release: () => void;
  readonly releasedP: Promise<void>;
}

async function startWaitSeller(): Promise<WaitSeller> {
  const gates = new Map<string, Gate>();
  const gate = (key: string): Gate => {
    let g = gates.get(key);
    if (g === undefined) {
      let started = (): void => {};
      let release = (): void => {};
      const startedP = new Promise<void>((r) => (started = r));
      const releasedP = new Promise<void>((r) => (release = r));
      g = { started, startedP, release, releasedP };
      gates.set(key, g);
    }
    return g;
  };
  const newServer = (): Server => {
    const server = new Server({ name: 'wait-seller', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      const key = String((req.params.arguments as { key?: unknown } | undefined)?.key);
      if (req.params.name === 'wait') {
        const g = gate(key);
        g.started();
        // Bounded: a call never released ends after 8 s (the test fails before).
        await Promise.race([g.releasedP, new Promise((r) => setTimeout(r, 8_000).unref())]);
      }
      return { content: [{ type: 'text', text: `${key} done` }] };
    });
    return server;
  };
  const seller = await startSdkSessionSeller(newServer);
  return {
    url: seller.url,
    statelessUrl: seller.statelessUrl,
    started: (key) => withTimeout(gate(key).startedP, 5_000, `wait call ${key} at the seller`),
    release: (key) => gate(key).release(),
    get callIds() {
      return seller.messages.filter((m) => (m as { method?: unknown } | null)?.method === 'tools/call').map((m) => (m as { id?: unknown }).id);
    },
    close: async () => {
      for (const g of gates.values()) g.release();
      await seller.close();
    },
  };
}

const stack = useSellerAndGateway<WaitSeller, ObservedGateway>(startWaitSeller, (seller) =>
  startObservedGateway(
    agentsYaml({
      // sse_idle_timeout_ms 2000: before the fix the first call hung until it, then got `sse_idle`.
      s: { url: seller.url, sse_idle_timeout_ms: 2000 },
      // Another agent (the stateless endpoint, which takes any Mcp-Session-Id): its ids are its own.
      o: { url: seller.statelessUrl, sse_idle_timeout_ms: 2000 },
      // A call the seller never answers ends at the gateway's sse_idle (1000 ms).
      t: { url: seller.url, sse_idle_timeout_ms: 1000 },
      n: { url: seller.statelessUrl, sse_idle_timeout_ms: 2000 },
    }),
  ),
);

interface Session {
  readonly id: string;
  readonly headers: Record<string, string>;
}

/** initialize + notifications/initialized at agent `agent`: the session's headers. */
async function openSession(agent: string, protocolVersion = '2025-06-18'): Promise<Session> {
  const url = stack.gateway.agentUrl(agent);
  const init = await rawPost(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } } });
  assert.equal(init.status, 200, init.text());
  const id = init.headers.get('mcp-session-id');
  assert.ok(id);
  const headers: Record<string, string> = { 'mcp-session-id': id, ...(protocolVersion === '2025-03-26' ? {} : { 'mcp-protocol-version': protocolVersion }) };
  assert.equal((await rawPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status, 202);
  return { id, headers };
}

/** POSTs `message` to agent `agent` in `session` (none when undefined); the answer once over. */
function post(agent: string, message: unknown, session?: Session, signal?: AbortSignal): Promise<RawResponse> {
  const url = stack.gateway.agentUrl(agent);
  if (signal === undefined) return rawPost(url, message, session?.headers ?? {});
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session?.headers ?? {}) },
    body: JSON.stringify(message),
    signal,
  }).then(async (res) => {
    const body = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, body, bytes: body.byteLength, text: () => body.toString('utf8'), json: () => JSON.parse(body.toString('utf8')) as unknown };
  });
}

/** The one JSON-RPC message of an SSE answer (the SDK seller answers a call over SSE). */
function onlyMessage(r: RawResponse): unknown {
  assert.equal(r.status, 200, r.text());
  const messages = sseMessages(r.text());
  assert.equal(messages.length, 1, r.text());
  return messages[0];
}

const result = (id: unknown, key: string): unknown => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `${key} done` }] } });

const REUSE = '(MCP: a request ID must not be reused within a session)';
const NOT_SENT = 'it was not sent to the seller: send it with an id not used before in this session.';

/** The exact refusal of a single request whose id (as written: `idText`) is in flight in its session. */
function inFlightRefusal(idText: string): string {
  const message = `Invalid Request: request id ${idText} is already in flight in this session ${REUSE}; ${NOT_SENT}`;
  return `{"jsonrpc":"2.0","id":${idText},"error":{"code":-32600,"message":${JSON.stringify(message)},"data":{"reason":"invalid_request"}}}`;
}

function batchRefusal(message: string): string {
  return `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":${JSON.stringify(message)},"data":{"reason":"invalid_request"}}}`;
}

function assertRefused(r: RawResponse, body: string): void {
  assert.deepEqual({ status: r.status, type: r.headers.get('content-type'), body: r.text() }, { status: 400, type: 'application/json', body });
}

const callsWithId = (id: unknown): number => stack.seller.callIds.filter((x) => x === id).length;

describe('a request id already in flight in its session is refused, the first call answered', { timeout: TEST_TIMEOUT_MS }, () => {
  test('id 7 while id 7 waits: refused 400 invalid_request, not sent; the first gets its result; 7 is free again after', async () => {
    const a = await openSession('s');
    const first = post('s', toolCall(7, 'wait', { key: 'a7' }), a);
    await stack.seller.started('a7');
    const second = await post('s', toolCall(7, 'echo', { key: 'second' }), a);
    assertRefused(second, inFlightRefusal('7'));
    assert.equal(callsWithId(7), 1, 'the second request never reached the seller');
    const refused = await stack.gateway.waitForLine((l) => l.msg === 'refused' && l.reason === 'invalid_request');
    assert.equal(refused.status, 400);

    stack.seller.release('a7');
    assert.deepEqual(onlyMessage(await withTimeout(first, 5_000, 'the first call')), result(7, 'a7'));
    const line = await stack.gateway.exchangeLine('s', 7);
    assert.deepEqual({ outcome: line.outcome, status: line.status }, { outcome: 'ok', status: 200 });

    // Its answer over, the id may be sent again (the gateway no longer holds it).
    assert.deepEqual(onlyMessage(await post('s', toolCall(7, 'echo', { key: 'again' }), a)), result(7, 'again'));
  });

  test('the same id in another session, in another agent, or as "7" beside 7, is not refused', async () => {
    const a = await openSession('s');
    const b = await openSession('s');
    const first = post('s', toolCall(7, 'wait', { key: 'b7' }), a);
    await stack.seller.started('b7');
    assert.deepEqual(onlyMessage(await post('s', toolCall(7, 'echo', { key: 'other session' }), b)), result(7, 'other session'));
    assert.deepEqual(onlyMessage(await post('s', toolCall('7', 'echo', { key: 'string id' }), a)), result('7', 'string id'));
    // The same Mcp-Session-Id sent to another agent (another seller url): not refused (ids are held per seller url and session).
    assert.deepEqual(onlyMessage(await post('o', toolCall(7, 'echo', { key: 'other agent' }), a)), result(7, 'other agent'));
    // 7.0 and 7 are one id (compared by value, as written, as a response id is): refused, the id as written.
    assertRefused(await post('s', '{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"echo","arguments":{"key":"y"}}}', a), inFlightRefusal('7.0'));
    stack.seller.release('b7');
    assert.deepEqual(onlyMessage(await withTimeout(first, 5_000, 'the first call')), result(7, 'b7'));
  });

  test('re-read of session 33: the same session through another agent of the same seller url, and ids one double holds, are refused', async () => {
    const a = await openSession('s');
    const first = post('s', toolCall(7, 'wait', { key: 'u7' }), a);
    await stack.seller.started('u7');
    // Agent `t` has the same seller url as `s`: the seller's session, and its transport's map of ids, are the same.
    assertRefused(await post('t', toolCall(7, 'echo', { key: 'via t' }), a), inFlightRefusal('7'));
    stack.seller.release('u7');
    assert.deepEqual(onlyMessage(await withTimeout(first, 5_000, 'the first call')), result(7, 'u7'));

    // 0 and 1e-400 (one double, 0): the SDK seller maps responses by the parsed id. (2^53 and
    // 2^53 + 1 are one double too, but the SDK refuses ids past its safe integers.)
    for (const [held, again] of [['0', '1e-400']] as const) {
      const key = `d${held}`;
      const waiting = post('s', `{"jsonrpc":"2.0","id":${held},"method":"tools/call","params":{"name":"wait","arguments":{"key":"${key}"}}}`, a);
      await stack.seller.started(key);
      assertRefused(await post('s', `{"jsonrpc":"2.0","id":${again},"method":"tools/call","params":{"name":"echo","arguments":{"key":"x"}}}`, a), inFlightRefusal(again));
      stack.seller.release(key);
      assert.equal((onlyMessage(await withTimeout(waiting, 5_000, 'the first call')) as { result?: unknown }).result !== undefined, true, `id ${held} got its result`);
    }
  });

  test('a string id in flight: refused with its text', async () => {
    const a = await openSession('s');
    const first = post('s', toolCall('job-1', 'wait', { key: 'job' }), a);
    await stack.seller.started('job');
    assertRefused(await post('s', toolCall('job-1', 'echo', { key: 'z' }), a), inFlightRefusal('"job-1"'));
    stack.seller.release('job');
    assert.deepEqual(onlyMessage(await withTimeout(first, 5_000, 'the first call')), result('job-1', 'job'));
  });

  test('batches (2025-03-26): one holding an id in flight, or one id twice, is refused, id null; a batch in flight holds its ids', async () => {
    const c = await openSession('s', '2025-03-26');
    const first = post('s', toolCall(7, 'wait', { key: 'c7' }), c);
    await stack.seller.started('c7');
    const inFlight = await post('s', [toolCall(8, 'echo', { key: 'p' }), toolCall(7, 'echo', { key: 'q' })], c);
    assertRefused(inFlight, batchRefusal(`Invalid Request: the batch holds request id 7, which is already in flight in this session ${REUSE}; the batch was not sent to the seller: send it with ids not used before in this session.`));
    const twice = await post('s', [toolCall(9, 'echo', { key: 'p' }), { jsonrpc: '2.0', method: 'notifications/x' }, toolCall(9, 'echo', { key: 'q' })], c);
    assertRefused(twice, batchRefusal(`Invalid Request: the batch holds request id 9 more than once ${REUSE}; the batch was not sent to the seller: give each of its requests its own id.`));
    assert.deepEqual([callsWithId(8), callsWithId(9)], [0, 0], 'neither batch reached the seller');
    stack.seller.release('c7');
    assert.deepEqual(onlyMessage(await withTimeout(first, 5_000, 'the first call')), result(7, 'c7'));

    // A batch in flight: its ids are held until its answer is over.
    const batch = post('s', [toolCall(10, 'wait', { key: 'c10' }), toolCall(11, 'echo', { key: 'c11' })], c);
    await stack.seller.started('c10');
    assertRefused(await post('s', toolCall(11, 'echo', { key: 'r' }), c), inFlightRefusal('11'));
    stack.seller.release('c10');
    const answered = await withTimeout(batch, 5_000, 'the batch');
    assert.equal(answered.status, 200, answered.text());
    assert.deepEqual(onlyMessage(await post('s', toolCall(11, 'echo', { key: 's' }), c)), result(11, 's'));
  });

  test('the id is released when the host leaves and when the gateway times the call out', async () => {
    const a = await openSession('s');
    const ac = new AbortController();
    const left = post('s', toolCall(20, 'wait', { key: 'left' }), a, ac.signal);
    await stack.seller.started('left');
    ac.abort();
    await assert.rejects(left);
    const aborted = await stack.gateway.exchangeLine('s', 20);
    assert.equal(aborted.outcome, 'host_aborted');
    assert.deepEqual(onlyMessage(await post('s', toolCall(20, 'echo', { key: 'after leaving' }), a)), result(20, 'after leaving'));
    stack.seller.release('left');

    const t = await openSession('t');
    const slow = await post('t', toolCall(21, 'wait', { key: 'timed out' }), t);
    const error = onlyMessage(slow) as { result: { isError: boolean; structuredContent: { adcp_error: { details: { reason: string } } } } };
    assert.deepEqual([error.result.isError, error.result.structuredContent.adcp_error.details.reason], [true, 'sse_idle']);
    await stack.gateway.exchangeLine('t', 21);
    assert.deepEqual(onlyMessage(await post('t', toolCall(21, 'echo', { key: 'after timeout' }), t)), result(21, 'after timeout'));
    stack.seller.release('timed out');
  });

  test('without a session (a stateless seller) ids are not tracked: both calls forwarded and answered', async () => {
    const first = post('n', toolCall(5, 'wait', { key: 'n5' }));
    await stack.seller.started('n5');
    assert.deepEqual(onlyMessage(await post('n', toolCall(5, 'echo', { key: 'no session' }))), result(5, 'no session'));
    stack.seller.release('n5');
    assert.deepEqual(onlyMessage(await withTimeout(first, 5_000, 'the first call')), result(5, 'n5'));
  });
});
