/**
 * response/ack-body.ts: which 2xx bodies answering a POST without a request are a seller's
 * acknowledgement (dropped: 202, no body) and which hold a JSON-RPC message (judged as before).
 * Source: a new user's hostile trial 12, M2 (test/regressions/notification-ack-body-breaks-sdk-connect.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ACK_BODY, isUnscannedAckBody, readAckBody } from '../../src/response/ack-body.js';
import { JsonScanner } from '../../src/mcp/json-scan.js';
import { NOT_JSON } from '../../src/mcp/parse-json.js';

const LIMITS = { maxDepth: 8, maxNodes: 50 };
const ack = (text: string | Buffer): boolean => isUnscannedAckBody(typeof text === 'string' ? Buffer.from(text) : text, LIMITS);

describe('isUnscannedAckBody', () => {
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

/** readAckBody of `text` (no BOM) after its scan under LIMITS, as the JSON stage calls it. */
const read = (text: string): unknown => {
  const body = Buffer.from(text);
  const scanner = new JsonScanner({ ...LIMITS, ignoreBom: true });
  scanner.feed(body);
  return readAckBody(body, scanner.end());
};

describe('readAckBody', () => {
  test('an acknowledgement: ACK_BODY, whatever was read to tell', () => {
    for (const text of ['OK', 'null', '"ok"', '{}', '[]', '{"status":"accepted"}', '[1,{"a":{"id":1}}]', '{"data":[{"x":NaN}]}']) assert.equal(read(text), ACK_BODY, text);
  });

  test('an object or array holding a message: its JSON value, parsed once for the caller to judge', () => {
    assert.deepEqual(read('{"jsonrpc":"2.0","id":1,"result":{}}'), { jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(read('[{"ok":1},{"id":2}]'), [{ ok: 1 }, { id: 2 }]);
    assert.deepEqual(read('{"ID":1}'), { ID: 1 });
  });

  test('no acknowledgement and not parsed (over the bounds, a message read leniently): undefined', () => {
    assert.equal(read('['.repeat(9) + ']'.repeat(9)), undefined, 'depth 9 over 8');
    assert.equal(read(`[${'0,'.repeat(60)}0]`), undefined, 'nodes over 50');
    assert.equal(read('{"jsonrpc":"2.0","id":1,"result":{"score":NaN}}'), undefined, 'NaN');
  });

  test('the width as the caller judged it (json-stage.ts judges it once for both readings): wide, undefined without a parse; not wide, parsed', () => {
    const body = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}');
    const scanner = new JsonScanner({ ...LIMITS, ignoreBom: true });
    scanner.feed(body);
    const scan = scanner.end();
    assert.equal(readAckBody(body, scan, true), undefined);
    assert.deepEqual(readAckBody(body, scan, false), { jsonrpc: '2.0', id: 1, result: {} });
    const wide = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{},${Array.from({ length: 1001 }, (_, i) => `"k${i}":0`).join(',')}}`);
    const wideScanner = new JsonScanner({ maxDepth: 8, maxNodes: 5000, ignoreBom: true });
    wideScanner.feed(wide);
    assert.equal(readAckBody(wide, wideScanner.end()), undefined, 'judged here when not given');
  });

  test('a scan that read JSON the parse refuses (never in practice): NOT_JSON, no acknowledgement', () => {
    assert.equal(readAckBody(Buffer.from('{"a"'), { ok: true, top: 'object' } as Parameters<typeof readAckBody>[1]), NOT_JSON);
  });
});
