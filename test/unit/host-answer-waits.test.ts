/**
 * routing/host-answer-waits.ts and response/server-request-id.ts (hostile trial 57, F3): which
 * seller messages are server requests, which streams wait for the host's answer, which answer
 * ends the wait (seller endpoint, session, canonical id), and that nothing outlives its streams.
 */
import { describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostAnswerWaits, sessionKeyOf, MAX_AWAITED_PER_STREAM, MAX_PARKED_CALLS, MAX_PARKED_CALLS_PER_SESSION } from '../../src/routing/host-answer-waits.js';
import { clock } from '../helpers/recording-idle-clock.js';
import { sellerCancelledIdOf, serverRequestIdOf } from '../../src/response/server-request-id.js';
import { canonicalRequestId } from '../../src/response/json-value-at.js';

const BOUNDS = { maxDepth: 64, maxNodes: 100_000 };


/** The canonical id of the number `n` (json-value-at.ts). */
const num = (n: number): string => canonicalRequestId({ id: n, idText: undefined })!;

const answer = (id: string | number, idText?: string): { id: string | number; idText: string | undefined } => ({ id, idText });

describe('serverRequestIdOf', () => {
  test('a request with a method and a string or number id: its canonical id, from text or bytes', () => {
    assert.equal(serverRequestIdOf('{"method":"elicitation/create","params":{},"jsonrpc":"2.0","id":0}', BOUNDS), 'n0');
    assert.equal(serverRequestIdOf(Buffer.from('{"jsonrpc":"2.0","id":"a\\u0062","method":"roots/list"}'), BOUNDS), 'sab');
    assert.equal(serverRequestIdOf('{"jsonrpc":"2.0","id":7.0,"method":"sampling/createMessage"}', BOUNDS), 'n7e0');
  });

  test('no request: a notification, a response, an empty method, an escaped or repeated key, an array, null, a long id', () => {
    for (const data of [
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}',
      '{"jsonrpc":"2.0","id":1,"result":{"method":"x"}}',
      '{"jsonrpc":"2.0","id":1,"method":""}',
      '{"jsonrpc":"2.0","\\u0069d":1,"method":"x"}',
      '{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}',
      '[{"jsonrpc":"2.0","id":1,"method":"x"}]',
      '{"jsonrpc":"2.0","id":null,"method":"x"}',
      `{"jsonrpc":"2.0","id":"${'x'.repeat(300)}","method":"x"}`,
      'not json "id" "method"',
    ]) {
      assert.equal(serverRequestIdOf(data, BOUNDS), undefined, data.slice(0, 60));
    }
  });
});

