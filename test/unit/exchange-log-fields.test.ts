/**
 * exchangeLogFields (observability/logger.ts): the exchange line's fields. `text_not_lifted`
 * appears only when a tool result was left unlifted because of a text bound (exchange.ts
 * `textNotLifted`), so the common line keeps exactly its fields (a reviewer: "a text over the
 * bounds was silently not lifted"; test/regressions/text-over-bounds-not-lifted-silently.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { exchangeLogFields } from '../../src/observability/logger.js';
import { EXCHANGE_LINE_FIELDS } from '../helpers/exchange-line-fields.js';

const FIELDS = EXCHANGE_LINE_FIELDS;

function exchange(over: Partial<Exchange> = {}): Exchange {
  return {
    agent: { name: 'a' },
    rpc: { kind: 'request', id: 1, idText: undefined, method: 'tools/call', toolName: 'get_products' },
    outcome: 'ok',
    reason: undefined,
    upstreamStatus: 200,
    bytesFromSeller: 10,
    bytesDecoded: 10,
    bytesToHost: 10,
    bytesSaved: 0,
    textNotLifted: undefined,
    startedAt: process.hrtime.bigint(),
    ...over,
  } as unknown as Exchange;
}

test('the common line: the same fields, no text_not_lifted', () => {
  assert.deepEqual(Object.keys(exchangeLogFields(exchange(), 200, 'POST')), FIELDS);
  assert.deepEqual(Object.keys(exchangeLogFields(exchange({ outcome: 'rewritten' }), 200, 'POST')), FIELDS);
});

test('text_not_lifted: the reason, after the other fields, only when set', () => {
  // A text bound's reasons, and the limits a lift skipped for room names (test/regressions/lift-skipped-for-room-silent.test.ts).
  for (const reason of ['text_bytes', 'json_depth', 'json_nodes', 'proto_key', 'lone_surrogate', 'repeated_key', 'negative_zero', 'lossy_number', 'max_response_bytes', 'max_sse_event_bytes'] as const) {
    const fields = exchangeLogFields(exchange({ textNotLifted: reason }), 200, 'POST');
    assert.deepEqual(Object.keys(fields), [...FIELDS, 'text_not_lifted']);
    assert.equal(fields.text_not_lifted, reason);
    assert.equal(fields.outcome, 'ok');
    assert.equal(fields.reason, null, 'not an error: `reason` stays null');
  }
});
