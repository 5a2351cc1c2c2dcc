/**
 * Regression (found fixing review 36, F4): zod's records skip an own `__proto__` key, name and
 * value, so a config entry of that name under `agents`, an agent's `tools` or its `headers`
 * was never validated (config/proto-keys.ts). `tools: { __proto__: { max_response_bytes: "abc",
 * typo: 1 } }` loaded, and a call of a tool named `__proto__` got `"abc"` as its limit; an agent
 * named `__proto__` (no valid agent name) with `url: 5` threw `TypeError: Invalid URL` instead of
 * a config problem. (The header case: config-header-proto-never-sent.test.ts.)
 *
 * Input: such configs, with the real loader and the CLI's `--check-config` (in process: helpers/check-config.ts). Expected: exactly the problems
 * any other tool or agent would get, at their YAML paths; a tool named `__proto__` with valid
 * limits is still loaded as data (test/unit/config-load.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const AGENT_NAME = 'invalid agent name "__proto__": must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ (it is the path segment of /agents/<name>/mcp)';
const BYTES = 'expected an integer >= 1 and <= 1073741824 (1 GiB)';
const toolLimit = (config: { agents: ReadonlyMap<string, { tools: Readonly<Record<string, { max_response_bytes?: number }>> }> }): string =>
  `loaded ${JSON.stringify(config.agents.get('a')?.tools['__proto__'])}`;

describe('config-proto-key-skips-validation', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('a tool named __proto__: its limits are validated as any tool\'s (was: loaded, limit "abc")', () => {
    const yaml = 'agents:\n  a:\n    url: https://s.example/mcp\n    tools:\n      __proto__:\n        max_response_bytes: "abc"\n        typo: 1\n';
    assert.deepEqual(configProblems(yaml, toolLimit), [
      `agents.a.tools.__proto__.max_response_bytes: ${BYTES}, got "abc"`,
      'agents.a.tools.__proto__.typo: unknown key `typo` (known keys: max_response_bytes, max_sse_event_bytes, max_json_depth, max_json_nodes, response_deadline_ms, sse_idle_timeout_ms, sse_deadline_ms, dedupe_text)',
    ]);
  });

  it('an agent named __proto__: a config problem, its contents checked (was: TypeError: Invalid URL)', async () => {
    const yaml = 'agents:\n  __proto__:\n    url: 5\n  a:\n    url: https://s.example/mcp\n';
    assert.deepEqual(configProblems(yaml, () => 'loaded'), [`agents.__proto__: ${AGENT_NAME}`, 'agents.__proto__.url: expected an absolute http: or https: URL, got 5']);
    await assertCheckConfigTextProblems(yaml, [
      `  agents.__proto__ (line 2, column 3): ${AGENT_NAME}`,
      '  agents.__proto__.url (line 3, column 10): expected an absolute http: or https: URL, got 5',
    ]);
  });

  it('control: a tool named __proto__ with valid limits is loaded as data', () => {
    const yaml = 'agents:\n  a:\n    url: https://s.example/mcp\n    tools:\n      __proto__:\n        max_response_bytes: 5\n';
    assert.deepEqual(configProblems(yaml, toolLimit), ['loaded {"max_response_bytes":5}']);
  });
});
