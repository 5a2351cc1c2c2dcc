/**
 * request/via.ts: the gateway's own Via entry (RFC 9110 §7.6.3), how it is appended to the
 * host's Via, and how a Via carrying it is recognized (received-by compared exactly, with or
 * without a port; never inside a comment or another token).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendVia, createOwnVia, viaCarries } from '../../src/request/via.js';

test('each instance gets its own random pseudonym and entries', () => {
  const a = createOwnVia();
  const b = createOwnVia();
  assert.match(a.pseudonym, /^adcp-gw-[0-9a-f]{16}$/);
  assert.notEqual(a.pseudonym, b.pseudonym);
  assert.equal(a.entry11, `1.1 ${a.pseudonym}`);
  assert.equal(a.entry10, `1.0 ${a.pseudonym}`);
});

test('a Via carries the pseudonym when one entry is received by it', () => {
  const p = createOwnVia().pseudonym;
  for (const via of [`1.1 ${p}`, `1.0 corp, 1.1 ${p}`, `1.1 ${p}, 1.1 other`, `HTTP/1.1 ${p}:8787`, `1.1 ${p} (adcp-buyer-gateway)`, `1.1\t${p}`, ` 1.1 ${p} `]) {
    assert.equal(viaCarries(via, p), true, via);
  }
  assert.equal(viaCarries(['1.1 corp', `1.1 ${p}`], p), true);
});

test('a Via without such an entry does not', () => {
  const p = createOwnVia().pseudonym;
  for (const via of ['', '1.1 corp', `1.1 other (${p})`, `1.1 ${p}x`, `1.1 x${p}`, `${p}`, `1.1 ${createOwnVia().pseudonym}`]) {
    assert.equal(viaCarries(via, p), false, via);
  }
  assert.equal(viaCarries(undefined, p), false);
});

test("the gateway's entry goes after the host's", () => {
  assert.equal(appendVia(undefined, '1.1 me'), '1.1 me');
  assert.equal(appendVia('', '1.1 me'), '1.1 me');
  assert.equal(appendVia('1.0 corp', '1.1 me'), '1.0 corp, 1.1 me');
  assert.equal(appendVia(['1.0 a', '1.1 b'], '1.1 me'), '1.0 a, 1.1 b, 1.1 me');
});
