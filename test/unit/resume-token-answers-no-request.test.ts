/**
 * Resume tokens of a stream answering a POSTed notification or JSON-RPC response carry
 * `answersNoRequest` (payload key `r`, only ever `true`), so a Last-Event-ID resume keeps the
 * stream's cumulative count and its id-null errors (src/resume/token.ts; reported failure:
 * test/regressions/sse-notification-answer-unbounded.test.ts). Tokens without it (a request's
 * stream, the standalone GET stream, every token minted before the key existed) are unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createResumeCodec } from '../../src/resume/token.js';
import { withSeller } from '../helpers/resume-codec.js';

const codec = withSeller(createResumeCodec({ secret: 'resume-token-answers-no-request-0123456789', ttlMs: 60_000, now: () => 1_000_000 }));
const base = { upstreamId: 'e1', agent: 'a', toolName: undefined, usedBytes: 10, limitBytes: 100, protocolVersion: '2025-11-25', streamStartedAt: 999_000 };

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

test('a notification stream: `r: true` in the payload, answersNoRequest after verify', () => {
  for (const [rpcId, method] of [
    [null, 'notifications/initialized'],
    [99, undefined],
  ] as const) {
    const token = codec.mint({ ...base, rpcId, method, answersNoRequest: true });
    assert.equal(payloadOf(token).r, true);
    const v = codec.verify(token, 'a');
    assert.ok(v.ok);
    assert.equal(v.state.answersNoRequest, true);
    assert.equal(v.state.rpcId, rpcId);
    assert.equal(v.state.method, method);
    assert.equal(v.state.usedBytes, 10);
  }
});

test('other streams: no `r` key, no answersNoRequest (the payload as before)', () => {
  for (const extra of [{}, { answersNoRequest: false }]) {
    const token = codec.mint({ ...base, rpcId: 1, method: 'tools/call', ...extra });
    assert.deepEqual(Object.keys(payloadOf(token)), ['u', 'a', 'i', 'm', 'b', 'l', 'v', 's', 'n']);
    const v = codec.verify(token, 'a');
    assert.ok(v.ok);
    assert.equal('answersNoRequest' in v.state, false);
  }
});
