/**
 * Reported failure (code review of hostile trial 36, F5): resume/token.ts computes
 * config/agent-url-key.ts agentUrlKey on every mint and every verify, and again per previous
 * url; for a url whose key is not its `href` (a `%`, a fragment, a trailing `?`) each call
 * re-read its parts and rewrote its percent-encodings, for the same URL object every time.
 *
 * Now the key of such a url is kept per URL object (a WeakMap, checked against the object's
 * `href`, so a URL changed after it was keyed gets its new key); a url whose key is its `href`
 * is answered from the `href`, as before, and kept nowhere.
 *
 * Expected: the slow path reads a URL's parts (here: `pathname`, counted by an own getter on the
 * instance) once over many calls; the key unchanged; a mutated URL rekeyed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentUrlKey } from '../../src/config/agent-url-key.js';
import { createResumeCodec } from '../../src/resume/token.js';

/** A URL whose `pathname` reads are counted (an own accessor over URL.prototype's). */
function countedUrl(href: string): { url: URL; reads: () => number } {
  const url = new URL(href);
  const proto = Object.getOwnPropertyDescriptor(URL.prototype, 'pathname')!;
  let reads = 0;
  Object.defineProperty(url, 'pathname', {
    get() {
      reads++;
      return proto.get!.call(url) as string;
    },
  });
  return { url, reads: () => reads };
}

test('the key of a url that is not its href is computed once per URL object', () => {
  const { url, reads } = countedUrl('https://seller.example/m%63p?');
  for (let i = 0; i < 5; i++) assert.equal(agentUrlKey(url), 'https://seller.example/mcp');
  assert.equal(reads(), 1);
});

test('through the resume codec: mint and verify key the url once', () => {
  const codec = createResumeCodec({ secret: 'agent-url-key-cache-secret-0123456789', ttlMs: 60_000, now: () => 1_000_000 });
  const { url, reads } = countedUrl('https://seller.example/a%2fb');
  const state = { upstreamId: 'e1', agent: 's', rpcId: 7, method: 'tools/call', toolName: 'get_products', usedBytes: 10, limitBytes: 100, protocolVersion: '2025-11-25', streamStartedAt: 999_000 };
  const token = codec.mint(state, url);
  for (let i = 0; i < 3; i++) assert.equal(codec.verify(token, 's', url).ok, true);
  // Verified against a previous url too (the one in force another): each URL keyed once.
  const moved = countedUrl('https://other.example/m%63p');
  const result = codec.verify(token, 's', moved.url, [url]);
  assert.deepEqual([result.ok, result.ok && result.sellerMoved], [true, true]);
  assert.equal(codec.verify(token, 's', moved.url, [url]).ok, true);
  assert.equal(reads(), 1);
  assert.equal(moved.reads(), 1);
});

test('a URL changed after it was keyed gets its new key; a url that is its key is its href', () => {
  const url = new URL('https://seller.example/m%63p');
  assert.equal(agentUrlKey(url), 'https://seller.example/mcp');
  url.pathname = '/other%7e';
  assert.equal(agentUrlKey(url), 'https://seller.example/other~');
  url.search = '?';
  url.pathname = '/plain';
  assert.equal(agentUrlKey(url), 'https://seller.example/plain');
  const plain = new URL('https://seller.example/mcp');
  assert.equal(agentUrlKey(plain), plain.href);
});
