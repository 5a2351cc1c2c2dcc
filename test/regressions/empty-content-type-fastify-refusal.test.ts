/**
 * Regression: a POST whose Content-Type is present but no media type got Fastify's refusal.
 *
 * Reported failure (a hostile new user's trial 11, F2): `Content-Type:` (empty) and
 * `Content-Type: ;` on a valid JSON-RPC POST were answered 400 `invalid_request` with
 * Fastify's wording ("Invalid Request: Unsupported Media Type", FST_ERR_CTP_INVALID_MEDIA_TYPE)
 * and id null, a reason docs/errors.md does not give, while the same body with no
 * Content-Type, `text/plain` or form-urlencoded was forwarded. Fastify refuses any value that
 * is not `type/subtype` (RFC 9110 §8.3.1) before any route: empty, only parameters, no `/`,
 * a list. Now such a value is read as no Content-Type (src/request/unreadable-content-type.ts):
 * the body is the JSON-RPC message, the seller gets it with `Content-Type: application/json`
 * as for a request without one, and the gateway's own answers (404, 405, a parse error, an
 * invalid request for its id) are those a request without one gets.
 *
 * Input: a gateway with agent `s` before a seller answering `{"jsonrpc":"2.0","id":7,"result":{}}`;
 * raw HTTP/1.1 POSTs of `{"jsonrpc":"2.0","id":7,"method":"ping"}` with the Content-Type
 * field lines below.
 * Expectation: the exact answers, and exactly what the seller received, below.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startObservedGateway, type LogLine } from '../support/hostile-seller.js';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { exchangeUntilClose, openRawConnection, responsesWhenWhole } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const BODY = '{"jsonrpc":"2.0","id":7,"method":"ping"}';
const ANSWER = '{"jsonrpc":"2.0","id":7,"result":{}}';

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER)),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

interface Answer {
  status: number;
  body: string;
  /** What the seller received for this request: its Content-Type and body; undefined when it got nothing. */
  seller: { contentType: string | string[] | undefined; body: string } | undefined;
}

/** POSTs `body` to `path` with the field lines `fields` (each ending CRLF) on a new connection; the answer and what the seller got. */
async function post(fields: string, body = BODY, path = '/agents/s/mcp', method = 'POST'): Promise<Answer> {
  const requests: SeenRequest[] = stack.seller.requests;
  const seen = requests.length;
  const wire = await withTimeout(
    exchangeUntilClose(
      stack.gateway.baseUrl,
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${fields}Accept: application/json, text/event-stream\r\n` +
        `MCP-Protocol-Version: 2025-06-18\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    ),
  );
  const headEnd = wire.indexOf('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(wire)?.[1]);
  const got = requests.slice(seen);
  assert.ok(got.length <= 1, `the seller got ${got.length} requests`);
  const forwarded = got[0];
  return {
    status,
    body: wire.slice(headEnd + 4),
    seller: forwarded === undefined ? undefined : { contentType: forwarded.headers['content-type'], body: forwarded.body.toString('utf8') },
  };
}

const FORWARDED_AS_JSON: Answer = { status: 200, body: ANSWER, seller: { contentType: 'application/json', body: BODY } };

function refusal(reason: string, code: number, message: string, id: number | null = null): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, data: { reason } } });
}

