/**
 * Regression (a new user's trial 50, finding 1): an agent whose seller cannot be reached, a
 * typo'd host (`http://nonexistent-host.invalid/mcp`: DNS ENOTFOUND) or a seller that is
 * down (a port nothing listens on: ECONNREFUSED), gave the host `upstream_unreachable` and
 * the log only the exchange line with that reason, no warning even at trace: the operator
 * could not tell a typo from an outage.
 *
 * Input: a real gateway logging into a capture at trace; agent `typo` at a `.invalid` host
 * (RFC 6761: never resolves), agent `down` at a closed 127.0.0.1 port; one tools/call each.
 * Expected: the host's answer exactly as before (the minted `upstream_unreachable` message);
 * the exchange line's `upstream_error` names the cause as Node names it: `ECONNREFUSED` for
 * `down`, `ENOTFOUND` for `typo` (on a machine without a resolver, another DNS-failure code:
 * `EAI_AGAIN`, `EAI_FAIL`, `ENODATA`). A call the seller answers has no such field.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
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

before(async () => {
  seller = await startRawSeller((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(3, { content: [{ type: 'text', text: 'ok' }] }));
  });
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  gateway = await startGateway(
    agentsYaml({ typo: 'http://nonexistent-host.invalid/mcp', down: `http://127.0.0.1:${closedPort}/mcp`, up: seller.url }, ['log_level: trace']),
    { logger: log.logger },
  );
});
after(async () => {
  await gateway?.close();
  await seller?.close();
});

/** Calls `agent` with `id`; returns the host's body and the exchange line. */
async function call(agent: string, id: number) {
  const res = await rawPost(gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
  const line = await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === id, `exchange ${id}`);
  return { res, line };
}

/** The host's answer as documented (docs/errors.md, `upstream_unreachable`), the same before and after. */
const UNREACHABLE = (agent: string, id: number) =>
  expectedErrorJson({ id, method: 'tools/call', toolName: 'get_products', reason: 'upstream_unreachable', limitBytes: gateway.config.agents.get(agent)!.limits.max_response_bytes, observedBytes: 0 });

describe('an unreachable seller: the exchange line names the transport failure', () => {
  test('a seller that is down: upstream_error ECONNREFUSED, the host answer unchanged', OPTIONS, async () => {
    const { res, line } = await call('down', 1);
    assert.equal(res.status, 200);
    assert.equal(res.text(), UNREACHABLE('down', 1));
    assert.equal(line.reason, 'upstream_unreachable');
    assert.equal(line.upstream_error, 'ECONNREFUSED');
  });

  test('a host name that does not resolve: upstream_error ENOTFOUND (or another DNS-failure code), the host answer unchanged', OPTIONS, async () => {
    const { res, line } = await call('typo', 2);
    assert.equal(res.status, 200);
    assert.equal(res.text(), UNREACHABLE('typo', 2));
    assert.equal(line.reason, 'upstream_unreachable');
    assert.ok(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENODATA'].includes(line.upstream_error as string), `upstream_error ${String(line.upstream_error)}`);
    // This machine resolves: a `.invalid` name is ENOTFOUND (NXDOMAIN).
    assert.equal(line.upstream_error, 'ENOTFOUND');
  });

  test('a call the seller answers: no upstream_error', OPTIONS, async () => {
    const { res, line } = await call('up', 3);
    assert.equal(res.status, 200);
    assert.equal(line.outcome, 'ok');
    assert.equal('upstream_error' in line, false);
  });
});
