/**
 * The requests a host's `notifications/cancelled` can name (src/routing/cancellations.ts) and
 * the id it names (src/mcp/cancelled-id.ts): what is registered, what a cancellation marks,
 * the exact id comparison, and the cost per request of registering (trial 17, L1;
 * test/regressions/cancelled-call-gets-minted-upstream-reset.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { resolveCallLimits } from '../../src/config/resolve.js';
import { createExchange, type Exchange, type RpcPeek } from '../../src/exchange.js';
import { CancellableRequests, NOT_REGISTERED } from '../../src/routing/cancellations.js';
import { cancelledRequestIdOf, sameRequestId } from '../../src/mcp/cancelled-id.js';

const yaml = ['log_level: silent', 'agents:', '  s:', '    url: http://127.0.0.1:9/mcp', '  t:', '    url: http://127.0.0.1:9/mcp', ''].join('\n');
const agents = parseConfig(yaml, { env: {}, source: 'cancellations' }).agents;

function exchangeOf(agentName: string, rpc: RpcPeek, session: string | undefined): Exchange {
  const agent = agents.get(agentName)!;
  return createExchange({
    agent,
    rpc,
    limits: resolveCallLimits(agent, rpc.toolName, undefined),
    protocolVersion: '2025-06-18',
    normalize: true,
    stream: { startedAt: Date.now(), usedBytes: 0, resumeFrom: undefined },
    mintEventId: () => undefined,
    session,
  });
}

const call = (id: string | number, idText?: string): RpcPeek => ({ kind: 'request', id, idText, method: 'tools/call', toolName: 'get_products' });

test('registers single requests with a session only', () => {
  const r = new CancellableRequests();
  assert.equal(r.register(exchangeOf('s', call(1), undefined)), NOT_REGISTERED);
  assert.equal(r.register(exchangeOf('s', { kind: 'notification', id: null, idText: undefined, method: 'notifications/progress', toolName: undefined }, 'a')), NOT_REGISTERED);
  assert.equal(r.register(exchangeOf('s', { kind: 'batch', id: null, idText: undefined, method: undefined, toolName: undefined, batchRequestIds: [] }, 'a')), NOT_REGISTERED);
  const x = exchangeOf('s', call(1), 'a');
  const slot = r.register(x);
  assert.notEqual(slot, NOT_REGISTERED);
  assert.equal(r.size, 1);
  r.unregister(slot, x);
  r.unregister(slot, x); // twice: a no-op
  assert.equal(r.size, 0);
  assert.equal(r.cancel('s', 'a', { id: 1, idText: undefined }), 0, 'an ended exchange is not marked');
  assert.equal(x.cancelled, false);
});

test('a cancellation marks the request of its agent, session and id, exactly', () => {
  const r = new CancellableRequests();
  const target = exchangeOf('s', call(7), 'a');
  const others = [exchangeOf('s', call(7), 'b'), exchangeOf('t', call(7), 'a'), exchangeOf('s', call('7'), 'a'), exchangeOf('s', call(8), 'a')];
  for (const x of [target, ...others]) r.register(x);
  assert.equal(r.cancel('s', 'a', { id: 7, idText: '7.0' }), 1);
  assert.equal(target.cancelled, true);
  assert.deepEqual(
    others.map((x) => x.cancelled),
    [false, false, false, false],
  );
});

test('the requestId of a notifications/cancelled, as written', () => {
  const of = (text: string): unknown => cancelledRequestIdOf(Buffer.from(text));
  assert.deepEqual(of('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}'), { id: 7, idText: undefined });
  assert.deepEqual(of('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a\\u0062"}}'), { id: 'ab', idText: undefined });
  assert.deepEqual(of('{"method":"notifications/cancelled","params":{"requestId":9007199254740993}}'), { id: 9007199254740992, idText: '9007199254740993' });
  assert.deepEqual(of('{"method":"notifications/cancelled","params":{"requestId":1.0}}'), { id: 1, idText: '1.0' });
  // Escaped keys and duplicates read as JSON.parse reads them (the last wins).
  assert.deepEqual(of('{"method":"notifications/cancelled","params":{"request\\u0049d":3,"requestId":4}}'), { id: 4, idText: undefined });
  assert.deepEqual(of('{"params":{"requestId":1},"par\\u0061ms":{"requestId":2}}'), { id: 2, idText: undefined });
  for (const none of ['{"method":"notifications/cancelled"}', '{"params":[]}', '{"params":{"requestId":null}}', '{"params":{"requestId":{}}}', '{"params":{"requestId":true}}', '{"params":{"reason":"x"}}', '[]']) {
    assert.equal(of(none), undefined, none);
  }
});

test('ids compare exactly: by value as written for numbers, never a string for a number', () => {
  const same = (a: [string | number, string?], b: [string | number, string?]): boolean => sameRequestId({ id: a[0], idText: a[1] }, { id: b[0], idText: b[1] });
  assert.equal(same([1], [1]), true);
  assert.equal(same([1], [1, '1.0']), true);
  assert.equal(same([100, '1E2'], [100, '1e+2']), true);
  assert.equal(same([9007199254740992, '9007199254740993'], [9007199254740992]), false);
  assert.equal(same([0], [0, '-0']), true);
  assert.equal(same(['1'], [1]), false);
  assert.equal(same(['a'], ['a']), true);
  assert.equal(same(['a'], ['b']), false);
});

test('cost per request: register and unregister with 8 in flight (reported, not judged)', (t) => {
  const r = new CancellableRequests();
  const ring = Array.from({ length: 8 }, (_, i) => exchangeOf('s', call(i), 'session-0123456789abcdef'));
  const slots = ring.map((x) => r.register(x));
  const rounds = 2_000_000;
  const run = (): number => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) {
      const k = i & 7;
      const x = ring[k]!;
      r.unregister(slots[k]!, x);
      slots[k] = r.register(x);
    }
    return Number(process.hrtime.bigint() - start) / rounds;
  };
  run(); // warm-up
  const ns = run();
  t.diagnostic(`register + unregister: ${ns.toFixed(1)} ns per request`);
  assert.equal(r.size, 8);
});
