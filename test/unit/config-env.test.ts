// `${VAR}` expansion: the function itself and its use by the loader (paths, secrecy).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expandEnv } from '../../src/config/env.js';
import { ConfigError, parseConfig, type ConfigProblem } from '../../src/config/load.js';

describe('expandEnv', () => {
  const env = { A: 'alpha', B: '', TOKEN: 'tok-${NOT_EXPANDED}' };

  it('replaces ${NAME} and leaves other text alone', () => {
    assert.deepEqual(expandEnv('x-${A}-y', env), { ok: true, value: 'x-alpha-y', expanded: true });
    assert.deepEqual(expandEnv('${A}${A}', env), { ok: true, value: 'alphaalpha', expanded: true });
    assert.deepEqual(expandEnv('plain', env), { ok: true, value: 'plain', expanded: false });
    assert.deepEqual(expandEnv('', env), { ok: true, value: '', expanded: false });
  });

  it('an empty variable expands to ""', () => {
    assert.deepEqual(expandEnv('[${B}]', env), { ok: true, value: '[]', expanded: true });
  });

  it('refuseEmpty: an empty variable is a problem (an agent url, trial 9 F4)', () => {
    assert.deepEqual(expandEnv('https://${B}/${A}/${B}', env, { refuseEmpty: true }), {
      ok: false,
      problems: [
        { kind: 'empty', name: 'B', index: 8 },
        { kind: 'empty', name: 'B', index: 18 },
      ],
      expanded: true,
    });
    assert.deepEqual(expandEnv('https://${A}/', env, { refuseEmpty: true }), { ok: true, value: 'https://alpha/', expanded: true });
  });

  it('$${ is a literal ${; other $ are literal', () => {
    assert.deepEqual(expandEnv('$${A}', env), { ok: true, value: '${A}', expanded: false });
    assert.deepEqual(expandEnv('a$${A}b${A}', env), { ok: true, value: 'a${A}balpha', expanded: true });
    assert.deepEqual(expandEnv('$A $$ $ a$b {A}', env), { ok: true, value: '$A $$ $ a$b {A}', expanded: false });
    assert.deepEqual(expandEnv('$$${A}', env), { ok: true, value: '$${A}', expanded: false });
  });

  it('is one pass: a value is not expanded again', () => {
    assert.deepEqual(expandEnv('${TOKEN}', env), { ok: true, value: 'tok-${NOT_EXPANDED}', expanded: true });
  });

  it('reports every missing variable and malformed reference', () => {
    const result = expandEnv('${MISSING} ${A} ${} ${1X} ${OTHER}', env);
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.deepEqual(result.problems, [
      { kind: 'missing', name: 'MISSING', index: 0 },
      { kind: 'malformed', index: 16 },
      { kind: 'malformed', index: 20 },
      { kind: 'missing', name: 'OTHER', index: 26 },
    ]);
    const unterminated = expandEnv('abc ${A', env);
    assert.ok(!unterminated.ok);
    assert.deepEqual(unterminated.problems, [{ kind: 'malformed', index: 4 }]);
  });

  it('reads own properties only', () => {
    const result = expandEnv('${constructor}${toString}', {});
    assert.ok(!result.ok);
    assert.deepEqual(
      result.problems.map((p) => (p.kind === 'missing' ? p.name : p.kind)),
      ['constructor', 'toString'],
    );
  });
});

