/**
 * The HTTP status of a local error that answers no request (id null: a POSTed notification, the
 * standalone GET stream) is its reason's own, `REASONS[reason].idNullStatus` (errors/codes.ts;
 * docs/errors.md's `HTTP status (id null)` column): 504 where time ran out, 502 otherwise. Before,
 * errors/local-reply.ts picked 504 from a chain of reason names kept apart from the catalog (a
 * review Nit); this pins every reason's status as a host gets it, the four that are 504 by name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply } from 'fastify';
import { parseConfig } from '../../src/config/load.js';
import { resolveCallLimits } from '../../src/config/resolve.js';
import { createExchange, type RpcPeek } from '../../src/exchange.js';
import { REASONS, type AdcpErrorReason } from '../../src/errors/codes.js';
import { answerWithLocalError } from '../../src/errors/local-reply.js';

const NOTIFICATION: RpcPeek = { kind: 'notification', id: null, idText: undefined, method: 'notifications/progress', toolName: undefined, taskId: undefined };
const agent = parseConfig(['log_level: silent', 'agents:', '  s:', '    url: http://127.0.0.1:9/mcp', ''].join('\n'), { env: {}, source: 'local-reply-id-null-status' }).agents.get('s')!;

/** The status and body a POSTed notification's host gets for a local error of `reason`. */
function answered(reason: AdcpErrorReason): { status: number; body: { id: unknown } } {
  const exchange = createExchange({
    agent,
    rpc: NOTIFICATION,
    limits: resolveCallLimits(agent, undefined, undefined),
    protocolVersion: '2025-06-18',
    normalize: true,
    stream: { startedAt: Date.now(), usedBytes: 0, resumeFrom: undefined },
    mintEventId: () => undefined,
  });
  exchange.abortUpstream = () => {};
  let status = 0;
  let body = '';
  const reply = {
    raw: { headersSent: false },
    sent: false,
    getHeaders: () => ({}),
    removeHeader() {},
    code: (s: number) => ((status = s), reply),
    header: () => reply,
    headers: () => reply,
    send: (b: string) => void (body = b),
  };
  answerWithLocalError(exchange, reply as unknown as FastifyReply, { reason, limitBytes: 1024, observedBytes: 0, limitMs: 1000, observedMs: 1000 });
  return { status, body: JSON.parse(body) as { id: unknown } };
}

test('a local error answering no request goes out with its reason\'s idNullStatus: 504 when time ran out, else 502', () => {
  const timeouts = new Set<string>(['deadline_exceeded', 'sse_deadline', 'pipeline_wait', 'cancel_wait']);
  for (const reason of Object.keys(REASONS) as AdcpErrorReason[]) {
    const { status, body } = answered(reason);
    assert.equal(status, REASONS[reason].idNullStatus, reason);
    assert.equal(status, timeouts.has(reason) ? 504 : 502, reason);
    assert.equal(body.id, null, reason);
  }
});
