/**
 * src/mcp/parse-json.ts parseJsonText: the one `JSON.parse` of a body the JSON answer path and
 * the acknowledgement check share (response/json-stage.ts, response/ack-body.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOT_JSON, parseJsonText } from '../../src/mcp/parse-json.js';

test('parseJsonText: the JSON value of the bytes', () => {
  assert.deepEqual(parseJsonText(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}')), { jsonrpc: '2.0', id: 1, result: {} });
  assert.deepEqual(parseJsonText(Buffer.from(' [1,"é"] ')), [1, 'é']);
  assert.equal(parseJsonText(Buffer.from('null')), null);
  assert.equal(parseJsonText(Buffer.from('0')), 0);
  // Ill-formed UTF-8 inside a string: U+FFFD, as Buffer#toString('utf8') decodes.
  assert.equal(parseJsonText(Buffer.from([0x22, 0x61, 0xff, 0x22])), 'a\ufffd');
});

test('parseJsonText: NOT_JSON for bytes that are no JSON text, never undefined', () => {
  for (const bytes of [Buffer.from(''), Buffer.from('OK'), Buffer.from('{"a":1'), Buffer.from('{"a":NaN}'), Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])]) {
    assert.equal(parseJsonText(bytes), NOT_JSON, bytes.toString('latin1'));
  }
});