describe('HostAnswerWaits', () => {
  test("a stream waits for its own request until the host's answer for that id, in its seller and session", () => {
    const waits = new HostAnswerWaits();
    const c = clock();
    const s = waits.openStream('seller', 'S1', c);
    s.await(num(3));
    assert.equal(c.calls, 'p');
    waits.answered('other-seller', 'S1', answer(3));
    waits.answered('seller', 'S2', answer(3));
    waits.answered('seller', 'S1', answer('3'));
    waits.answered('seller', 'S1', answer(4));
    assert.equal(c.calls, 'p', 'another seller, session or id: still waiting');
    waits.answered('seller', 'S1', answer(3, '3.00'));
    assert.equal(c.calls, 'pr', 'the same id, however written');
    s.close();
    assert.equal(waits.sessions, 0);
  });

  test('two requests: the clock restarts once both are answered', () => {
    const waits = new HostAnswerWaits();
    const c = clock();
    const s = waits.openStream('seller', 'S', c);
    s.await(num(1));
    s.await(num(2));
    waits.answered('seller', 'S', answer(1));
    assert.equal(c.calls, 'p');
    waits.answered('seller', 'S', answer(2));
    assert.equal(c.calls, 'pr');
    s.close();
  });

  test("a request on a stream answering no call: every stream of the session waits, one opened meanwhile too, not another session's", () => {
    const waits = new HostAnswerWaits();
    const a = clock();
    const other = clock();
    const sa = waits.openStream('seller', 'S', a);
    const so = waits.openStream('seller', 'T', other);
    const get = waits.openStream('seller', 'S', undefined);
    get.awaitShared(num(0));
    const b = clock();
    const sb = waits.openStream('seller', 'S', b);
    assert.deepEqual([a.calls, b.calls, other.calls], ['p', 'p', '']);
    // The GET stream ends (the SDK client reconnects it): its request is still awaited.
    get.close();
    assert.deepEqual([a.calls, b.calls], ['p', 'p']);
    waits.answered('seller', 'S', answer(0));
    assert.deepEqual([a.calls, b.calls], ['pr', 'pr']);
    for (const s of [sa, so, sb]) s.close();
    assert.equal(waits.sessions, 0);
  });

  test('a stream that ends is never called again; the last member takes the shared requests with it', () => {
    const waits = new HostAnswerWaits();
    const c = clock();
    const s = waits.openStream('seller', 'S', c);
    const get = waits.openStream('seller', 'S', undefined);
    get.awaitShared(num(9));
    s.close();
    get.close();
    waits.answered('seller', 'S', answer(9));
    assert.equal(c.calls, 'p');
    assert.equal(waits.sessions, 0);
    const later = clock();
    waits.openStream('seller', 'S', later).close();
    assert.equal(later.calls, '', 'nothing outstanding from before');
  });

  test(`at most ${MAX_AWAITED_PER_STREAM} ids per stream are tracked`, () => {
    const waits = new HostAnswerWaits();
    const c = clock();
    const s = waits.openStream('seller', 'S', c);
    for (let i = 0; i <= MAX_AWAITED_PER_STREAM; i++) s.await(num(i));
    for (let i = 0; i < MAX_AWAITED_PER_STREAM; i++) waits.answered('seller', 'S', answer(i));
    assert.equal(c.calls, 'pr', 'the untracked one is not waited for');
    s.close();
  });

  test("the seller's cancellation of its own request ends the wait, shared or a stream's own (review of trial 57 F3's fix)", () => {
    const waits = new HostAnswerWaits();
    const a = clock();
    const sa = waits.openStream('seller', 'S', a);
    const get = waits.openStream('seller', 'S', undefined);
    get.awaitShared(num(3));
    sa.await(canonicalRequestId(answer('x'))!);
    assert.equal(waits.anyAwaitedIn(sessionKeyOf('seller', 'S')), true);
    waits.cancelledBySeller('seller', 'S', num(3));
    assert.equal(a.calls, 'p', 'still waits for its own');
    waits.cancelledBySeller('seller', 'S', 'sx');
    assert.equal(a.calls, 'pr');
    assert.equal(waits.anyAwaitedIn(sessionKeyOf('seller', 'S')), false);
    for (const s of [sa, get]) s.close();
    assert.equal(waits.sessions, 0);
  });

  test('a shared request seen more than its graceMs before a stream opened does not pause that stream', () => {
    const waits = new HostAnswerWaits();
    const get = waits.openStream('seller', 'S', undefined);
    get.awaitShared(num(0));
    const late = clock();
    const sl = waits.openStream('seller', 'S', late, -1);
    const soon = clock();
    const ss = waits.openStream('seller', 'S', soon, 60_000);
    assert.deepEqual([late.calls, soon.calls], ['', 'p']);
    for (const s of [get, sl, ss]) s.close();
  });

  // Review of trial 57 F3's fix (Medium): test/regressions/elicitation-wait-lost-on-resume.test.ts.
  test("a call's stream ended resumable leaves its outstanding ids to its resume, in its seller and session only", () => {
    const waits = new HostAnswerWaits();
    const call = num(1);
    const first = waits.openStream('seller', 'S', clock(), 600);
    first.await(num(0));
    first.await(num(9));
    waits.answered('seller', 'S', answer(9));
    first.close({ call, expiresAt: Date.now() + 60_000 });
    assert.deepEqual([waits.sessions, waits.parkedCount, waits.anyAwaitedIn(sessionKeyOf('seller', 'S')), waits.anyAwaitedIn(sessionKeyOf('seller', 'T'))], [0, 1, true, false]);
    // Another session, seller or call inherits nothing; a fresh (not resumed) stream neither.
    const others = [clock(), clock(), clock(), clock()];
    const streams = [
      waits.openStream('seller', 'T', others[0], 600, call),
      waits.openStream('other', 'S', others[1], 600, call),
      waits.openStream('seller', 'S', others[2], 600, num(2)),
      waits.openStream('seller', 'S', others[3], 600),
    ];
    assert.deepEqual(others.map((c) => c.calls), ['', '', '', '']);
    const c = clock();
    const resumed = waits.openStream('seller', 'S', c, 600, call);
    assert.deepEqual([c.calls, waits.parkedCount], ['p', 0]);
    waits.answered('seller', 'S', answer(0));
    assert.equal(c.calls, 'pr');
    for (const s of [...streams, resumed]) s.close();
    assert.deepEqual([waits.sessions, waits.parkedCount], [0, 0]);
  });

  test("parked ids: the host's answer or the seller's cancellation drops them while no stream is open; so do their expiry and a plain end", async () => {
    const waits = new HostAnswerWaits();
    const park = (id: number, call: number, expiresAt = Date.now() + 60_000): void => {
      const s = waits.openStream('seller', 'S', clock(), 600);
      s.await(num(id));
      s.close({ call: num(call), expiresAt });
    };
    park(0, 1);
    waits.answered('seller', 'S', answer(0));
    park(5, 2);
    waits.cancelledBySeller('seller', 'S', num(5));
    assert.equal(waits.parkedCount, 0);
    park(6, 3, Date.now() - 1);
    assert.equal(waits.parkedCount, 0, 'past its deadline: nothing parked');
    park(7, 4, Date.now() + 20);
    assert.equal(waits.parkedCount, 1);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(waits.parkedCount, 0, 'expired');
    const plain = waits.openStream('seller', 'S', clock(), 600);
    plain.await(num(8));
    plain.close();
    const c = clock();
    waits.openStream('seller', 'S', c, 600, num(0)).close();
    assert.deepEqual([waits.parkedCount, c.calls], [0, '']);
  });

  test(`parked calls: at most ${MAX_PARKED_CALLS_PER_SESSION} per seller and session, ${MAX_PARKED_CALLS} in all (the oldest dropped)`, () => {
    const waits = new HostAnswerWaits();
    const park = (session: string, call: number): void => {
      const s = waits.openStream('seller', session, undefined);
      s.await(num(0));
      s.close({ call: num(call), expiresAt: Date.now() + 60_000 });
    };
    for (let i = 0; i < MAX_PARKED_CALLS_PER_SESSION + 3; i++) park('S', i);
    assert.equal(waits.parkedCount, MAX_PARKED_CALLS_PER_SESSION);
    for (let i = 0; i < MAX_PARKED_CALLS; i++) park(`T${i}`, 1);
    assert.equal(waits.parkedCount, MAX_PARKED_CALLS);
    assert.equal(waits.anyAwaitedIn(sessionKeyOf('seller', 'S')), false, "the oldest, session S's, dropped first");
    for (let i = 0; i < MAX_PARKED_CALLS; i++) waits.answered('seller', `T${i}`, answer(0));
    assert.equal(waits.parkedCount, 0);
  });
});

