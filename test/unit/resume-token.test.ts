// Resume-token codec (ARCHITECTURE §4): signed, stateless SSE event ids that carry the
// cumulative byte count across `Last-Event-ID` reconnects.
import assert from 'node:assert/strict';
import { createHmac, hkdfSync } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  MAX_RESUME_TOKEN_LENGTH,
  RESUME_CLOCK_SKEW_MS,
  RESUME_SIGNATURE_MESSAGE,
  RESUME_TOKEN_PREFIX,
  ResumeMintError,
  createResumeCodec,
  randomResumeSecret,
  type ResumeState,
  type VerifyResult,
} from '../../src/resume/token.js';
import { TEST_SELLER, legacyToken, signedToken, withSeller, type SellerDefaultCodec } from '../helpers/resume-codec.js';

const SECRET = 'a-test-secret-that-is-at-least-32-characters-long';
const OTHER_SECRET = 'another-secret-that-is-at-least-32-characters-long';
const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const TTL = 3_600_000; // 1 h

/** A typical tools/call stream: seller id "1234" (SDK style), ~120 KiB delivered of 4 MiB. */
const TYPICAL: Omit<ResumeState, 'issuedAt'> = Object.freeze({
  upstreamId: '1234',
  agent: 'acme-sales',
  rpcId: 7,
  method: 'tools/call',
  toolName: 'get_products',
  usedBytes: 123_456,
  limitBytes: 4_194_304,
  protocolVersion: '2025-11-25',
  streamStartedAt: T0 - 5_000,
});

function clock(start = T0): { now: () => number; set: (ms: number) => void } {
  let t = start;
  return { now: () => t, set: (ms) => (t = ms) };
}

/** A codec minting and verifying for TEST_SELLER unless a call names another seller url. */
function codec(opts: { secret?: string | Buffer; ttlMs?: number; now?: () => number } = {}): SellerDefaultCodec {
  return withSeller(createResumeCodec({ secret: opts.secret ?? SECRET, ttlMs: opts.ttlMs ?? TTL, now: opts.now ?? (() => T0) }));
}

