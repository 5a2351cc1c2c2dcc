/**
 * Regression (new-user trial, 2026-12-02): a seller that sends its headers and part of a
 * chunked JSON body, then stalls, was logged with `bytes_from_seller: 0` and
 * `bytes_decoded: 0` once the response deadline answered the host: the body's counts were
 * recorded only when its read ended, and that read was still waiting when the exchange line
 * was written. README: the log counts "every wire byte read ... only what was read when the
 * gateway stopped early". Now the handler takes the counts from the exchange's body source
 * when the exchange ends.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { createLogger } from '../../src/observability/logger.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';

/** The part of the body the seller sends before it stalls: 60 bytes. */
const PART = '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"a":[';

let seller: RawSeller;
let gw: RunningGateway;
const lines: string[] = [];
const held: ServerResponse[] = [];

before(async () => {
  assert.equal(Buffer.byteLength(PART), 60);
  seller = await startRawSeller((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }); // no Content-Length: chunked
    res.write(PART);
    held.push(res); // never ended
  });
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  // 1500 ms: at 300 the deadline once fired before the seller's first 60 bytes were read, on a
  // loaded 2-core machine (a full-suite run at load average ~10): 0 read.
  const yaml = ['agents:', '  s:', `    url: ${seller.url}`, '    response_deadline_ms: 1500', ''].join('\n');
  gw = await startGateway(yaml, { logger: createLogger('info', { destination: sink }) });
});
after(async () => {
  for (const res of held) res.destroy();
  await gw.close();
  await seller.close();
});

test('stalled-body-counts: a body cut short by the deadline is logged with the bytes read before it stalled', async () => {
  let ended: () => void = () => {};
  const exchangeEnded = new Promise<void>((resolve) => {
    ended = resolve;
  });
  gw.app.gateway.onExchangeEnd(() => ended());
  const res = await rawPost(gw.agentUrl('s'), toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(res.status, 200);
  const body = res.json() as { id: number; result: { isError: boolean; structuredContent: { adcp_error: { details: { reason: string } } } } };
  assert.equal(body.id, 1);
  assert.equal(body.result.isError, true);
  assert.equal(body.result.structuredContent.adcp_error.details.reason, 'deadline_exceeded');
  await exchangeEnded;
  const exchange = lines
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === 'exchange');
  assert.ok(exchange, lines.join(''));
  assert.equal(exchange.reason, 'deadline_exceeded');
  assert.equal(exchange.bytes_from_seller, 60);
  assert.equal(exchange.bytes_decoded, 60);
});
