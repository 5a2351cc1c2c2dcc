/**
 * Regression (a hostile new user's trial): an agent header value holding an environment
 * variable set to the empty string, `Authorization: "Bearer ${SELLER_TOKEN}"` with
 * `SELLER_TOKEN=""` (compose files and systemd `Environment=` lines make such values easily),
 * passed `--check-config` as valid, and the gateway sent `Authorization: Bearer ` to the seller
 * on every request. A set-but-empty variable in an agent url was already an error
 * (test/regressions/empty-env-var-url-host.test.ts); now one in an agent header value is too,
 * through the same expansion (config/env.ts `refuseEmpty`, config/load.ts).
 *
 * Input: the trial's config checked with the CLI's `--check-config` (in process: helpers/check-config.ts) and
 * started as a real process
 * (serving); a running gateway (a real seller behind it) reloading a file whose header takes
 * an empty variable; configs parsed in-process with empty variables in header values.
 * Expected: a config error at `agents.<agent>.headers.<name>` naming the variable, never a
 * value (of it or of another variable): exit 2 for the CLI, before it listens; the reload is
 * logged as failed and the running config stays (the seller still gets the old token). A set
 * variable, a literal empty value, `$${` and an empty variable outside urls and headers are
 * still accepted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfigFile, parseConfig } from '../../src/config/load.js';
import { createReloader } from '../../src/reload.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { captureLog } from '../helpers/capture-log.js';
import { startGateway } from '../helpers/gateway.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS, PROCESS_TIMEOUT_MS, captureOutput, spawnCli } from '../helpers/process.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { jsonAnswer } from '../helpers/seller-answers.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const WHY = '(an empty variable in a header value is an error: the header would reach the seller without what the variable stands for, such as a token)';
const FAILED = 'config reload failed: keeping the running config';

/** The trial's config: the token from a variable, and a second variable whose value must never show. */
const TRIAL = [
  'listen: { host: 127.0.0.1, port: 0 }',
  'agents:',
  '  seller:',
  '    url: http://127.0.0.1:9/mcp',
  '    headers:',
  '      Authorization: "Bearer ${SELLER_TOKEN}"',
  '      X-Seat: "${SELLER_SEAT}"',
  '',
].join('\n');
const TRIAL_ENV = { SELLER_TOKEN: '', SELLER_SEAT: 'seat-secret-4242' };
const TRIAL_PROBLEM = `  agents.seller.headers.Authorization (line 6, column 22): environment variable \`SELLER_TOKEN\` is set but empty ${WHY}`;

