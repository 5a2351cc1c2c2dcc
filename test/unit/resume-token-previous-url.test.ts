// Resume tokens and an agent's previous urls (src/resume/token.ts verify `previous`; hostile
// trial 36, F2): a token that verifies only for a url a reload moved the agent from is valid,
// marked `sellerMoved`; the caller decides what to do with it (routing/handler.ts).
import assert from 'node:assert/strict';
import { createHmac, hkdfSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { RESUME_SIGNATURE_MESSAGE, createResumeCodec, type ResumeState } from '../../src/resume/token.js';
import { legacyToken, signedToken } from '../helpers/resume-codec.js';

const SECRET = 'a-test-secret-that-is-at-least-32-characters-long';
const T0 = 1_767_225_600_000;
const TTL = 3_600_000;
const OLD = new URL('https://old-seller.example/mcp');
const NEW = new URL('https://new-seller.example/mcp');
const GET_STREAM: Omit<ResumeState, 'issuedAt'> = Object.freeze({
  upstreamId: 'e7',
  agent: 'acme',
  rpcId: null,
  method: undefined,
  toolName: undefined,
  usedBytes: 0,
  limitBytes: 4_194_304,
  protocolVersion: '2025-06-18',
  streamStartedAt: T0 - 5_000,
});

describe('resume token: previous urls', () => {
  it('a token for a previous url verifies, marked sellerMoved; for the url in force, unmarked', () => {
    const c = createResumeCodec({ secret: SECRET, ttlMs: TTL, now: () => T0 });
    const old = c.mint(GET_STREAM, OLD);
    assert.deepEqual(c.verify(old, 'acme', NEW, [OLD]), { ok: true, state: { ...GET_STREAM, issuedAt: T0 }, sellerMoved: true });
    assert.deepEqual(c.verify(old, 'acme', NEW, [new URL('https://x.example/'), new URL('https://OLD-seller.example:443/mcp?')]), {
      ok: true,
      state: { ...GET_STREAM, issuedAt: T0 },
      sellerMoved: true,
    });
    assert.deepEqual(c.verify(old, 'acme', OLD, [NEW]), { ok: true, state: { ...GET_STREAM, issuedAt: T0 } });
  });

  it('a token of the older format (signed over the text alone) is marked sellerMoved once the agent has moved', () => {
    // A review (2026-12-05, Nit): it verified unmarked after a move, so a request's stream
    // would have been resumed at the new seller with it.
    const c = createResumeCodec({ secret: SECRET, ttlMs: TTL, now: () => T0 });
    const payload = { u: 'e7', a: 'acme', m: 'tools/call', i: 3, t: 'get_products', b: 10, l: 4_194_304, v: '2025-06-18', s: T0 - 5_000, n: T0 };
    const legacy = legacyToken(SECRET, payload);
    const moved = c.verify(legacy, 'acme', NEW, [OLD]);
    assert.equal(moved.ok && moved.sellerMoved, true);
    for (const previous of [undefined, []]) {
      const kept = c.verify(legacy, 'acme', NEW, previous);
      assert.equal(kept.ok, true);
      assert.equal(kept.ok && kept.sellerMoved, undefined);
    }
  });

  it('without the url among the previous ones, it is refused as before', () => {
    const c = createResumeCodec({ secret: SECRET, ttlMs: TTL, now: () => T0 });
    const old = c.mint(GET_STREAM, OLD);
    for (const previous of [undefined, [], [new URL('https://other.example/mcp')]]) {
      assert.deepEqual(c.verify(old, 'acme', NEW, previous), { ok: false, reason: 'resume_token_invalid', message: RESUME_SIGNATURE_MESSAGE });
    }
  });

  it('the other checks still apply: another agent, an expired token, another secret', () => {
    let now = T0;
    const c = createResumeCodec({ secret: SECRET, ttlMs: TTL, now: () => now });
    const old = c.mint(GET_STREAM, OLD);
    const other = c.verify(old, 'other-agent', NEW, [OLD]);
    assert.equal(other.ok ? '' : other.message, 'Last-Event-ID resume token was minted for a different agent.');
    const foreign = createResumeCodec({ secret: `${SECRET}-other`, ttlMs: TTL, now: () => T0 }).mint(GET_STREAM, OLD);
    assert.equal(c.verify(foreign, 'acme', NEW, [OLD]).ok, false);
    now = T0 + TTL + 1;
    const expired = c.verify(old, 'acme', NEW, [OLD]);
    assert.equal(expired.ok ? '' : expired.reason, 'resume_token_expired');
  });

  it("a token signed for the url's href (before the key, an older replica) still verifies where the href differs from the key", () => {
    const c = createResumeCodec({ secret: SECRET, ttlMs: TTL, now: () => T0 });
    const spelled = new URL('https://seller.example/m%63p?');
    const payload = { u: 'e7', a: 'acme', b: 0, l: 4_194_304, v: '2025-06-18', s: T0 - 5_000, n: T0 };
    // signedToken signs for the key; by hand for the href.
    const byKey = signedToken(SECRET, payload, spelled);
    assert.equal(c.verify(byKey, 'acme', new URL('https://seller.example/mcp')).ok, true);
    const head = byKey.slice(0, byKey.lastIndexOf('.'));
    const byHref = `${head}.${hrefSignature(head, spelled)}`;
    assert.equal(c.verify(byHref, 'acme', spelled).ok, true);
    assert.equal(c.verify(byHref, 'acme', new URL('https://seller.example/mcp')).ok, false, 'the href form only for its own spelling');
  });
});

/** The signature a gateway signing for `href` (before config/agent-url-key.ts) gave a token with head `head`. */
function hrefSignature(head: string, seller: URL): string {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(SECRET, 'utf8'), Buffer.alloc(0), 'adcp-buyer-gateway resume v1 seller', 32));
  return createHmac('sha256', key).update(`${head}\n${seller.href}`).digest('base64url');
}