describe('${VAR} in the config file', () => {
  const problemsOf = (yaml: string, env: NodeJS.ProcessEnv): ConfigProblem[] => {
    try {
      parseConfig(yaml, { env });
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.problems;
    }
    assert.fail('expected a ConfigError');
  };

  it('expands every string value (url, headers, host, log_level, list items, secret)', () => {
    const secret = 'S'.repeat(48);
    const config = parseConfig(
      [
        'listen: { host: "${HOST}" }',
        'log_level: ${LEVEL}',
        'resume: { secret: "${SECRET}" }',
        'agents:',
        '  acme:',
        '    url: https://${SELLER_HOST}/mcp',
        '    headers: { authorization: "Bearer ${ACME_TOKEN}", x-literal: "$${NOT_A_VAR}" }',
        '    accept_encoding: ["${ENC}"]',
        '',
      ].join('\n'),
      { env: { HOST: '0.0.0.0', LEVEL: 'warn', SECRET: secret, SELLER_HOST: 'sales.acme.example', ACME_TOKEN: 't0k', ENC: 'identity' } },
    );
    assert.equal(config.listen.host, '0.0.0.0');
    assert.equal(config.log_level, 'warn');
    assert.equal(config.resume.secret, secret);
    const acme = config.agents.get('acme');
    assert.equal(acme?.url.href, 'https://sales.acme.example/mcp');
    assert.deepEqual({ ...acme?.headers }, { authorization: 'Bearer t0k', 'x-literal': '${NOT_A_VAR}' });
    assert.deepEqual(acme?.accept_encoding, ['identity']);
  });

  it('does not expand keys', () => {
    const problems = problemsOf('agents:\n  acme:\n    url: https://a.example/mcp\n    headers: { "x-${A}": v }\n', { A: 'a' });
    // Kept as written (and `{`, `}` are not HTTP token characters).
    assert.deepEqual(
      problems.map((p) => [p.path, p.message]),
      [['agents.acme.headers["x-${A}"]', 'invalid header name "x-${A}": must be an HTTP token']],
    );
  });

  it('defaults to process.env', () => {
    process.env.ADCP_TEST_CONFIG_ENV_HOST = 'sales.from-process.example';
    try {
      const config = parseConfig('agents:\n  acme:\n    url: https://${ADCP_TEST_CONFIG_ENV_HOST}/mcp\n');
      assert.equal(config.agents.get('acme')?.url.host, 'sales.from-process.example');
    } finally {
      delete process.env.ADCP_TEST_CONFIG_ENV_HOST;
    }
  });

  it('a missing variable is an error naming the variable and the YAML path', () => {
    const problems = problemsOf(
      [
        'resume: { secret: "${RESUME}" }',
        'agents:',
        '  acme:',
        '    url: https://${SELLER_HOST}/mcp',
        '    headers: { authorization: "Bearer ${ACME_TOKEN} ${ACME_SEAT}" }',
        '',
      ].join('\n'),
      {},
    );
    assert.deepEqual(
      problems.map((p) => [p.path, p.message, p.line]),
      [
        ['resume.secret', 'environment variable `RESUME` is not set', 1],
        ['agents.acme.url', 'environment variable `SELLER_HOST` is not set', 4],
        ['agents.acme.headers.authorization', 'environment variable `ACME_TOKEN` is not set', 5],
        ['agents.acme.headers.authorization', 'environment variable `ACME_SEAT` is not set', 5],
      ],
    );
  });

  it('a malformed reference is an error', () => {
    const problems = problemsOf('agents:\n  acme:\n    url: https://${}/mcp\n', {});
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.path, 'agents.acme.url');
    assert.match(problems[0]?.message ?? '', /malformed `\$\{\.\.\.\}` reference/);
  });

  it('never echoes an expanded value', () => {
    const problems = problemsOf(
      ['resume: { secret: "${SECRET}" }', 'agents:', '  acme:', '    url: "${URL}"', '    max_response_bytes: "${BIG}"', ''].join('\n'),
      { SECRET: 'hunter2-short', URL: 'https://user:hunter2@x.example/mcp', BIG: 'hunter2' },
    );
    assert.deepEqual(
      problems.map((p) => p.path),
      ['resume.secret', 'agents.acme.url', 'agents.acme.max_response_bytes'],
    );
    for (const p of problems) assert.doesNotMatch(p.message, /hunter2/);
    assert.match(problems[2]?.message ?? '', /got a string from \$\{\.\.\.\}/);
  });
});
