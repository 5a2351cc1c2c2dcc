/**
 * SseIdTokenLog (response/sse-id-token-log.ts): the throttled warnings for a stream's event ids
 * that could not become resume tokens, on the drop warnings' throttle
 * (response/stream-warning-throttle.ts). The interval is driven by node:test's mock timers (no
 * real waiting, no timing assertion): the first id is logged at once; later ones wait for one
 * summary an interval after the first of them; the stream's end logs those not yet logged, and
 * nothing when there are none. The exchange's count (`eventIdsNotTokenized`) is exact after
 * every id; the first line carries the cause, asked for once (hostile trial 55, F4). Reported
 * failure: a hostile new user's trial 10, F2
 * (test/regressions/untokenizable-id-warning-flood-log.test.ts).
 */
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyBaseLogger } from 'fastify';
import type { Exchange } from '../../src/exchange.js';
import { FIRST_ID_NOT_TOKENIZED_MSG, IDS_NOT_TOKENIZED_SUMMARY_MSG, SseIdTokenLog, tokenRefusalCause } from '../../src/response/sse-id-token-log.js';
import { WARNING_SUMMARY_INTERVAL_MS } from '../../src/response/stream-warning-throttle.js';

interface Line {
  msg: string;
  fields: Record<string, unknown>;
}

function setup(): { log: SseIdTokenLog; lines: Line[]; exchange: Exchange } {
  const lines: Line[] = [];
  const logger = { warn: (fields: Record<string, unknown>, msg: string) => lines.push({ msg, fields: structuredClone(fields) }) } as unknown as FastifyBaseLogger;
  const exchange = { agent: { name: 'a' }, eventIdsNotTokenized: undefined } as unknown as Exchange;
  return { log: new SseIdTokenLog(exchange, logger), lines, exchange };
}

const summary = (since: number, total: number, ended: boolean): Line => ({
  msg: IDS_NOT_TOKENIZED_SUMMARY_MSG,
  fields: { agent: 'a', not_tokenized: since, not_tokenized_total: total, stream_ended: ended },
});

beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

test('one id: its line at once, nothing at the end', () => {
  const { log, lines, exchange } = setup();
  log.notTokenized('forwarded without an id', () => 'why');
  assert.deepEqual(lines, [{ msg: `${FIRST_ID_NOT_TOKENIZED_MSG}forwarded without an id (why)`, fields: { agent: 'a' } }]);
  log.end();
  assert.equal(lines.length, 1);
  assert.equal(exchange.eventIdsNotTokenized, 1);
});

test('later ids: one summary an interval after the first of them, then the end\'s', () => {
  const { log, lines, exchange } = setup();
  let asked = 0;
  const why = (): string => `why ${++asked}`;
  for (let i = 0; i < 1001; i++) log.notTokenized('forwarded without an id', why);
  assert.equal(asked, 1, 'the cause is asked for the first id only');
  assert.equal(lines.length, 1);
  assert.equal(exchange.eventIdsNotTokenized, 1001);
  mock.timers.tick(WARNING_SUMMARY_INTERVAL_MS - 1);
  assert.equal(lines.length, 1, 'not before the interval');
  mock.timers.tick(1);
  assert.deepEqual(lines[1], summary(1000, 1001, false));
  mock.timers.tick(WARNING_SUMMARY_INTERVAL_MS * 2);
  assert.equal(lines.length, 2, 'nothing pending: no line');
  log.notTokenized('forwarded without an id', why);
  log.notTokenized('id-only block dropped', why);
  log.end();
  assert.deepEqual(lines[2], summary(2, 1003, true));
  log.end();
  assert.equal(lines.length, 3, 'end is idempotent');
});

test('the cause says "over 4096" only when the length refused the token; another refusal is named as it is', () => {
  const exchange = (tokenRefusal: Exchange['tokenRefusal']): Exchange =>
    ({ agent: { name: 'a' }, rpc: { kind: 'request', id: 'r'.repeat(3_000), idText: undefined, method: 'tools/call', toolName: 't' }, tokenRefusal }) as unknown as Exchange;
  assert.equal(
    tokenRefusalCause(exchange({ code: 'resume_token_too_long', message: 'resume token would be 4200 characters, over 4096' }), 'ev1'),
    "the token would be over 4096 characters: the request's id is 3002 characters; the seller's event id 3",
  );
  assert.equal(
    tokenRefusalCause(exchange({ code: 'resume_state_invalid', message: 'cannot mint a resume token: invalid usedBytes' }), 'ev1'),
    'the resume token could not be minted: resume_state_invalid, cannot mint a resume token: invalid usedBytes',
  );
  assert.equal(tokenRefusalCause(exchange(undefined), 'ev1'), 'the resume token could not be minted: no cause reported');
  assert.equal(tokenRefusalCause(exchange(undefined), 'év1'), "the seller's event id cannot be sent back in a Last-Event-ID header (printable ASCII only)");
});