describe('sellerCancelledIdOf', () => {
  test("a seller's notifications/cancelled: the canonical id of params.requestId", () => {
    assert.equal(sellerCancelledIdOf('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"timeout"}}', BOUNDS), 'n0');
    assert.equal(sellerCancelledIdOf(Buffer.from('{"method":"notifications/cancelled","params":{"requestId":"a\\u0062"},"jsonrpc":"2.0"}'), BOUNDS), 'sab');
  });
  test('anything else: another method, the text nested, an id beside it, a repeated key, no requestId', () => {
    for (const data of [
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":0,"note":"notifications/cancelled"}}',
      '{"jsonrpc":"2.0","method":"x","params":{"m":{"method":"notifications/cancelled","params":{"requestId":0}}}}',
      '{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":0}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","method":"notifications/cancelled","params":{"requestId":0}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}',
      `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"${'a'.repeat(300)}"}}`,
      // A name in another case, or with `ſ` for `s`, repeats it (as the scan reads it: json-scan.ts repeatedName), an escaped key may be one.
      '{"jsonrpc":"2.0","method":"notifications/cancelled","Method":"x","params":{"requestId":0}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","reſult":{},"params":{"requestId":0}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","\\u0069d":1,"params":{"requestId":0}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0},"params":{"requestId":1}}',
    ])
      assert.equal(sellerCancelledIdOf(data, BOUNDS), undefined, data);
  });
});

// Review of e863d18: a shared id is kept to the largest idle limit + deadline among the stream that
// shared it and the members waiting for it (a tool's call with a longer sse_deadline_ms).
describe('a shared id is kept for the members waiting for it (their own keepMs)', () => {
  test('a member open before it, and one opened within its grace after it, each keep it to their own keepMs; one without a clock does not', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const waits = new HostAnswerWaits();
      const get = waits.openStream('seller', 'S', undefined, Infinity, undefined, undefined, 99_000);
      const early = clock();
      const before = waits.openStream('seller', 'S', early, 300, undefined, undefined, 5_300);
      get.awaitShared('n1', 700);
      assert.equal(early.calls, 'p');
      mock.timers.tick(5_299);
      assert.deepEqual([early.calls, waits.anyAwaitedIn(sessionKeyOf('seller', 'S'))], ['p', true]);
      mock.timers.tick(1);
      assert.deepEqual([early.calls, waits.anyAwaitedIn(sessionKeyOf('seller', 'S'))], ['pr', false]);
      before.close();
      // A member opened after the id (the call's stream on its own connection), within its grace: from the id's sighting.
      get.awaitShared('n2', 700);
      const late = clock();
      const after = waits.openStream('seller', 'S', late, 300, undefined, undefined, 2_000);
      mock.timers.tick(1_999);
      assert.deepEqual([late.calls, waits.anyAwaitedIn(sessionKeyOf('seller', 'S'))], ['p', true]);
      mock.timers.tick(1);
      assert.deepEqual([late.calls, waits.anyAwaitedIn(sessionKeyOf('seller', 'S'))], ['pr', false]);
      after.close();
      get.close();
      assert.equal(waits.sessions, 0);
    } finally {
      mock.timers.reset();
    }
  });
});
