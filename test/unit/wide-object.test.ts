/**
 * request/message-members.ts wideObjectOf: the one judgement of a message too wide to read, a
 * host's (request/peek.ts, the parse reading) and a seller's (response/wide-answer.ts
 * isWideMessage), which were near-copies before (a re-read after trial 54). The member judged
 * is the one `JSON.parse` keeps: the last of repeated keys, an escaped key decoded.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { objectMembersOf, readObjectMembers, wideObjectOf, type WideObject } from '../../src/request/message-members.js';
import { scanJson } from '../../src/mcp/json-scan.js';
import { isWideMessage } from '../../src/response/wide-answer.js';
import { peekByParse } from '../../src/request/peek.js';

const keys = (n: number, prefix = 'k'): string => Array.from({ length: n }, (_, i) => `"${prefix}${i}":0`).join(',');
const WIDE_ERROR = `{"code":1,"message":"m",${keys(999)}}`; // 1001 members
const AT_BOUND_ERROR = `{"code":1,"message":"m",${keys(998)}}`; // 1000 members

/** wideObjectOf of `text` with the message object walked, as the peek reads it. */
function judged(text: string, inner: 'params' | 'error' | undefined): WideObject | undefined {
  const view = Buffer.from(text);
  return wideObjectOf(view, readObjectMembers(view, view.indexOf(0x7b)), inner);
}

describe('wideObjectOf', () => {
  test('the message object over the bound, whatever `inner`', () => {
    assert.deepEqual(judged(`{"jsonrpc":"2.0","id":1,"method":"ping",${keys(998)}}`, undefined), { of: 'the message', count: 1001, unread: false });
    assert.equal(judged(`{"jsonrpc":"2.0","id":1,"method":"ping",${keys(997)}}`, 'params'), undefined);
    // More than 1000 keys that may be names: unread.
    assert.deepEqual(judged(`{${keys(1001, 'I\\u0044')}}`, undefined), { of: 'the message', count: 1001, unread: true });
  });

  test('the inner object: the last of repeated keys, an escaped key decoded, only an object', () => {
    assert.deepEqual(judged(`{"id":1,"error":${WIDE_ERROR}}`, 'error'), { of: '"error"', count: 1001, unread: false });
    assert.equal(judged(`{"id":1,"error":${AT_BOUND_ERROR}}`, 'error'), undefined);
    assert.equal(judged(`{"id":1,"error":${WIDE_ERROR},"error":{}}`, 'error'), undefined, 'the last error is small');
    assert.deepEqual(judged(`{"id":1,"error":{},"err\\u006fr":${WIDE_ERROR}}`, 'error'), { of: '"error"', count: 1001, unread: false });
    assert.equal(judged(`{"id":1,"error":${WIDE_ERROR},"error":[1]}`, 'error'), undefined, 'the last error is no object');
    assert.equal(judged(`{"id":1,"error":${WIDE_ERROR}}`, 'params'), undefined, 'another member');
    assert.deepEqual(judged(`{"id":1,"method":"tools/call","params":{"name":"x",${keys(1000)}}}`, 'params'), { of: '"params"', count: 1001, unread: false });
  });

  test('the seller side (isWideMessage, the message scanned) and the host side (the parse reading) agree', () => {
    for (const [text, wide] of [
      [`{"jsonrpc":"2.0","id":1,"error":${WIDE_ERROR}}`, true],
      [`{"jsonrpc":"2.0","id":1,"error":${AT_BOUND_ERROR}}`, false],
      [`{"jsonrpc":"2.0","id":1,"error":${WIDE_ERROR},"error":{"code":1,"message":"m"}}`, false],
      [`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"\\u0065rror":${WIDE_ERROR}}`, true],
    ] as const) {
      const body = Buffer.from(text);
      const scan = scanJson(body, { maxDepth: 64, maxNodes: 100_000 });
      assert.ok(scan.ok);
      assert.equal(isWideMessage(body, scan), wide, text.slice(0, 60));
      assert.equal(wideObjectOf(body, objectMembersOf(body)!, 'error') !== undefined, wide, text.slice(0, 60));
      const peek = peekByParse(body);
      assert.equal(!peek.ok && peek.message.includes('"error" has 1001 members'), wide, `${text.slice(0, 60)}: ${JSON.stringify(peek).slice(0, 200)}`);
    }
  });
});