function assertInvalid(r: VerifyResult, why?: RegExp): void {
  assert.equal(r.ok, false, 'expected the token to be refused');
  if (r.ok) return;
  assert.equal(r.reason, 'resume_token_invalid');
  if (why) assert.match(r.message, why);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';

describe('resume token: round trip', () => {
  it('verifies what it minted and returns the state with issuedAt', () => {
    const c = codec();
    const r = c.verify(c.mint(TYPICAL), 'acme-sales');
    assert.ok(r.ok);
    assert.deepEqual(r.state, { ...TYPICAL, issuedAt: T0 });
  });

  const cases: Array<[string, Omit<ResumeState, 'issuedAt'>]> = [
    ['number rpcId', { ...TYPICAL, rpcId: 42 }],
    ['zero rpcId', { ...TYPICAL, rpcId: 0 }],
    ['negative and fractional rpcId', { ...TYPICAL, rpcId: -1.5 }],
    ['string rpcId', { ...TYPICAL, rpcId: 'req-7' }],
    ['empty string rpcId', { ...TYPICAL, rpcId: '' }],
    ['numeric-looking string rpcId stays a string', { ...TYPICAL, rpcId: '7' }],
    [
      'null rpcId, undefined method and toolName (standalone GET stream)',
      { ...TYPICAL, rpcId: null, method: undefined, toolName: undefined, usedBytes: 0 },
    ],
    ['method without tool', { ...TYPICAL, method: 'tasks/result', toolName: undefined }],
    ['usedBytes exactly at the limit', { ...TYPICAL, usedBytes: 4_194_304 }],
    ['zero bytes, zero limit', { ...TYPICAL, usedBytes: 0, limitBytes: 0 }],
    ['max safe integers', { ...TYPICAL, usedBytes: Number.MAX_SAFE_INTEGER, limitBytes: Number.MAX_SAFE_INTEGER }],
    ['stream started at epoch', { ...TYPICAL, streamStartedAt: 0 }],
    ['2025-03-26 revision', { ...TYPICAL, protocolVersion: '2025-03-26' }],
    [
      'opaque upstream id with dots, quotes, unicode, tabs and JSON-looking text',
      { ...TYPICAL, upstreamId: 'stream-1.evt_"x"\\\t{"u":"evil"} é 🦄 ./..' },
    ],
    ['upstream id "__proto__"', { ...TYPICAL, upstreamId: '__proto__', toolName: 'constructor' }],
    ['unicode agent and tool names', { ...TYPICAL, agent: 'agënt-ü', toolName: 'créer_campagne' }],
    // The id as the host wrote it, when a double cannot carry it (test/regressions/response-id-compared-as-double.test.ts).
    ['rpcIdText of a big integer id', { ...TYPICAL, rpcId: 9007199254740992, rpcIdText: '9007199254740993' }],
    ['rpcIdText of a fraction read as 1', { ...TYPICAL, rpcId: 1, rpcIdText: '0.99999999999999999999' }],
  ];
  for (const [name, state] of cases) {
    it(`preserves every field: ${name}`, () => {
      const c = codec();
      const r = c.verify(c.mint(state), state.agent);
      assert.ok(r.ok, r.ok ? '' : r.message);
      assert.deepEqual(r.state, { ...state, issuedAt: T0 });
      // Explicit checks where deepEqual could be lenient about null vs undefined keys.
      assert.equal(r.state.rpcId, state.rpcId);
      assert.equal(typeof r.state.rpcId, typeof state.rpcId);
      assert.equal(r.state.method, state.method);
      assert.equal(r.state.toolName, state.toolName);
      assert.ok('method' in r.state && 'toolName' in r.state && 'rpcId' in r.state);
    });
  }

  it('returns a frozen plain state (no prototype tricks)', () => {
    const c = codec();
    const r = c.verify(c.mint(TYPICAL), 'acme-sales');
    assert.ok(r.ok);
    assert.ok(Object.isFrozen(r.state));
    assert.equal(Object.getPrototypeOf(r.state), Object.prototype);
    assert.deepEqual(Object.keys(r.state).sort(), [
      'agent',
      'issuedAt',
      'limitBytes',
      'method',
      'protocolVersion',
      'rpcId',
      'streamStartedAt',
      'toolName',
      'upstreamId',
      'usedBytes',
    ]);
  });

  it('floors a fractional clock for issuedAt', () => {
    const c = codec({ now: () => T0 + 0.75 });
    const r = c.verify(c.mint(TYPICAL), 'acme-sales');
    assert.ok(r.ok);
    assert.equal(r.state.issuedAt, T0);
  });

  it('accepts a Buffer secret, including a random one', () => {
    for (const secret of [randomResumeSecret(), Buffer.alloc(32, 7)]) {
      const c = codec({ secret });
      assert.ok(c.verify(c.mint(TYPICAL), 'acme-sales').ok);
    }
  });
});

describe('resume token: format', () => {
  it('starts with the prefix and has exactly two base64url parts', () => {
    const token = codec().mint(TYPICAL);
    assert.equal(RESUME_TOKEN_PREFIX, 'agw1.');
    assert.ok(token.startsWith(RESUME_TOKEN_PREFIX));
    const [payload, sig, ...rest] = token.slice(RESUME_TOKEN_PREFIX.length).split('.');
    assert.equal(rest.length, 0);
    assert.match(payload ?? '', /^[A-Za-z0-9_-]+$/);
    assert.match(sig ?? '', /^[A-Za-z0-9_-]{43}$/);
  });

  it('uses only [A-Za-z0-9_.-]: no NUL, CR or LF (SSE id rules), whatever the upstream id', () => {
    const c = codec();
    for (const upstreamId of ['1', 'a b', 'x\ty', '\u2028\u2029', '🦄'.repeat(50), '"\\', '\u0001\u001f\u007f']) {
      const token = c.mint({ ...TYPICAL, upstreamId });
      assert.match(token, /^[A-Za-z0-9_.-]+$/);
      assert.ok(!/[\0\r\n]/.test(token));
      const r = c.verify(token, 'acme-sales');
      assert.ok(r.ok);
      assert.equal(r.state.upstreamId, upstreamId);
    }
  });

  it('payload is compact JSON with the documented one-letter keys', () => {
    const token = codec().mint(TYPICAL);
    const payload = token.slice(RESUME_TOKEN_PREFIX.length).split('.')[0] ?? '';
    const json = Buffer.from(payload, 'base64url').toString('utf8');
    assert.equal(
      json,
      '{"u":"1234","a":"acme-sales","i":7,"m":"tools/call","t":"get_products","b":123456,"l":4194304,"v":"2025-11-25","s":1767225595000,"n":1767225600000}',
    );
    const standalone = codec().mint({ ...TYPICAL, rpcId: null, method: undefined, toolName: undefined, usedBytes: 0 });
    const p2 = standalone.slice(RESUME_TOKEN_PREFIX.length).split('.')[0] ?? '';
    assert.deepEqual(Object.keys(JSON.parse(Buffer.from(p2, 'base64url').toString('utf8'))), ['u', 'a', 'b', 'l', 'v', 's', 'n']);
  });

  it('signs "prefix + payload part", LF, the seller url with HMAC-SHA256 under an HKDF-SHA256 key, never the raw secret', () => {
    const token = codec().mint(TYPICAL);
    const lastDot = token.lastIndexOf('.');
    const signed = token.slice(0, lastDot);
    const sig = token.slice(lastDot + 1);
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(SECRET), Buffer.alloc(0), 'adcp-buyer-gateway resume v1 seller', 32));
    assert.equal(sig, createHmac('sha256', key).update(`${signed}\nhttps://seller.example/adcp/mcp`).digest('base64url'));
    assert.notEqual(sig, createHmac('sha256', SECRET).update(`${signed}\nhttps://seller.example/adcp/mcp`).digest('base64url'));
    // The url is not carried: the payload is the one without it.
    assert.doesNotMatch(Buffer.from(signed.split('.')[1]!, 'base64url').toString('utf8'), /seller/);
  });

  it('typical token length (reported)', (t) => {
    const token = codec().mint(TYPICAL);
    const standalone = codec().mint({ ...TYPICAL, rpcId: null, method: undefined, toolName: undefined, usedBytes: 0 });
    const uuid = codec().mint({ ...TYPICAL, upstreamId: '2b5c1e4a-7d0f-4c1e-9a51-3f0c8e2d6b7a_17' });
    t.diagnostic(`typical tools/call token: ${token.length} chars`);
    t.diagnostic(`standalone GET stream token: ${standalone.length} chars`);
    t.diagnostic(`tools/call token, UUID-style seller id: ${uuid.length} chars`);
    assert.equal(token.length, 245);
    assert.ok(token.length < 256);
  });
});

