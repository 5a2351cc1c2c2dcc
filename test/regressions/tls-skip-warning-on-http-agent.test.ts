/**
 * Regression (hostile trial 45, L7, left over): an agent with `tls_insecure_skip_verify: true`
 * on an `http:` url got the start-up warning "TLS certificate verification is OFF for this
 * agent", which is false: a plain-HTTP url has no TLS to verify, so the setting does nothing
 * (`--check-config` says so: config/setting-notes.ts). Only an `https:` agent is warned.
 *
 * Input: a gateway (buildApp, not listening) with the gateway's logger, three agents: `plain`
 * (http:, skip on), `secure` (https:, skip on), `strict` (https:, skip off). Expected: exactly
 * one warning line, for `secure`, with its origin.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { lineSink } from '../helpers/capture-log.js';

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
