/**
 * A review of the cancellation path: a host's `notifications/cancelled` was scanned twice more
 * after the request peek (request/peek.ts), which had scanned its `params` already. To find
 * `params.requestId`, mcp/cancelled-id.ts cancelledRequestIdOf scanned the whole body (for
 * `params`) and then `params` (for `requestId`): a 4 MB cancellation cost ~15-45 ms of the event
 * loop on top of the peek, per cancellation.
 *
 * Now the peek, which scans the `params` of a `notifications/cancelled` for its names
 * (repeated-request-names.ts), leaves the `requestId` it finds on its result
 * (RpcPeek.cancelledRequestId; at first in a WeakMap keyed by the body Buffer: a re-read of
 * 7767818, L2), and cancelledRequestIdOf given that peek answers from it with no scan;
 * a body the peek did not read by its scan (a small body it parsed) is scanned as before. The
 * answer is the same either way.
 *
 * Asserted without timing: cancelled-id.ts cancelledIdScanCount (the scans cancelledRequestIdOf
 * makes), directly after a peek and through the gateway (a padded cancellation still cancels
 * the held call it names: the call ends with no answer).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelledIdScanCount, cancelledRequestIdOf } from '../../src/mcp/cancelled-id.js';
import { peekJsonRpc } from '../../src/request/peek.js';
import type { RawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { sessionHost, startCutAndResumeSeller, type OpenCall } from '../helpers/cut-and-resume.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** A reason long enough that the peek reads the body by its scan (request/peek.ts PEEK_SCAN_MIN_BYTES). */
const PAD = 'x'.repeat(2000);
const cancel = (params: string, paramsKey = '"params"'): string => `{"jsonrpc":"2.0","method":"notifications/cancelled",${paramsKey}:${params}}`;

const BODIES: Record<string, string> = {
  number: cancel(`{"requestId":7,"reason":"${PAD}"}`),
  string: cancel(`{"reason":"${PAD}","requestId":"a\\u0062"}`),
  escaped_key: cancel(`{"\\u0072equestId":1.0,"reason":"${PAD}"}`),
  escaped_params_key: cancel(`{"requestId":-3,"reason":"${PAD}"}`, '"\\u0070arams"'),
  no_request_id: cancel(`{"reason":"${PAD}"}`),
  null_request_id: cancel(`{"requestId":null,"reason":"${PAD}"}`),
  huge_number: cancel(`{"requestId":1e${'9'.repeat(4_000_000)},"reason":"user"}`),
};

/** A written id as its text, for comparing answers read from different Buffers. */
const textOf = (w: ReturnType<typeof cancelledRequestIdOf>): string | undefined => w?.bytes.toString('latin1', w.range[0], w.range[1]);

test('after the peek read a cancellation, its requestId is found with no scan, the same as scanned', () => {
  for (const [name, text] of Object.entries(BODIES)) {
    const scanned = textOf(cancelledRequestIdOf(Buffer.from(text, 'latin1')));
    const body = Buffer.from(text, 'latin1');
    const peek = peekJsonRpc(body);
    assert.ok(peek.ok && peek.peek.method === 'notifications/cancelled', name);
    const before = cancelledIdScanCount();
    assert.equal(textOf(cancelledRequestIdOf(body, peek.peek)), scanned, name);
    assert.equal(cancelledIdScanCount() - before, 0, `${name}: scans after the peek`);
  }
  assert.deepEqual(
    Object.values(BODIES).slice(0, 6).map((text) => textOf(cancelledRequestIdOf(Buffer.from(text, 'latin1')))),
    ['7', '"a\\u0062"', '1.0', '-3', undefined, undefined],
  );
});

test('a body the peek did not scan (a small one it parsed) is scanned: body and params', () => {
  const body = Buffer.from(cancel('{"requestId":5}'));
  const peek = peekJsonRpc(body);
  assert.ok(peek.ok);
  assert.equal(peek.peek.cancelledRequestId, undefined);
  const before = cancelledIdScanCount();
  assert.equal(textOf(cancelledRequestIdOf(body, peek.peek)), '5');
  assert.equal(cancelledIdScanCount() - before, 2);
});

const SESSION = 'session-cancel-scanned-once';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };
const stack = useSellerAndGateway<RawSeller, RunningGateway>(
  () => startCutAndResumeSeller(() => 'until-cancelled', (_req, res) => res.writeHead(405).end()),
  (seller) => startGateway(agentsYaml({ c: seller.url }, ['log_level: silent'])),
);
const host = sessionHost((agent) => stack.gateway.agentUrl(agent), HEADERS);

test('through the gateway: a padded cancellation of a held call cancels it, with no scan after the peek', { timeout: TEST_TIMEOUT_MS }, async () => {
  const call: OpenCall = await withTimeout(host.openCall('c', 1), undefined, 'call 1');
  const before = cancelledIdScanCount();
  const posted = await withTimeout(rawPost(stack.gateway.agentUrl('c'), cancel(`{"requestId":1,"reason":"${PAD}"}`), HEADERS), undefined, 'the cancellation');
  assert.equal(posted.status, 202);
  assert.equal(cancelledIdScanCount() - before, 0);
  // Marked cancelled: the call ends with no answer (MCP: none for a cancelled request).
  assert.equal(await withTimeout(call.rest, undefined, "call 1's end"), '');
});
