/**
 * Regression (a new user's trial 50, finding 2): a seller whose HTTP response is malformed
 * (an invalid chunk size, `5\r\n...\r\nZZ\r\n`; both Content-Length and Transfer-Encoding:
 * chunked; two different Content-Length values) was reported `upstream_reset` ("The seller's
 * connection closed, or its response could not be read, ...") with nothing in the log naming
 * the parser's error: the operator blamed the network, not the seller's HTTP stack.
 *
 * Input: a real gateway logging into a capture; a raw seller writing each malformed answer on
 * its socket; a seller that resets the connection, for comparison.
 * Expected: the host's answer is the documented `upstream_reset` message, byte for byte as
 * before; the exchange line's `upstream_error` is the code undici and its llhttp parser give:
 * `HPE_INVALID_CHUNK_SIZE` for the chunk size; for a head whose length is contradictory
 * undici reports its length mismatch, `UND_ERR_RES_CONTENT_LENGTH_MISMATCH`, instead of
 * llhttp's `HPE_UNEXPECTED_CONTENT_LENGTH` (client-h1.js createError); a reset, `ECONNRESET`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { captureLog } from '../helpers/capture-log.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const log = captureLog('trace');
let gateway: RunningGateway;
let seller: RawSeller;

const JS = toolResponse(1, { content: [{ type: 'text', text: 'ok' }] });
const HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n';
/** What the seller writes on its socket for each tool name. */
const ANSWERS: Record<string, string> = {
  bad_chunk: `${HEAD}transfer-encoding: chunked\r\n\r\n5\r\n${JS.slice(0, 5)}\r\nZZ\r\n${JS.slice(5)}\r\n0\r\n\r\n`,
  cl_te: `${HEAD}content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n${JS.length.toString(16)}\r\n${JS}\r\n0\r\n\r\n`,
  two_lengths: `${HEAD}content-length: ${JS.length}\r\ncontent-length: 3\r\n\r\n${JS}`,
};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const name = (JSON.parse(req.body.toString('utf8')) as { params: { name: string } }).params.name;
    if (name === 'reset') res.socket?.resetAndDestroy();
    else res.socket?.end(ANSWERS[name] ?? '');
  });
  gateway = await startGateway(agentsYaml({ s: seller.url }, ['log_level: trace']), { logger: log.logger });
});
after(async () => {
  await gateway?.close();
  await seller?.close();
});

describe('a malformed seller response: the exchange line names the parser error', () => {
  for (const [tool, id, code, observedBytes] of [
    ['bad_chunk', 1, 'HPE_INVALID_CHUNK_SIZE', 5],
    ['cl_te', 2, 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 0],
    ['two_lengths', 3, 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 0],
    ['reset', 4, 'ECONNRESET', 0],
  ] as const) {
    test(`${tool}: upstream_reset to the host as before, upstream_error ${code} in the line`, OPTIONS, async () => {
      const res = await rawPost(gateway.agentUrl('s'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' });
      const line = await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === id, `exchange ${id}`);
      assert.equal(res.status, 200);
      const limitBytes = gateway.config.agents.get('s')!.limits.max_response_bytes;
      assert.equal(res.text(), expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason: 'upstream_reset', limitBytes, observedBytes }));
      assert.equal(line.reason, 'upstream_reset');
      assert.equal(line.upstream_error, code);
    });
  }
});
