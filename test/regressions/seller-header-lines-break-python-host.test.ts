/**
 * Regression (a hostile new user's trial 42, Medium): the gateway bounded the bytes of the
 * head it writes to a host (16 KiB), not its number of lines. A seller answering with 2,500
 * lines `x: 1` (15 KB, under the byte bound) had all of them forwarded: Python's http.client
 * (under `requests`, `urllib`, urllib3) raised `HTTPException: got more than 100 headers`, so a
 * Python host got no result and no adcp_error; Node's http client kept 2,000 lines and dropped
 * the rest without a word; the exchange line said `ok`.
 *
 * Now the host's head is bounded at 99 header lines too (MAX_HOST_HEAD_LINES,
 * src/response/head-size.ts: Python's http.client reads at most 100 lines after the status line,
 * the closing blank line among them), counted as the lines are written: the seller's after the
 * filter (each Set-Cookie, each repeated header's line) and a reserve of 7 for the gateway's and
 * Node's. Over it, before anything is written: HTTP 200, SERVICE_UNAVAILABLE
 * `upstream_headers_too_large` for the request's id with `limit_lines` 99 and `observed_lines`
 * that count, the exchange line `local_error` with that reason.
 *
 * Input: a seller on 127.0.0.1 writing its head itself (Content-Type, Content-Length, then N
 * lines `x: 1`: N + 1 lines as forwarded, Content-Length stripped, so N + 8 counted). Hosts:
 * node:http (maxHeadersCount 2,000), a raw socket (the head's lines counted), and python3's
 * http.client when python3 is installed.
 * Controls: 91 lines (99 counted, the limit), JSON and SSE, pass whole and Python reads them;
 * 92 (100 counted) are refused.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import type { Socket } from 'node:net';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { openRawConnection } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { nodeHostPost } from '../helpers/node-host-post.js';

const LIMIT_LINES = 99;
/** The documented reserve for the lines the gateway and Node add (docs/errors.md). */
const RESERVE_LINES = 7;
/** The most `x: 1` lines that pass: with the seller's Content-Type and the reserve, 99. */
const AT_LIMIT = LIMIT_LINES - RESERVE_LINES - 1;
const counted = (n: number): number => n + 1 + RESERVE_LINES;

const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'fine' }] });

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; params?: { name?: string } };
      const m = /^(json|sse)_lines_(\d+)$/.exec(msg.params?.name ?? '');
      if (msg.id === undefined || m === null) return void res.writeHead(500).end();
      const sse = m[1] === 'sse';
      const body = sse ? `event: message\ndata: ${result(msg.id)}\n\n` : result(msg.id);
      const head = `HTTP/1.1 200 OK\r\ncontent-type: ${sse ? 'text/event-stream' : 'application/json'}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${'x: 1\r\n'.repeat(Number(m[2]))}`;
      (res.socket as Socket).end(`${head}\r\n${body}`);
    }),
  (seller) => startObservedGateway(agentsYaml({ lines: seller.url })),
);

const reasonOf = (body: string): string | undefined => /"reason":"(\w+)"/.exec(body)?.[1];


const PYTHON = spawnSync('python3', ['-c', 'import http.client'], { timeout: 5000 }).status === 0;

/**
 * A Python host: http.client (what `requests` and `urllib` read with) POSTs each tools/call
 * `[id, tool]` to `url` on its own connection and prints one JSON line each: `status` and
 * `body`, or `error` (the exception's type and text).
 */
const PY_HOST = `
import http.client, json, sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
for id, tool in json.loads(sys.argv[2]):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    body = json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
    try:
        c.request("POST", u.path, body, {"content-type": "application/json", "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"})
        r = c.getresponse()
        print(json.dumps({"status": r.status, "body": r.read().decode()}))
    except Exception as e:
        print(json.dumps({"error": type(e).__name__ + ": " + str(e)}))
    finally:
        c.close()
`;

/** What the Python host got for each call, in order. */
function pythonHost(url: string, calls: readonly [number, string][]): Promise<{ status?: number; body?: string; error?: string }[]> {
  return new Promise((resolve, reject) => {
    execFile('python3', ['-c', PY_HOST, url, JSON.stringify(calls)], { timeout: 15_000 }, (err, stdout) => {
      if (err) return reject(err);
      resolve(
        stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { status?: number; body?: string; error?: string }),
      );
    });
  });
}

