/**
 * Regression: two details of `probe` a new user's trial (2026-12-03, F10) found.
 *
 * 1. The tool count was printed without a thousands separator (`10953 tools`) while every
 *    byte figure of the same report has one (`3,145 bytes`).
 * 2. `probe --verbose` printed the gateway's "No resume secret configured" warning, which is
 *    about SSE resumption across restarts and replicas: a probe keeps no stream and mints no
 *    token a host could keep. The probe now runs its in-process gateway with a random secret
 *    of its own when the config has none (src/probe/probe.ts).
 *
 * Input: a raw seller on 127.0.0.1 whose one tools/list page holds 1,200 tools; runProbe with
 * a config that has no resume secret and an info logger writing to a sink.
 * Expectation: the table's summary line reads `1,200 tools`; no log line carries the warning,
 * and the probe's other lines still come (the logger is live).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { runProbe } from '../../src/probe/probe.js';
import { formatProbeTable } from '../../src/probe/report.js';
import type { RawSeller } from '../support/raw-seller.js';
import { initializeResult, METHOD_NOT_FOUND, startProbeSeller } from '../helpers/probe-seller.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const TOOLS = Array.from({ length: 1200 }, (_, i) => ({ name: `tool_${i}`, description: '', inputSchema: { type: 'object' } }));

let raw: RawSeller;

before(async () => {
  raw = await startProbeSeller((method) => (method === 'initialize' ? initializeResult() : method === 'tools/list' ? { result: { tools: TOOLS } } : METHOD_NOT_FOUND));
  await probe();
});

after(async () => {
  await raw.close();
});

const lines: string[] = [];
let table = '';

async function probe(): Promise<void> {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  });
  const config = parseConfig(['agents:', '  raw:', `    url: ${raw.url}`, ''].join('\n'), { env: {}, source: 'probe.yaml' });
  assert.equal(config.resume.secret, undefined, 'the config has no resume secret');
  table = formatProbeTable(await runProbe({ config, agent: 'raw', logger: createLogger('info', { destination: sink }) }));
}

describe('probe output', { timeout: TEST_TIMEOUT_MS }, () => {
  it('prints the tool count with a thousands separator (was `1200 tools`)', () => {
    assert.match(table, /^tools\/list: 1 page, 1,200 tools, [\d,]+ bytes$/m);
  });

  it('prints no resume-secret warning (the logger is live: its exchange lines came)', () => {
    assert.deepEqual(
      lines.filter((l) => l.includes('resume secret')),
      [],
    );
    assert.ok(lines.some((l) => (JSON.parse(l) as { msg?: string }).msg === 'exchange'), 'exchange lines came');
  });
});
