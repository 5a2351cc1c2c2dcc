/**
 * The container packaging agrees with the repository:
 * - every file the Dockerfile COPYs from the build context exists and is not excluded by
 *   .dockerignore;
 * - the ENTRYPOINT runs the package's `bin` target, which the build produces from src/, under
 *   `node --disable-sigusr1` (SIGUSR1 never opens Node's inspector);
 * - docker/docker-compose.yml mounts a config directory holding a file that parses with the real
 *   loader, listens on 0.0.0.0 (not the container's own loopback) on the EXPOSEd port, and the
 *   command's --config path is that file under the mount target;
 * - the buyer placeholder's URL names an agent the config defines;
 * - the gateway's `stop_grace_period` outlasts its own shutdown (`shutdown_grace_ms`, then the
 *   forced exit's log flush), so Docker's SIGKILL does not cut the `shutdown_cut` lines (a new
 *   user's trial 6, Finding 7: no stop_grace_period, Docker's default 10 s raced the 10 s grace).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, normalize, posix } from 'node:path';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { EXIT_LOG_FLUSH_WAIT_MS } from '../../src/observability/exit-after-log.js';
import { EXIT_FLUSH_MAX_RETRIES } from '../../src/observability/log-destination.js';
import { REPO } from '../helpers/repo.js';
import { PINNED_NODE_VERSIONS } from '../../scripts/node-binary.js';

const ROOT = REPO;
const read = (p: string): string => readFileSync(join(ROOT, p), 'utf8');

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  /** Index of the build stage (0-based) the instruction belongs to. */
  readonly stage: number;
}

/** Dockerfile instructions, continuation lines joined, comments and parser directives dropped. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue; // a comment inside a continued instruction
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^(\S+)\s*(.*)$/.exec(full);
    if (!m) continue;
    const keyword = m[1]!.toUpperCase();
    if (keyword === 'FROM') stage += 1;
    out.push({ keyword, args: m[2]!, stage });
  }
  return out;
}

/** Arguments of an instruction in exec (JSON array) or shell form; `--flag=value` options separated out. */
function splitArgs(args: string): { flags: string[]; values: string[] } {
  const words = args.trim().startsWith('[') ? (JSON.parse(args) as string[]) : args.trim().split(/\s+/);
  return { flags: words.filter((w) => w.startsWith('--')), values: words.filter((w) => !w.startsWith('--')) };
}

function execForm(inst: Instruction | undefined): string[] {
  assert.ok(inst, 'instruction present');
  assert.ok(inst.args.trim().startsWith('['), `${inst.keyword} uses the exec (JSON array) form`);
  return JSON.parse(inst.args) as string[];
}