describe('resume token: refusals', () => {
  it('different secret -> invalid', () => {
    const token = codec({ secret: OTHER_SECRET }).mint(TYPICAL);
    const r = codec().verify(token, 'acme-sales');
    assertInvalid(r);
    assert.equal(r.ok ? '' : r.message, RESUME_SIGNATURE_MESSAGE);
  });

  it('flipped character anywhere in prefix, payload or signature -> invalid', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    for (let i = 0; i < token.length; i++) {
      const ch = token[i] as string;
      // Every other character of the token alphabet, plus one outside it.
      const swaps = [...ALPHABET.replace(ch, ''), String.fromCharCode(ch.charCodeAt(0) ^ 1), '\0'];
      for (const repl of swaps) {
        if (repl === ch) continue;
        const bad = token.slice(0, i) + repl + token.slice(i + 1);
        const r = c.verify(bad, 'acme-sales');
        assert.equal(r.ok, false, `position ${i}: ${JSON.stringify(ch)} -> ${JSON.stringify(repl)} verified`);
        assert.equal(r.ok ? '' : r.reason, 'resume_token_invalid');
      }
    }
  });

  it('flipped bit in the decoded payload or signature bytes -> invalid', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    const [payload, sig] = token.slice(RESUME_TOKEN_PREFIX.length).split('.') as [string, string];
    const pBytes = Buffer.from(payload, 'base64url');
    const sBytes = Buffer.from(sig, 'base64url');
    for (let i = 0; i < pBytes.length; i++) {
      const b = Buffer.from(pBytes);
      b[i] = (b[i] as number) ^ 0x01;
      assertInvalid(c.verify(`${RESUME_TOKEN_PREFIX}${b.toString('base64url')}.${sig}`, 'acme-sales'));
    }
    for (let i = 0; i < sBytes.length; i++) {
      const b = Buffer.from(sBytes);
      b[i] = (b[i] as number) ^ 0x80;
      assertInvalid(c.verify(`${RESUME_TOKEN_PREFIX}${payload}.${b.toString('base64url')}`, 'acme-sales'));
    }
  });

  it('truncated, extended or re-split tokens -> invalid', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    for (let n = 0; n < token.length; n++) assertInvalid(c.verify(token.slice(0, n), 'acme-sales'));
    assertInvalid(c.verify(`${token}A`, 'acme-sales'));
    assertInvalid(c.verify(`${token}.`, 'acme-sales'));
    assertInvalid(c.verify(`${token}=`, 'acme-sales'));
    assertInvalid(c.verify(` ${token}`, 'acme-sales'));
    assertInvalid(c.verify(`${token}\n`, 'acme-sales'));
    assertInvalid(c.verify(token.replace(RESUME_TOKEN_PREFIX, 'agw2.'), 'acme-sales'));
    assertInvalid(c.verify(token.replace(RESUME_TOKEN_PREFIX, ''), 'acme-sales'));
  });

  it('token minted for another agent -> invalid', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    assertInvalid(c.verify(token, 'other-agent'), /different agent/);
    assertInvalid(c.verify(token, 'ACME-SALES'), /different agent/);
    assertInvalid(c.verify(token, ''), /different agent/);
  });

  it('raw seller ids -> invalid', () => {
    const c = codec();
    for (const raw of ['42', 'abc', '0', '', 'agw1.', 'agw1..', 'agw1.a.b', '1234_0', 'eyJ1IjoiMSJ9', '{"u":"1"}']) {
      assertInvalid(c.verify(raw, 'acme-sales'));
    }
  });

  it('a correctly signed payload with the wrong shape -> invalid (forged with the derived key)', () => {
    const forge = (payload: unknown): string => signedToken(SECRET, payload);
    const good = { u: '1', a: 'acme-sales', i: 7, m: 'tools/call', t: 'x', b: 10, l: 100, v: '2025-11-25', s: T0, n: T0 };
    const c = codec();
    // Sanity: the forger reproduces the real format.
    assert.ok(c.verify(forge(good), 'acme-sales').ok);
    const bad: Array<[string, unknown]> = [
      ['not JSON', 'not json'],
      ['array', [good]],
      ['null', null],
      ['number', 42],
      ['unknown key', { ...good, z: 1 }],
      ['number x', { ...good, i: 9007199254740992, x: 9007199254740992 }],
      ['x with a string i', { ...good, i: '9007199254740993', x: '9007199254740993' }],
      ['x without i', { ...good, i: undefined, x: '9007199254740993' }],
      ['x that is not a JSON number', { ...good, i: 9007199254740992, x: '+9007199254740993' }],
      ['x that does not read as i', { ...good, i: 9007199254740992, x: '9007199254740995' }],
      ['__proto__ key', JSON.parse(JSON.stringify(good).replace('{', '{"__proto__":{"polluted":true},'))],
      ['missing u', { ...good, u: undefined }],
      ['empty u', { ...good, u: '' }],
      ['u with LF', { ...good, u: 'a\nb' }],
      ['u with CR', { ...good, u: 'a\rb' }],
      ['u with NUL', { ...good, u: 'a\0b' }],
      ['missing a', { ...good, a: undefined }],
      ['null i', { ...good, i: null }],
      ['boolean i', { ...good, i: true }],
      ['object i', { ...good, i: {} }],
      ['null m', { ...good, m: null }],
      ['number t', { ...good, t: 1 }],
      ['negative b', { ...good, b: -1 }],
      ['fractional b', { ...good, b: 1.5 }],
      ['string b', { ...good, b: '10' }],
      ['b over l', { ...good, b: 101 }],
      ['unsafe l', { ...good, l: 2 ** 53 }],
      ['missing l', { ...good, l: undefined }],
      ['empty v', { ...good, v: '' }],
      ['negative s', { ...good, s: -1 }],
      ['string n', { ...good, n: String(T0) }],
    ];
    // Signed as today, and as a gateway before the seller url was covered signed it: the same checks.
    assert.ok(c.verify(legacyToken(SECRET, good), 'acme-sales').ok);
    for (const [name, payload] of bad) {
      for (const token of [forge(payload), legacyToken(SECRET, payload)]) {
        const r = c.verify(token, 'acme-sales');
        assert.equal(r.ok, false, name);
        assert.equal(r.ok ? '' : r.reason, 'resume_token_invalid', name);
      }
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('expired: older than ttl -> expired; exactly at ttl passes', () => {
    const clk = clock();
    const c = codec({ now: clk.now });
    const token = c.mint(TYPICAL);
    clk.set(T0 + TTL);
    assert.ok(c.verify(token, 'acme-sales').ok, 'exactly at the ttl passes');
    clk.set(T0 + TTL + 1);
    const r = c.verify(token, 'acme-sales');
    assert.equal(r.ok, false);
    assert.equal(r.ok ? '' : r.reason, 'resume_token_expired');
  });

  it('ttl 0: valid only in the millisecond it was minted', () => {
    const clk = clock();
    const c = codec({ now: clk.now, ttlMs: 0 });
    const token = c.mint(TYPICAL);
    assert.ok(c.verify(token, 'acme-sales').ok);
    clk.set(T0 + 1);
    assert.equal((c.verify(token, 'acme-sales') as { reason?: string }).reason, 'resume_token_expired');
  });

  it('issuedAt in the future: within 60 s skew passes, beyond -> invalid', () => {
    const minter = clock(T0 + RESUME_CLOCK_SKEW_MS + 1);
    const token = codec({ now: minter.now }).mint(TYPICAL);
    const verifier = clock(T0 + 1);
    const c = codec({ now: verifier.now });
    assert.ok(c.verify(token, 'acme-sales').ok, 'exactly 60 s ahead passes');
    verifier.set(T0);
    assertInvalid(c.verify(token, 'acme-sales'), /future/);
  });

  it('oversized token -> invalid before anything else', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    assertInvalid(c.verify(token + 'A'.repeat(MAX_RESUME_TOKEN_LENGTH), 'acme-sales'), /longer than 4096/);
    assertInvalid(c.verify(`${RESUME_TOKEN_PREFIX}${'A'.repeat(MAX_RESUME_TOKEN_LENGTH)}`, 'acme-sales'), /longer/);
    assertInvalid(c.verify('x'.repeat(10_000_000), 'acme-sales'), /longer/);
  });

  it('mint stays within 4096 characters: the longest token verifies, one byte more is refused', () => {
    const c = codec();
    // Grow the seller's id until mint refuses; the last token minted is at most 3 characters short of the limit.
    let last = '';
    let n = 1;
    for (; n < MAX_RESUME_TOKEN_LENGTH; n++) {
      try {
        last = c.mint({ ...TYPICAL, upstreamId: 'x'.repeat(n) });
      } catch (err) {
        assert.ok(err instanceof ResumeMintError);
        assert.equal(err.code, 'resume_token_too_long');
        assert.ok(!err.message.includes('xxxx'), 'message never carries the id');
        break;
      }
    }
    assert.ok(n < MAX_RESUME_TOKEN_LENGTH, 'mint refused an oversized id');
    assert.ok(last.length <= MAX_RESUME_TOKEN_LENGTH && last.length > MAX_RESUME_TOKEN_LENGTH - 4, `${last.length}`);
    const r = c.verify(last, 'acme-sales');
    assert.ok(r.ok);
    assert.equal(r.state.upstreamId.length, n - 1);
  });

  it('never throws on junk input', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    for (const junk of [undefined, null, 42, {}, [], Symbol('x'), token.split('')] as unknown[]) {
      assertInvalid(c.verify(junk as string, 'acme-sales'));
      assert.equal(c.verify(token, junk as string).ok, false);
    }
    const throwingClock = codec({
      now: () => {
        throw new Error('boom');
      },
    });
    assertInvalid(throwingClock.verify(token, 'acme-sales'));
  });

  it('messages never carry the secret or payload contents', () => {
    const secretish = 'super-secret-value-0123456789-abcdefghij';
    const clk = clock();
    const c = codec({ secret: secretish, now: clk.now });
    const state = { ...TYPICAL, upstreamId: 'UPSTREAM-MARKER', agent: 'AGENT-MARKER', toolName: 'TOOL-MARKER' };
    const token = c.mint(state);
    const results = [
      c.verify(token, 'OTHER-AGENT-MARKER'),
      codec().verify(token, 'AGENT-MARKER'),
      c.verify(token, 'AGENT-MARKER', new URL('https://seller-marker.example/mcp?key=URL-MARKER')),
      c.verify(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'), 'AGENT-MARKER'),
    ];
    clk.set(T0 + TTL + 1);
    results.push(c.verify(token, 'AGENT-MARKER'));
    for (const r of results) {
      assert.equal(r.ok, false);
      if (r.ok) continue;
      for (const s of [secretish, 'UPSTREAM-MARKER', 'AGENT-MARKER', 'TOOL-MARKER', 'OTHER-AGENT-MARKER', 'seller-marker', 'URL-MARKER', token]) {
        assert.ok(!r.message.includes(s), `message leaks ${s}`);
      }
      assert.ok(Buffer.byteLength(r.message) < 256);
    }
  });
});

