/**
 * Regression (a new user's trial, 2026-12-03, F9): docker/docker-compose.yml passed the
 * gateway `EXAMPLE_SELLER_TOKEN: ${EXAMPLE_SELLER_TOKEN:-replace-me}`. An unset `${VAR}` in
 * the config is a config error (the gateway exits 2), but this default filled it in: with the
 * variable unset in the operator's shell, the gateway started and sent
 * `Authorization: Bearer replace-me` to the seller. The compose file already made the resume
 * secret required with `${NAME:?message}`; now every variable it passes to the gateway is.
 *
 * No Docker here: compose's interpolation is modelled below after the Compose Specification
 * ("Interpolation": `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?err}`,
 * `${VAR?err}`, `${VAR:+alt}`, `${VAR+alt}`, `$$`; the error text is compose-go's), and the
 * config the service mounts is read with the gateway's real loader.
 *
 * Expected:
 * - with the token unset (or empty) in the shell, interpolating the gateway service's
 *   environment fails: `required variable EXAMPLE_SELLER_TOKEN is missing a value: set
 *   EXAMPLE_SELLER_TOKEN (the example seller API token)`, so nothing starts;
 * - every `${NAME}` the mounted config uses is passed as `${NAME:?message}`: no default;
 * - with the token set, the config loads and the seller gets `Bearer <that token>`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { REPO } from '../helpers/repo.js';
import { parseConfig } from '../../src/config/load.js';

const DOCKER_DIR = join(REPO, 'docker');
const SECRET = 'x'.repeat(48);

interface Service {
  command?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
}
const compose = parseYaml(readFileSync(join(DOCKER_DIR, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };
const gateway = compose.services.gateway!;

/** One value interpolated as compose does; throws compose-go's error for a required variable. */
function interpolate(value: string, shell: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (whole === '$$') return '$';
    const v = shell[name!];
    const set = v !== undefined;
    const nonEmpty = set && v !== '';
    switch (op) {
      case undefined:
        return v ?? '';
      case ':-':
        return nonEmpty ? v : arg!;
      case '-':
        return set ? v : arg!;
      case ':?':
      case '?':
        if (op === ':?' ? nonEmpty : set) return v!;
        throw new Error(`required variable ${name} is missing a value: ${arg}`);
      case ':+':
        return nonEmpty ? arg! : '';
      default:
        return set ? arg! : '';
    }
  });
}

/** The container's environment for the gateway service, from the operator's shell. */
const containerEnv = (shell: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(gateway.environment ?? {}).map(([k, v]) => [k, interpolate(v, shell)]));

/** The host file the service's `--config` path reads, through its bind mount (a file or its directory). */
function mountedConfigText(): string {
  const command = gateway.command ?? [];
  const configPath = command[command.indexOf('--config') + 1]!;
  for (const volume of gateway.volumes ?? []) {
    const [source, target] = volume.split(':');
    if (target === configPath) return readFileSync(join(DOCKER_DIR, source!), 'utf8');
    if (target === posix.dirname(configPath)) return readFileSync(join(DOCKER_DIR, source!, posix.basename(configPath)), 'utf8');
  }
  throw new Error(`no volume mounts ${configPath}`);
}

/** `${NAME}` references in the config's values (comments dropped; `$${` is a literal). */
function configVars(text: string): string[] {
  const values = text
    .split('\n')
    .map((line) => line.replace(/^\s*#.*$/, '').replace(/\s+#.*$/, ''))
    .join('\n');
  return [...new Set([...values.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!))];
}

describe('docker-compose: a seller token left unset is not sent as a placeholder', () => {
  it('refuses to start with EXAMPLE_SELLER_TOKEN unset or empty', () => {
    const shells: Record<string, string>[] = [{ ADCP_GATEWAY_RESUME_SECRET: SECRET }, { ADCP_GATEWAY_RESUME_SECRET: SECRET, EXAMPLE_SELLER_TOKEN: '' }];
    for (const shell of shells) {
      assert.throws(() => containerEnv(shell), {
        message: 'required variable EXAMPLE_SELLER_TOKEN is missing a value: set EXAMPLE_SELLER_TOKEN (the example seller API token)',
      });
    }
  });

  it('passes every variable the mounted config uses as ${NAME:?message}, with no default', () => {
    const vars = configVars(mountedConfigText());
    assert.ok(vars.includes('EXAMPLE_SELLER_TOKEN'), 'the example config uses EXAMPLE_SELLER_TOKEN');
    for (const name of [...vars, 'ADCP_GATEWAY_RESUME_SECRET']) {
      const value = gateway.environment?.[name];
      assert.ok(value !== undefined, `compose passes ${name}`);
      assert.match(value, new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`), `${name} is required`);
    }
  });

  it('sends the token the shell sets', () => {
    const env = containerEnv({ ADCP_GATEWAY_RESUME_SECRET: SECRET, EXAMPLE_SELLER_TOKEN: 'tok-123' });
    const config = parseConfig(mountedConfigText(), { env, source: 'docker-compose gateway' });
    assert.equal(config.agents.get('example-seller')?.headers.authorization, 'Bearer tok-123');
  });
});
