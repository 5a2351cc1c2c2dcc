/**
 * Reported failure (a hostile trial 23, follow-up of H2): a DELETE to a configured agent's MCP
 * endpoint had its body read under the app's body limit, the largest `max_request_bytes` of
 * any agent, though a DELETE ends an MCP session and its body is never forwarded (only its
 * size is logged: routing/handler.ts). With one agent at 10,000,000 bytes and
 * `defaults.max_request_bytes` 1000, `DELETE /agents/s/mcp` with Content-Length 5,000,000 and
 * `Expect: 100-continue` got `100 Continue` and the gateway waited for all 5 MB (408 after
 * request_timeout_ms when they never came); Content-Length 1001 with 10 bytes sent waited the
 * same; a chunked body with no end, too.
 *
 * Now (src/request/agent-body-limit.ts bodyBound, as for a body to an unknown agent): a
 * DELETE's body is held to `defaults.max_request_bytes`: a Content-Length over it is refused
 * from the head, 413 `request_too_large` (`limit_bytes` 1000), id null, `Connection: close`,
 * no 100; a chunked body as soon as its bytes pass it. Within it the DELETE is served as before.
 *
 * Input: a gateway on 127.0.0.1, request_timeout_ms 3000, defaults.max_request_bytes 1000,
 * agent `s` at 10,000,000 (the app's body limit) before a raw seller; raw TCP requests.
 * Expectation: the exact answer within 1 s of the head (before the fix, 100 Continue and
 * then 408 after 3 s, or 408 alone), no 100, the close; one `refused` line and count each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { firstAnswer, writeAndRead, type WireAnswer } from '../helpers/http-wire.js';
import { refusedOnce } from '../helpers/refusal-count.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const YAML = (url: string): string => agentsYaml({ s: { url, max_request_bytes: 10_000_000 } }, ['request_timeout_ms: 3000', 'defaults:', '  max_request_bytes: 1000']);

/** How long an answer may take to count as "from the head" (waiting for the body would take request_timeout_ms, 3 s). */
const AT_ONCE_MS = 1000;

function head(method: string, fields: string, expect: boolean): string {
  return (
    `${method} /agents/s/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-protocol-version: 2025-06-18\r\nmcp-session-id: s-1\r\n${expect ? 'expect: 100-continue\r\n' : ''}${fields}\r\n`
  );
}

const TOO_LARGE = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: {
    code: -32600,
    message: "A DELETE's body is over defaults.max_request_bytes (1000): a DELETE ends an MCP session and its body is never forwarded; send it without one.",
    data: { reason: 'request_too_large', limit_bytes: 1000 },
  },
});

describe("a DELETE's body to a configured agent is held to defaults.max_request_bytes", { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: RawSeller;
  let gw: ObservedGateway;
  let port: number;
  before(async () => {
    seller = await startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    gw = await startObservedGateway(YAML(seller.url));
    port = Number(new URL(gw.baseUrl).port);
  });
  after(async () => {
    await gw.close();
    await seller.close();
  });

  /** Sends `text`, then `parts`, and expects the 413 at once, no 100, the close; one refusal logged and counted. */
  async function refusedFromHead(text: string, parts: string[]): Promise<void> {
    const { answer, refused } = await refusedOnce<WireAnswer>({ seller, gateway: gw }, 'request_too_large', () => writeAndRead(port, text, parts, 2 * AT_ONCE_MS));
    assert.doesNotMatch(answer.text, /100 Continue/, text);
    assert.deepEqual(firstAnswer(answer.text), { status: 'HTTP/1.1 413 Payload Too Large', connection: 'close', body: TOO_LARGE }, text);
    assert.ok(answer.firstByteMs !== null && answer.firstByteMs < AT_ONCE_MS, `answered in ${answer.firstByteMs} ms`);
    assert.equal(answer.closed, true, 'the connection is closed');
    assert.deepEqual(refused, [{ reason: 'request_too_large', status: 413, agent: 's', http_method: 'DELETE' }]);
  }

  test('Content-Length 5,000,000 with Expect: 413 from the head (was 100 Continue, then 408 after 3 s)', async () => {
    await refusedFromHead(head('DELETE', 'content-length: 5000000\r\n', true), []);
  });

  test('Content-Length 1001 without Expect, 10 bytes sent: 413 at once (was 408 after 3 s)', async () => {
    await refusedFromHead(head('DELETE', 'content-length: 1001\r\n', false), ['x'.repeat(10)]);
  });

  test('chunked, 600 + 600 bytes, no end: 413 once its bytes pass 1000 (was 408)', async () => {
    const chunk = `258\r\n${'x'.repeat(600)}\r\n`;
    await refusedFromHead(head('DELETE', 'transfer-encoding: chunked\r\n', false), [chunk, chunk]);
  });

  test('controls: a DELETE within 1000 bytes gets its 100 and is served; a POST keeps its agent bound (10,000,000)', async () => {
    const body = 'x'.repeat(1000);
    const within = await writeAndRead(port, head('DELETE', `content-length: ${body.length}\r\n`, true), [body], 1000);
    assert.ok(within.text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'), within.text.slice(0, 80));
    assert.equal(seller.requests.at(-1)?.method, 'DELETE');
    const post = await writeAndRead(port, head('POST', 'content-length: 5000\r\n', true), [], 300);
    assert.equal(post.text, 'HTTP/1.1 100 Continue\r\n\r\n');
  });
});
