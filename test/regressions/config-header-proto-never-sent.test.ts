/**
 * Regression (review 36, F4, Nit): an agent's `headers: { __proto__: ... }` passed validation
 * and `--check-config`, then was silently never sent: the request header policy copies the
 * configured headers onto a plain object (request/headers.ts applyRequestHeaderPolicy), where
 * an assignment to `__proto__` sets the object's prototype (here, a string: ignored) instead of
 * a field, and so does every object the header goes through after it (@fastify/reply-from's
 * `Object.assign`). Now the name is refused at its YAML path, saying why
 * (config/owned-headers.ts); the header policy itself is unchanged.
 *
 * Input: the reviewer's config (/tmp/r36/proto.mts, cfg2.mts) with the CLI's `--check-config` (in process: helpers/check-config.ts) and the real
 * loader. Expected: exit 2 / exactly the problem below; other names of Object.prototype's
 * members (`constructor`, `toString`), which are plain fields, are loaded and sent.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { applyRequestHeaderPolicy } from '../../src/request/headers.js';
import { agentHeaderProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const WHY = "a JavaScript object's prototype name: the gateway's header objects take it as their prototype rather than as a field, so it would never be sent";

describe('config-header-proto-never-sent', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it("--check-config, the reviewer's header: exit 2 (was: valid, never sent)", async () => {
    const yaml = 'agents:\n  a:\n    url: https://s.example/mcp\n    headers:\n      __proto__: "secret-token"\n      x-k: "k"\n';
    await assertCheckConfigTextProblems(yaml, [`  agents.a.headers.__proto__ (line 5, column 7): header \`__proto__\` may not be configured: ${WHY}`]);
  });

  it('the loader: exactly this problem', () => {
    assert.deepEqual(agentHeaderProblems(['__proto__: v']), [`agents.a.headers.__proto__: header \`__proto__\` may not be configured: ${WHY}`]);
  });

  it('control: `constructor` and `toString` are loaded and sent as configured', () => {
    const config = parseConfig('agents:\n  a:\n    url: https://s.example/mcp\n    headers:\n      constructor: c\n      toString: t\n', { env: {} });
    const agent = config.agents.get('a')!;
    const out = applyRequestHeaderPolicy({ host: 's.example' }, agent, 'gzip', undefined, '1.1 x', true);
    assert.deepEqual(JSON.stringify(out), '{"host":"s.example","constructor":"c","tostring":"t","accept-encoding":"gzip","via":"1.1 x"}');
  });
});
