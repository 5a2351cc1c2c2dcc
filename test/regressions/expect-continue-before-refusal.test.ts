/**
 * Reported failure (a hostile new user's trial 20, L2): a head with `Expect: 100-continue`
 * that the gateway refuses from its head was still told `100 Continue` first, in three
 * places: on the `ops_listen` port (no route there reads a body: `POST /healthz` got 100, then
 * 405), for a path the main port does not serve (`POST /nope`: 100, then 404), and for an
 * absolute-form target (`POST http://127.0.0.1:<port>/agents/small/mcp`, RFC 9112 §3.2.2)
 * whose body is over its agent's `max_request_bytes` (100, then 413: the early check read the
 * agent's name only from an origin-form target). RFC 9110 §10.1.1: a server that will refuse
 * the request from its head answers with the final status instead, and the client never
 * sends the body.
 *
 * Now (src/app.ts `checkContinue`, one rule for both listeners): a head the gateway refuses
 * from the head alone (no route of the listener takes it, or a Content-Length over its
 * bound, the target's path read from either form) gets its refusal at once, no 100, and the
 * connection is closed after it (the announced body never comes). A head a route takes still
 * gets its 100: that route reads the body before it answers (an unknown agent's 404 included).
 *
 * Input: a gateway on 127.0.0.1 with `ops_listen`, an agent `small` with max_request_bytes
 * 200, a raw seller. Expectation: the exact status lines below, no `100 Continue`, the close.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { listenAll } from '../../src/ops/listen.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { captureLog } from '../helpers/capture-log.js';
import { firstAnswer, writeAndRead } from '../helpers/http-wire.js';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const ANSWER = toolResponse(1, { content: [{ type: 'text', text: 'ok' }] });
const BODY = JSON.stringify(toolCall(1, 'get_products'));

function head(method: string, target: string, length: number): string {
  return (
    `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
    `accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\nexpect: 100-continue\r\ncontent-length: ${length}\r\n\r\n`
  );
}

describe('Expect: 100-continue on a head the gateway refuses', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: RawSeller;
  let app: FastifyInstance;
  let mainPort: number;
  let opsPort: number;
  before(async () => {
    seller = await startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER));
    const yaml = `listen: { host: 127.0.0.1, port: 0 }\nops_listen: { port: 0 }\nagents:\n  s:\n    url: ${seller.url}\n  small:\n    url: ${seller.url}\n    max_request_bytes: 200\n`;
    const config = parseConfig(yaml, { env: {} });
    app = await buildApp(config, { logger: captureLog('warn').logger });
    const addresses = await listenAll(app, config);
    mainPort = Number(new URL(addresses.address).port);
    opsPort = Number(new URL(addresses.opsAddress!).port);
  });
  after(async () => {
    await app.close();
    await seller.close();
  });

  /** Sends the head only and expects the refusal `status` at once, no 100, and the close. */
  async function refusedFromHead(port: number, text: string, status: string): Promise<void> {
    const seen = seller.requests.length;
    const answer = await writeAndRead(port, text);
    assert.doesNotMatch(answer.text, /100 Continue/, text);
    assert.equal(firstAnswer(answer.text).status, status, text);
    assert.equal(firstAnswer(answer.text).connection, 'close', text);
    assert.ok(answer.closed, 'the connection is closed');
    assert.equal(seller.requests.length, seen, 'the seller got nothing');
  }

  test('ops port: POST /healthz is 405 and POST /nope 404, with no 100 Continue first', async () => {
    await refusedFromHead(opsPort, head('POST', '/healthz', 10), 'HTTP/1.1 405 Method Not Allowed');
    await refusedFromHead(opsPort, head('POST', '/nope', 10), 'HTTP/1.1 404 Not Found');
    await refusedFromHead(opsPort, head('POST', '/agents/s/mcp', 10), 'HTTP/1.1 404 Not Found');
  });

  test('main port: POST /nope is 404 with no 100 Continue first', async () => {
    await refusedFromHead(mainPort, head('POST', '/nope', 10), 'HTTP/1.1 404 Not Found');
  });

  test('main port, absolute-form target over its agent\'s max_request_bytes: 413 with no 100 Continue first', async () => {
    await refusedFromHead(mainPort, head('POST', `http://127.0.0.1:${mainPort}/agents/small/mcp`, 300), 'HTTP/1.1 413 Payload Too Large');
  });

  test('controls: within the bound, origin-form and absolute-form get their 100 Continue and are served', async () => {
    for (const target of ['/agents/small/mcp', `http://127.0.0.1:${mainPort}/agents/small/mcp`, '/agents/s/mcp']) {
      const answer = await writeAndRead(mainPort, head('POST', target, BODY.length), [BODY], 1500);
      assert.match(answer.text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/, target);
      assert.ok(answer.text.endsWith(ANSWER), target);
    }
  });

  test('controls: a route that reads the body before it refuses (an unknown agent, PUT on an MCP endpoint) still gets its 100, then its refusal', async () => {
    for (const [method, target, status] of [
      ['POST', '/agents/nope/mcp', 'HTTP/1.1 404 Not Found'],
      ['PUT', '/agents/s/mcp', 'HTTP/1.1 405 Method Not Allowed'],
    ] as const) {
      const answer = await writeAndRead(mainPort, head(method, target, BODY.length), [BODY], 1500);
      assert.ok(answer.text.startsWith(`HTTP/1.1 100 Continue\r\n\r\n${status}\r\n`), `${method} ${target}: ${answer.text.slice(0, 80)}`);
    }
  });
});
