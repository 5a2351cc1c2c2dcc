/**
 * Regression (a review, Low): a refusal of a DELETE took its JSON-RPC id from the DELETE's
 * body. A DELETE ends the session (MCP Streamable HTTP) and carries no JSON-RPC message, and
 * docs/errors.md gives such refusals id null ("null for a GET, a DELETE, a notification or a
 * batch": `pipeline_too_deep`, `draining`). Yet a DELETE whose body was
 * `{"jsonrpc":"2.0","id":7,"method":"x"}` was refused `unknown_agent`, `pipeline_too_deep` and
 * `draining` (on an MCP endpoint and on any other path) for id 7: the handler and the app read
 * the id of any body Fastify had parsed (request/peek.ts `requestIdOf`), whatever the method.
 * Now the id of a refusal read before the request is otherwise judged is read from a POST's
 * body only (request/peek.ts `refusalIdOf`); a GET or a DELETE is refused for id null, whatever
 * body it has. (A GET's body is never parsed by Fastify: its cases pass before the fix too, and
 * guard the rule.)
 *
 * Input: a raw seller on 127.0.0.1 that holds the calls with ids 1 and 100 until the test lets
 * them go and answers any other at once; a gateway with agent `h` before it; raw hosts
 * (node:net) writing requests with the body above.
 * - a DELETE and a GET to agent `nope` (unknown);
 * - on one connection: call 1 (held), calls 2-17 (16 waiting for their turn), then a DELETE
 *   and a GET to `h`, pipelined in one write;
 * - call 100 held on one connection, two more opened, then the shutdown as src/cli.ts runs it
 *   on SIGTERM, then a DELETE to `/agents/h/mcp` on one and a DELETE to `/nope` on the other.
 * Expected: each refusal's exact body, for id null.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { openRawConnection, responsesWhenWhole, toolCallRequest, type RawConnection } from '../helpers/http-wire.js';
import { beginShutdown, drainingAnswer, withoutDate } from '../helpers/draining.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** The body each DELETE and GET below carries: a JSON-RPC request with id 7. */
const BODY = '{"jsonrpc":"2.0","id":7,"method":"x"}';

/** The raw HTTP/1.1 text of a `method` request to `path` carrying {@link BODY} as JSON. */
function withBody(method: 'DELETE' | 'GET', path: string): string {
  return (
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-protocol-version: 2025-06-18\r\nmcp-session-id: s-1\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`
  );
}

const unknownAgentBody = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'Unknown agent "nope": no such agent in the gateway config.', data: { reason: 'unknown_agent', agent: 'nope' } },
});

const tooDeepBody = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: {
    code: -32027,
    message:
      'Too many requests pipelined on one connection: 16 already wait for the answers before them. This one was not sent to any seller: send it again once earlier answers have arrived, or on another connection.',
    data: { reason: 'pipeline_too_deep', limit_requests: 16 },
  },
});

/**
 * A GET to an MCP endpoint that declares a body is refused from its head, before its agent or
 * its place in the pipeline is judged, id null (hostile trial 54, F2:
 * test/regressions/get-with-body-408-inside-sse-stream.test.ts).
 */
const GET_BODY_REFUSAL =
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a GET to an MCP endpoint carries no body (it opens or resumes a stream: MCP Streamable HTTP), and this one declares one (Content-Length other than 0, or Transfer-Encoding); it was not read, nor sent to the seller: send the GET without a body.","data":{"reason":"invalid_request"}}}';

describe('a DELETE (or GET) with a JSON-RPC body, refused before it is judged', { timeout: TEST_TIMEOUT_MS * 2 }, () => {
  const releases = new Map<number, () => void>();
  let seller: RawSeller;
  let gw: ObservedGateway;
  const conns: RawConnection[] = [];
  const connect = async (): Promise<RawConnection> => {
    const conn = await openRawConnection(Number(new URL(gw.baseUrl).port));
    conns.push(conn);
    return conn;
  };
  /** Waits until the seller holds call `id` (at most 500 looks, 10 ms apart: a hang guard). */
  const held = async (id: number): Promise<void> => {
    for (let k = 0; k < 500 && !releases.has(id); k++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(releases.has(id), `the seller holds call ${id}`);
  };

  before(async () => {
    seller = await startRawSeller((req, res) => {
      const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
      const answer = (): void => {
        if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, { content: [] }));
      };
      if (id === 1 || id === 100) releases.set(id, answer);
      else answer();
    });
    gw = await startObservedGateway(agentsYaml({ h: seller.url }));
  });

  after(async () => {
    for (const release of releases.values()) release();
    for (const conn of conns) conn.socket.destroy();
    await gw?.close().catch(() => {});
    await seller?.close();
  });

  test('unknown_agent: a DELETE with a body gets the exact 404 for id null, a GET with a body the GET-body refusal', async () => {
    const conn = await connect();
    conn.socket.write(withBody('DELETE', '/agents/nope/mcp') + withBody('GET', '/agents/nope/mcp'));
    const { responses, rest } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'the two refusals');
    assert.equal(rest, '');
    assert.deepEqual(
      responses.map((r) => ({ status: r.status, body: r.body })),
      [
        { status: 404, body: unknownAgentBody },
        { status: 400, body: GET_BODY_REFUSAL },
      ],
    );
  });

  test('pipeline_too_deep: a DELETE with a body behind 16 waiting calls gets the exact 503 for id null, a GET with a body the GET-body refusal', async () => {
    const conn = await connect();
    conn.socket.write(Array.from({ length: 17 }, (_, k) => toolCallRequest(k + 1, 'h')).join('') + withBody('DELETE', '/agents/h/mcp') + withBody('GET', '/agents/h/mcp'));
    await held(1);
    releases.get(1)!();
    const { responses, rest } = await withTimeout(responsesWhenWhole(conn, 19), 5_000, 'the 19 answers');
    assert.equal(rest, '');
    assert.deepEqual(
      responses.slice(0, 17).map((r) => r.status),
      Array.from({ length: 17 }, () => 200),
    );
    assert.deepEqual(
      responses.slice(17).map((r) => ({ status: r.status, body: r.body })),
      [
        { status: 503, body: tooDeepBody },
        { status: 400, body: GET_BODY_REFUSAL },
      ],
    );
    assert.equal(
      seller.requests.some((r) => r.method !== 'POST'),
      false,
      'the seller got no DELETE or GET',
    );
  });

  test('draining: a DELETE with a body, to an MCP endpoint and to another path, gets the exact 503 for id null', async () => {
    const busy = await connect();
    busy.socket.write(toolCallRequest(100, 'h'));
    await held(100);
    const mcp = await connect();
    const other = await connect();
    // Give the server time to see both connections (the shutdown closes none while call 100 is open).
    await new Promise((r) => setTimeout(r, 100));
    const { closed } = await beginShutdown(gw);
    mcp.socket.write(withBody('DELETE', '/agents/h/mcp'));
    other.socket.write(withBody('DELETE', '/nope'));
    const [toMcp, toOther] = await withTimeout(Promise.all([mcp.closed, other.closed]), 5_000, 'the two refusals');
    releases.get(100)!();
    await withTimeout(closed, 5_000, 'the close');
    assert.equal(withoutDate(toMcp), drainingAnswer(null));
    assert.equal(withoutDate(toOther), drainingAnswer(null));
  });
});
