/**
 * scopeSetCookies (src/response/headers.ts): a seller's cookies scoped to its agent's route,
 * RFC 6265 §5.2 attribute names matched in any case, every other attribute kept as written.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentCookiePath, filterResponseHeaders, scopeSetCookies } from '../../src/response/headers.js';

const PATH = agentCookiePath('acme');

test('the path is the agent route', () => {
  assert.equal(PATH, '/agents/acme/mcp');
});

test('Path and Domain in any case and spacing are replaced; the rest kept in order', () => {
  assert.equal(
    scopeSetCookies('id=1;path=/x;  DOMAIN=.seller.example ;HttpOnly; Expires=Wed, 21 Oct 2037 07:28:00 GMT;Max-Age=60', PATH),
    'id=1; HttpOnly; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Max-Age=60; Path=/agents/acme/mcp',
  );
});

test('a cookie with no attributes, an empty attribute, an array of values', () => {
  assert.deepEqual(scopeSetCookies(['a=', 'b=2;;HttpOnly;'], PATH), ['a=; Path=/agents/acme/mcp', 'b=2; HttpOnly; Path=/agents/acme/mcp']);
});

test('a __Host- cookie is scoped too (a browser then refuses it rather than sharing it with every seller), and keeps Secure', () => {
  assert.equal(scopeSetCookies('__Host-s=1; Path=/; Secure', PATH), '__Host-s=1; Secure; Path=/agents/acme/mcp');
});

test('Secure is dropped (a jar keeping it for HTTPS only never sent it back over the plain HTTP to the gateway), but kept for __Secure- and SameSite=None', () => {
  assert.deepEqual(scopeSetCookies(['sid=A1; Secure', 'a=1; secure; HttpOnly', '__secure-b=2; Secure', 'c=3; SameSite=None; Secure', 'd=4; SameSite=Lax; Secure'], PATH), [
    'sid=A1; Path=/agents/acme/mcp',
    'a=1; HttpOnly; Path=/agents/acme/mcp',
    '__secure-b=2; Secure; Path=/agents/acme/mcp',
    'c=3; SameSite=None; Secure; Path=/agents/acme/mcp',
    'd=4; SameSite=Lax; Path=/agents/acme/mcp',
  ]);
});

test('filterResponseHeaders scopes set-cookie only when given the agent', () => {
  const headers = { 'set-cookie': ['s=1; Path=/'], 'content-type': 'application/json' };
  assert.deepEqual(filterResponseHeaders(headers, 'acme'), { 'set-cookie': ['s=1; Path=/agents/acme/mcp'], 'content-type': 'application/json' });
  assert.deepEqual(filterResponseHeaders(headers), headers);
});
