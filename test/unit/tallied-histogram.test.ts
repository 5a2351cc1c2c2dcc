/**
 * TalliedHistogram gives a prom-client Registry exactly what prom-client's own Histogram
 * would: the same text exposition and the same JSON, for the same observations (values on
 * and between the bounds, past the last bound, several label pairs in a mixed order), after
 * a reset too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { TalliedHistogram } from '../../src/observability/tallied-histogram.js';
import { DURATION_BUCKETS_SECONDS } from '../../src/observability/metrics.js';

const NAME = 'x_duration_seconds';
const HELP = 'A duration, with a "quoted" help\\text.';

function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['agent', 'method'] as const, buckets: [...DURATION_BUCKETS_SECONDS], registers: [theirs] });
  const tallied = new TalliedHistogram({ name: NAME, help: HELP, labelNames: ['agent', 'method'], buckets: DURATION_BUCKETS_SECONDS, registers: [ours] });
  const observe = (agent: string, method: string, value: number): void => {
    histogram.observe({ agent, method }, value);
    tallied.observe(agent, method, value);
  };
  return { theirs, ours, histogram, tallied, observe };
}

const OBSERVATIONS: [string, string, number][] = [
  ['a', 'tools/call', 0.001],
  ['b', 'tools/call', 0.005], // on a bound: counted in it (le is <=)
  ['a', 'tools/list', 0.0051],
  ['a', 'tools/call', 0.3],
  ['a', 'tools/call', 60],
  ['b', 'tools/call', 61], // past the last bound: +Inf, _sum and _count only
  ['c"\\\n', 'other', 2.5],
  ['a', 'tools/call', 0],
];

test('tallied histogram: the same text exposition as prom-client Histogram', async () => {
  const { theirs, ours, observe } = pair();
  assert.equal(await ours.metrics(), await theirs.metrics(), 'no observation yet');
  for (const [agent, method, value] of OBSERVATIONS) observe(agent, method, value);
  const text = await ours.metrics();
  assert.equal(text, await theirs.metrics());
  // And it says what was observed (not two empty outputs that happen to agree).
  assert.match(text, /^x_duration_seconds_bucket\{le="0\.005",agent="a",method="tools\/call"\} 2$/m);
  assert.match(text, /^x_duration_seconds_bucket\{le="\+Inf",agent="b",method="tools\/call"\} 2$/m);
  assert.match(text, /^x_duration_seconds_bucket\{le="60",agent="b",method="tools\/call"\} 1$/m);
  assert.match(text, /^x_duration_seconds_count\{agent="a",method="tools\/call"\} 4$/m);
  assert.match(text, /^x_duration_seconds_sum\{agent="a",method="tools\/call"\} 60\.301$/m);
});

test('tallied histogram: the same JSON as prom-client Histogram, and the same after a reset', async () => {
  const { theirs, ours, observe } = pair();
  for (const [agent, method, value] of OBSERVATIONS) observe(agent, method, value);
  assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
  ours.resetMetrics();
  theirs.resetMetrics();
  assert.equal(await ours.metrics(), await theirs.metrics());
  observe('z', 'ping', 0.02);
  assert.equal(await ours.metrics(), await theirs.metrics());
  assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
  assert.match(await ours.metrics(), /^x_duration_seconds_count\{agent="z",method="ping"\} 1$/m);
});

test('tallied histogram: refuses the reserved le label and unordered buckets; ignores a non-finite value', () => {
  const registers = [new Registry()];
  assert.throws(() => new TalliedHistogram({ name: 'h1', help: 'h', labelNames: ['le', 'x'], buckets: [1], registers }), /le is a reserved label name/);
  assert.throws(() => new TalliedHistogram({ name: 'h2', help: 'h', labelNames: ['a', 'b'], buckets: [1, 1], registers }), /ascending/);
  const h = new TalliedHistogram({ name: 'h3', help: 'h', labelNames: ['a', 'b'], buckets: [1], registers });
  h.observe('x', 'y', Number.NaN);
  h.observe('x', 'y', Number.POSITIVE_INFINITY);
  assert.deepEqual(h.getForPromString().values, []);
});
