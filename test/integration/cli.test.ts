// The `adcp-buyer-gateway` bin as a real process: node dist/main.js ... (src/main.ts through tsx
// when dist/ is stale: test/helpers/process.ts `cliArgv`). What `--check-config` prints of a
// config's contents (the gateway section, the redacted url) is checked in this process, through
// the CLI's own `main` (test/helpers/check-config.ts); the exit codes, streams, environment and
// flags of the real process stay spawned here.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { withTakenPort } from '../helpers/ports.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { runCli, startGatewayProcess } from '../helpers/process.js';

let dir: string;
const file = (name: string): string => join(dir, name);

const VALID = `listen: { port: 0 }
defaults:
  response_deadline_ms: 12345
agents:
  acme:
    url: https://sales.acme.example/mcp
    max_response_bytes: 8388608
    tools:
      list_products: { max_response_bytes: 1048576 }
`;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-cli-'));
  await writeFile(file('valid.yaml'), VALID);
  await writeFile(
    file('invalid.yaml'),
    [
      'listen: { port: 70000 }',
      'defaults:',
      '  max_response_bytes: 8388608',
      'agents:',
      '  acme:',
      '    url: ftp://sales.acme.example/mcp',
      '    max_respons_bytes: 1',
      '    tools:',
      '      list_products: { max_response_bytes: 0 }',
      '',
    ].join('\n'),
  );
  await writeFile(file('env.yaml'), 'agents:\n  acme:\n    url: https://sales.acme.example/mcp\n    headers: { authorization: "Bearer ${ACME_TOKEN}" }\n');
  await writeFile(file('other.yaml'), 'agents:\n  from-env:\n    url: http://127.0.0.1:3001/mcp\n');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('adcp-buyer-gateway CLI', { concurrency: true }, () => {
  it('--help exits 0 and documents the flags, config order, env vars, exit codes and docs', async () => {
    const { code, stdout } = await runCli(['--help']);
    assert.equal(code, 0);
    for (const text of ['--check-config', '--config <file>', 'ADCP_GATEWAY_CONFIG', 'ADCP_GATEWAY_RESUME_SECRET', 'config/gateway.yaml', 'Exit codes', 'docs/configuration.md']) {
      assert.ok(stdout.includes(text), `help mentions ${text}`);
    }
  });

  it('--version prints the package version', async () => {
    const { code, stdout } = await runCli(['--version']);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), '0.1.0');
  });

  it('an unknown option exits 2', async () => {
    const { code, stderr } = await runCli(['--check-confg']);
    assert.equal(code, 2);
    assert.match(stderr, /unknown option '--check-confg'/);
  });

  it('--check-config on a valid file: exit 0, the table with resolved numbers', async () => {
    const { code, stdout, stderr } = await runCli(['--config', file('valid.yaml'), '--check-config']);
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.match(stdout, /valid\.yaml: valid/);
    const rows = stdout.split('\n');
    const acme = rows.find((r) => r.startsWith('acme '));
    assert.ok(acme, stdout);
    assert.deepEqual(acme.split(/ {2,}/), [
      'acme',
      'https://sales.acme.example/mcp',
      '8388608',
      '8388608',
      '64',
      '100000',
      '12345',
      '300000',
      '3600000',
      'summary',
      '4194304',
      '100',
      '8388608',
      'gzip,deflate,br',
    ]);
    const tool = rows.find((r) => r.startsWith('acme/list_products '));
    assert.ok(tool, stdout);
    assert.deepEqual(tool.split(/ {2,}/).slice(0, 3), ['acme/list_products', '1048576', '1048576']);
  });

  it('--check-config on an invalid file: exit 2, every problem with its path on stderr', async () => {
    const { code, stdout, stderr } = await runCli(['--config', file('invalid.yaml'), '--check-config']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /invalid\.yaml: 5 problems\n/);
    for (const path of [
      'listen.port (line 1,',
      'defaults.max_response_bytes (line 3,',
      'agents.acme.url (line 6,',
      'agents.acme.max_respons_bytes (line 7,',
      'agents.acme.tools.list_products.max_response_bytes (line 9,',
    ]) {
      assert.ok(stderr.includes(`  ${path}`), `stderr lists ${path}:\n${stderr}`);
    }
    assert.match(stderr, /did you mean `max_response_bytes`/);
  });

  it('an invalid config at normal start also exits 2', async () => {
    const { code, stderr } = await runCli(['--config', file('invalid.yaml')]);
    assert.equal(code, 2);
    assert.match(stderr, /5 problems/);
  });

  it('a missing ${VAR} is an error naming it; with it set the config is valid', async () => {
    const missing = await runCli(['--config', file('env.yaml'), '--check-config']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /agents\.acme\.headers\.authorization \(line 4, column \d+\): environment variable `ACME_TOKEN` is not set/);

    const set = await runCli(['--config', file('env.yaml'), '--check-config'], { env: { ACME_TOKEN: 'sekrit-token' } });
    assert.equal(set.code, 0);
    assert.doesNotMatch(set.stdout, /sekrit-token/);
  });

  it('ADCP_GATEWAY_CONFIG is used when --config is absent; --config wins over it', async () => {
    const fromEnv = await runCli(['--check-config'], { env: { ADCP_GATEWAY_CONFIG: file('other.yaml') } });
    assert.equal(fromEnv.code, 0);
    assert.match(fromEnv.stdout, /^from-env {2,}http:\/\/127\.0\.0\.1:3001\/mcp/m);

    const flagWins = await runCli(['--config', file('valid.yaml'), '--check-config'], { env: { ADCP_GATEWAY_CONFIG: file('other.yaml') } });
    assert.equal(flagWins.code, 0);
    assert.match(flagWins.stdout, /^acme /m);
    assert.doesNotMatch(flagWins.stdout, /from-env/);
  });

  it('without --config or ADCP_GATEWAY_CONFIG it reads config/gateway.yaml in the cwd', async () => {
    const inRepo = await runCli(['--check-config']);
    assert.equal(inRepo.code, 0, inRepo.stderr);
    assert.match(inRepo.stdout, /^config\/gateway\.yaml: valid/);
    assert.match(inRepo.stdout, /^demo {2,}http:\/\/127\.0\.0\.1:3001\/mcp/m);

    const elsewhere = await runCli(['--check-config'], { cwd: dir });
    assert.equal(elsewhere.code, 2);
    assert.match(elsewhere.stderr, /^config\/gateway\.yaml: 1 problem\n {2}cannot read .*config\/gateway\.yaml: file not found/);
  });

  it('a missing file named by --config exits 2', async () => {
    const { code, stderr } = await runCli(['--config', file('nope.yaml'), '--check-config']);
    assert.equal(code, 2);
    assert.match(stderr, /file not found/);
  });

  it('reports the resume secret source without printing it', async () => {
    const secret = 'r'.repeat(40);
    const { code, stdout } = await runCli(['--config', file('valid.yaml'), '--check-config'], { env: { ADCP_GATEWAY_RESUME_SECRET: secret } });
    assert.equal(code, 0);
    assert.match(stdout, /^ {2}resume secret {10}configured$/m);
    assert.doesNotMatch(stdout, /rrrrrrrr/);

    const without = await runCli(['--config', file('valid.yaml'), '--check-config']);
    assert.equal(without.code, 0);
    assert.match(without.stdout, /^ {2}resume secret {10}random per process \(warning: /m);
  });

  it('--check-config prints a gateway section above the table: listeners, log_level, shutdown grace, resume', async () => {
    const secret = 'q'.repeat(40);
    await writeFile(
      file('gateway.yaml'),
      `listen: { host: 127.0.0.1, port: 8080 }\nops_listen: { port: 9464 }\nlog_level: debug\nshutdown_grace_ms: 2500\nresume: { secret: "${secret}", ttl_ms: 60000 }\n${VALID.slice(VALID.indexOf('defaults:'))}`,
    );
    const { code, stdout, stderr } = await checkConfigRun(file('gateway.yaml'));
    assert.equal(stderr, '');
    assert.equal(code, 0);
    const blocks = stdout.split('\n\n');
    assert.match(blocks[0] ?? '', /gateway\.yaml: valid$/);
    assert.equal(
      blocks[1],
      [
        'gateway',
        '  listen                 127.0.0.1:8080',
        '  ops_listen             127.0.0.1:9464',
        '  log_level              debug',
        '  shutdown_grace_ms      2500',
        '  shutdown_sse_retry_ms  5000',
        '  request_timeout_ms     30000',
        '  allowed_origins        none (and localhost, 127.0.0.1, [::1]: any other Origin is refused)',
        '  allowed_hosts          none (and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)',
        '  resume secret          configured',
        '  resume ttl_ms          60000',
      ].join('\n'),
    );
    assert.match(blocks[2] ?? '', /^agent\/tool {2,}url /);
    assert.doesNotMatch(stdout, /qqqqqqqq/);
  });

  it('--check-config shows agent URLs with the query redacted, and max_call_response_bytes as configured', async () => {
    await writeFile(
      file('query.yaml'),
      'agents:\n  q:\n    url: http://127.0.0.1:1/mcp?key=abcdefghijkl\n    max_response_bytes: 8388608\n    max_call_response_bytes: 1000\n',
    );
    const { code, stdout } = await checkConfigRun(file('query.yaml'));
    assert.equal(code, 0);
    assert.doesNotMatch(stdout, /abcdefghijkl|key=/);
    assert.match(stdout, /^q {2,}http:\/\/127\.0\.0\.1:1\/mcp\?\[redacted\] {2,}8388608 /m);
    assert.match(stdout, / 8388608 \(configured 1000\) {2,}gzip,deflate,br$/m);
    assert.match(stdout, /^note: q: max_call_response_bytes 1000 is below max_response_bytes 8388608: /m);
  });

  it('ops_listen.port equal to listen.port is a config error (exit 2) at --check-config and at start', async () => {
    await writeFile(file('clash.yaml'), `listen: { host: 0.0.0.0, port: 18787 }\nops_listen: { host: 127.0.0.1, port: 18787 }\n${VALID.slice(VALID.indexOf('agents:'))}`);
    // The check in process, the start as a real process.
    for (const run of [() => checkConfigRun(file('clash.yaml')), () => runCli(['--config', file('clash.yaml')])]) {
      const { code, stdout, stderr } = await run();
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, /clash\.yaml: 1 problem\n {2}ops_listen\.port \(line 2, column \d+\): must differ from listen\.port \(18787\)/);
    }
    // Port 0 on both (two different free ports) is fine: test/unit/config-load.test.ts.
  });

  it('--config naming a device, a FIFO or a huge file exits 2 at once, without reading it', async () => {
    const urandom = await runCli(['--config', '/dev/urandom', '--check-config']);
    assert.equal(urandom.code, 2);
    assert.match(urandom.stderr, /^\/dev\/urandom: 1 problem\n {2}cannot read \/dev\/urandom: not a regular file \(it is a character device\)\n$/);

    const fifo = file('fifo.yaml');
    let haveFifo = true;
    try {
      execFileSync('mkfifo', [fifo], { stdio: 'ignore' });
    } catch {
      haveFifo = false;
    }
    if (haveFifo) {
      const { code, stderr } = await runCli(['--config', fifo, '--check-config']);
      assert.equal(code, 2);
      assert.match(stderr, /not a regular file \(it is a FIFO \(named pipe\)\)/);
    }

    await writeFile(file('huge.yaml'), `${VALID}${`${'#'.repeat(99)}\n`.repeat(200_000)}`); // 20 MB of comments
    const huge = await runCli(['--config', file('huge.yaml'), '--check-config']);
    assert.equal(huge.code, 2);
    assert.match(huge.stderr, new RegExp(`huge\\.yaml: 1 problem\\n {2}config file is ${VALID.length + 20_000_000} bytes; at most 1048576\\n$`));
    // A file of only comments under the cap: "the file has no settings" (test/unit/config-load.test.ts).
  });
});

describe('adcp-buyer-gateway serving', () => {
  it('listens, logs the address as JSON, and exits 0 on SIGTERM', async () => {
    const gw = await startGatewayProcess(file('valid.yaml'));
    try {
      assert.match(gw.address, /^http:\/\/127\.0\.0\.1:\d+$/);
      gw.child.kill('SIGTERM');
      assert.equal(await gw.exited, 0);
    } finally {
      gw.kill();
    }
  });

  it('exits 1 when the port is taken', async () => {
    await withTakenPort(async (port) => {
      await writeFile(file('taken.yaml'), `listen: { host: 127.0.0.1, port: ${port} }\nagents:\n  acme:\n    url: http://127.0.0.1:3001/mcp\n`);
      const { code, stderr } = await runCli(['--config', file('taken.yaml')]);
      assert.equal(code, 1);
      assert.match(stderr, /could not start: .*EADDRINUSE/);
    });
  });
});