describe('a Content-Type that is no media type is read as none', () => {
  test('no Content-Type at all (the reference): forwarded with application/json', OPTIONS, async () => {
    assert.deepEqual(await post(''), FORWARDED_AS_JSON);
  });

  for (const [label, field] of [
    ['empty', 'Content-Type: \r\n'],
    ['only spaces (the HTTP parser trims them: empty)', 'Content-Type:    \r\n'],
    ['";"', 'Content-Type: ;\r\n'],
    ['";;"', 'Content-Type: ;;\r\n'],
    ['only a parameter, "; charset=utf-8"', 'Content-Type: ; charset=utf-8\r\n'],
    ['no "/", "json"', 'Content-Type: json\r\n'],
    ['"a/b/c"', 'Content-Type: a/b/c\r\n'],
    ['a list, "application/json, text/plain"', 'Content-Type: application/json, text/plain\r\n'],
    ['10 KiB of "a"', `Content-Type: ${'a'.repeat(10_240)}\r\n`],
    ['empty, then application/json on a second line (Node keeps the first)', 'Content-Type: \r\nContent-Type: application/json\r\n'],
  ] as const) {
    test(`${label}: forwarded as with none, Content-Type application/json (was Fastify's 400 invalid_request)`, OPTIONS, async () => {
      assert.deepEqual(await post(field), FORWARDED_AS_JSON);
    });
  }

  test('";" with an empty body: the parse error a request without Content-Type gets', OPTIONS, async () => {
    const expected = { status: 400, body: refusal('parse_error', -32700, 'Parse error: the request body is empty.'), seller: undefined };
    assert.deepEqual(await post('', ''), expected);
    assert.deepEqual(await post('Content-Type: ;\r\n', ''), expected);
  });

  test('";" with a body holding a bad params for id 7: invalid_request for id 7, as without Content-Type', OPTIONS, async () => {
    const body = '{"jsonrpc":"2.0","id":7,"method":"ping","params":5}';
    const expected = { status: 400, body: refusal('invalid_request', -32600, 'Invalid Request: "params" must be an object or an array.', 7), seller: undefined };
    assert.deepEqual(await post('', body), expected);
    assert.deepEqual(await post('Content-Type: ;\r\n', body), expected);
  });

  test('";", then requests pipelined behind it on the connection: each answered in order, each forwarded once, one exchange line each', OPTIONS, async () => {
    const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
    const seen = stack.seller.requests.length;
    const linesBefore = stack.gateway.lines.length;
    const head = (fields: string): string => `POST /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n${fields}Accept: application/json, text/event-stream\r\n`;
    const chunked = `${head('Content-Type: ;\r\nTransfer-Encoding: chunked\r\n')}\r\n${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`;
    const sized = (fields: string): string => `${head(fields)}Content-Length: ${BODY.length}\r\n\r\n${BODY}`;
    try {
      conn.socket.write(sized('Content-Type: ;\r\n') + sized('') + chunked + sized('Content-Type: json\r\n'));
      const { responses, rest } = await withTimeout(responsesWhenWhole(conn, 4));
      assert.deepEqual(responses.map((r) => [r.status, r.body]), Array(4).fill([200, ANSWER]));
      assert.equal(rest, '');
    } finally {
      conn.socket.destroy();
    }
    assert.deepEqual(
      stack.seller.requests.slice(seen).map((r) => [r.headers['content-type'], r.body.toString('utf8')]),
      Array(4).fill(['application/json', BODY]),
    );
    const ended = (): LogLine[] => stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'exchange' || l.msg === 'refused');
    await stack.gateway.waitForLine(() => ended().length >= 4);
    const exchanges = ended();
    assert.deepEqual(exchanges.map((l) => [l.msg, l.outcome]), Array(4).fill(['exchange', 'ok']));
  });

  test('";" on another path: 404 not_found (was Fastify\'s 400)', OPTIONS, async () => {
    assert.deepEqual(await post('Content-Type: ;\r\n', BODY, '/other'), {
      status: 404,
      body: refusal('not_found', -32600, 'No route for POST /other: MCP endpoints are /agents/<agent>/mcp.'),
      seller: undefined,
    });
  });

  test('";" on a PUT to the MCP endpoint: 405 method_not_allowed (was Fastify\'s 400)', OPTIONS, async () => {
    assert.deepEqual(await post('Content-Type: ;\r\n', BODY, '/agents/s/mcp', 'PUT'), {
      status: 405,
      body: refusal('method_not_allowed', -32600, 'Method not allowed: MCP endpoints accept POST, GET, DELETE.'),
      seller: undefined,
    });
  });
});

describe('a media type, however odd, is forwarded as written (unchanged)', () => {
  for (const [label, value] of [
    ['text/plain', 'text/plain'],
    ['an empty parameter value', 'application/json; charset='],
    ['an empty parameter', 'application/json;;'],
    ['a 10 KiB parameter', `application/json; x=${'a'.repeat(10_240)}`],
  ] as const) {
    test(`${label}: forwarded with that Content-Type`, OPTIONS, async () => {
      assert.deepEqual(await post(`Content-Type: ${value}\r\n`), { status: 200, body: ANSWER, seller: { contentType: value, body: BODY } });
    });
  }

  test('text/plain, then an empty line: the first, text/plain', OPTIONS, async () => {
    assert.deepEqual(await post('Content-Type: text/plain\r\nContent-Type: \r\n'), { status: 200, body: ANSWER, seller: { contentType: 'text/plain', body: BODY } });
  });
});
