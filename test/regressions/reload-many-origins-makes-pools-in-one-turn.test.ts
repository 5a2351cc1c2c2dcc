/**
 * Reported failure (a hostile trial 21, H1, on the off-thread reload): a valid config of
 * 21,881 agents, each on its own origin (1 MB, within the documented bounds), stalled every
 * agent for 0.4-4.3 s when it was applied, and again when it was replaced: applying a config
 * made an undici Pool per origin in one turn of the serving loop (~0.9 s of CPU, then ~2.7 s
 * of garbage collection; the parse itself already ran in a worker).
 *
 * Now (src/routing/upstream-pools.ts UpstreamPool.pool) a pool is made at its first request.
 * Input: UpstreamPools configured with 5,000 agents on 5,000 origins (127.0.0.1, ports
 * 20000-24999, never connected to). Expected: no Pool made by `configure` (5,000 before), one
 * made by the first use of one agent's pool and kept by a reload that keeps its origin, none
 * made by that reload; a pool first used after `close()` refuses its dispatch.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { UpstreamPools } from '../../src/routing/upstream-pools.js';

const AGENTS = 5000;

function manyAgents(n: number) {
  const lines = ['agents:'];
  for (let i = 0; i < n; i++) lines.push(`  a${i}: { url: "http://127.0.0.1:${20000 + i}/mcp" }`);
  return [...parseConfig(lines.join('\n') + '\n', { env: {} }).agents.values()];
}

test('applying a config of many origins makes no pool until a request needs one', async () => {
  const pools = new UpstreamPools();
  const agents = manyAgents(AGENTS);
  pools.configure(agents);
  assert.equal(pools.openPools, 0, 'configure made pools');
  const first = pools.poolFor(agents[0]!);
  assert.equal(first.made, undefined);
  // Its first request (to a port nobody listens on) makes it.
  await new Promise<void>((resolve) => {
    pools.dispatch(first, { origin: 'http://127.0.0.1:20000', path: '/mcp', method: 'GET' }, { onError: () => resolve(), onConnect: () => undefined, onHeaders: () => true, onData: () => true, onComplete: () => resolve() });
  });
  assert.ok(first.made !== undefined);
  assert.equal(pools.openPools, 1);
  const reloaded = manyAgents(1); // a reload keeping a0's origin only
  pools.configure(reloaded);
  assert.equal(pools.poolFor(reloaded[0]!), first, 'the made pool is kept for its origin');
  assert.equal(pools.poolFor(agents[1]!).retired, true, "a1's pool, never made, is retired");
  assert.equal(pools.openPools, 1, 'nothing made by the reload');
  await pools.close();
});

test('a pool first used after close() refuses its dispatch', async () => {
  const pools = new UpstreamPools();
  const [agent] = manyAgents(1);
  pools.configure([agent!]);
  await pools.close();
  const error = await new Promise<Error>((resolve) => {
    pools.dispatch(pools.poolFor(agent!), { origin: 'http://127.0.0.1:20000', path: '/mcp', method: 'GET' }, {
      onError: (err: Error) => resolve(err),
      onConnect: () => undefined,
      onHeaders: () => true,
      onData: () => true,
      onComplete: () => undefined,
    });
  }).catch((err: Error) => err);
  assert.match(error.name + error.message, /ClientClosedError|closed/i);
});
