/**
 * Regression (a hostile new user's trial, F1): a secret written as an unquoted number
 * (`resume.secret: 918273645546372819918273645546372819`, an agent header
 * `x-api-key: 73510094826613`) was echoed in the config error: on stderr of `--check-config`
 * and start-up, and in the `config reload failed` log line, which goes to the log pipeline and
 * which log redaction cannot scrub (the new key is not part of the running config). Hex
 * (`0x7FFFABCDEF12`) and float (`31415926535.0`) forms were echoed the same way, and a number
 * the loader refuses for its text (`123456789012345678901.5`, `-0`) as its text. The docs say of
 * both keys that their values are never echoed in errors (docs/configuration.md).
 *
 * Input: the trial's config checked with the CLI's `--check-config` (in process: helpers/check-config.ts) and
 * started as a real process;
 * a running gateway with the gateway's own logger (createLogger) reloading a file whose header
 * is rewritten as an unquoted number; configs parsed in-process with numbers and booleans of
 * every YAML form at `resume.secret`, `resume`, `agents.<agent>.headers` and a header.
 * Expected: each problem says what is expected and the value's type only (`got a number`,
 * `got a boolean`), never its text: exit 2, the exact report; the reload is logged as failed
 * with that message and no log line holds the key. A number at any other path is still shown
 * as written (`got 0x10000`, `got 1e30`).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfigFile, parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { createReloader } from '../../src/reload.js';
import { lineSink } from '../helpers/capture-log.js';
import { startGateway } from '../helpers/gateway.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const SECRET = '918273645546372819918273645546372819';
const KEY = '73510094826613';
const SECRET_EXPECTED = 'expected a string of at least 32 characters (quote numbers), got a number';
const HEADER_EXPECTED = 'expected a string header value (quote numbers), got a number';

/** The trial's config. */
const TRIAL = [
  'listen: { host: 127.0.0.1, port: 0 }',
  'resume:',
  `  secret: ${SECRET}`,
  'agents:',
  '  acme:',
  '    url: http://127.0.0.1:9/mcp',
  '    headers:',
  `      x-api-key: ${KEY}`,
  '',
].join('\n');
const TRIAL_REPORT = (file: string): string =>
  `${file}: 2 problems\n  resume.secret (line 3, column 11): ${SECRET_EXPECTED}\n  agents.acme.headers.x-api-key (line 8, column 18): ${HEADER_EXPECTED}\n`;

/** The `path: message` lines of parsing `text` (which must fail). */
function problems(text: string): string[] {
  try {
    parseConfig(text, { env: {} });
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
  return assert.fail('accepted');
}

const agent = (headers: string): string => `agents:\n  acme:\n    url: https://sales.example/mcp\n    headers: ${headers}\n`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'numeric-secret-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('a secret written as an unquoted number is never echoed in a config error', () => {
  it('--check-config: the trial\'s config reports both keys by type, exit 2 (was: both values shown)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const file = join(dir, 'check.yaml');
    await writeFile(file, TRIAL);
    assert.deepEqual(await checkConfigRun(file), { code: 2, stdout: '', stderr: TRIAL_REPORT(file) });
  });

  it('start-up: the same report, exit 2, nothing on stdout', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const file = join(dir, 'start.yaml');
    await writeFile(file, TRIAL);
    assert.deepEqual(await runCli(['--config', file]), { code: 2, stdout: '', stderr: TRIAL_REPORT(file) });
  });

  it('reload: the failure line says `got a number`, and no line of the gateway\'s log holds the new key', { timeout: TEST_TIMEOUT_MS }, async () => {
    const good = 'log_level: info\nagents:\n  acme:\n    url: http://127.0.0.1:9/mcp\n    headers: { x-api-key: "${ACME_KEY}" }\n';
    const env = { ACME_KEY: '11112222333344' };
    const file = join(dir, 'reload.yaml');
    await writeFile(file, good);
    const { lines, sink } = lineSink();
    const logger = createLogger('info', { destination: sink });
    const gw = await startGateway(await loadConfigFile(file, { env }), { logger });
    const reloader = createReloader({ path: file, env, control: gw.app.gateway, log: logger, watch: false });
    try {
      await writeFile(file, good.replace('"${ACME_KEY}"', KEY));
      const result = await reloader.reload('sighup');
      assert.equal(result.ok, false);
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
      const entries = lines.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const failed = entries.filter((e) => e.msg === 'config reload failed: keeping the running config');
      assert.deepEqual(failed.map((e) => e.problems), [[{ path: 'agents.acme.headers.x-api-key', line: 5, column: 27, message: HEADER_EXPECTED }]]);
      assert.deepEqual(lines.filter((l) => l.includes(KEY)), []);
    } finally {
      reloader.close();
      await gw.close();
    }
  });

  it('every YAML number form at resume.secret and in a header: `got a number`, never its text', () => {
    // Decimal, signed, hexadecimal, octal, float, exponent, a float only near an integer, a
    // negative zero, infinity and NaN, a !!int tag: what the text was is never in the message.
    const forms = [KEY, `+${KEY}`, '0x7FFFABCDEF12', '0o17777777777', '31415926535.0', '3.1415926535e10', '123456789012345678901.5', '-0', '.inf', '.nan', `!!int ${KEY}`];
    for (const form of forms) {
      assert.deepEqual(problems(`resume: { secret: ${form} }\n${agent('{ x-api-key: "k" }')}`), [`resume.secret: ${SECRET_EXPECTED}`], form);
      assert.deepEqual(problems(agent(`{ x-api-key: ${form} }`)), [`agents.acme.headers.x-api-key: ${HEADER_EXPECTED}`], form);
    }
  });

  it('a boolean there is `got a boolean`; a number in place of `resume` or of `headers` is `got a number`', () => {
    assert.deepEqual(problems(agent('{ x-flag: true }')), ['agents.acme.headers.x-flag: expected a string header value (quote numbers), got a boolean']);
    assert.deepEqual(problems(`resume: { secret: false }\n${agent('{}')}`), ['resume.secret: expected a string of at least 32 characters (quote numbers), got a boolean']);
    assert.deepEqual(problems(`resume: ${SECRET}\n${agent('{}')}`), ['resume: expected a mapping with `secret` and `ttl_ms`, got a number']);
    assert.deepEqual(problems(agent(KEY)), ['agents.acme.headers: expected a mapping of header name to value, got a number']);
    assert.deepEqual(problems(`resume: "${SECRET}"\n${agent('{}')}`), ['resume: expected a mapping with `secret` and `ttl_ms`, got a string']);
  });

  it('a number anywhere else is still shown as written', () => {
    assert.deepEqual(problems(`listen: { port: 0x10000 }\n${agent('{}')}`), ['listen.port: expected an integer >= 0 and <= 65535, got 0x10000']);
    assert.deepEqual(problems(`defaults: { max_json_nodes: 1e30 }\n${agent('{}')}`), ['defaults.max_json_nodes: expected an integer >= 1 and <= 100000000, got 1e30']);
    assert.deepEqual(problems(`resume: { ttl_ms: 64.0000000000000001 }\n${agent('{}')}`), ['resume.ttl_ms: expected an integer >= 1 and <= 86400000 (24 h), got 64.0000000000000001']);
  });
});
