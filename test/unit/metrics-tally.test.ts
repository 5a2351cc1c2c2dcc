/**
 * The per-exchange counters are tallied between reads (metrics.ts ExchangeTally): every read
 * of the registry, whole or one metric, sees exactly the counts of the exchanges ended
 * before it, and a second read adds nothing twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../../src/observability/metrics.js';
import type { Exchange } from '../../src/exchange.js';

function exchange(agent: string, over: Partial<Exchange> = {}): Exchange {
  return {
    agent: { name: agent },
    rpc: { kind: 'request', id: 1, method: 'tools/call', toolName: 't' },
    outcome: 'ok',
    reason: undefined,
    bytesFromSeller: 10,
    bytesDecoded: 20,
    bytesToHost: 5,
    bytesSaved: 0,
    stream: { startedAt: 0, usedBytes: 0, resumeFrom: undefined },
    startedAt: process.hrtime.bigint(),
    ...over,
  } as unknown as Exchange;
}

/** `name{labels} value` lines of the exposition for `name` (histogram lines excluded). */
function lines(text: string, name: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .sort();
}

test('tallied counters: exact values at every read, nothing counted twice', async () => {
  const m = createMetrics();
  m.observeExchange(exchange('a'), 200);
  m.observeExchange(exchange('a', { outcome: 'local_error', reason: 'raw_bytes', bytesDecoded: 0, bytesSaved: 7 }), 200);
  m.observeExchange(exchange('b', { stream: { startedAt: 0, usedBytes: 0, resumeFrom: 'e1' }, bytesFromSeller: 0, bytesDecoded: 0, bytesToHost: 0 }), null);
  let text = await m.render();
  assert.deepEqual(lines(text, 'adcp_gateway_exchanges_total'), [
    'adcp_gateway_exchanges_total{agent="a",method="tools/call",outcome="local_error",status_class="2xx"} 1',
    'adcp_gateway_exchanges_total{agent="a",method="tools/call",outcome="ok",status_class="2xx"} 1',
    'adcp_gateway_exchanges_total{agent="b",method="tools/call",outcome="ok",status_class="none"} 1',
  ]);
  assert.deepEqual(lines(text, 'adcp_gateway_seller_bytes_total'), [
    'adcp_gateway_seller_bytes_total{agent="a",kind="decoded"} 20',
    'adcp_gateway_seller_bytes_total{agent="a",kind="raw"} 20',
  ]);
  assert.deepEqual(lines(text, 'adcp_gateway_host_bytes_total'), ['adcp_gateway_host_bytes_total{agent="a"} 10']);
  assert.deepEqual(lines(text, 'adcp_gateway_dedupe_saved_bytes_total'), ['adcp_gateway_dedupe_saved_bytes_total{agent="a"} 7']);
  assert.deepEqual(lines(text, 'adcp_gateway_limit_breaches_total'), ['adcp_gateway_limit_breaches_total{agent="a",reason="raw_bytes"} 1']);
  assert.deepEqual(lines(text, 'adcp_gateway_resumes_total'), ['adcp_gateway_resumes_total{agent="b"} 1']);
  assert.deepEqual(lines(text, 'adcp_gateway_exchange_duration_seconds_count'), [
    'adcp_gateway_exchange_duration_seconds_count{agent="a",method="tools/call"} 2',
    'adcp_gateway_exchange_duration_seconds_count{agent="b",method="tools/call"} 1',
  ]);

  // A second read without exchanges in between: the same gateway values.
  const gateway = (t: string): string[] => t.split('\n').filter((l) => l.startsWith('adcp_gateway_'));
  assert.deepEqual(gateway(await m.render()), gateway(text));

  // More exchanges, read through one metric only: flushed there too.
  m.observeExchange(exchange('a'), 200);
  m.observeExchange(exchange('a'), 401);
  const one = await m.registry.getSingleMetric('adcp_gateway_host_bytes_total')!.get();
  assert.deepEqual(
    one.values.map((v) => [v.labels, v.value]),
    [[{ agent: 'a' }, 20]],
  );
  text = await m.render();
  assert.deepEqual(lines(text, 'adcp_gateway_exchanges_total'), [
    'adcp_gateway_exchanges_total{agent="a",method="tools/call",outcome="local_error",status_class="2xx"} 1',
    'adcp_gateway_exchanges_total{agent="a",method="tools/call",outcome="ok",status_class="2xx"} 2',
    'adcp_gateway_exchanges_total{agent="a",method="tools/call",outcome="ok",status_class="4xx"} 1',
    'adcp_gateway_exchanges_total{agent="b",method="tools/call",outcome="ok",status_class="none"} 1',
  ]);
  assert.deepEqual(lines(text, 'adcp_gateway_seller_bytes_total'), [
    'adcp_gateway_seller_bytes_total{agent="a",kind="decoded"} 60',
    'adcp_gateway_seller_bytes_total{agent="a",kind="raw"} 40',
  ]);
});

