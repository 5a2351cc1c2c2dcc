/**
 * Regression (a docs review of the day's changes, finding 8): a host's `X_Api_Key` reached the
 * seller next to the agent's configured `x-api-key`. A configured header replaces the host's
 * field of that name (request/headers.ts applyRequestHeaderPolicy: the host's `X-Api-Key` is
 * never sent), but the host's underscore twins were removed only for the headers the gateway
 * never forwards, and a seller behind CGI, WSGI, PHP or Rack reads `_` and `-` in a header
 * name alike (RFC 3875 §4.1.18: both are `HTTP_X_API_KEY`): the host's value could stand in
 * for, or beside, the buyer's credential the operator configured.
 *
 * Now a host's header that is one name with a configured one when `_` is read as `-` is
 * withheld as the host's field of the configured name itself is: either way round (a configured
 * `x_api_key` withholds the host's `X-Api-Key` too).
 *
 * Input: a raw seller recording each request's header lines as received; agent `a` configured
 * with `x-api-key: configured-a`, agent `b` with `x_api_key: configured-b`; a raw host POSTing a
 * `tools/call` to each with `X_Api_Key` and `X-Api-Key` of its own, and `X_Trace_Id` (no
 * configured header's twin).
 * Expected: the exact header lines each seller request had (its own `Host`, the gateway's
 * `Via` pseudonymised): the configured header alone, `x_trace_id` kept.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { useHeaderLinesSeller } from '../helpers/seller-header-lines.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

describe("a host's underscore twin of a configured header", { timeout: TEST_TIMEOUT_MS }, () => {
  const wire = useHeaderLinesSeller((url) =>
    agentsYaml({ a: { url, headers: '{ x-api-key: configured-a }' }, b: { url, headers: '{ x_api_key: configured-b }' } }, ['log_level: silent']),
  );

  /** POSTs a tools/call to `agent` with the host's own key headers; the lines the seller got, the Via pseudonym replaced. */
  async function sellerLines(agent: string): Promise<string[]> {
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}';
    const head =
      `POST /agents/${agent}/mcp HTTP/1.1\r\nHost: 127.0.0.1:${wire.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `MCP-Protocol-Version: 2025-06-18\r\nX_Api_Key: host-underscore\r\nX-Api-Key: host-dash\r\nX_Trace_Id: t-1\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const before = wire.seen.length;
    const answer = await writeAndRead(wire.port, head, [], 5_000);
    assert.match(answer.text, /^HTTP\/1\.1 200 /);
    assert.equal(wire.seen.length, before + 1);
    return wire.lastSeen();
  }

  test("configured x-api-key: the host's X_Api_Key is withheld, as its X-Api-Key is (was: sent beside it)", async () => {
    assert.deepEqual(await sellerLines('a'), [
      `host: 127.0.0.1:${wire.sellerPort}`,
      'connection: keep-alive',
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      'mcp-protocol-version: 2025-06-18',
      'x-api-key: configured-a',
      'x_trace_id: t-1',
      'accept-encoding: gzip, deflate, br',
      'via: 1.1 adcp-gw-<pseudonym>',
      'content-length: 83',
    ]);
  });

  test("configured x_api_key: the host's X-Api-Key is withheld, as its X_Api_Key is (was: sent beside it)", async () => {
    assert.deepEqual(await sellerLines('b'), [
      `host: 127.0.0.1:${wire.sellerPort}`,
      'connection: keep-alive',
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      'mcp-protocol-version: 2025-06-18',
      'x_api_key: configured-b',
      'x_trace_id: t-1',
      'accept-encoding: gzip, deflate, br',
      'via: 1.1 adcp-gw-<pseudonym>',
      'content-length: 83',
    ]);
  });
});