describe('a seller head of many small lines, under 16 KiB, bounded by its line count', { timeout: TEST_TIMEOUT_MS }, () => {
  test('2,500 lines `x: 1`: node:http host gets the error for its id, not 2,000 of the lines; logged local_error', async () => {
    const r = await nodeHostPost(stack.gateway.agentUrl('lines'), toolCall(1, 'json_lines_2500'));
    assert.equal(r.status, 200);
    assert.equal(reasonOf(r.body), 'upstream_headers_too_large');
    assert.equal(r.body, expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'json_lines_2500', reason: 'upstream_headers_too_large', limit: LIMIT_LINES, observed: counted(2500) }));
    assert.equal(r.headers.x, undefined);
    assert.ok(r.lines <= LIMIT_LINES, `${r.lines} lines`);
    const line = await stack.gateway.exchangeLine('lines', 1);
    assert.deepEqual([line.status, line.outcome, line.reason], [200, 'local_error', 'upstream_headers_too_large']);
  });

  test('2,500 lines on an SSE answer: the error goes out before any SSE head, as JSON', async () => {
    const r = await nodeHostPost(stack.gateway.agentUrl('lines'), toolCall(2, 'sse_lines_2500'));
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.body, expectedErrorJson({ id: 2, method: 'tools/call', toolName: 'sse_lines_2500', reason: 'upstream_headers_too_large', limit: LIMIT_LINES, observed: counted(2500) }));
    const line = await stack.gateway.exchangeLine('lines', 2);
    assert.deepEqual([line.status, line.outcome, line.reason], [200, 'local_error', 'upstream_headers_too_large']);
  });

  test(`one over the limit: ${AT_LIMIT + 1} lines (${counted(AT_LIMIT + 1)} counted) refused`, async () => {
    const r = await nodeHostPost(stack.gateway.agentUrl('lines'), toolCall(3, `json_lines_${AT_LIMIT + 1}`));
    assert.equal(counted(AT_LIMIT + 1), 100);
    assert.equal(r.body, expectedErrorJson({ id: 3, method: 'tools/call', toolName: `json_lines_${AT_LIMIT + 1}`, reason: 'upstream_headers_too_large', limit: LIMIT_LINES, observed: 100 }));
    const line = await stack.gateway.exchangeLine('lines', 3);
    assert.deepEqual([line.outcome, line.reason], ['local_error', 'upstream_headers_too_large']);
  });

  for (const kind of ['json', 'sse'] as const) {
    test(`control: ${AT_LIMIT} lines on a ${kind} answer (${LIMIT_LINES} counted, the limit) pass whole, logged ok`, async () => {
      const id = kind === 'json' ? 4 : 5;
      const r = await nodeHostPost(stack.gateway.agentUrl('lines'), toolCall(id, `${kind}_lines_${AT_LIMIT}`));
      assert.equal(r.status, 200);
      assert.equal(r.headers.x, Array(AT_LIMIT).fill('1').join(', '));
      assert.equal(r.body, kind === 'json' ? result(id) : `event: message\ndata: ${result(id)}\n\n`);
      const line = await stack.gateway.exchangeLine('lines', id);
      assert.deepEqual([line.status, line.outcome, line.reason], [200, 'ok', null]);
    });

    test(`the count never falls short of the lines Node writes (${kind}, ${AT_LIMIT} lines, keep-alive)`, async () => {
      const id = kind === 'json' ? 6 : 7;
      const body = JSON.stringify(toolCall(id, `${kind}_lines_${AT_LIMIT}`));
      const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
      try {
        conn.socket.write(
          `POST /agents/lines/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
            `mcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        await withTimeout(conn.heads(1), undefined, 'the head');
        const head = conn.text().slice(0, conn.text().indexOf('\r\n\r\n'));
        const written = head.split('\r\n').length - 1; // the status line not counted
        assert.equal(head.split('\r\n').filter((l) => l === 'x: 1').length, AT_LIMIT);
        assert.ok(written <= LIMIT_LINES && LIMIT_LINES - written <= 3, `written ${written} header lines, counted ${LIMIT_LINES}`);
      } finally {
        conn.socket.destroy();
      }
    });
  }

  test('a python3 http.client host gets a JSON-RPC answer for each: the error over the limit, the result at it', { skip: PYTHON ? false : 'python3 is not installed' }, async () => {
    const calls: [number, string][] = [
      [10, 'json_lines_2500'],
      [11, 'sse_lines_2500'],
      [12, `json_lines_${AT_LIMIT + 1}`],
      [13, `json_lines_${AT_LIMIT}`],
      [14, `sse_lines_${AT_LIMIT}`],
    ];
    const got = await withTimeout(pythonHost(stack.gateway.agentUrl('lines'), calls), 15_000, 'the python host');
    const errorOf = (id: number, tool: string, n: number): string =>
      expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason: 'upstream_headers_too_large', limit: LIMIT_LINES, observed: counted(n) });
    assert.deepEqual(got, [
      { status: 200, body: errorOf(10, 'json_lines_2500', 2500) },
      { status: 200, body: errorOf(11, 'sse_lines_2500', 2500) },
      { status: 200, body: errorOf(12, `json_lines_${AT_LIMIT + 1}`, AT_LIMIT + 1) },
      { status: 200, body: result(13) },
      { status: 200, body: `event: message\ndata: ${result(14)}\n\n` },
    ]);
  });
});
