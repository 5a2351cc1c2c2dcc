/**
 * response/ack-body.ts: which 2xx bodies answering a POST without a request are a seller's
 * acknowledgement (dropped: 202, no body) and which hold a JSON-RPC message (judged as before).
 * Source: a new user's hostile trial 12, M2 (test/regressions/notification-ack-body-breaks-sdk-connect.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isUnscannedAckBody } from '../../src/response/ack-body.js';

const LIMITS = { maxDepth: 8, maxNodes: 50 };
const ack = (text: string | Buffer): boolean => isUnscannedAckBody(typeof text === 'string' ? Buffer.from(text) : text, LIMITS);

describe('isAckBody', () => {
  test('no JSON-RPC message: an acknowledgement', () => {
    for (const text of ['OK', 'Accepted', '{}', 'null', '1', '"ok"', '[]', '[1,{"a":{"id":1}}]', '{"status":"accepted"}', '{accepted', '<html></html>', '{"data":[{"x":NaN}]}']) {
      assert.equal(ack(text), true, text);
    }
    assert.equal(ack(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), true, 'a BOM and {}');
  });

  test('a JSON-RPC member, as written, escaped, in any case as Go folds it, or in an array: no acknowledgement', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '{"jsonrpc":"1.0"}',
      '{"id":1}',
      '{"\\u0069d":1}',
      '{"ID":1}',
      '{"reſult":{}}',
      '{"METHOD":"x"}',
      '{"error":null}',
      '[{"ok":1},{"id":2}]',
      '[[{"result":{}}]]',
      '{"jsonrpc":"2.0","id":1,"result":{"score":NaN}}',
      `[NaN,${'['.repeat(12)}{"id":1}${']'.repeat(12)}]`,
    ]) {
      assert.equal(ack(text), false, text);
    }
  });

  test('over the structure bounds: no acknowledgement (refused as before)', () => {
    assert.equal(ack('['.repeat(9) + ']'.repeat(9)), false, 'depth 9 over 8');
    assert.equal(ack(`[${'0,'.repeat(60)}0]`), false, 'nodes over 50');
  });

  test('a leniently read text nested deeper than any stack: judged without recursion', () => {
    const deep = (inner: string): string => `[NaN,${'['.repeat(200_000)}${inner}${']'.repeat(200_000)}]`;
    assert.equal(ack(deep('{"id":1}')), false, 'a message at the bottom');
    assert.equal(ack(deep('{"ok":1}')), true, 'none');
  });
});