describe('resume token: the seller url it was minted for (a hostile new user\'s trial 10, F7)', () => {
  const url = (text: string): URL => new URL(text);

  it('verifies only with the seller url it was minted for: scheme, host, port, path and query each count', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    // The same url in another URL object (and as the parser normalizes it) verifies.
    assert.ok(c.verify(token, 'acme-sales', url('https://seller.example/adcp/mcp')).ok);
    assert.ok(c.verify(token, 'acme-sales', url('HTTPS://Seller.Example:443/adcp/./mcp')).ok);
    // Another spelling of the same resource (config/agent-url-key.ts; hostile trial 36, F5):
    // an empty query, percent-encoded unreserved characters.
    assert.ok(c.verify(token, 'acme-sales', url('https://seller.example/adcp/mcp?')).ok);
    assert.ok(c.verify(token, 'acme-sales', url('https://seller.example/%61dcp/m%63p')).ok);
    for (const other of [
      'https://other-seller.example/adcp/mcp', // another seller (the reported repoint)
      'http://seller.example/adcp/mcp',
      'https://seller.example:8443/adcp/mcp',
      'https://seller.example/adcp/mcp/',
      'https://seller.example/adcp/MCP',
      'https://seller.example/adcp/mcp?account=two', // a query can select another account
      'https://seller.example/adcp/mcp?%20',
      'https://seller.example/adcp%2Fmcp',
      'https://seller.example./adcp/mcp',
      'https://127.0.0.1/adcp/mcp',
    ]) {
      const r = c.verify(token, 'acme-sales', url(other));
      assertInvalid(r);
      assert.equal(r.ok ? '' : r.message, RESUME_SIGNATURE_MESSAGE, other);
    }
    const withQuery = c.mint(TYPICAL, url('https://seller.example/adcp/mcp?account=one&region=eu'));
    assert.ok(c.verify(withQuery, 'acme-sales', url('https://seller.example/adcp/mcp?account=one&region=eu')).ok);
    assertInvalid(c.verify(withQuery, 'acme-sales', url('https://seller.example/adcp/mcp?region=eu&account=one')));
    assertInvalid(c.verify(withQuery, 'acme-sales', url('https://seller.example/adcp/mcp')));
  });

  it('the token does not grow: the url is signed, not carried', () => {
    const c = codec();
    const short = c.mint(TYPICAL, url('http://a/'));
    const long = c.mint(TYPICAL, url(`https://seller.example/${'p'.repeat(500)}?key=${'k'.repeat(500)}`));
    assert.equal(short.length, long.length);
    assert.equal(short.split('.')[1], long.split('.')[1], 'same payload part');
  });

  it('the message of a token for another url names another secret and a reload that changed the url', () => {
    assert.match(RESUME_SIGNATURE_MESSAGE, /another resume secret/);
    assert.match(RESUME_SIGNATURE_MESSAGE, /another seller url than this agent's/);
    assert.match(RESUME_SIGNATURE_MESSAGE, /before a reload changed its url/);
  });

  it('a token minted before the url was covered (signed over the text alone) verifies for any url; its agent and age still count', () => {
    const clk = clock();
    const c = codec({ now: clk.now });
    const payload = { u: '1234', a: 'acme-sales', i: 7, m: 'tools/call', t: 'get_products', b: 123_456, l: 4_194_304, v: '2025-11-25', s: T0 - 5_000, n: T0 };
    const old = legacyToken(SECRET, payload);
    assert.equal(old.length, c.mint(TYPICAL).length, 'the same format and length');
    for (const seller of [TEST_SELLER, url('https://other-seller.example/mcp')]) {
      const r = c.verify(old, 'acme-sales', seller);
      assert.ok(r.ok);
      assert.deepEqual(r.state, { ...TYPICAL, issuedAt: T0 });
    }
    assertInvalid(c.verify(old, 'other-agent'), /different agent/);
    assertInvalid(c.verify(legacyToken(OTHER_SECRET, payload), 'acme-sales'));
    clk.set(T0 + TTL + 1);
    const expired = c.verify(old, 'acme-sales');
    assert.equal(expired.ok ? '' : expired.reason, 'resume_token_expired');
  });

  it('the two signatures never stand in for each other', () => {
    const c = codec();
    const token = c.mint(TYPICAL);
    const head = token.slice(0, token.lastIndexOf('.'));
    const legacy = legacyToken(SECRET, Buffer.from(head.split('.')[1]!, 'base64url').toString('utf8'));
    assert.notEqual(legacy, token);
    // A token signed for a url is no legacy token: it fails for another url.
    assertInvalid(c.verify(token, 'acme-sales', url('https://other-seller.example/mcp')));
    // And the url-signed form of a payload is not its legacy form.
    assert.notEqual(signedToken(SECRET, JSON.parse(Buffer.from(head.split('.')[1]!, 'base64url').toString('utf8'))), legacy);
  });
});