/** The problems (`path: message` lines) of parsing `text`, or `accepted` and the agents' headers. */
function problems(text: string, env: NodeJS.ProcessEnv): string[] {
  try {
    const config = parseConfig(text, { env });
    return [`accepted ${JSON.stringify([...config.agents.values()].map((a) => a.headers))}`];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

const agent = (headers: string): string => `agents:\n  seller:\n    url: https://sales.example/mcp\n    headers: ${headers}\n`;

/**
 * Starts the CLI serving `file` and resolves with its exit (code and output), or with
 * `started` once it logs `gateway started` (then it is killed): bounded by PROCESS_TIMEOUT_MS.
 */
function startOrExit(file: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string } | 'started'> {
  const child = spawnCli(['--config', file], { env });
  const out = captureOutput(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`neither started nor exited within ${PROCESS_TIMEOUT_MS} ms: ${out.stderr}`));
    }, PROCESS_TIMEOUT_MS);
    child.stdout.on('data', () => {
      if (!out.stdout.includes('"gateway started"')) return;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve('started');
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out.stdout, stderr: out.stderr });
    });
  });
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'empty-env-header-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('a variable set but empty in an agent header value is a config error', () => {
  it('--check-config: the trial\'s config with SELLER_TOKEN="" is an error at the header\'s path naming the variable (was: valid)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const file = join(dir, 'check.yaml');
    await writeFile(file, TRIAL);
    const run = await checkConfigRun(file, TRIAL_ENV);
    assert.deepEqual(run, { code: 2, stdout: '', stderr: `${file}: 1 problem\n${TRIAL_PROBLEM}\n` });
  });

  it('start-up: the same config exits 2 with the same report before it listens (was: served, sending `Authorization: Bearer `)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const file = join(dir, 'start.yaml');
    await writeFile(file, TRIAL);
    assert.deepEqual(await startOrExit(file, TRIAL_ENV), { code: 2, stdout: '', stderr: `${file}: 1 problem\n${TRIAL_PROBLEM}\n` });
  });

  it('reload: logged as failed at the header\'s path; the running config stays and the seller still gets the running token', { timeout: TEST_TIMEOUT_MS }, async () => {
    const seller = await startRawSeller((req, res) => {
      const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
      jsonAnswer(toolResponse(id, { content: [{ type: 'text', text: 'ok' }] }))(req, res);
    });
    const env = { SELLER_TOKEN: 'tok-running-0001', SELLER_TOKEN_NEXT: '' };
    const file = join(dir, 'reload.yaml');
    const config = (token: string): string => `log_level: silent\nagents:\n  seller:\n    url: ${seller.url}\n    headers:\n      Authorization: "Bearer \${${token}}"\n`;
    await writeFile(file, config('SELLER_TOKEN'));
    const gw = await startGateway(await loadConfigFile(file, { env }));
    const log = captureLog();
    const reloader = createReloader({ path: file, env, control: gw.app.gateway, log: log.logger, watch: false });
    try {
      const running = gw.app.gateway.config;
      await writeFile(file, config('SELLER_TOKEN_NEXT'));
      const result = await reloader.reload('sighup');
      assert.equal(result.ok, false);
      const failed = log.entries.filter((e) => e.msg === FAILED);
      assert.equal(failed.length, 1, 'the failure is logged');
      assert.equal(failed[0]?.level, 50);
      assert.deepEqual(failed[0]?.problems, [
        { path: 'agents.seller.headers.Authorization', line: 6, column: 22, message: `environment variable \`SELLER_TOKEN_NEXT\` is set but empty ${WHY}` },
      ]);
      assert.equal(gw.app.gateway.config, running);
      const answer = await rawPost(gw.agentUrl('seller'), toolCall(1, 'get_products'));
      assert.equal(answer.status, 200);
      assert.deepEqual(
        seller.requests.map((r) => r.headers.authorization),
        ['Bearer tok-running-0001'],
      );
    } finally {
      reloader.close();
      await gw.close();
      await seller.close();
    }
  });

  it('each empty variable of a header value is its own problem; a whole value from one; an alias reports at each use', () => {
    assert.deepEqual(problems(agent('{ x-api-key: "${KEY}" }'), { KEY: '' }), [
      `agents.seller.headers.x-api-key: environment variable \`KEY\` is set but empty ${WHY}`,
    ]);
    assert.deepEqual(problems(agent('{ authorization: "${SCHEME} ${TOKEN}", x-tenant: "t-${TENANT}" }'), { SCHEME: '', TOKEN: '', TENANT: 'acme-tenant-secret' }), [
      `agents.seller.headers.authorization: environment variable \`SCHEME\` is set but empty ${WHY}`,
      `agents.seller.headers.authorization: environment variable \`TOKEN\` is set but empty ${WHY}`,
    ]);
    const aliased = 'agents:\n  a:\n    url: https://a.example/mcp\n    headers: &h { Authorization: "Bearer ${T}" }\n  b:\n    url: https://b.example/mcp\n    headers: *h\n';
    assert.deepEqual(problems(aliased, { T: '' }), [
      `agents.a.headers.Authorization: environment variable \`T\` is set but empty ${WHY}`,
      `agents.b.headers.Authorization: environment variable \`T\` is set but empty ${WHY}`,
    ]);
  });

  it('still accepted: a set variable, a literal empty value, `$${`, an empty variable outside urls and header values', () => {
    assert.deepEqual(problems(agent('{ Authorization: "Bearer ${T}" }'), { T: 'tok-1' }), ['accepted [{"authorization":"Bearer tok-1"}]']);
    assert.deepEqual(problems(agent('{ x-empty: "", x-literal: "$${T}" }'), { T: '' }), ['accepted [{"x-empty":"","x-literal":"${T}"}]']);
    const config = parseConfig(`listen: { host: "\${BIND_PREFIX}127.0.0.1" }\n${agent('{ x-tenant: acme }')}`, { env: { BIND_PREFIX: '' } });
    assert.equal(config.listen.host, '127.0.0.1');
  });
});
