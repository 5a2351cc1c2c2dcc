/**
 * The pipeline's refusals of a seller's body (src/response/pipeline.ts: a 5xx, an exchange
 * already finished) release it (decode.ts `releaseBody`) instead of destroying it: a body
 * that arrived whole ends with no error made (issue 5: destroying it made undici build a
 * RequestAbortedError with its stack on every such answer); one still arriving is destroyed,
 * as before. Streams fed in memory, no sockets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { parseConfig } from '../../src/config/load.js';
import { resolveCallLimits } from '../../src/config/resolve.js';
import { createExchange, type Exchange } from '../../src/exchange.js';
import { handleUpstreamResponse, type PipelineHooks } from '../../src/response/pipeline.js';
import { TOOL_CALL } from './sse-stage-kit.js';

function exchangeFor(): Exchange {
  const yaml = ['log_level: silent', 'agents:', '  s:', '    url: http://127.0.0.1:9/mcp', ''].join('\n');
  const agent = parseConfig(yaml, { env: {}, source: 'pipeline-release-body' }).agents.get('s')!;
  const limits = resolveCallLimits(agent, TOOL_CALL.toolName, undefined);
  return createExchange({
    agent,
    rpc: TOOL_CALL,
    limits,
    protocolVersion: '2025-06-18',
    normalize: true,
    stream: { startedAt: Date.now(), usedBytes: 0, resumeFrom: undefined },
    mintEventId: () => undefined,
  });
}

/** A seller body like undici's: destroyed without an error before its end, it errors with an abort. */
function body(whole: boolean): { stream: Readable; events: string[] } {
  const stream = new Readable({
    read() {},
    destroy(err, cb) {
      cb(err ?? (this.readableEnded ? null : Object.assign(new Error('Request aborted'), { name: 'RequestAbortedError' })));
    },
  });
  const events: string[] = [];
  stream.on('end', () => events.push('end'));
  stream.on('close', () => events.push('close'));
  stream.on('error', (err) => events.push(`error ${err.name}`));
  stream.push(Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"down"}}'));
  if (whole) stream.push(null);
  return { stream, events };
}

function reply(): { reply: FastifyReply; sent: unknown[] } {
  const sent: unknown[] = [];
  const r = {
    raw: { headersSent: false, writableEnded: false, destroyed: false },
    sent: false,
    getHeaders: () => ({}),
    removeHeader() {},
    code: () => r,
    header: () => r,
    headers: () => r,
    send: (b: unknown) => void sent.push(b),
  };
  return { reply: r as unknown as FastifyReply, sent };
}

const hooks: PipelineHooks = { onSseStart() {}, onSseEnd() {}, onSseEventDropped() {}, onSseEventIdNotTokenized() {}, onSeller202Answer() {}, wantsResponseMessage: false, onResponseMessage() {} };
const log = { warn() {}, debug() {}, info() {}, error() {} } as unknown as FastifyBaseLogger;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const headers = { 'content-type': 'application/json' };

test('a 5xx body that arrived whole ends without an error; the host gets upstream_status', async () => {
  const { stream, events } = body(true);
  const { reply: rep, sent } = reply();
  const exchange = exchangeFor();
  await handleUpstreamResponse(exchange, rep, { statusCode: 503, headers, stream } as never, log, hooks);
  await tick();
  assert.deepEqual(events, ['end', 'close']);
  assert.equal(exchange.reason, 'upstream_status');
  assert.equal(sent.length, 1);
});

test('a 5xx body still arriving is destroyed (its connection is not reused), as before', async () => {
  const { stream, events } = body(false);
  const { reply: rep } = reply();
  await handleUpstreamResponse(exchangeFor(), rep, { statusCode: 503, headers, stream } as never, log, hooks);
  await tick();
  assert.equal(stream.destroyed, true);
  assert.deepEqual(events, ['error RequestAbortedError', 'close']);
});

test('an exchange already finished: a whole body ends without an error, nothing is answered', async () => {
  const { stream, events } = body(true);
  const { reply: rep, sent } = reply();
  const exchange = exchangeFor();
  exchange.finished = true;
  await handleUpstreamResponse(exchange, rep, { statusCode: 200, headers, stream } as never, log, hooks);
  await tick();
  assert.deepEqual(events, ['end', 'close']);
  assert.equal(sent.length, 0);
});