describe('resume token: replicas', () => {
  it('two codecs with the same secret verify each other’s tokens', () => {
    const a = codec({ secret: SECRET });
    const b = codec({ secret: SECRET });
    const ta = a.mint(TYPICAL);
    const tb = b.mint({ ...TYPICAL, upstreamId: '1235', usedBytes: 200_000 });
    const rb = b.verify(ta, 'acme-sales');
    const ra = a.verify(tb, 'acme-sales');
    assert.ok(rb.ok && ra.ok);
    assert.equal(rb.state.usedBytes, 123_456);
    assert.equal(ra.state.usedBytes, 200_000);
    assert.equal(ta, a.mint(TYPICAL), 'deterministic for the same state and clock');
    assert.equal(ta, b.mint(TYPICAL), 'replicas mint identical tokens');
  });

  it('a string secret and the Buffer of its UTF-8 bytes are the same secret', () => {
    const fromString = codec({ secret: SECRET });
    const fromBuffer = codec({ secret: Buffer.from(SECRET, 'utf8') });
    assert.ok(fromBuffer.verify(fromString.mint(TYPICAL), 'acme-sales').ok);
  });

  it('two random secrets do not verify each other', () => {
    const a = codec({ secret: randomResumeSecret() });
    const b = codec({ secret: randomResumeSecret() });
    assertInvalid(b.verify(a.mint(TYPICAL), 'acme-sales'), /does not verify/);
  });
});