/** A minimal .dockerignore matcher: exact paths, directory prefixes and `*` globs (no `!` exceptions used here). */
function dockerIgnored(path: string, patterns: string[]): boolean {
  const p = posix.normalize(path.replace(/^\.\//, '')).replace(/\/$/, '');
  return patterns.some((pattern) => {
    const pat = pattern.replace(/^\.\//, '').replace(/\/$/, '');
    if (!pat.includes('*')) return p === pat || p.startsWith(`${pat}/`);
    const re = new RegExp(`^${pat.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`);
    return re.test(p) || re.test(posix.basename(p));
  });
}

/** `${NAME}` references in a YAML file's values (comments skipped; `$${` is a literal). */
function referencedVars(yamlText: string): string[] {
  const values = yamlText
    .split(/\r?\n/)
    .map((line) => line.replace(/^\s*#.*$/, '').replace(/\s+#.*$/, ''))
    .join('\n');
  return [...new Set([...values.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!))];
}

const dockerfile = parseDockerfile(read('Dockerfile'));
const ignorePatterns = read('.dockerignore')
  .split(/\r?\n/)
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string>; engines: { node: string } };
const finalStage = Math.max(...dockerfile.map((i) => i.stage));
const inFinal = (keyword: string): Instruction[] => dockerfile.filter((i) => i.stage === finalStage && i.keyword === keyword);

describe('Dockerfile', () => {
  test('every COPY source from the build context exists and is not .dockerignored', () => {
    const copies = dockerfile.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
    const fromContext = copies.filter((i) => !splitArgs(i.args).flags.some((f) => f.startsWith('--from')));
    assert.ok(fromContext.length >= 3, 'the Dockerfile copies package files and sources from the context');
    for (const inst of fromContext) {
      const { values } = splitArgs(inst.args);
      const sources = values.slice(0, -1);
      assert.ok(sources.length > 0, `COPY ${inst.args} has a source`);
      for (const source of sources) {
        assert.ok(existsSync(join(ROOT, source)), `COPY source ${source} exists in the repository`);
        assert.equal(dockerIgnored(source, ignorePatterns), false, `COPY source ${source} is not excluded by .dockerignore`);
      }
    }
  });

  test('two stages on the pinned node:22.x.y-bookworm-slim; the runtime stage installs production deps only and runs as node', () => {
    const froms = dockerfile.filter((i) => i.keyword === 'FROM').map((i) => i.args.split(/\s+/)[0]);
    const image = `node:${PINNED_NODE_VERSIONS[22]}-bookworm-slim`;
    assert.deepEqual(froms, [image, image]);
    const runs = inFinal('RUN').map((i) => i.args);
    assert.ok(runs.some((r) => /npm ci\b.*--omit=dev\b.*--ignore-scripts\b/.test(r)), 'runtime stage: npm ci --omit=dev --ignore-scripts');
    assert.deepEqual(inFinal('USER').map((i) => i.args.trim()), ['node']);
    assert.deepEqual(inFinal('EXPOSE').map((i) => i.args.trim()), ['8787']);
    const fromBuild = inFinal('COPY').filter((i) => splitArgs(i.args).flags.some((f) => f.startsWith('--from')));
    assert.deepEqual(fromBuild.map((i) => splitArgs(i.args).values[0]), ['/app/dist']);
  });

  test("ENTRYPOINT runs the package's bin target, which the build emits from src/, with node --disable-sigusr1", () => {
    const entrypoint = execForm(inFinal('ENTRYPOINT')[0]);
    assert.equal(entrypoint.length, 3);
    // SIGUSR1 never opens Node's inspector (test/regressions/sigusr1-opens-node-inspector.test.ts).
    assert.deepEqual(entrypoint.slice(0, 2), ['node', '--disable-sigusr1']);
    const bins = Object.values(pkg.bin);
    assert.equal(bins.length, 1);
    assert.equal(normalize(entrypoint[2]!), normalize(bins[0]!));

    // tsconfig.build.json compiles rootDir -> outDir; the bin target must be the output of a real source file.
    const build = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { rootDir: string; outDir: string } };
    const { rootDir, outDir } = build.compilerOptions;
    const target = posix.normalize(bins[0]!.replace(/^\.\//, ''));
    assert.ok(target.startsWith(`${posix.normalize(outDir)}/`), `${target} is under outDir ${outDir}`);
    const source = posix.join(rootDir, target.slice(posix.normalize(outDir).length + 1)).replace(/\.js$/, '.ts');
    assert.ok(existsSync(join(ROOT, source)), `${source} (compiled to ${target}) exists`);
  });
});

/** The config docker/docker-compose.yml mounts (its directory, docker/config, at /etc/adcp-buyer-gateway). */
const CONFIG_FILE = 'docker/config/gateway.yaml';

/** Milliseconds of a compose duration (Go's time.ParseDuration units: `15s`, `1m30s`, `500ms`), or NaN. */
function composeDurationMs(value: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, µs: 1e-3, ns: 1e-6 };
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) return NaN;
  return parts.reduce((ms, p) => ms + Number(p[1]) * units[p[2]!]!, 0);
}

describe('docker/docker-compose.yml', () => {
  type Service = { command?: string[]; volumes?: string[]; environment?: Record<string, string>; expose?: string[]; stop_grace_period?: string };
  const compose = parseYaml(read('docker/docker-compose.yml')) as { services: Record<string, Service> };
  const gateway = compose.services.gateway;

  test("the gateway service mounts an existing config's directory read-only, holding the file its command and the image CMD use", () => {
    assert.ok(gateway, 'a `gateway` service');
    const command = gateway.command ?? [];
    const configPath = command[command.indexOf('--config') + 1]!;
    const mounts = (gateway.volumes ?? []).map((v) => v.split(':'));
    const config = mounts.find(([, target]) => target === posix.dirname(configPath));
    assert.ok(config, `the directory of ${configPath} is mounted (a single-file mount stops live reload)`);
    const [source, , mode] = config;
    assert.equal(mode, 'ro');
    assert.equal(`docker/${posix.normalize(source!)}/${posix.basename(configPath)}`, CONFIG_FILE);
    assert.ok(existsSync(join(ROOT, CONFIG_FILE)), `mounted file ${CONFIG_FILE} exists`);

    const cmd = execForm(inFinal('CMD')[0]);
    assert.equal(cmd[cmd.indexOf('--config') + 1], configPath, 'the image CMD --config is the compose command --config too');
  });

  test('the mounted config parses, listens on 0.0.0.0:8787, and every ${VAR} it uses is set by compose', () => {
    const text = read(CONFIG_FILE);
    const vars = referencedVars(text);
    const env: NodeJS.ProcessEnv = { ADCP_GATEWAY_RESUME_SECRET: 'x'.repeat(48) };
    for (const name of vars) env[name] = `dummy-${name.toLowerCase()}`;
    const config = parseConfig(text, { env, source: CONFIG_FILE });
    assert.equal(config.listen.host, '0.0.0.0');
    assert.equal(config.listen.port, 8787);
    assert.ok(config.agents.size >= 1);
    for (const name of vars) assert.ok(name in (gateway?.environment ?? {}), `compose sets ${name} for the gateway`);
    assert.ok('ADCP_GATEWAY_RESUME_SECRET' in (gateway?.environment ?? {}), 'compose sets the resume secret');
  });

  test("stop_grace_period outlasts the gateway's shutdown_grace_ms and its forced exit's log flush", () => {
    assert.deepEqual([composeDurationMs('15s'), composeDurationMs('1m30s'), composeDurationMs('500ms'), composeDurationMs('15')], [15_000, 90_000, 500, NaN]);
    const text = read(CONFIG_FILE);
    const env: NodeJS.ProcessEnv = { ADCP_GATEWAY_RESUME_SECRET: 'x'.repeat(48) };
    for (const name of referencedVars(text)) env[name] = 'dummy';
    // The configured grace, or the default (docs/configuration.md) when the file sets none.
    const graceMs = parseConfig(text, { env }).shutdown_grace_ms;
    // The forced exit: the flush of lines already written, then the exit flush's retries on a
    // reader that does not read (sonic-boom sleeps 100 ms between them).
    const exitFlushMs = EXIT_LOG_FLUSH_WAIT_MS + EXIT_FLUSH_MAX_RETRIES * 100;
    const period = gateway?.stop_grace_period;
    assert.equal(typeof period, 'string', 'the gateway service sets stop_grace_period (Docker: 10 s, the default grace)');
    const periodMs = composeDurationMs(period!);
    assert.ok(periodMs > graceMs + exitFlushMs, `stop_grace_period ${period} (${periodMs} ms) > shutdown_grace_ms ${graceMs} + ${exitFlushMs} ms of exit flush`);
  });

  test('the buyer placeholder reaches the gateway by service name, at an agent the config defines', () => {
    const text = read(CONFIG_FILE);
    const env: NodeJS.ProcessEnv = { ADCP_GATEWAY_RESUME_SECRET: 'x'.repeat(48) };
    for (const name of referencedVars(text)) env[name] = 'dummy';
    const config = parseConfig(text, { env });
    const others = Object.entries(compose.services).filter(([name]) => name !== 'gateway');
    const urls = others.flatMap(([, s]) => Object.values(s.environment ?? {})).filter((v) => /^https?:\/\//.test(v));
    assert.ok(urls.length >= 1, 'the buyer service is given the gateway URL');
    for (const url of urls) {
      const m = /^http:\/\/gateway:8787\/agents\/([^/]+)\/mcp$/.exec(url);
      assert.ok(m, `${url} is http://gateway:8787/agents/<agent>/mcp`);
      assert.ok(config.agents.has(m[1]!), `agent ${m[1]} is in ${CONFIG_FILE}`);
    }
  });
});
