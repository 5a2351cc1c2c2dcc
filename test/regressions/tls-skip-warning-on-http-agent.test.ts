/**
 * Regression (hostile trial 45, L7, left over): an agent with `tls_insecure_skip_verify: true`
 * on an `http:` url got the start-up warning "TLS certificate verification is OFF for this
 * agent", which is false: a plain-HTTP url has no TLS to verify, so the setting does nothing
 * (`--check-config` says so: config/setting-notes.ts). Only an `https:` agent is warned.
 *
 * Input: a gateway (buildApp, not listening) with the gateway's logger, three agents: `plain`
 * (http:, skip on), `secure` (https:, skip on), `strict` (https:, skip off). Expected: exactly
 * one warning line, for `secure`, with its origin.
 *
 * Review 31, finding 4 (Low): a reload warned only when the flag itself turned on, so `plain`
 * (skip on, http:, no warning at start) reloaded with an https: url, the flag still on, logged
 * nothing: verification went off with no line ever. Now a reload warns when the agent comes to
 * skip verification (flag on and https:) where it did not before. Input: that reload (with a
 * real reloader on a file), beside one that turns the flag on and ones that change nothing of
 * it. Expected: one warning each for `plain` and `strict`, none for the others.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { loadConfigFile, parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { createReloader } from '../../src/reload.js';
import { captureLog, lineSink } from '../helpers/capture-log.js';

const YAML = [
  'agents:',
  '  plain:',
  '    url: http://127.0.0.1:9/mcp',
  '    tls_insecure_skip_verify: true',
  '  secure:',
  '    url: https://127.0.0.1:9/mcp',
  '    tls_insecure_skip_verify: true',
  '  strict:',
  '    url: https://127.0.0.1:9/mcp',
  '',
].join('\n');

test('the "verification is OFF" warning is written for an https: agent only, not for an http: one', async () => {
  const { lines, sink } = lineSink();
  const app = await buildApp(parseConfig(YAML, { source: 'test.yaml' }), { logger: createLogger('info', { destination: sink }) });
  try {
    const warned = lines
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('TLS certificate verification is OFF'))
      .map((l) => ({ level: l.level, agent: l.agent, url: l.url }));
    assert.deepEqual(warned, [{ level: 40, agent: 'secure', url: 'https://127.0.0.1:9' }]);
  } finally {
    await app.close();
  }
});

test('a reload warns when an agent comes to skip verification: its url moved from http: to https: with the flag on (was: no line), or the flag turned on', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tls-skip-reload-'));
  const file = join(dir, 'gateway.yaml');
  const agent = (name: string, url: string, skip: boolean): string[] => [`  ${name}:`, `    url: ${url}`, `    tls_insecure_skip_verify: ${skip}`];
  const yaml = (moved: string, flag: boolean): string =>
    [
      'agents:',
      ...agent('plain', moved, true),
      ...agent('strict', 'https://127.0.0.1:9/mcp', flag),
      ...agent('secure', 'https://127.0.0.1:9/mcp', true),
      ...agent('stays', 'http://127.0.0.1:9/mcp', true),
      ...agent('back', flag ? 'http://127.0.0.1:8/mcp' : 'https://127.0.0.1:8/mcp', true),
      '',
    ].join('\n');
  await writeFile(file, yaml('http://127.0.0.1:9/mcp', false));
  const log = captureLog('info');
  const app = await buildApp(await loadConfigFile(file), { logger: log.logger });
  const reloader = createReloader({ path: file, env: {}, control: app.gateway, log: log.logger, watch: false });
  try {
    const warned = (): unknown[] => log.entries.filter((e) => e.msg.startsWith('TLS certificate verification is OFF')).map((e) => ({ level: e.level, agent: e.agent, url: e.url }));
    assert.deepEqual(warned(), [
      { level: 40, agent: 'secure', url: 'https://127.0.0.1:9' },
      { level: 40, agent: 'back', url: 'https://127.0.0.1:8' },
    ]);
    log.entries.length = 0;
    await writeFile(file, yaml('https://127.0.0.1:7/mcp', true));
    const result = await reloader.reload('manual');
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(warned(), [
      { level: 40, agent: 'plain', url: 'https://127.0.0.1:7' },
      { level: 40, agent: 'strict', url: 'https://127.0.0.1:9' },
    ]);
  } finally {
    reloader.close();
    await app.close();
    await rm(dir, { recursive: true, force: true });
  }
});
