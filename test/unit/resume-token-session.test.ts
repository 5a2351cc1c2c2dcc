/**
 * A token minted for a request with an `Mcp-Session-Id` carries a keyed hash of it (payload
 * key `h`, 22 base64url characters, after `a`), and verifies only with the same session ID
 * (src/resume/token.ts; hostile trial 54, F6:
 * test/regressions/resume-token-other-session-forwarded.test.ts). A token without `h` (no
 * session, or minted by an older process with the same secret) verifies with any session or
 * none; an `h` of another shape is no token of ours.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESUME_NO_SESSION_MESSAGE, RESUME_OTHER_SESSION_MESSAGE, createResumeCodec } from '../../src/resume/token.js';
import { TEST_SELLER, signedToken } from '../helpers/resume-codec.js';

const SECRET = 'resume-token-session-secret-0123456789abcdef';
const NOW = 1_000_000;
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000, now: () => NOW });
const base = { upstreamId: 'e2', agent: 'a', rpcId: 7, method: 'tools/call', toolName: 'get_products', usedBytes: 10, limitBytes: 100, protocolVersion: '2025-11-25', streamStartedAt: 999_000 };

const payloadOf = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

test('minted with a session: `h` after `a`, 22 base64url characters, not the session ID', () => {
  const token = codec.mint(base, TEST_SELLER, 'sess-A');
  const payload = payloadOf(token);
  assert.deepEqual(Object.keys(payload), ['u', 'a', 'h', 'i', 'm', 't', 'b', 'l', 'v', 's', 'n']);
  assert.match(String(payload.h), /^[A-Za-z0-9_-]{22}$/);
  assert.ok(!token.includes('sess-A') && !Buffer.from(token.split('.')[1]!, 'base64url').toString().includes('sess-A'));
  // The same session, the same hash; another, another.
  assert.equal(payloadOf(codec.mint(base, TEST_SELLER, 'sess-A')).h, payload.h);
  assert.notEqual(payloadOf(codec.mint(base, TEST_SELLER, 'sess-B')).h, payload.h);
});

test('verifies with the same session only; another or none is resume_token_invalid with its own message', () => {
  const token = codec.mint(base, TEST_SELLER, 'sess-A');
  const same = codec.verify(token, 'a', TEST_SELLER, [], 'sess-A');
  assert.ok(same.ok);
  assert.equal(same.state.usedBytes, 10);
  assert.deepEqual(codec.verify(token, 'a', TEST_SELLER, [], 'sess-B'), { ok: false, reason: 'resume_token_invalid', message: RESUME_OTHER_SESSION_MESSAGE });
  assert.deepEqual(codec.verify(token, 'a', TEST_SELLER, [], undefined), { ok: false, reason: 'resume_token_invalid', message: RESUME_NO_SESSION_MESSAGE });
  assert.deepEqual(codec.verify(token, 'a', TEST_SELLER), { ok: false, reason: 'resume_token_invalid', message: RESUME_NO_SESSION_MESSAGE });
});

test('without `h` (no session, or an older process): verifies with any session or none, as before', () => {
  const token = codec.mint(base, TEST_SELLER);
  assert.ok(!('h' in payloadOf(token)));
  for (const session of [undefined, 'sess-A', 'sess-B']) assert.ok(codec.verify(token, 'a', TEST_SELLER, [], session).ok);
});

test('an `h` of another shape is a malformed payload', () => {
  const payload = payloadOf(codec.mint(base, TEST_SELLER, 'sess-A'));
  for (const h of ['', 'short', 'x'.repeat(23), 'sess-A+/////////////////', 7, null, true]) {
    const v = codec.verify(signedToken(SECRET, { ...payload, h }), 'a', TEST_SELLER, [], 'sess-A');
    assert.deepEqual(v, { ok: false, reason: 'resume_token_invalid', message: 'Last-Event-ID resume token payload is malformed.' }, String(h));
  }
});

test('mintFor(seller, session) mints the tokens mint(state, seller, session) mints, and its errors', () => {
  for (const session of [undefined, 'sess-A']) {
    const mint = codec.mintFor(TEST_SELLER, session);
    for (const state of [base, { ...base, usedBytes: 20, final: true }, { ...base, upstreamId: 'e3', rpcId: 'r' }]) {
      assert.equal(mint(state), codec.mint(state, TEST_SELLER, session));
    }
    assert.throws(() => mint({ ...base, upstreamId: 'u'.repeat(4096) }), { name: 'ResumeMintError', code: 'resume_token_too_long' });
    assert.throws(() => mint({ ...base, usedBytes: 101 }), { name: 'ResumeMintError', code: 'resume_state_invalid' });
  }
  assert.notEqual(codec.mintFor(TEST_SELLER, 'sess-B')(base), codec.mint(base, TEST_SELLER, 'sess-A'));
});