describe('resume token: options and mint validation', () => {
  it('randomResumeSecret returns 32 fresh random bytes', () => {
    const a = randomResumeSecret();
    const b = randomResumeSecret();
    assert.ok(Buffer.isBuffer(a));
    assert.equal(a.length, 32);
    assert.notDeepEqual(a, b);
  });

  it('refuses short or mistyped secrets and bad TTLs at creation', () => {
    assert.throws(() => createResumeCodec({ secret: 'x'.repeat(31), ttlMs: TTL }), RangeError);
    assert.throws(() => createResumeCodec({ secret: Buffer.alloc(31), ttlMs: TTL }), RangeError);
    assert.throws(() => createResumeCodec({ secret: 42 as unknown as string, ttlMs: TTL }), TypeError);
    assert.throws(() => createResumeCodec({ secret: SECRET, ttlMs: -1 }), RangeError);
    assert.throws(() => createResumeCodec({ secret: SECRET, ttlMs: Number.NaN }), RangeError);
    assert.throws(() => createResumeCodec({ secret: SECRET, ttlMs: Infinity }), RangeError);
    assert.throws(() => createResumeCodec({ secret: SECRET, ttlMs: TTL, now: 5 as unknown as () => number }), TypeError);
    assert.doesNotThrow(() => createResumeCodec({ secret: 'x'.repeat(32), ttlMs: TTL }));
    try {
      createResumeCodec({ secret: 'short-secret-value', ttlMs: TTL });
      assert.fail('expected a throw');
    } catch (err) {
      assert.ok(!(err as Error).message.includes('short-secret-value'));
    }
  });

  it('mint refuses a state verify would refuse (resume_state_invalid), naming the field only', () => {
    const c = codec();
    const bad: Array<[string, Partial<Omit<ResumeState, 'issuedAt'>>]> = [
      ['upstreamId', { upstreamId: '' }],
      ['upstreamId', { upstreamId: 'a\nb' }],
      ['upstreamId', { upstreamId: 'a\rb' }],
      ['upstreamId', { upstreamId: 'a\0b' }],
      ['agent', { agent: '' }],
      ['rpcId', { rpcId: Number.NaN }],
      ['rpcId', { rpcId: Infinity }],
      ['rpcIdText', { rpcId: 'req-7', rpcIdText: '9007199254740993' }],
      ['rpcIdText', { rpcId: 9007199254740992, rpcIdText: '9007199254740995' }],
      ['rpcIdText', { rpcId: 9007199254740992, rpcIdText: ' 9007199254740993' }],
      ['usedBytes', { usedBytes: 4_194_305 }],
      ['usedBytes', { usedBytes: -1 }],
      ['usedBytes', { usedBytes: 1.5 }],
      ['limitBytes', { limitBytes: 2 ** 53 }],
      ['protocolVersion', { protocolVersion: '' }],
      ['streamStartedAt', { streamStartedAt: -5 }],
    ];
    for (const [field, patch] of bad) {
      assert.throws(
        () => c.mint({ ...TYPICAL, ...patch }),
        (err: unknown) =>
          err instanceof ResumeMintError &&
          err.code === 'resume_state_invalid' &&
          err.message.endsWith(`invalid ${field}`),
        `${field}: ${JSON.stringify(patch)}`,
      );
    }
  });
});
