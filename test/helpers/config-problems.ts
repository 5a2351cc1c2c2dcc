/**
 * What the real config loader says of a small config, as one list a test compares whole: the
 * problems of a refused config (`path: message`), or one line naming what a loaded one holds.
 * For the regressions on an agent's `url` and `headers:`.
 */
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/types.js';

/** The problems (`path: message`) `parseConfig` finds in `yaml` (`${VAR}` read from `env`), or `[loaded(config)]` when it loads it. */
export function configProblems(yaml: string, loaded: (config: GatewayConfig) => string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    return [loaded(parseConfig(yaml, { env }))];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

/** The problems (`path: message`) of agent `a` with `url` (a JS string written as a YAML double-quoted scalar), or `accepted <href>`. */
export function agentUrlProblems(url: string, env: NodeJS.ProcessEnv = {}): string[] {
  return configProblems(`agents:\n  a:\n    url: ${JSON.stringify(url)}\n`, (config) => `accepted ${config.agents.get('a')?.url.href ?? '?'}`, env);
}

/** The problems (`path: message`) of agent `a` with `headers` (YAML lines), or the headers it loaded (`loaded <JSON>`). */
export function agentHeaderProblems(lines: readonly string[]): string[] {
  const yaml = `agents:\n  a:\n    url: http://127.0.0.1:9/mcp\n    headers:\n${lines.map((l) => `      ${l}\n`).join('')}`;
  return configProblems(yaml, (config) => `loaded ${JSON.stringify(config.agents.get('a')?.headers)}`);
}
