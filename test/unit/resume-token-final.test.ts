/**
 * The token of the event that carried a request's response carries `final` (payload key `f`,
 * only ever `true`), so a Last-Event-ID resume from it ends at once without contacting the
 * seller (src/resume/token.ts; reported failure:
 * test/regressions/sse-resume-from-final-response-token.test.ts). Tokens without it (every
 * other event's, every token minted before the key existed) verify as before; a payload with
 * `f` anything but `true` is not one of ours.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResumeMintError, createResumeCodec, type ResumeState } from '../../src/resume/token.js';
import { legacyToken, signedToken, withSeller } from '../helpers/resume-codec.js';

const SECRET = 'resume-token-final-secret-0123456789abcdef';
const NOW = 1_000_000;
const codec = withSeller(createResumeCodec({ secret: SECRET, ttlMs: 60_000, now: () => NOW }));
const base = { upstreamId: 'e2', agent: 'a', rpcId: 7, method: 'tools/call', toolName: 'get_products', usedBytes: 10, limitBytes: 100, protocolVersion: '2025-11-25', streamStartedAt: 999_000 };

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A token signed as the codec signs (its key, the test seller url) around any payload (as an older or newer replica would mint it). */
function signed(payload: Record<string, unknown>): string {
  return signedToken(SECRET, payload);
}

test('the final event: `f: true` in the payload (after `r`, before the counts), final after verify', () => {
  const token = codec.mint({ ...base, final: true });
  assert.deepEqual(Object.keys(payloadOf(token)), ['u', 'a', 'i', 'm', 't', 'f', 'b', 'l', 'v', 's', 'n']);
  assert.equal(payloadOf(token).f, true);
  const v = codec.verify(token, 'a');
  assert.ok(v.ok);
  assert.equal(v.state.final, true);
  assert.equal(v.state.usedBytes, 10);
});

test('other events: no `f` key, no final (the payload as before)', () => {
  for (const extra of [{}, { final: false }]) {
    const token = codec.mint({ ...base, ...extra });
    assert.deepEqual(Object.keys(payloadOf(token)), ['u', 'a', 'i', 'm', 't', 'b', 'l', 'v', 's', 'n']);
    const v = codec.verify(token, 'a');
    assert.ok(v.ok);
    assert.equal('final' in v.state, false);
  }
});

test("an older replica's token (no `f`) verifies; `f` other than true is invalid", () => {
  const old = { u: 'e2', a: 'a', i: 7, m: 'tools/call', b: 10, l: 100, v: '2025-11-25', s: 999_000, n: NOW };
  // Signed as today, and as a replica before the seller url was covered signed it.
  for (const sign of [signed, (p: Record<string, unknown>) => legacyToken(SECRET, p)]) {
    const v = codec.verify(sign(old), 'a');
    assert.ok(v.ok);
    assert.equal(v.state.final, undefined);
    for (const f of [false, null, 1, 'true']) {
      const r = codec.verify(sign({ ...old, f }), 'a');
      assert.deepEqual(r.ok ? 'verified' : r.reason, 'resume_token_invalid', `f: ${JSON.stringify(f)}`);
    }
  }
});

test('mint refuses a non-boolean final', () => {
  assert.throws(() => codec.mint({ ...base, final: 1 } as unknown as Omit<ResumeState, 'issuedAt'>), (e: unknown) => e instanceof ResumeMintError && e.code === 'resume_state_invalid' && /final/.test(e.message));
});

test('a batch\'s token may carry the requests still awaited (`w`, after `f`\'s place, before the counts); absent, none; anything but an array of strings is invalid', () => {
  const batch = { ...base, rpcId: null, method: '', toolName: undefined };
  const token = codec.mint({ ...batch, awaited: ['n2e0', 'sa', 'z'] });
  assert.deepEqual(Object.keys(payloadOf(token)), ['u', 'a', 'm', 'w', 'b', 'l', 'v', 's', 'n']);
  const v = codec.verify(token, 'a');
  assert.ok(v.ok);
  assert.deepEqual(v.state.awaited, ['n2e0', 'sa', 'z']);
  assert.ok(Object.isFrozen(v.state.awaited));
  const empty = codec.verify(codec.mint({ ...batch, awaited: [] }), 'a');
  assert.ok(empty.ok);
  assert.deepEqual(empty.state.awaited, []);
  const without = codec.verify(codec.mint(batch), 'a');
  assert.ok(without.ok && !('awaited' in without.state));
  const p = payloadOf(token);
  for (const w of [null, 'n2e0', [1], [null], {}]) assert.deepEqual(codec.verify(signed({ ...p, w }), 'a').ok, false, JSON.stringify(w));
  assert.throws(() => codec.mint({ ...batch, awaited: [1] } as unknown as Omit<ResumeState, 'issuedAt'>), (e: unknown) => e instanceof ResumeMintError && /awaited/.test(e.message));
});
