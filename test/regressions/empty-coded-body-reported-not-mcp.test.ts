/**
 * Reported failure (a hostile trial 26, L4 b): a seller answering a `tools/call` with an empty
 * body labelled `Content-Encoding: gzip` (`Content-Length: 0`, or chunked with no data) got
 * `upstream_not_mcp` (959 bytes to the host), not `upstream_encoding_invalid`. An empty body
 * is no gzip data (a gzip stream is at least its 10-byte header and 8-byte trailer; Node's
 * gunzip of no bytes fails "unexpected end of file"), nor deflate (a zlib stream or a final
 * block) nor brotli data, so the seller's coding is what is broken, as for any body "not in
 * that coding" (docs/errors.md).
 *
 * Now: an empty body under a coding is `upstream_encoding_invalid` where the gateway needs a
 * body, the 2xx answer to a request (204 and 205 aside: no content by definition, RFC 9110
 * §15.3.5, §15.3.6; and 202, an empty 202 being `upstream_not_mcp` whatever its coding: hostile
 * trial 59, F1), as a JSON body and as an SSE stream, and so is an inner layer that gets no
 * byte (`gzip, gzip` whose outer member holds nothing). Elsewhere an empty body stays empty
 * under any coding (decode.ts): the 202 answer to a notification with `Content-Encoding: gzip`
 * (common) passes as before, and a 204 answering a request stays `upstream_not_mcp`.
 *
 * Input: a raw seller on 127.0.0.1 answers each case, chosen by tool name, behind the real
 * gateway; raw host POSTs. Expectation: the host's exact bytes (the gateway's error for the
 * call's id, or the 202 with no body), and the exchange line's outcome and reason.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { expectedErrorFrame, expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

interface Case {
  readonly status: number;
  readonly type: string;
  readonly coding: string;
  /** The body; chunked when `chunked`, else with its Content-Length. */
  readonly body: Buffer;
  readonly chunked?: boolean;
  /** The error the call gets. */
  readonly reason: 'upstream_encoding_invalid' | 'upstream_not_mcp';
}

const EMPTY = Buffer.alloc(0);
const CASES: Record<string, Case> = {
  json_gzip_length_0: { status: 200, type: 'application/json', coding: 'gzip', body: EMPTY, reason: 'upstream_encoding_invalid' },
  json_gzip_chunked: { status: 200, type: 'application/json', coding: 'gzip', body: EMPTY, chunked: true, reason: 'upstream_encoding_invalid' },
  json_deflate_length_0: { status: 200, type: 'application/json', coding: 'deflate', body: EMPTY, reason: 'upstream_encoding_invalid' },
  json_br_length_0: { status: 200, type: 'application/json', coding: 'br', body: EMPTY, reason: 'upstream_encoding_invalid' },
  // An empty 202 answering a request is an empty 202, whatever its coding: nothing to decode
  // (hostile trial 59, F1: test/regressions/seller-empty-202-sse-answer-sent-as-200.test.ts).
  json_x_gzip_202: { status: 202, type: 'application/json', coding: 'x-gzip', body: EMPTY, reason: 'upstream_not_mcp' },
  no_type_gzip_length_0: { status: 200, type: '', coding: 'gzip', body: EMPTY, reason: 'upstream_encoding_invalid' },
  // The outer member holds no byte: the inner gzip layer gets none.
  json_gzip_gzip_inner_empty: { status: 200, type: 'application/json', coding: 'gzip, gzip', body: gzipSync(EMPTY), reason: 'upstream_encoding_invalid' },
  sse_gzip_chunked: { status: 200, type: 'text/event-stream', coding: 'gzip', body: EMPTY, chunked: true, reason: 'upstream_encoding_invalid' },
  sse_br_length_0: { status: 200, type: 'text/event-stream', coding: 'br', body: EMPTY, reason: 'upstream_encoding_invalid' },
  // Controls: no content by definition; no coding at all.
  json_gzip_204: { status: 204, type: 'application/json', coding: 'gzip', body: EMPTY, reason: 'upstream_not_mcp' },
  json_identity_length_0: { status: 200, type: 'application/json', coding: 'identity', body: EMPTY, reason: 'upstream_not_mcp' },
};

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; params?: { name?: string } };
      // A notification: 202, an empty body labelled gzip (the control).
      if (msg.id === undefined) return void res.writeHead(202, { 'content-encoding': 'gzip', 'content-length': '0' }).end();
      const c = CASES[msg.params!.name!]!;
      const headers: Record<string, string> = { 'content-encoding': c.coding };
      if (c.type !== '') headers['content-type'] = c.type;
      if (!c.chunked && c.status !== 204) headers['content-length'] = String(c.body.length);
      res.writeHead(c.status, headers);
      if (c.chunked) res.write(EMPTY);
      res.end(c.body);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

describe('an empty body under a Content-Encoding answering a request is upstream_encoding_invalid', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 100;
  for (const [tool, c] of Object.entries(CASES)) {
    test(`${tool}: ${c.reason}`, async () => {
      const rpcId = ++id;
      const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(rpcId, tool), HEADERS));
      const expected = { id: rpcId, method: 'tools/call', toolName: tool, reason: c.reason, ...(c.reason === 'upstream_not_mcp' ? { limitBytes: 4194304, observedBytes: 0, upstreamStatus: c.status } : {}) };
      const sse = c.type === 'text/event-stream';
      assert.deepEqual([r.status, r.headers.get('content-encoding')], [200, null]);
      assert.equal(r.text(), sse ? expectedErrorFrame(expected) : expectedErrorJson(expected));
      const line = await stack.gateway.exchangeLine('s', rpcId);
      assert.deepEqual([line.outcome, line.reason, line.bytes_from_seller], ['local_error', c.reason, c.body.length]);
    });
  }

  test('control: a notification answered 202 with an empty gzip body passes, 202 and no body', async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', method: 'notifications/initialized' }, HEADERS));
    assert.deepEqual([r.status, r.bytes], [202, 0]);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === 'notifications/initialized');
    assert.deepEqual([line.outcome, line.reason], ['ok', null]);
  });
});