test('texts_not_lifted_total: tallied by agent and reason from exchange.textNotLifted; no series for exchanges without one', async () => {
  // A reviewer: "a text over the bounds was silently not lifted".
  const m = createMetrics();
  m.observeExchange(exchange('a'), 200);
  m.observeExchange(exchange('a', { outcome: 'rewritten' }), 200);
  let text = await m.render();
  assert.deepEqual(lines(text, 'adcp_gateway_texts_not_lifted_total'), []);
  m.observeExchange(exchange('a', { textNotLifted: 'json_depth' }), 200);
  m.observeExchange(exchange('a', { textNotLifted: 'json_depth' }), 200);
  m.observeExchange(exchange('a', { textNotLifted: 'text_bytes' }), 200);
  m.observeExchange(exchange('b', { textNotLifted: 'json_nodes' }), 200);
  text = await m.render();
  assert.deepEqual(lines(text, 'adcp_gateway_texts_not_lifted_total'), [
    'adcp_gateway_texts_not_lifted_total{agent="a",reason="json_depth"} 2',
    'adcp_gateway_texts_not_lifted_total{agent="a",reason="text_bytes"} 1',
    'adcp_gateway_texts_not_lifted_total{agent="b",reason="json_nodes"} 1',
  ]);
  // Read again, and after one more: nothing counted twice.
  m.observeExchange(exchange('b', { textNotLifted: 'json_nodes' }), 200);
  text = await m.render();
  assert.deepEqual(lines(text, 'adcp_gateway_texts_not_lifted_total'), [
    'adcp_gateway_texts_not_lifted_total{agent="a",reason="json_depth"} 2',
    'adcp_gateway_texts_not_lifted_total{agent="a",reason="text_bytes"} 1',
    'adcp_gateway_texts_not_lifted_total{agent="b",reason="json_nodes"} 2',
  ]);
  assert.match(text, /^# TYPE adcp_gateway_texts_not_lifted_total counter$/m);
});

// A hostile trial 22, F6: a lift that made its answer longer logs a negative bytes_saved; the
// counter took the batch's net sum, so a grown answer cancelled another's saving in the same
// read (the log summed to 2,969, the metric said 3,029 in the trial, and a batch of only grown
// answers added nothing while one of a saving and a growth added less). Now each exchange adds
// its positive bytes_saved, a grown one 0.
test('dedupe_saved_bytes_total adds each exchange\'s positive bytes_saved only', async () => {
  const m = createMetrics();
  m.observeExchange(exchange('a', { bytesSaved: 100 }), 200);
  m.observeExchange(exchange('a', { bytesSaved: -60 }), 200);
  assert.deepEqual(lines(await m.render(), 'adcp_gateway_dedupe_saved_bytes_total'), ['adcp_gateway_dedupe_saved_bytes_total{agent="a"} 100']);
  m.observeExchange(exchange('a', { bytesSaved: -76 }), 200);
  m.observeExchange(exchange('a', { bytesSaved: 5 }), 200);
  assert.deepEqual(lines(await m.render(), 'adcp_gateway_dedupe_saved_bytes_total'), ['adcp_gateway_dedupe_saved_bytes_total{agent="a"} 105']);
});
