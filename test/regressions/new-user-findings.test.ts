/**
 * Failures a new user found by trying to break the gateway (one test each, named after it).
 * Input and expectation in each test's comment. Real gateway, raw seller on 127.0.0.1.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway(() => startRawSeller((req, res) => answer(req, res)), (seller) =>
  startGateway(
    `log_level: silent\nresume:\n  secret: new-user-findings-secret-0123456789abc\nagents:\n  s:\n    url: ${seller.url}\n  plain:\n    url: ${seller.url}\n    accept_encoding: [identity]\n`,
  ),
);

type Err = { code: string; details: Record<string, unknown> };
const toolErr = (m: unknown) => (m as { result: { structuredContent: { adcp_error: Err } } }).result.structuredContent.adcp_error;
const call = (id: number, agent = 's') => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'create_media_buy'), { 'mcp-protocol-version': '2025-11-25' });

describe('found by a new user', () => {
  test('shutdown before the first event id: the request is answered, not left to time out', async () => {
    // Input: a tools/call answered over SSE with only `: ping` comments, then the gateway drains.
    // Expectation: one final event, SERVICE_UNAVAILABLE gateway_shutdown, for the request id.
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': ping\n\n');
    };
    const pending = call(31);
    while (stack.gateway.app.gateway.openStreams === 0) await new Promise((r) => setTimeout(r, 10));
    assert.equal(stack.gateway.app.gateway.endStreams(), 1);
    const r = await pending;
    const msgs = sseMessages(r.text());
    assert.equal(msgs.length, 1);
    assert.equal((msgs[0] as { id: number }).id, 31);
    assert.equal(toolErr(msgs[0]).code, 'SERVICE_UNAVAILABLE');
    assert.equal(toolErr(msgs[0]).details.reason, 'gateway_shutdown');
  });

  test('a resume the seller refuses (405) answers the original request over SSE', async () => {
    // Input: the stream drops after event `s1`; the client's GET with the token gets 405 from the stack.seller.
    // Expectation: 200 text/event-stream with one final event for id 32: SERVICE_UNAVAILABLE upstream_status 405.
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: s1\ndata: \n\n');
      setTimeout(() => res.destroy(), 20);
    };
    const opened = await call(32);
    const token = /^id: (.*)$/m.exec(opened.text())![1]!;
    answer = (_req, res) => res.writeHead(405, { allow: 'POST' }).end();
    const resumed = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.headers.get('content-type'), 'text/event-stream');
    const msgs = sseMessages(await resumed.text());
    assert.equal(msgs.length, 1);
    assert.equal((msgs[0] as { id: number }).id, 32);
    assert.deepEqual(toolErr(msgs[0]).details, { reason: 'upstream_status', upstream_status: 405 });
  });

  test('a 2xx body without Content-Type is not MCP (no depth bound could apply to it)', async () => {
    // Input: 200, no Content-Type, a 20,000-deep JSON body. Expectation: upstream_not_mcp for the id.
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    answer = (_req, res) => {
      res.removeHeader('content-type');
      res.writeHead(200, { 'content-length': deep.length }).end(deep);
    };
    const r = await call(33);
    assert.equal(r.status, 200);
    assert.deepEqual(toolErr(r.json()).details, { reason: 'upstream_not_mcp', upstream_status: 200 });
  });

  test('an empty 202 without Content-Type still passes (a notification)', async () => {
    answer = (_req, res) => res.writeHead(202).end();
    const r = await rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': '2025-11-25' });
    assert.equal(r.status, 202);
    assert.equal(r.bytes, 0);
  });

  test('an empty 2xx answer to a request is not MCP: the host gets an error for its id, not a hang', async () => {
    // Input: a tools/call answered with 202 (empty), 204, or an empty 200, none with a Content-Type.
    // Expectation: upstream_not_mcp for the id (the SDK client used to wait for its own timeout).
    for (const status of [202, 204, 200]) {
      answer = (_req, res) => {
        res.removeHeader('content-type');
        res.writeHead(status).end();
      };
      const r = await call(40 + status);
      assert.equal(r.status, 200, String(status));
      const m = r.json() as { id: number };
      assert.equal(m.id, 40 + status);
      assert.deepEqual(toolErr(m).details, { reason: 'upstream_not_mcp', upstream_status: status });
    }
  });

  test('a notification answered 202 with Content-Type application/json and no body passes (the Python MCP SDK answers so)', async () => {
    // Input: notifications/initialized (and a batch of two notifications, and a host's response
    // to a server request) answered 202 or 200 with `content-type: application/json`, no body.
    // Expectation: the same status, no body (was: 502 upstream_not_mcp; the SDK client's connect() failed).
    const bodies: unknown[] = [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }],
      { jsonrpc: '2.0', id: 'srv-1', result: {} },
    ];
    for (const status of [202, 200]) {
      for (const body of bodies) {
        answer = (_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end();
        // A batch only from a 2025-03-26 host (no header): later revisions have none (refused).
        const r = await rawPost(stack.gateway.agentUrl('s'), body, Array.isArray(body) ? {} : { 'mcp-protocol-version': '2025-11-25' });
        assert.equal(r.status, status, JSON.stringify(body));
        assert.equal(r.bytes, 0);
      }
    }
    // A request answered so is still not MCP: its host waits for a response.
    answer = (_req, res) => res.writeHead(202, { 'content-type': 'application/json' }).end();
    const r = await call(49);
    assert.deepEqual(toolErr(r.json()).details, { reason: 'upstream_not_mcp', upstream_status: 202 });
  });

  test('an empty 202 to a notification goes out without a Content-Type', async () => {
    answer = (_req, res) => res.writeHead(202).end();
    const r = await rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': '2025-11-25' });
    assert.equal(r.status, 202);
    assert.equal(r.headers.get('content-type'), null);
  });

  test('a message with invalid UTF-8 outside its text copy is not deduped: the seller\'s bytes go out, U+FFFD for the byte', async () => {
    // Input: structuredContent {"name":"caf<E9>"} (Latin-1 byte), and a text item that is its exact copy.
    // Expectation: no partial splice around the bad byte (the new user's finding: a spliced body
    // kept the byte beside gateway-written text). Before review 38 the body was re-serialized
    // (U+FFFD for the byte, structuredContent re-spelled); a dedupe never re-spells the seller's
    // structuredContent now, so the answer goes out as any answer with nothing the gateway may
    // rewrite (U+FFFD for the ill-formed byte: json-stage.ts) (test/regressions/dedupe-past-sixteen-items-respells-structured-content.test.ts).
    // (A note makes the copy longer than its summary: a shorter copy is kept as written anyway.)
    const note = 'A note long enough that the summary is the shorter text.';
    const sc = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from(`","note":"${note}"}`)]);
    const text = Buffer.concat([Buffer.from('{\\"name\\":\\"caf'), Buffer.from([0xe9]), Buffer.from(`\\",\\"note\\":\\"${note}\\"}`)]);
    const body = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":37,"result":{"content":[{"type":"text","text":"'), text, Buffer.from('"}],"structuredContent":'), sc, Buffer.from('}}')]);
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    const r = await call(37);
    assert.equal(r.status, 200);
    // The seller's bytes, the ill-formed byte as U+FFFD (json-stage.ts: every answer's), the copy kept.
    assert.deepEqual(r.body, Buffer.from(body.toString('utf8'), 'utf8'));
    const m = r.json() as { result: { content: { text: string }[] } };
    assert.equal(m.result.content[0]!.text, `{"name":"caf\uFFFD","note":"${note}"}`);
  });

  test('a seller 4xx with a too-deep JSON body is bounded like any other answer', async () => {
    const deep = '{"e":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
    answer = (_req, res) => res.writeHead(400, { 'content-type': 'application/json' }).end(deep);
    const r = await call(34);
    assert.equal(r.status, 200);
    const e = toolErr(r.json());
    assert.equal(e.code, 'RESPONSE_TOO_LARGE');
    assert.equal(e.details.reason, 'json_depth');
  });

  test('an answer for another id, a duplicated id key, or a batch for one request is not MCP', async () => {
    for (const body of [
      toolResponse('some-other-id', { content: [] }),
      '{"jsonrpc":"2.0","id":35,"id":"other","result":{"content":[]}}',
      `[${toolResponse(35, { content: [] })}]`,
    ]) {
      answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      const r = await call(35);
      const m = r.json() as { id: number };
      assert.equal(m.id, 35, body);
      assert.equal(toolErr(m).details.reason, 'upstream_not_mcp', body);
    }
  });

  test('SSE with CR-only line endings delivers its result', async () => {
    const result = toolResponse(36, { content: [{ type: 'text', text: 'ok' }] });
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`event: message\rdata: ${result}\r\r`);
    };
    const r = await call(36);
    const msgs = sseMessages(r.text());
    assert.deepEqual(msgs, [JSON.parse(result)]);
  });

  test('a coding the agent did not ask for is refused, not decoded (accept_encoding: [identity])', async () => {
    const gz = zlib.gzipSync(toolResponse(37, { content: [{ type: 'text', text: 'zipped' }] }));
    answer = (req, res) => {
      assert.equal(req.headers['accept-encoding'], 'identity');
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gz);
    };
    const r = await call(37, 'plain');
    assert.equal(toolErr(r.json()).details.reason, 'unsupported_encoding');
  });
});
