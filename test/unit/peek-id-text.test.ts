/**
 * peekJsonRpc's `idText` (src/request/peek.ts) and stringifyJsonRpc (src/errors/json-rpc-text.ts):
 * a numeric id a double cannot carry keeps the host's text, and minted messages carry it.
 * Reported failure: big numeric ids lost digits in minted errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peekJsonRpc } from '../../src/request/peek.js';
import { stringifyJsonRpc } from '../../src/errors/json-rpc-text.js';

const idText = (idJson: string, key = '"id"'): string | undefined => {
  const r = peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0",${key}:${idJson},"method":"ping"}`));
  assert.equal(r.ok, true);
  return r.ok ? r.peek.idText : undefined;
};

test('idText: only for a number that JSON.parse changes', () => {
  assert.equal(idText('9007199254740993'), '9007199254740993');
  assert.equal(idText('-12345678901234567890'), '-12345678901234567890');
  assert.equal(idText('9007199254740992'), undefined); // exact as a double
  assert.equal(idText('42'), undefined);
  assert.equal(idText('1.5'), undefined);
  assert.equal(idText('1e3'), undefined); // the same value as 1000
  assert.equal(idText('"9007199254740993"'), undefined); // a string id is exact already
  // A key written with escapes: the id cannot be found by its plain key; the parsed value is used.
  assert.equal(idText('9007199254740993', '"\\u0069d"'), undefined);
  // The last of duplicate keys is the one JSON.parse keeps.
  assert.equal(idText('9007199254740995', '"id":1,"id"'), '9007199254740995');
});

test('idText of an invalid request is kept for its refusal', () => {
  const r = peekJsonRpc(Buffer.from('{"jsonrpc":"1.0","id":9007199254740993,"method":"ping"}'));
  assert.equal(r.ok, false);
  assert.equal(r.ok ? undefined : r.idText, '9007199254740993');
});

test('stringifyJsonRpc writes the id text in place of the parsed id, and only there', () => {
  const message = { jsonrpc: '2.0' as const, id: 9007199254740992, error: { code: -1, message: 'id 9007199254740992' } };
  assert.equal(stringifyJsonRpc(message, '9007199254740993'), '{"jsonrpc":"2.0","id":9007199254740993,"error":{"code":-1,"message":"id 9007199254740992"}}');
  assert.equal(stringifyJsonRpc(message, undefined), JSON.stringify(message));
});
