/**
 * isEmptyObjectData (response/kindless-event.ts): an SDK's priming event's data, exactly `{}`
 * with JSON whitespace around or inside, as text or as UTF-8 bytes (a hostile trial 47, F2:
 * test/regressions/sdk-priming-event-replayed-warns.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isEmptyObjectData } from '../../src/response/kindless-event.js';

test('exactly an empty JSON object, JSON whitespace allowed; nothing else', () => {
  const yes = ['{}', ' {}', '{} ', '\t{ \r\n}\n', ' { } '];
  const no = ['', ' ', '{', '}', '{}}', '{{}}', '{"a":1}', '{"jsonrpc":"2.0"}', '[]', '[{}]', '{}x', '\u00a0{}', '\ufeff{}', '{\u2028}', 'null'];
  for (const d of yes) {
    assert.equal(isEmptyObjectData(d), true, JSON.stringify(d));
    assert.equal(isEmptyObjectData(Buffer.from(d)), true, `bytes ${JSON.stringify(d)}`);
  }
  for (const d of no) {
    assert.equal(isEmptyObjectData(d), false, JSON.stringify(d));
    assert.equal(isEmptyObjectData(Buffer.from(d)), false, `bytes ${JSON.stringify(d)}`);
  }
});
