/**
 * Regression (issue 5, new-user trial): the exchange line of a host that went away before
 * any answer said `"status":200` (Node's default `statusCode` of a response never sent).
 * Now `status` is null for such an exchange, in the log line and for `onExchangeEnd`
 * listeners, while an answered exchange still reports the status it got.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { createLogger } from '../../src/observability/logger.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';

let seller: RawSeller;
let gw: RunningGateway;
const lines: string[] = [];
const held: ServerResponse[] = [];
let heldArrived: () => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    if (id === 2) {
      // Never answers: the host gives up first.
      held.push(res);
      heldArrived();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(toolResponse(id, { content: [{ type: 'text', text: 'ok' }] }));
  });
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  gw = await startGateway(['agents:', '  s:', `    url: ${seller.url}`, ''].join('\n'), { logger: createLogger('info', { destination: sink }) });
});
after(async () => {
  for (const res of held) res.destroy();
  await gw.close();
  await seller.close();
});

function exchangeLines(): Array<Record<string, unknown>> {
  return lines
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'exchange');
}

test('host-aborted-log-status: a host that left before any answer is logged with status null, an answered one with its status', async () => {
  const statuses: Array<number | null> = [];
  let ended: () => void = () => {};
  const bothEnded = new Promise<void>((resolve) => {
    ended = resolve;
  });
  gw.app.gateway.onExchangeEnd((_exchange, status) => {
    statuses.push(status);
    if (statuses.length === 2) ended();
  });

  const answered = await rawPost(gw.agentUrl('s'), toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(answered.status, 200);

  // The second request reaches the seller, then the host disconnects.
  const arrived = new Promise<void>((resolve) => {
    heldArrived = resolve;
  });
  const body = JSON.stringify(toolCall(2, 'get_products'));
  const req = http.request(gw.agentUrl('s'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'content-length': Buffer.byteLength(body) },
  });
  req.on('error', () => {});
  req.end(body);
  await withTimeout(arrived, 5_000, 'request at the seller');
  req.destroy();
  await withTimeout(bothEnded, 5_000, 'both exchanges ended');

  assert.deepEqual(statuses, [200, null]);
  const logged = exchangeLines();
  assert.equal(logged.length, 2);
  assert.deepEqual(
    logged.map((l) => [l.rpc_id, l.status, l.outcome]),
    [
      [1, 200, 'ok'],
      [2, null, 'host_aborted'],
    ],
  );
});
