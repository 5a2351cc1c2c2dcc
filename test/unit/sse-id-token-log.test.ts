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
import { MEASURED_PART_TOKEN_CHARS, tokenPartCosts, type ResumeState } from '../../src/resume/token.js';
import { toolCallState } from '../helpers/resume-codec.js';

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

const STATE = toolCallState('ev1', 'a', 'r'.repeat(3_000));
const tooLong = (state: Omit<ResumeState, 'issuedAt'>): Exchange['tokenRefusal'] => ({ code: 'resume_token_too_long', message: 'resume token would be 4200 characters, over 4096', state });
const withRefusal = (tokenRefusal: Exchange['tokenRefusal']): Exchange => ({ agent: { name: 'a' }, tokenRefusal }) as unknown as Exchange;

test('the cause says "over 4096" only when the length refused the token; another refusal is named as it is', () => {
  assert.equal(
    tokenRefusalCause(withRefusal(tooLong(STATE)), 'ev1'),
    "the token would be over 4096 characters: the request's id takes 4003 characters of the token; the seller's event id 7",
  );
  assert.equal(
    tokenRefusalCause(withRefusal({ code: 'resume_state_invalid', message: 'cannot mint a resume token: invalid usedBytes', state: STATE }), 'ev1'),
    'the resume token could not be minted: resume_state_invalid, cannot mint a resume token: invalid usedBytes',
  );
  assert.equal(tokenRefusalCause(withRefusal(undefined), 'ev1'), 'the resume token could not be minted: no cause reported');
  assert.equal(tokenRefusalCause(withRefusal(undefined), 'év1'), "the seller's event id cannot be sent back in a Last-Event-ID header (printable ASCII only)");
});

test('the cause names the parts of the refused state, measured as the token encodes them, biggest first (hostile trial 56, F4)', () => {
  const cause = (over: Partial<Omit<ResumeState, 'issuedAt'>>): string => tokenRefusalCause(withRefusal(tooLong({ ...STATE, ...over })), 'ev1');
  // The protocol version is a part: 3,102 bytes of JSON, 4136 of the token.
  assert.equal(cause({ rpcId: 5, protocolVersion: 'p'.repeat(3100) }), "the token would be over 4096 characters: the protocol version takes 4136 characters of the token; the seller's event id 7");
  // Escapes count: 700 U+0001 are 4,202 bytes (`\u0001` each), before a 1,500-character tool name.
  assert.equal(
    cause({ rpcId: '\x01'.repeat(700), toolName: 't'.repeat(1500) }),
    "the token would be over 4096 characters: the request's id takes 5603 characters of the token; the tool name 2003; the seller's event id 7",
  );
  // UTF-8: 1,000 `é` are 2,002 bytes, over 1,500 ASCII characters of method; a batch's levels (its `t`), the agent's name.
  assert.equal(
    cause({ rpcId: 'é'.repeat(1000), method: 'm'.repeat(1500), agent: 'g'.repeat(100) }),
    "the token would be over 4096 characters: the request's id takes 2670 characters of the token; the method 2003; the agent's name 136; the seller's event id 7",
  );
  // A number id with its text (`x`) carried beside it; a huge string id said to be over the bound, never measured whole.
  assert.equal(cause({ rpcId: 1, rpcIdText: '1.' + '0'.repeat(3000) }), "the token would be over 4096 characters: the request's id takes 4007 characters of the token; the seller's event id 7");
  assert.equal(
    cause({ rpcId: 'h'.repeat(1_000_000), toolName: 'k'.repeat(70_000) }),
    "the token would be over 4096 characters: the request's id takes over 65536 characters of the token; the tool name over 65536; the seller's event id 7",
  );
});

test('tokenPartCosts: each string part is its JSON text\'s UTF-8 bytes x 4/3, as JSON.stringify and base64url make it', () => {
  const samples = ['', 'a', '"', '\\', '\b\f\n\r\t', '\x00\x01\x1f', '\x7f', 'é', '\u07ff', '\u0800', '\u2028\u2029', '😀', '\ud800', '\udc00x', '\ud800\ud800\udc00', 'mixed "é\x02😀\\'];
  for (const text of samples) {
    const [cost] = tokenPartCosts({ ...STATE, rpcId: text });
    assert.deepEqual(cost, { key: 'i', chars: Math.ceil((Buffer.byteLength(JSON.stringify(text)) * 4) / 3), over: false }, JSON.stringify(text));
  }
  const awaited = ['k1', 'é"2'];
  const w = tokenPartCosts({ ...STATE, awaited }).find((p) => p.key === 'w');
  assert.deepEqual(w, { key: 'w', chars: Math.ceil((Buffer.byteLength(JSON.stringify(awaited)) * 4) / 3), over: false });
  assert.deepEqual(
    tokenPartCosts({ ...STATE, rpcId: null, method: undefined, toolName: undefined }).map((p) => p.key),
    ['u', 'a', 'v'],
  );
  assert.equal(MEASURED_PART_TOKEN_CHARS, 65_536);
});
