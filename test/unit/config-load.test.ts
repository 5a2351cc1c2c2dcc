// The YAML loader: defaults resolution, every validation rule (with its exact YAML path),
// all problems at once, positions, typo suggestions, the 4 MiB rule, freezing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MAX_CONFIG_FILE_BYTES } from '../../src/config/defaults.js';
import { ConfigError, loadConfigFile, parseConfig, type ConfigProblem } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/types.js';

const MINIMAL = 'agents:\n  acme:\n    url: https://sales.acme.example/mcp\n';

function problemsOf(yaml: string, env: NodeJS.ProcessEnv = {}): ConfigProblem[] {
  try {
    parseConfig(yaml, { env, source: 'test.yaml' });
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('expected the config to be rejected');
}

/** Asserts exactly one problem at `path` and that its message matches. Returns it. */
function problemAt(problems: ConfigProblem[], path: string, message: RegExp): ConfigProblem {
  const at = problems.filter((p) => p.path === path);
  assert.equal(at.length, 1, `expected one problem at ${path}, got: ${JSON.stringify(problems, null, 1)}`);
  const problem = at[0] as ConfigProblem;
  assert.match(problem.message, message);
  return problem;
}

/** A one-agent config with `agentExtra` lines (already indented by 4) under agent `acme`. */
function agentYaml(...agentExtra: string[]): string {
  return ['agents:', '  acme:', '    url: https://sales.acme.example/mcp', ...agentExtra, ''].join('\n');
}

describe('config defaults resolution', () => {
  it('applies every built-in to a minimal file', () => {
    const config = parseConfig(MINIMAL, { env: {} });
    assert.deepEqual(config.listen, { host: '127.0.0.1', port: 8787 });
    assert.equal(config.log_level, 'info');
    assert.deepEqual(config.resume, { secret: undefined, ttl_ms: 3_600_000 });
    assert.deepEqual(config.defaults, {
      max_response_bytes: 4_194_304,
      max_sse_event_bytes: 4_194_304,
      max_json_depth: 64,
      max_json_nodes: 100_000,
      response_deadline_ms: 30_000,
      sse_idle_timeout_ms: 300_000,
      sse_deadline_ms: 3_600_000,
      dedupe_text: 'summary',
      max_request_bytes: 4_194_304,
      max_batch_messages: 100,
      max_buffered_response_bytes: 67_108_864,
      backoff_after_breaches: 3,
      backoff_base_ms: 250,
      backoff_max_ms: 10_000,
    });
    const acme = config.agents.get('acme');
    assert.ok(acme);
    assert.equal(acme.name, 'acme');
    assert.equal(acme.url.href, 'https://sales.acme.example/mcp');
    assert.ok(acme.url instanceof URL);
    assert.deepEqual({ ...acme.headers }, {});
    assert.equal(acme.max_request_bytes, 4_194_304);
    assert.equal(acme.max_batch_messages, 100);
    assert.equal(acme.max_call_response_bytes, undefined);
    assert.deepEqual(acme.accept_encoding, ['gzip', 'deflate', 'br']);
    assert.equal(acme.tls_insecure_skip_verify, false);
    assert.deepEqual(acme.guard, { max_buffered_response_bytes: 67_108_864, backoff_after_breaches: 3, backoff_base_ms: 250, backoff_max_ms: 10_000 });
    assert.deepEqual(acme.limits, {
      max_response_bytes: 4_194_304,
      max_sse_event_bytes: 4_194_304,
      max_json_depth: 64,
      max_json_nodes: 100_000,
      response_deadline_ms: 30_000,
      sse_idle_timeout_ms: 300_000,
      sse_deadline_ms: 3_600_000,
      dedupe_text: 'summary',
    });
    assert.deepEqual({ ...acme.tools }, {});
    assert.equal(config.source, undefined);
  });

  it('resolves agent over defaults over built-ins, key by key', () => {
    const config = parseConfig(
      [
        'listen: { host: 0.0.0.0, port: 0 }',
        'log_level: debug',
        'defaults:',
        '  max_response_bytes: 2097152',
        '  max_json_depth: 32',
        '  response_deadline_ms: 5000',
        '  max_request_bytes: 65536',
        '  max_batch_messages: 20',
        '  dedupe_text: "off"',
        'resume: { ttl_ms: 60000 }',
        'agents:',
        '  acme:',
        '    url: https://sales.acme.example/mcp',
        '    max_response_bytes: 8388608',
        '    max_json_nodes: 500',
        '    max_request_bytes: 1024',
        '    max_batch_messages: 5',
        '    max_call_response_bytes: 16777216',
        '    accept_encoding: [identity]',
        '    tls_insecure_skip_verify: true',
        '    headers: { Authorization: "Bearer x", X-Seat: "42" }',
        '    tools:',
        '      list_products: { max_response_bytes: 1048576, dedupe_text: summary }',
        '  other:',
        '    url: http://127.0.0.1:3001/mcp',
        '',
      ].join('\n'),
      { env: {}, source: 'x.yaml' },
    );
    assert.deepEqual(config.listen, { host: '0.0.0.0', port: 0 });
    assert.equal(config.log_level, 'debug');
    assert.equal(config.resume.ttl_ms, 60_000);
    assert.equal(config.source, 'x.yaml');
    assert.equal(config.defaults.max_response_bytes, 2_097_152);
    assert.equal(config.defaults.max_sse_event_bytes, 2_097_152);
    assert.equal(config.defaults.max_request_bytes, 65_536);
    assert.equal(config.defaults.max_batch_messages, 20);

    const acme = config.agents.get('acme');
    assert.ok(acme);
    assert.deepEqual(acme.limits, {
      max_response_bytes: 8_388_608,
      max_sse_event_bytes: 8_388_608,
      max_json_depth: 32,
      max_json_nodes: 500,
      response_deadline_ms: 5_000,
      sse_idle_timeout_ms: 300_000,
      sse_deadline_ms: 3_600_000,
      dedupe_text: 'off',
    });
    assert.equal(acme.max_request_bytes, 1024);
    assert.equal(acme.max_batch_messages, 5);
    assert.equal(acme.max_call_response_bytes, 16_777_216);
    assert.deepEqual(acme.accept_encoding, ['identity']);
    assert.equal(acme.tls_insecure_skip_verify, true);
    assert.deepEqual({ ...acme.headers }, { authorization: 'Bearer x', 'x-seat': '42' });
    // Tool overrides are kept as written (only the keys set).
    assert.deepEqual({ ...acme.tools }, { list_products: { max_response_bytes: 1_048_576, dedupe_text: 'summary' } });

    const other = config.agents.get('other');
    assert.ok(other);
    assert.equal(other.limits.max_response_bytes, 2_097_152);
    assert.equal(other.limits.max_json_depth, 32);
    assert.equal(other.limits.dedupe_text, 'off');
    assert.equal(other.max_request_bytes, 65_536);
    assert.equal(other.max_batch_messages, 20);
    assert.deepEqual([...config.agents.keys()], ['acme', 'other']);
  });

  it('an explicit max_sse_event_bytes is capped by the response limit at each level', () => {
    const config = parseConfig(
      [
        'defaults: { max_sse_event_bytes: 3000000, max_response_bytes: 2000000 }',
        'agents:',
        '  a: { url: "https://a.example/mcp" }',
        '  b: { url: "https://b.example/mcp", max_response_bytes: 8000000 }',
        '',
      ].join('\n'),
      { env: {} },
    );
    assert.equal(config.defaults.max_sse_event_bytes, 2_000_000);
    assert.equal(config.agents.get('a')?.limits.max_sse_event_bytes, 2_000_000);
    assert.equal(config.agents.get('b')?.limits.max_sse_event_bytes, 3_000_000);
  });

  it('treats empty container values as absent', () => {
    const config = parseConfig('listen:\ndefaults:\nresume:\nagents:\n  acme:\n    url: https://a.example/mcp\n    headers:\n    tools:\n', {
      env: {},
    });
    assert.equal(config.listen.port, 8787);
    assert.deepEqual({ ...config.agents.get('acme')?.tools }, {});
  });

  it('accepts boundary values', () => {
    const config = parseConfig(
      agentYaml(
        '    max_response_bytes: 1073741824',
        '    max_sse_event_bytes: 1',
        '    max_json_depth: 10000',
        '    max_json_nodes: 100000000',
        '    response_deadline_ms: 86400000',
        '    sse_idle_timeout_ms: 1',
      ).replace('agents:', 'listen: { port: 65535 }\ndefaults: { max_response_bytes: 4194304 }\nagents:'),
      { env: {} },
    );
    const limits = config.agents.get('acme')?.limits;
    assert.equal(limits?.max_response_bytes, 1_073_741_824);
    assert.equal(limits?.max_sse_event_bytes, 1);
    assert.equal(limits?.max_json_depth, 10_000);
    assert.equal(limits?.max_json_nodes, 100_000_000);
    assert.equal(limits?.response_deadline_ms, 86_400_000);
    assert.equal(config.listen.port, 65_535);
  });

  it('keeps tool names like __proto__ and constructor as data', () => {
    const config = parseConfig(agentYaml('    tools:', '      __proto__: { max_json_depth: 5 }', '      constructor: { max_json_depth: 6 }'), {
      env: {},
    });
    const acme = config.agents.get('acme');
    assert.ok(acme);
    assert.deepEqual(Object.keys(acme.tools), ['__proto__', 'constructor']);
    assert.equal(acme.tools['__proto__']?.max_json_depth, 5);
    assert.equal(Object.getPrototypeOf(acme.tools), null);
    assert.equal(({} as Record<string, unknown>).max_json_depth, undefined);
  });
});

describe('config validation rules (each with its YAML path)', () => {
  it('defaults.max_response_bytes above 4 MiB is an error naming the spec rule; an agent or tool may raise it', () => {
    const problems = problemsOf(`defaults: { max_response_bytes: 4194305 }\n${MINIMAL}`);
    const p = problemAt(problems, 'defaults.max_response_bytes', /may not exceed 4194304 bytes \(4 MiB\).*ceiling on a default.*Size Limits/);
    assert.match(p.message, /got 4194305$/);
    assert.equal(problems.length, 1);

    const config = parseConfig(agentYaml('    max_response_bytes: 8388608', '    tools:', '      t: { max_response_bytes: 16777216 }'), { env: {} });
    assert.equal(config.agents.get('acme')?.limits.max_response_bytes, 8_388_608);
    assert.equal(config.agents.get('acme')?.tools['t']?.max_response_bytes, 16_777_216);
  });

  const byteKeys = ['max_response_bytes', 'max_sse_event_bytes', 'max_call_response_bytes', 'max_request_bytes'];
  for (const key of byteKeys) {
    it(`agents.acme.${key}: integer 1 .. 1 GiB`, () => {
      for (const bad of ['0', '1073741825', '1.5', '"big"', '-1', 'true', '']) {
        const problems = problemsOf(agentYaml(`    ${key}: ${bad}`));
        problemAt(problems, `agents.acme.${key}`, /^expected an integer >= 1 and <= 1073741824 \(1 GiB\), got /);
      }
    });
  }

  it('agent guard keys: set in defaults or per agent, not per tool; backoff_after_breaches 0 .. 1000', () => {
    const config = parseConfig(
      [
        'defaults: { max_buffered_response_bytes: 1048576, backoff_after_breaches: 0 }',
        'agents:',
        '  acme: { url: https://a.example/mcp, backoff_after_breaches: 5, backoff_base_ms: 10, backoff_max_ms: 20 }',
        '  other: { url: https://b.example/mcp }',
        '',
      ].join('\n'),
      { env: {} },
    );
    assert.deepEqual(config.agents.get('acme')?.guard, { max_buffered_response_bytes: 1_048_576, backoff_after_breaches: 5, backoff_base_ms: 10, backoff_max_ms: 20 });
    assert.deepEqual(config.agents.get('other')?.guard, { max_buffered_response_bytes: 1_048_576, backoff_after_breaches: 0, backoff_base_ms: 250, backoff_max_ms: 10_000 });
    for (const bad of ['-1', '1001', '1.5', '"x"']) {
      problemAt(problemsOf(agentYaml(`    backoff_after_breaches: ${bad}`)), 'agents.acme.backoff_after_breaches', /^expected an integer >= 0 and <= 1000 \(0 turns the backoff off\), got /);
    }
    problemAt(problemsOf(agentYaml('    max_buffered_response_bytes: 0')), 'agents.acme.max_buffered_response_bytes', /^expected an integer >= 1 and <= 1073741824 \(1 GiB\), got 0$/);
    problemAt(problemsOf(agentYaml('    tools:', '      t: { backoff_base_ms: 5 }')), 'agents.acme.tools.t.backoff_base_ms', /./);
  });

  it('reports what was found', () => {
    assert.equal(
      problemAt(problemsOf(agentYaml('    max_response_bytes: big')), 'agents.acme.max_response_bytes', /./).message,
      'expected an integer >= 1 and <= 1073741824 (1 GiB), got "big"',
    );
    assert.match(problemAt(problemsOf(agentYaml('    max_response_bytes:')), 'agents.acme.max_response_bytes', /./).message, /got null/);
    assert.match(problemAt(problemsOf(agentYaml('    max_response_bytes: 4_194_304')), 'agents.acme.max_response_bytes', /./).message, /got "4_194_304"/);
    assert.match(problemAt(problemsOf(agentYaml('    max_response_bytes: [1]')), 'agents.acme.max_response_bytes', /./).message, /got a list/);
  });

  for (const key of ['response_deadline_ms', 'sse_idle_timeout_ms', 'sse_deadline_ms']) {
    it(`${key}: integer 1 .. 24 h, at every level`, () => {
      const problems = problemsOf(
        [`defaults: { ${key}: 0 }`, 'agents:', '  acme:', '    url: https://a.example/mcp', `    ${key}: 86400001`, '    tools:', `      t: { ${key}: 2.5 }`, ''].join(
          '\n',
        ),
      );
      const msg = /^expected an integer >= 1 and <= 86400000 \(24 h\), got /;
      problemAt(problems, `defaults.${key}`, msg);
      problemAt(problems, `agents.acme.${key}`, msg);
      problemAt(problems, `agents.acme.tools.t.${key}`, msg);
      assert.equal(problems.length, 3);
    });
  }

  it('resume.ttl_ms: integer 1 .. 24 h', () => {
    problemAt(problemsOf(`resume: { ttl_ms: 0 }\n${MINIMAL}`), 'resume.ttl_ms', /^expected an integer >= 1 and <= 86400000 \(24 h\), got 0$/);
  });

  it('max_json_depth 1..10000 and max_json_nodes 1..100,000,000', () => {
    const problems = problemsOf(agentYaml('    max_json_depth: 10001', '    max_json_nodes: 100000001'));
    problemAt(problems, 'agents.acme.max_json_depth', /^expected an integer >= 1 and <= 10000, got 10001$/);
    problemAt(problems, 'agents.acme.max_json_nodes', /^expected an integer >= 1 and <= 100000000, got 100000001$/);
    problemAt(problemsOf(`defaults: { max_json_depth: 0 }\n${MINIMAL}`), 'defaults.max_json_depth', /got 0$/);
  });

  it('listen.port 0..65535, listen.host a non-empty string', () => {
    problemAt(problemsOf(`listen: { port: 65536 }\n${MINIMAL}`), 'listen.port', /^expected an integer >= 0 and <= 65535, got 65536$/);
    problemAt(problemsOf(`listen: { port: -1 }\n${MINIMAL}`), 'listen.port', /got -1$/);
    problemAt(problemsOf(`listen: { host: "" }\n${MINIMAL}`), 'listen.host', /expected a host name or IP address/);
  });

  it('ops_listen.port may not be listen.port on an overlapping address (it would fail with EADDRINUSE)', () => {
    const conflict = (yaml: string, message: RegExp): ConfigProblem => problemAt(problemsOf(`${yaml}\n${MINIMAL}`), 'ops_listen.port', message);
    // Same host: ops_listen.host defaults to listen.host.
    const p = conflict('listen: { host: 127.0.0.1, port: 9000 }\nops_listen: { port: 9000 }', /^must differ from listen\.port \(9000\) on the same host: the second listener would fail with EADDRINUSE \(use another port, or 0 for any free port\)$/);
    assert.deepEqual([p.line, p.column], [2, 21]);
    // listen.port left at its default, 8787.
    conflict('ops_listen: { port: 8787 }', /^must differ from listen\.port \(8787, the default\) on the same host:/);
    // Either host a wildcard.
    conflict('listen: { host: 0.0.0.0, port: 9000 }\nops_listen: { host: 127.0.0.1, port: 9000 }', /^must differ from listen\.port \(9000\) and listen\.host is a wildcard address \(0\.0\.0\.0 or ::, every address\):/);
    conflict('listen: { host: 10.1.2.3, port: 9000 }\nops_listen: { host: "::", port: 9000 }', /and ops_listen\.host is a wildcard address/);
    conflict('listen: { host: "[::]", port: 9000 }\nops_listen: { host: 127.0.0.1, port: 9000 }', /and listen\.host is a wildcard address/);
    conflict('listen: { host: "0:0:0:0:0:0:0:0", port: 9000 }\nops_listen: { host: "::1", port: 9000 }', /and listen\.host is a wildcard address/);
    // Hosts from ${VAR} are compared after expansion and never echoed.
    const fromEnv = problemsOf(`listen: { host: "\${GW_HOST}", port: 9000 }\nops_listen: { port: 9000 }\n${MINIMAL}`, { GW_HOST: '10.9.8.7' });
    assert.ok(!JSON.stringify(fromEnv).includes('10.9.8.7'));
    problemAt(fromEnv, 'ops_listen.port', /on the same host/);
    // The same host spelled differently.
    conflict('listen: { host: "::1", port: 9000 }\nops_listen: { host: "0:0:0:0:0:0:0:1", port: 9000 }', /on the same host/);
    conflict('listen: { host: LocalHost, port: 9000 }\nops_listen: { host: localhost, port: 9000 }', /on the same host/);
    // Reported with the other problems at once.
    const all = problemsOf(`listen: { port: 9000 }\nops_listen: { port: 9000 }\nlog_level: loud\n${MINIMAL}`);
    assert.deepEqual(all.map((q) => q.path), ['ops_listen.port', 'log_level']);

    const ok = (yaml: string): void => assert.doesNotThrow(() => parseConfig(`${yaml}\n${MINIMAL}`, { env: {} }), yaml);
    ok('listen: { port: 0 }\nops_listen: { port: 0 }'); // ephemeral: two different free ports
    ok('listen: { host: 0.0.0.0, port: 0 }\nops_listen: { port: 0 }');
    ok('listen: { port: 9000 }\nops_listen: { port: 9001 }');
    ok('listen: { host: 127.0.0.1, port: 9000 }\nops_listen: { host: 127.0.0.2, port: 9000 }');
    ok('listen: { host: "::1", port: 9000 }\nops_listen: { host: 127.0.0.1, port: 9000 }');
    // An invalid port is the schema's problem only.
    problemAt(problemsOf(`listen: { port: 9000 }\nops_listen: { port: 9000.5 }\n${MINIMAL}`), 'ops_listen.port', /^expected an integer/);
  });

  it('log_level and dedupe_text are enums', () => {
    problemAt(problemsOf(`log_level: verbose\n${MINIMAL}`), 'log_level', /^expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"$/);
    problemAt(problemsOf(agentYaml('    tools:', '      t: { dedupe_text: full }')), 'agents.acme.tools.t.dedupe_text', /^expected one of summary, off, got "full"$/);
    // YAML 1.2: `off` is a string, not a boolean.
    assert.equal(parseConfig(agentYaml('    dedupe_text: off'), { env: {} }).agents.get('acme')?.limits.dedupe_text, 'off');
  });

  it('url: absolute http(s), no credentials, no fragment; never echoed', () => {
    const cases: [string, RegExp][] = [
      ['not-a-url', /not a valid absolute URL/],
      ['/relative/mcp', /not a valid absolute URL/],
      ['ftp://files.example/mcp', /scheme must be http: or https:, got "ftp:"/],
      ['https://user:hunter2@sales.example/mcp', /must not contain credentials/],
      ['https://sales.example/mcp#frag', /must not contain a fragment/],
      ['https://sales.example/mcp#', /must not contain a fragment/],
    ];
    for (const [url, message] of cases) {
      const problems = problemsOf(`agents:\n  acme:\n    url: "${url}"\n`);
      const p = problemAt(problems, 'agents.acme.url', message);
      if (url.includes('hunter2')) assert.doesNotMatch(p.message, /hunter2/);
    }
    problemAt(problemsOf('agents:\n  acme:\n    url: 42\n'), 'agents.acme.url', /^expected an absolute http: or https: URL, got 42$/);
    assert.equal(parseConfig('agents:\n  a:\n    url: http://127.0.0.1:3001/mcp?x=1\n', { env: {} }).agents.get('a')?.url.search, '?x=1');
  });

  it('a missing url is reported at the agent path', () => {
    const problems = problemsOf('agents:\n  acme:\n    headers: {}\n');
    const p = problemAt(problems, 'agents.acme.url', /^missing required key `url`$/);
    assert.equal(p.line, 2);
  });

  it('at least one agent', () => {
    problemAt(problemsOf('agents: {}\n'), 'agents', /at least one agent is required/);
    problemAt(problemsOf('agents:\n'), 'agents', /at least one agent is required/);
    problemAt(problemsOf('log_level: info\n'), 'agents', /missing required key `agents` \(at least one agent is required\)/);
    problemAt(problemsOf('agents: [a]\n'), 'agents', /expected a mapping of agent name to agent, got a list/);
  });

  it('agent names are URL-path-safe', () => {
    const cases: [string, string][] = [
      ['-lead', 'agents.-lead'],
      ['has space', 'agents["has space"]'],
      ['slash/name', 'agents["slash/name"]'],
      ['a'.repeat(65), `agents.${'a'.repeat(65)}`],
      ['é', 'agents["é"]'],
    ];
    for (const [name, path] of cases) {
      const problems = problemsOf(`agents:\n  ${JSON.stringify(name)}:\n    url: https://a.example/mcp\n`);
      problemAt(problems, path, /^invalid agent name .*must match \^\[A-Za-z0-9\]/);
    }
    for (const name of ['a', 'A.b_c-9', 'a'.repeat(64)]) parseConfig(`agents:\n  ${name}:\n    url: https://a.example/mcp\n`, { env: {} });
  });

  it('tool names use the MCP tool-name charset', () => {
    const problems = problemsOf(agentYaml('    tools:', '      "bad tool": {}', `      "${'t'.repeat(129)}": {}`));
    problemAt(problems, 'agents.acme.tools["bad tool"]', /^invalid tool name "bad tool": must match \^\[A-Za-z0-9_.-\]\{1,128\}\$$/);
    problemAt(problems, `agents.acme.tools.${'t'.repeat(129)}`, /^invalid tool name/);
    const ok = parseConfig(agentYaml('    tools:', '      get.products_v2-x: {}'), { env: {} });
    assert.deepEqual(Object.keys(ok.agents.get('acme')?.tools ?? {}), ['get.products_v2-x']);
  });

  it('per-tool blocks take only the limit keys', () => {
    const problems = problemsOf(agentYaml('    tools:', '      t: { url: "https://x.example", max_call_response_bytes: 5 }'));
    problemAt(problems, 'agents.acme.tools.t.url', /^unknown key `url`: `url` can be set on the agent, not per tool$/);
    problemAt(problems, 'agents.acme.tools.t.max_call_response_bytes', /can be set on the agent, not per tool/);
  });

  it('headers: HTTP token names, lower-cased; forbidden names', () => {
    const forbidden = [
      'Connection',
      'keep-alive',
      'Transfer-Encoding',
      'te',
      'trailer',
      'upgrade',
      'Proxy-Authorization',
      'proxy-connection',
      'Host',
      'content-length',
      'X-Max-Response-Bytes',
      'accept-encoding',
      'Expect',
      'content-encoding',
      'last-event-id',
      'x-adcp-gateway-exchange',
    ];
    const problems = problemsOf(agentYaml('    headers:', ...forbidden.map((h) => `      ${h}: v`)));
    for (const h of forbidden) problemAt(problems, `agents.acme.headers.${h}`, new RegExp(`^header \`${h.toLowerCase()}\` may not be configured: `));
    assert.equal(problems.length, forbidden.length);

    const more = problemsOf(agentYaml('    headers:', '      "x y": v', '      "x:y": v', '      Authorization: a', '      authorization: b', '      x-num: 42'));
    problemAt(more, 'agents.acme.headers["x y"]', /^invalid header name "x y": must be an HTTP token$/);
    problemAt(more, 'agents.acme.headers["x:y"]', /must be an HTTP token/);
    problemAt(more, 'agents.acme.headers.authorization', /^header `authorization` repeats `Authorization` \(header names are case-insensitive\)$/);
    problemAt(more, 'agents.acme.headers.x-num', /^expected a string header value \(quote numbers\), got a number$/);
  });

  it('header values may not contain line breaks and are never echoed', () => {
    const problems = problemsOf(agentYaml('    headers:', '      x-secret: "tok\\r\\nInjected: yes"'));
    const p = problemAt(problems, 'agents.acme.headers.x-secret', /not allowed in HTTP/);
    assert.doesNotMatch(p.message, /tok|Injected/);
  });

  it('accept_encoding: gzip, deflate, br, identity, unique, non-empty', () => {
    const problems = problemsOf(agentYaml('    accept_encoding: [gzip, zstd, gzip]'));
    problemAt(problems, 'agents.acme.accept_encoding[1]', /^expected one of gzip, deflate, br, identity, got "zstd"$/);
    problemAt(problems, 'agents.acme.accept_encoding[2]', /^duplicate content coding "gzip"$/);
    problemAt(problemsOf(agentYaml('    accept_encoding: []')), 'agents.acme.accept_encoding', /at least one content coding/);
    problemAt(problemsOf(agentYaml('    accept_encoding: gzip')), 'agents.acme.accept_encoding', /expected a list.*got "gzip"/);
    assert.deepEqual(parseConfig(agentYaml('    accept_encoding: [br, identity]'), { env: {} }).agents.get('acme')?.accept_encoding, ['br', 'identity']);
  });

  it('tls_insecure_skip_verify is a boolean', () => {
    problemAt(problemsOf(agentYaml('    tls_insecure_skip_verify: "yes"')), 'agents.acme.tls_insecure_skip_verify', /^expected true or false, got "yes"$/);
  });

  it('resume.secret: at least 32 characters, never echoed', () => {
    const p = problemAt(problemsOf(`resume: { secret: "short-secret-value" }\n${MINIMAL}`), 'resume.secret', /^must be at least 32 characters long$/);
    assert.doesNotMatch(p.message, /short-secret/);
    const secret = 's'.repeat(32);
    assert.equal(parseConfig(`resume: { secret: "${secret}" }\n${MINIMAL}`, { env: {} }).resume.secret, secret);
  });

  it('resume secret: config, else ADCP_GATEWAY_RESUME_SECRET, else undefined', () => {
    const fromEnv = 'e'.repeat(40);
    const fromFile = 'f'.repeat(40);
    assert.equal(parseConfig(MINIMAL, { env: { ADCP_GATEWAY_RESUME_SECRET: fromEnv } }).resume.secret, fromEnv);
    assert.equal(
      parseConfig(`resume: { secret: "${fromFile}" }\n${MINIMAL}`, { env: { ADCP_GATEWAY_RESUME_SECRET: fromEnv } }).resume.secret,
      fromFile,
    );
    assert.equal(parseConfig(MINIMAL, { env: {} }).resume.secret, undefined);
    problemAt(problemsOf(MINIMAL, { ADCP_GATEWAY_RESUME_SECRET: '' }), 'resume.secret', /ADCP_GATEWAY_RESUME_SECRET is set but empty/);
    const p = problemAt(problemsOf(MINIMAL, { ADCP_GATEWAY_RESUME_SECRET: 'too-short' }), 'resume.secret', /ADCP_GATEWAY_RESUME_SECRET must be at least 32/);
    assert.doesNotMatch(p.message, /too-short/);
  });

  it('unknown keys are errors everywhere, with a typo suggestion', () => {
    const problems = problemsOf(
      [
        'lisen: { port: 1 }',
        'listen: { hots: x }',
        'defaults: { max_respons_bytes: 1, Max_JSON_Depth: 3 }',
        'resume: { sekret: x }',
        'agents:',
        '  acme:',
        '    url: https://a.example/mcp',
        '    max-response-bytes: 5',
        '    zzzzzz: 1',
        '    tools:',
        '      t: { max_json_dept: 5 }',
        '',
      ].join('\n'),
    );
    problemAt(problems, 'lisen', /^unknown key `lisen` \(did you mean `listen`\?\)$/);
    problemAt(problems, 'listen.hots', /did you mean `host`/);
    problemAt(problems, 'defaults.max_respons_bytes', /^unknown key `max_respons_bytes` \(did you mean `max_response_bytes`\?\)$/);
    problemAt(problems, 'defaults.Max_JSON_Depth', /did you mean `max_json_depth`/);
    problemAt(problems, 'resume.sekret', /did you mean `secret`/);
    problemAt(problems, 'agents.acme.max-response-bytes', /did you mean `max_response_bytes`/);
    problemAt(problems, 'agents.acme.zzzzzz', /^unknown key `zzzzzz` \(known keys: url, headers, /);
    problemAt(problems, 'agents.acme.tools.t.max_json_dept', /did you mean `max_json_depth`/);
    assert.equal(problems.length, 8);
  });

  it('duplicate keys are errors, with a position', () => {
    const problems = problemsOf(`${MINIMAL}log_level: info\nlog_level: debug\n`);
    assert.equal(problems.length, 1);
    const p = problemAt(problems, 'log_level', /^duplicate key `log_level`$/);
    assert.equal(p.line, 5);
    assert.equal(p.column, 1);
  });

  it('regression "a duplicate key hides every other problem": reported with its YAML path, next to the others', () => {
    // Input: a duplicated defaults key and a misspelt agent key. Was: only
    // "line 3, column 3: YAML: Map keys must be unique", with no path.
    const problems = problemsOf('defaults:\n  max_json_depth: 10\n  max_json_depth: 20\nagents:\n  a:\n    url: http://127.0.0.1:9/mcp\n    max_respons_bytes: 5\n');
    assert.equal(problems.length, 2, JSON.stringify(problems));
    const dup = problemAt(problems, 'defaults.max_json_depth', /^duplicate key `max_json_depth`$/);
    assert.equal(dup.line, 3);
    problemAt(problems, 'agents.a.max_respons_bytes', /max_response_bytes/);
  });

  it('YAML syntax errors have line and column', () => {
    const problems = problemsOf('agents:\n  acme:\n    url: [https://a.example\n');
    assert.ok(problems.length >= 1);
    for (const p of problems) {
      assert.equal(p.path, '');
      assert.match(p.message, /^YAML: /);
      assert.equal(typeof p.line, 'number');
      assert.equal(typeof p.column, 'number');
    }
  });

  it('an empty file, a file of only comments or whitespace, or a non-mapping is an error', () => {
    problemAt(problemsOf(''), '', /^the file is empty: at least an `agents:` block/);
    for (const text of ['# only a comment\n', '\n   \n\t\n', '# a\n\n# b', '---\n# nothing\n']) {
      problemAt(problemsOf(text), '', /^the file has no settings \(only comments or whitespace\): at least an `agents:` block/);
    }
    problemAt(problemsOf('- a\n- b\n'), '', /expected a mapping.*got a list/);
    problemAt(problemsOf('~\n'), '', /expected a mapping.*got null/);
  });

  it('text over MAX_CONFIG_FILE_BYTES (1 MiB) is refused before parsing', () => {
    assert.equal(MAX_CONFIG_FILE_BYTES, 1_048_576);
    const padding = `${'#'.repeat(99)}\n`.repeat(MAX_CONFIG_FILE_BYTES / 100 + 1);
    const atCap = MINIMAL + padding.slice(0, MAX_CONFIG_FILE_BYTES - MINIMAL.length);
    assert.equal(Buffer.byteLength(atCap), MAX_CONFIG_FILE_BYTES);
    assert.ok(parseConfig(atCap, { env: {} }).agents.has('acme'), 'exactly 1 MiB is fine');
    problemAt(problemsOf(`${atCap}#`), '', /^config file is 1048577 bytes; at most 1048576$/);
    // Counted in UTF-8 bytes, not characters.
    const multiByte = `${MINIMAL}#${'é'.repeat(MAX_CONFIG_FILE_BYTES / 2)}`;
    problemAt(problemsOf(multiByte), '', new RegExp(`^config file is ${Buffer.byteLength(multiByte)} bytes; at most 1048576$`));
  });

  it('integers in any YAML 1.2 core-schema form (as documented)', () => {
    const depth = (v: string): number | undefined => parseConfig(`defaults: { max_json_depth: ${v} }\n${MINIMAL}`, { env: {} }).defaults.max_json_depth;
    assert.equal(depth('16'), 16);
    assert.equal(depth('+16'), 16);
    assert.equal(depth('0x10'), 16);
    assert.equal(depth('0o20'), 16);
    assert.equal(depth('020'), 20); // decimal: no YAML 1.1 octal
    assert.equal(depth('1.6e1'), 16);
    assert.equal(depth('16.0'), 16);
    assert.equal(depth('1600e-2'), 16);
    assert.equal(depth('.16e2'), 16);
    for (const v of ['"16"', '1_6', '0b10000', '16KiB', '16.5']) {
      problemAt(problemsOf(`defaults: { max_json_depth: ${v} }\n${MINIMAL}`), 'defaults.max_json_depth', /^expected an integer >= 1 and <= 10000/);
    }
  });

  it('a number whose YAML text is not an integer is refused even when its double is one, and so is a negative zero', () => {
    const port = (v: string): number => parseConfig(`listen: { port: ${v} }\n${MINIMAL}`, { env: {} }).listen.port;
    assert.equal(port('0'), 0);
    assert.equal(port('+0'), 0);
    assert.equal(port('0.0e5'), 0);
    assert.equal(port('8.0'), 8);
    const refused: Array<[string, string]> = [
      ['16.0000000000000001', '16.0000000000000001'],
      ['1.60000000000000001e1', '1.60000000000000001e1'],
      ['1600000000000000001e-17', '1600000000000000001e-17'],
      ['1e-400', '1e-400'],
      ['-1e-400', '-1e-400'],
      ['-0', '-0 (a negative zero)'],
      ['-0.0', '-0.0 (a negative zero)'],
      ['-0e9', '-0e9 (a negative zero)'],
      [`16.${'0'.repeat(60)}1`, `16.${'0'.repeat(37)}…`],
    ];
    for (const [v, got] of refused) {
      const problem = problemAt(problemsOf(`listen: { port: ${v} }\n${MINIMAL}`), 'listen.port', /./);
      assert.equal(problem.message, `expected an integer >= 0 and <= 65535, got ${got}`, v);
    }
  });
});

describe('YAML tags', () => {
  it("the core schema's tags and the non-specific `!` are read as their values", () => {
    const config = parseConfig(
      `listen: !!map { port: !!int 8080, host: !<tag:yaml.org,2002:str> 127.0.0.1 }\ndefaults: { max_json_depth: !!float 16.0, dedupe_text: ! off }\n${MINIMAL}`,
      { env: {} },
    );
    assert.deepEqual([config.listen.port, config.listen.host, config.defaults.max_json_depth, config.defaults.dedupe_text], [8080, '127.0.0.1', 16, 'off']);
  });

  it('any other tag is refused at its path, named, also through an alias and under a %TAG handle', () => {
    const cases: Array<[string, string, string]> = [
      [`defaults: { max_json_depth: !!binary aGVsbG8= }\n${MINIMAL}`, 'defaults.max_json_depth', 'binary data (!!binary)'],
      [`defaults: { max_json_depth: !!merge << }\n${MINIMAL}`, 'defaults.max_json_depth', 'a merge key (!!merge)'],
      [`defaults: { max_json_depth: !!bogus 3 }\n${MINIMAL}`, 'defaults.max_json_depth', 'a value tagged !!bogus'],
      [`defaults: { max_json_depth: !<tag:example.com,2000:n> 3 }\n${MINIMAL}`, 'defaults.max_json_depth', 'a value tagged !<tag:example.com,2000:n>'],
      [`%TAG !e! tag:example.com,2000:\n---\ndefaults: { max_json_depth: !e!n 3 }\n${MINIMAL}`, 'defaults.max_json_depth', 'a value tagged !<tag:example.com,2000:n>'],
      [`defaults: { max_json_depth: !${'x'.repeat(60)} 3 }\n${MINIMAL}`, 'defaults.max_json_depth', `a value tagged !${'x'.repeat(39)}…`],
    ];
    for (const [text, path, got] of cases) {
      const problems = problemsOf(text);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.equal(problemAt(problems, path, /./).message, `expected an integer >= 1 and <= 10000, got ${got}`);
    }
    const aliased = problemsOf(`listen: &l !!set { }\nops_listen: *l\n${MINIMAL}`);
    assert.deepEqual(
      aliased.map((p) => [p.path, p.message]),
      [
        ['listen', 'expected a mapping with `host` and `port`, got a set (!!set)'],
        ['ops_listen', 'expected a mapping with `port` (and optionally `host`), got a set (!!set)'],
      ],
    );
  });

  it('a core tag on a value it does not fit is refused at its path; !!float reads any YAML 1.2 float', () => {
    assert.deepEqual(
      problemsOf(`defaults: { max_json_depth: !!int 3.5, max_json_nodes: !!float 3 }\n${MINIMAL}`).map((p) => [p.path, p.message]),
      [['defaults.max_json_depth', 'expected an integer >= 1 and <= 10000, got !!int 3.5, which is not a YAML integer']],
    );
  });
});

describe('YAML anchors and aliases', () => {
  it('an alias shares a value between agents', () => {
    const config = parseConfig(
      [
        'agents:',
        '  a:',
        '    url: https://a.example/mcp',
        '    headers: &auth { authorization: "Bearer ${T}" }',
        '  b:',
        '    url: https://b.example/mcp',
        '    headers: *auth',
        '',
      ].join('\n'),
      { env: { T: 'tok' } },
    );
    assert.deepEqual({ ...config.agents.get('b')?.headers }, { authorization: 'Bearer tok' });
  });

  it('a self-referencing alias is an error', () => {
    const problems = problemsOf('agents:\n  a: &x\n    url: https://a.example/mcp\n    tools: { t: *x }\n');
    problemAt(problems, 'agents.a.tools.t.tools.t', /^alias \*x refers to itself$/);
  });

  it('an alias bomb is stopped with one problem', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    const problems = problemsOf(`${lines.join('\n')}\n`);
    assert.equal(problems.length, 1);
    assert.match(problems[0]?.message ?? '', /^the document expands to more than 200000 values/);
  });
});

describe('all problems at once, with positions', () => {
  const yaml = [
    'listen: { port: 99999 }', // 1
    'defaults:', // 2
    '  max_response_bytes: 8388608', // 3
    'agents:', // 4
    '  acme:', // 5
    '    url: ftp://x.example/mcp', // 6
    '    max_response_bytes: big', // 7
    '    headers: { authorization: "Bearer ${ACME_TOKEN}" }', // 8
    '    tools:', // 9
    '      list_products:', // 10
    '        max_response_bytes: 0', // 11
    '        max_respons_bytes: 1', // 12
    '',
  ].join('\n');

  it('reports every problem, sorted by position, each with line and column', () => {
    const problems = problemsOf(yaml);
    assert.deepEqual(
      problems.map((p) => [p.path, p.line, p.column]),
      [
        ['listen.port', 1, 17],
        ['defaults.max_response_bytes', 3, 23],
        ['agents.acme.url', 6, 10],
        ['agents.acme.max_response_bytes', 7, 25],
        ['agents.acme.headers.authorization', 8, 31],
        ['agents.acme.tools.list_products.max_response_bytes', 11, 29],
        ['agents.acme.tools.list_products.max_respons_bytes', 12, 9],
      ],
    );
  });

  it('format() gives one line per problem under a count', () => {
    let error: ConfigError | undefined;
    try {
      parseConfig(yaml, { env: {}, source: 'config/gateway.yaml' });
    } catch (err) {
      error = err as ConfigError;
    }
    assert.ok(error instanceof ConfigError);
    assert.equal(error.source, 'config/gateway.yaml');
    const text = error.format();
    const lines = text.split('\n');
    assert.equal(lines[0], 'config/gateway.yaml: 7 problems');
    assert.equal(lines.length, 8);
    assert.equal(lines[4], '  agents.acme.max_response_bytes (line 7, column 25): expected an integer >= 1 and <= 1073741824 (1 GiB), got "big"');
    assert.equal(lines[5], '  agents.acme.headers.authorization (line 8, column 31): environment variable `ACME_TOKEN` is not set');
    assert.equal(error.message, text);
    assert.equal(new ConfigError([{ path: 'a', message: 'm' }]).format(), 'config: 1 problem\n  a: m');
    assert.equal(new ConfigError([{ path: '', message: 'm', line: 2, column: 3 }], 'f.yaml').format(), 'f.yaml: 1 problem\n  line 2, column 3: m');
  });
});

describe('the result is deeply frozen', () => {
  const config: GatewayConfig = parseConfig(agentYaml('    headers: { x-a: b }', '    tools:', '      t: { max_json_depth: 5 }'), { env: {} });
  const acme = config.agents.get('acme');
  assert.ok(acme);

  it('objects throw on mutation (strict mode)', () => {
    type Writable = Record<string, unknown>;
    assert.throws(() => {
      (config as unknown as Writable).log_level = 'debug';
    }, TypeError);
    assert.throws(() => {
      (config.listen as unknown as Writable).port = 1;
    }, TypeError);
    assert.throws(() => {
      (config.defaults as unknown as Writable).max_response_bytes = 1;
    }, TypeError);
    assert.throws(() => {
      (config.resume as unknown as Writable).secret = 'x';
    }, TypeError);
    assert.throws(() => {
      (acme as unknown as Writable).max_request_bytes = 1;
    }, TypeError);
    assert.throws(() => {
      (acme.limits as unknown as Writable).max_response_bytes = 1;
    }, TypeError);
    assert.throws(() => {
      (acme.headers as Writable)['x-b'] = 'c';
    }, TypeError);
    assert.throws(() => {
      (acme.tools as Writable)['u'] = {};
    }, TypeError);
    assert.throws(() => {
      (acme.tools['t'] as Writable).max_json_depth = 6;
    }, TypeError);
    assert.throws(() => {
      (acme.accept_encoding as string[]).push('identity');
    }, TypeError);
  });

  it('the agents map and the url cannot be changed', () => {
    const agents = config.agents as Map<string, unknown>;
    assert.throws(() => agents.set('evil', {}), TypeError);
    assert.throws(() => agents.delete('acme'), TypeError);
    assert.throws(() => agents.clear(), TypeError);
    assert.equal(config.agents.size, 1);
    assert.throws(() => {
      acme.url.pathname = '/other';
    }, TypeError);
    assert.throws(() => {
      acme.url.href = 'https://evil.example/';
    }, TypeError);
    acme.url.searchParams.set('x', '1');
    assert.equal(acme.url.href, 'https://sales.acme.example/mcp');
    assert.equal(new URL(acme.url).href, 'https://sales.acme.example/mcp');
    assert.equal(String(acme.url), 'https://sales.acme.example/mcp');
  });
});

describe('loadConfigFile', () => {
  it('reads a file; source is the absolute path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
    try {
      const file = join(dir, 'g.yaml');
      await writeFile(file, MINIMAL);
      const config = await loadConfigFile(file, { env: {} });
      assert.equal(config.source, file);
      assert.equal(config.agents.get('acme')?.url.host, 'sales.acme.example');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a missing file or a directory is a ConfigError', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
    try {
      await assert.rejects(loadConfigFile(join(dir, 'nope.yaml'), { env: {} }), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 1);
        assert.match(err.problems[0]?.message ?? '', /file not found/);
        assert.equal(err.source, join(dir, 'nope.yaml'));
        return true;
      });
      await assert.rejects(loadConfigFile(dir, { env: {} }), (err: unknown) => err instanceof ConfigError && /is a directory/.test(err.message));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a path that is not a regular file is refused without reading it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
    try {
      const rejectsWith = (path: string, message: RegExp): Promise<void> =>
        assert.rejects(loadConfigFile(path, { env: {} }), (err: unknown) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.equal(err.problems.length, 1);
          assert.match(err.problems[0]?.message ?? '', message);
          return true;
        });
      await rejectsWith(dir, /^cannot read .*: not a regular file \(it is a directory\)$/);
      // A device never ends: refused by its type, before any byte is read.
      if (existsSync('/dev/urandom')) await rejectsWith('/dev/urandom', /^cannot read \/dev\/urandom: not a regular file \(it is a character device\)$/);
      if (existsSync('/dev/null')) await rejectsWith('/dev/null', /not a regular file \(it is a character device\)/);
      // A FIFO with no writer: opening it would block forever.
      let fifo: string | undefined = join(dir, 'fifo.yaml');
      try {
        execFileSync('mkfifo', [fifo], { stdio: 'ignore' });
      } catch {
        fifo = undefined; // no mkfifo here
      }
      if (fifo !== undefined) await rejectsWith(fifo, /not a regular file \(it is a FIFO \(named pipe\)\)$/);
      // A symbolic link to a regular file is fine (Kubernetes ConfigMaps are symlinks).
      const real = join(dir, 'real.yaml');
      await writeFile(real, MINIMAL);
      await symlink(real, join(dir, 'link.yaml'));
      assert.ok((await loadConfigFile(join(dir, 'link.yaml'), { env: {} })).agents.has('acme'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a file over 1 MiB is refused from its size; a comment-only file says it has no settings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
    try {
      const big = join(dir, 'big.yaml');
      await writeFile(big, `${MINIMAL}${`# ${'x'.repeat(97)}\n`.repeat(200_000)}`); // ~20 MB of comments
      await assert.rejects(loadConfigFile(big, { env: {} }), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.deepEqual(err.problems, [{ path: '', message: `config file is ${MINIMAL.length + 20_000_000} bytes; at most 1048576` }]);
        assert.equal(err.source, big);
        return true;
      });
      const oneOver = join(dir, 'over.yaml');
      await writeFile(oneOver, `${MINIMAL}${'#'.repeat(MAX_CONFIG_FILE_BYTES + 1 - MINIMAL.length)}`);
      await assert.rejects(loadConfigFile(oneOver, { env: {} }), /config file is 1048577 bytes; at most 1048576/);
      const atCap = join(dir, 'cap.yaml');
      await writeFile(atCap, `${MINIMAL}${'#'.repeat(MAX_CONFIG_FILE_BYTES - MINIMAL.length)}`);
      assert.ok((await loadConfigFile(atCap, { env: {} })).agents.has('acme'));

      const comments = join(dir, 'comments.yaml');
      await writeFile(comments, '# nothing yet\n\n   \n# still nothing\n');
      await assert.rejects(loadConfigFile(comments, { env: {} }), /the file has no settings \(only comments or whitespace\)/);
      const empty = join(dir, 'empty.yaml');
      await writeFile(empty, '');
      await assert.rejects(loadConfigFile(empty, { env: {} }), /the file is empty/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an invalid file names the file as given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
    try {
      const file = join(dir, 'bad.yaml');
      await writeFile(file, 'agents: {}\n');
      await assert.rejects(loadConfigFile(file, { env: {} }), (err: unknown) => err instanceof ConfigError && err.format().startsWith(`${file}: 1 problem\n`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('allowed_origins', () => {
  it('defaults to none, and keeps the listed origins', () => {
    assert.deepEqual(parseConfig(agentYaml(), { env: {} }).allowed_origins, []);
    const config = parseConfig(['allowed_origins: ["https://console.example.com", "http://localhost:3000"]', agentYaml()].join('\n'), { env: {} });
    assert.deepEqual(config.allowed_origins, ['https://console.example.com', 'http://localhost:3000']);
  });

  it('names each entry that is not an origin as a browser sends it', () => {
    const problems = problemsOf(['allowed_origins:', '  - https://ok.example.com', '  - https://console.example.com/', '  - HTTPS://Upper.example.com', '  - "*"', '  - ftp://files.example.com', agentYaml()].join('\n'));
    for (const k of [1, 2, 3, 4]) problemAt(problems, `allowed_origins[${k}]`, /^expected an origin exactly as a browser sends it: http\(s\):\/\/host\[:port\], lower case, no path or trailing slash/);
    assert.equal(problems.length, 4, JSON.stringify(problems));
  });

  it('is a list', () => {
    problemAt(problemsOf(['allowed_origins: https://console.example.com', agentYaml()].join('\n')), 'allowed_origins', /expected a list of origins/);
  });
});

describe('allowed_hosts', () => {
  it('defaults to none, and keeps the listed hosts', () => {
    assert.deepEqual(parseConfig(agentYaml(), { env: {} }).allowed_hosts, []);
    const hosts = ['gateway', 'gw.internal.example:8787', 'project_gateway_1', '10.0.0.5:8787', '[fd00::1]', '[::1]:8787', 'localhost', 'gw.example.'];
    const config = parseConfig([`allowed_hosts: ${JSON.stringify(hosts)}`, agentYaml()].join('\n'), { env: {} });
    assert.deepEqual(config.allowed_hosts, hosts);
  });

  it('names each entry that is not a host as a client sends it in Host', () => {
    const bad = ['Gateway', 'http://gateway', 'gateway/mcp', '*.example.com', 'gateway:0', 'gateway:65536', 'gateway:080', 'gateway:', 'fd00::1', '[fd00::0:1]', '[FD00::1]', '127.1', 'a..b', '', 'gw:8787:1', 'user@gw'];
    const problems = problemsOf(['allowed_hosts:', '  - gw.ok.example', ...bad.map((h) => `  - "${h}"`), agentYaml()].join('\n'));
    bad.forEach((h, k) => problemAt(problems, `allowed_hosts[${k + 1}]`, /^expected a host as clients send it in the Host header: name or name:port, lower case, an IPv6 address in brackets, a port of 1 to 65535, no scheme, path or wildcard/));
    assert.equal(problems.length, bad.length, JSON.stringify(problems));
  });

  it('is a list of strings', () => {
    problemAt(problemsOf(['allowed_hosts: gateway', agentYaml()].join('\n')), 'allowed_hosts', /expected a list of host names/);
    problemAt(problemsOf(['allowed_hosts: [8787]', agentYaml()].join('\n')), 'allowed_hosts[0]', /expected a host string such as gateway.internal or gateway.internal:8787/);
  });
});

describe('listen.host and ops_listen.host', () => {
  it('accept IP addresses and host names', () => {
    for (const host of ['127.0.0.1', '::1', '0.0.0.0', '::', 'localhost', 'gateway', 'gw-1.internal.example', 'localhost.', 'project_gateway_1']) {
      const config = parseConfig([`listen: { host: "${host}", port: 1 }`, `ops_listen: { host: "${host}", port: 2 }`, agentYaml()].join('\n'), { env: {} });
      assert.equal(config.listen.host, host);
    }
  });

  it('name a host no listener can take (a new user: "not a host!" was called valid, then startup failed with ENOTFOUND)', () => {
    for (const host of ['not a host!', '', '-lead.example', 'a..b', 'http://127.0.0.1', '127.0.0.1:8787']) {
      const problems = problemsOf([`listen: { host: "${host}" }`, `ops_listen: { host: "${host}", port: 2 }`, agentYaml()].join('\n'));
      for (const path of ['listen.host', 'ops_listen.host']) problemAt(problems, path, /^expected a host name or IP address/);
    }
  });
});
