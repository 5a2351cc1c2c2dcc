/**
 * scopeSetCookies (src/response/set-cookie.ts): a seller's cookies rebuilt, scoped to its
 * agent's route: a strict RFC 6265 cookie-pair or no cookie, the agent's `Path` right after
 * it, then only Expires, Max-Age, Secure, HttpOnly, SameSite and Partitioned with strictly
 * valid values, written canonically (attribute names matched in any case).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterResponseHeaders } from '../../src/response/headers.js';
import { agentCookiePath, scopeSetCookies } from '../../src/response/set-cookie.js';

const PATH = agentCookiePath('acme');

test('the path is the agent route', () => {
  assert.equal(PATH, '/agents/acme/mcp');
});

test('Path and Domain in any case and spacing are replaced; the known attributes kept, canonical, Path first', () => {
  assert.deepEqual(
    scopeSetCookies('id=1;path=/x;  DOMAIN=.seller.example ;httponly; expires = Wed, 21 Oct 2037 07:28:00 GMT;MAX-AGE=60', PATH),
    ['id=1; Path=/agents/acme/mcp; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Max-Age=60; HttpOnly'],
  );
});

test('a cookie with no attributes, an empty attribute, an array of values', () => {
  assert.deepEqual(scopeSetCookies(['a=', 'b=2;;HttpOnly;'], PATH), ['a=; Path=/agents/acme/mcp', 'b=2; Path=/agents/acme/mcp; HttpOnly']);
});

test('a __Host- cookie is scoped too (a browser then refuses it rather than sharing it with every seller), and keeps Secure', () => {
  assert.deepEqual(scopeSetCookies('__Host-s=1; Path=/; Secure', PATH), ['__Host-s=1; Path=/agents/acme/mcp; Secure']);
});

test('Secure is dropped (a jar keeping it for HTTPS only never sent it back over the plain HTTP to the gateway), but kept for __Secure-, SameSite=None and Partitioned', () => {
  assert.deepEqual(
    scopeSetCookies(['sid=A1; Secure', 'a=1; secure; HttpOnly', '__secure-b=2; Secure', 'c=3; SameSite=None; Secure', 'd=4; SameSite=Lax; Secure', 'e=5; Secure; Partitioned'], PATH),
    [
      'sid=A1; Path=/agents/acme/mcp',
      'a=1; Path=/agents/acme/mcp; HttpOnly',
      '__secure-b=2; Path=/agents/acme/mcp; Secure',
      'c=3; Path=/agents/acme/mcp; Secure; SameSite=None',
      'd=4; Path=/agents/acme/mcp; SameSite=Lax',
      'e=5; Path=/agents/acme/mcp; Secure; Partitioned',
    ],
  );
});

test('a pair that is no RFC 6265 cookie-pair drops the cookie; SP and HTAB around it and its = are trimmed', () => {
  assert.deepEqual(
    scopeSetCookies(
      [
        'a=x y',
        'a=x\ty',
        'a="x y"',
        'a="x',
        'a=x"',
        'a=x,y',
        'a=x\\y',
        'a=\x7f',
        'a=caf\xe9',
        '=x',
        'x',
        '',
        'a b=1',
        'a"=1',
        '$Path=/',
        '\x85a=1',
        'a=1\x85; HttpOnly',
        ' \tok = "q" \t; HttpOnly',
        "n!#%&'*+-.^_`|~9=!#$%&'()*+-./:<=>?@[]^_`{|}~",
      ],
      PATH,
    ),
    ['ok="q"; Path=/agents/acme/mcp; HttpOnly', "n!#%&'*+-.^_`|~9=!#$%&'()*+-./:<=>?@[]^_`{|}~; Path=/agents/acme/mcp"],
  );
});

test('unknown, $-prefixed and odd attributes, and known ones with invalid values, are dropped', () => {
  const one = (attributes: string): string => scopeSetCookies(`s=1; ${attributes}`, PATH)[0]!;
  const bare = 's=1; Path=/agents/acme/mcp';
  for (const attributes of [
    '$Path=/',
    '$Domain=x',
    'x=\\',
    'Priority=High',
    'Comment=x Path=/ =',
    'Version=1',
    'Max-Age',
    'Max-Age=',
    'Max-Age=1e3',
    'Max-Age=+5',
    'Max-Age=05',
    'Max-Age=-0x1',
    'Max-Age=12345678901',
    'Max-Age=6 0',
    'Expires',
    'Expires=Wed, 31 Feb 2037 07:28:00 GMT',
    'Expires=Wed, 21 Oct 2037 07:28:60 GMT',
    'Expires=Wed, 21 Oct 1600 07:28:00 GMT',
    'Expires=21 Oct 2037',
    'Expires=tomorrow',
    'SameSite',
    'SameSite=Strictly',
    'SameSite=Lax Path=/',
    'Secure=1',
    'HttpOnly=',
    'Partitioned=yes',
    'Http Only',
    '\x85HttpOnly',
    'HttpOnly\x0b',
    'Max-Age=6\x850',
  ]) {
    assert.equal(one(attributes), bare, attributes);
  }
});

test('known attributes: their valid values, SP/HTAB trimmed, the last one wins, each written once', () => {
  assert.deepEqual(
    scopeSetCookies(
      [
        's=1; Max-Age=0; Max-Age=-1; Max-Age=1234567890',
        's=1; Max-Age=-5; Max-Age=bad',
        's=1; SameSite=STRICT; samesite=lax',
        's=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Expires= Fri, 29 Feb 2036 23:59:59 GMT\t; Expires=never',
        's=1; HttpOnly; HTTPONLY; Partitioned; Partitioned',
      ],
      PATH,
    ),
    [
      's=1; Path=/agents/acme/mcp; Max-Age=1234567890',
      's=1; Path=/agents/acme/mcp; Max-Age=-5',
      's=1; Path=/agents/acme/mcp; SameSite=Lax',
      's=1; Path=/agents/acme/mcp; Expires=Fri, 29 Feb 2036 23:59:59 GMT',
      's=1; Path=/agents/acme/mcp; HttpOnly; Partitioned',
    ],
  );
});

test('filterResponseHeaders scopes set-cookie only when given the agent, and counts the cookies it drops', () => {
  const headers = { 'set-cookie': ['s=1; Path=/'], 'content-type': 'application/json' };
  const counts: { cookiesDropped: number | undefined } = { cookiesDropped: undefined };
  assert.deepEqual(filterResponseHeaders(headers, 'acme', counts), { 'set-cookie': ['s=1; Path=/agents/acme/mcp'], 'content-type': 'application/json' });
  assert.deepEqual(filterResponseHeaders(headers), headers);
  assert.equal(counts.cookiesDropped, undefined);
  assert.deepEqual(
    filterResponseHeaders({ 'set-cookie': ['s=1', 'a b=2', 't=3 x'], 'content-type': 'application/json' }, 'acme', counts),
    { 'set-cookie': ['s=1; Path=/agents/acme/mcp'], 'content-type': 'application/json' },
  );
  assert.equal(counts.cookiesDropped, 2);
  // Every cookie dropped: no set-cookie at all (Fastify would write an empty line).
  assert.deepEqual(filterResponseHeaders({ 'set-cookie': 'a b=2', 'content-type': 'application/json' }, 'acme', counts), { 'content-type': 'application/json' });
  assert.equal(counts.cookiesDropped, 3);
});

test('Expires is read as browsers read a cookie date (RFC 6265 §5.1.1) and written as an IMF-fixdate (seller-cookie-expires-dropped)', () => {
  // Real sellers' forms: Cloudflare's Netscape date with a two-digit year, dashed four-digit
  // years, asctime, lower case, odd spacing. Before, every one but the exact IMF-fixdate was
  // dropped, and the cookie became a session cookie.
  const cases: Array<[string, string]> = [
    ['Sat, 05-Dec-26 15:00:00 GMT', 'Sat, 05 Dec 2026 15:00:00 GMT'],
    ['Wed, 21-Oct-2037 07:28:00 GMT', 'Wed, 21 Oct 2037 07:28:00 GMT'],
    ['Wednesday, 21-Oct-37 07:28:00 GMT', 'Wed, 21 Oct 2037 07:28:00 GMT'],
    ['Wed Oct 21 07:28:00 2037', 'Wed, 21 Oct 2037 07:28:00 GMT'],
    ['wed, 21 oct 2037 07:28:00 gmt', 'Wed, 21 Oct 2037 07:28:00 GMT'],
    ['Thu, 01-Jan-1970 00:00:01 GMT', 'Thu, 01 Jan 1970 00:00:01 GMT'],
    ['Tue, 01 Jan 69 1:2:3 GMT', 'Tue, 01 Jan 2069 01:02:03 GMT'],
    ['Mon, 01 January 1990 00:00:00 UTC', 'Mon, 01 Jan 1990 00:00:00 GMT'],
    // The weekday is not checked (browsers ignore it); the date is written with its own.
    ['Mon, 21 Oct 2037 07:28:00 GMT', 'Wed, 21 Oct 2037 07:28:00 GMT'],
    // A Path inside the value is no attribute: only the date read goes out.
    ['Wed, 21 Oct 2037 07:28:00 GMT Path=/', 'Wed, 21 Oct 2037 07:28:00 GMT'],
  ];
  for (const [written, read] of cases) {
    assert.deepEqual(scopeSetCookies(`s=1; Expires=${written}`, PATH), [`s=1; Path=/agents/acme/mcp; Expires=${read}`], written);
  }
});
