/**
 * A local error answer aborts the upstream request with the shared GATEWAY_FINISHED reason
 * (src/errors/abort.ts), not a new error per answer (issue 5: constructing one per exchange
 * was ~3 µs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply } from 'fastify';
import { parseConfig } from '../../src/config/load.js';
import { resolveCallLimits } from '../../src/config/resolve.js';
import { createExchange } from '../../src/exchange.js';
import { GATEWAY_FINISHED } from '../../src/errors/abort.js';
import { answerWithLocalError } from '../../src/errors/local-reply.js';
import { TOOL_CALL } from './sse-stage-kit.js';

test('answerWithLocalError aborts the upstream with GATEWAY_FINISHED itself', () => {
  const yaml = ['log_level: silent', 'agents:', '  s:', '    url: http://127.0.0.1:9/mcp', ''].join('\n');
  const agent = parseConfig(yaml, { env: {}, source: 'local-reply-shared-finished' }).agents.get('s')!;
  const exchange = createExchange({
    agent,
    rpc: TOOL_CALL,
    limits: resolveCallLimits(agent, TOOL_CALL.toolName, undefined),
    protocolVersion: '2025-06-18',
    normalize: true,
    stream: { startedAt: Date.now(), usedBytes: 0, resumeFrom: undefined },
    mintEventId: () => undefined,
  });
  const reasons: unknown[] = [];
  exchange.abortUpstream = (reason) => void reasons.push(reason);
  const sent: unknown[] = [];
  const reply = { raw: { headersSent: false }, sent: false, getHeaders: () => ({}), removeHeader() {}, code: () => reply, header: () => reply, headers: () => reply, send: (b: unknown) => void sent.push(b) };
  answerWithLocalError(exchange, reply as unknown as FastifyReply, { reason: 'upstream_status', limitBytes: 1024, observedBytes: 0, upstreamStatus: 503 });
  assert.equal(reasons.length, 1);
  assert.equal(reasons[0], GATEWAY_FINISHED);
  assert.equal(sent.length, 1);
});
