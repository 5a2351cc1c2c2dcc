// resolveCallLimits (call > tool > agent > defaults > built-in), resolveBatchLimits (the strictest of a
// batch's levels) and the X-Max-Response-Bytes parser.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { parseMaxResponseBytesHeader, resolveBatchLimits, resolveCallLimits } from '../../src/config/resolve.js';
import type { AgentConfig, Limits } from '../../src/config/types.js';
import { BUILTIN_GUARD } from '../../src/config/defaults.js';

const MiB = 1024 * 1024;

function agentFrom(yaml: string, name = 'acme'): AgentConfig {
  const agent = parseConfig(yaml, { env: {} }).agents.get(name);
  assert.ok(agent);
  return agent;
}

const ACME = agentFrom(
  [
    'defaults: { max_json_depth: 32 }',
    'agents:',
    '  acme:',
    '    url: https://sales.acme.example/mcp',
    '    max_response_bytes: 8388608', // 8 MiB
    '    response_deadline_ms: 10000',
    '    tools:',
    '      list_products: { max_response_bytes: 1048576, max_json_nodes: 500 }', // 1 MiB
    '      get_report: { dedupe_text: "off" }',
    '',
  ].join('\n'),
);

const BASE: Limits = {
  max_response_bytes: 8 * MiB,
  max_sse_event_bytes: 8 * MiB,
  max_json_depth: 32,
  max_json_nodes: 100_000,
  response_deadline_ms: 10_000,
  sse_idle_timeout_ms: 300_000,
  sse_deadline_ms: 3_600_000,
  dedupe_text: 'summary',
};

describe('resolveCallLimits', () => {
  it('no tool, no call: the agent limits (same object, no allocation)', () => {
    assert.deepEqual(resolveCallLimits(ACME, undefined, undefined), BASE);
    assert.equal(resolveCallLimits(ACME, undefined, undefined), ACME.limits);
  });

  it('an unconfigured tool gets the agent limits, even names like constructor', () => {
    assert.equal(resolveCallLimits(ACME, 'get_products', undefined), ACME.limits);
    assert.equal(resolveCallLimits(ACME, 'constructor', undefined), ACME.limits);
    assert.equal(resolveCallLimits(ACME, '__proto__', undefined), ACME.limits);
  });

  it('a tool override wins over the agent, key by key; other keys inherit', () => {
    assert.deepEqual(resolveCallLimits(ACME, 'list_products', undefined), {
      ...BASE,
      max_response_bytes: 1 * MiB,
      max_sse_event_bytes: 1 * MiB,
      max_json_nodes: 500,
    });
    assert.deepEqual(resolveCallLimits(ACME, 'get_report', undefined), { ...BASE, dedupe_text: 'off' });
    // The same precomputed object each time.
    assert.equal(resolveCallLimits(ACME, 'list_products', undefined), resolveCallLimits(ACME, 'list_products', undefined));
  });

  it('a call may lower the limit; the SSE event limit follows', () => {
    assert.deepEqual(resolveCallLimits(ACME, undefined, 1000), { ...BASE, max_response_bytes: 1000, max_sse_event_bytes: 1000 });
    assert.deepEqual(resolveCallLimits(ACME, 'list_products', 4096), {
      ...BASE,
      max_response_bytes: 4096,
      max_sse_event_bytes: 4096,
      max_json_nodes: 500,
    });
    assert.ok(Object.isFrozen(resolveCallLimits(ACME, undefined, 1000)));
  });

  it('a call equal to the limit changes nothing', () => {
    assert.equal(resolveCallLimits(ACME, undefined, 8 * MiB), ACME.limits);
  });

  it('without max_call_response_bytes a call above the limit is clamped to the limit', () => {
    assert.equal(resolveCallLimits(ACME, undefined, 100 * MiB).max_response_bytes, 8 * MiB);
    assert.equal(resolveCallLimits(ACME, 'list_products', 2 * MiB).max_response_bytes, 1 * MiB);
  });

  it('max_call_response_bytes lets a call raise the limit up to it, and clamps above', () => {
    const agent = agentFrom(
      [
        'agents:',
        '  acme:',
        '    url: https://a.example/mcp',
        '    max_call_response_bytes: 16777216', // 16 MiB
        '    tools:',
        '      list_products: { max_response_bytes: 1048576 }',
        '',
      ].join('\n'),
    );
    assert.equal(agent.limits.max_response_bytes, 4 * MiB);
    assert.deepEqual(
      [8 * MiB, 16 * MiB, 16 * MiB + 1, 1024 * MiB].map((v) => resolveCallLimits(agent, undefined, v).max_response_bytes),
      [8 * MiB, 16 * MiB, 16 * MiB, 16 * MiB],
    );
    assert.equal(resolveCallLimits(agent, undefined, 8 * MiB).max_sse_event_bytes, 8 * MiB);
    assert.equal(resolveCallLimits(agent, 'list_products', 2 * MiB).max_response_bytes, 2 * MiB);
    assert.equal(resolveCallLimits(agent, 'list_products', 32 * MiB).max_response_bytes, 16 * MiB);
  });

  it('a ceiling below the resolved limit never raises, and a call may still lower', () => {
    const agent = agentFrom('agents:\n  acme:\n    url: https://a.example/mcp\n    max_call_response_bytes: 1000\n');
    assert.equal(resolveCallLimits(agent, undefined, 5000).max_response_bytes, 5000);
    assert.equal(resolveCallLimits(agent, undefined, 8 * MiB).max_response_bytes, 4 * MiB);
    assert.equal(resolveCallLimits(agent, undefined, 10).max_response_bytes, 10);
  });

  it('an explicit max_sse_event_bytes is kept, capped by the call-resolved response limit', () => {
    const agent = agentFrom(
      [
        'defaults: { max_sse_event_bytes: 65536 }',
        'agents:',
        '  acme:',
        '    url: https://a.example/mcp',
        '    max_call_response_bytes: 16777216',
        '    tools:',
        '      t: { max_sse_event_bytes: 2097152 }',
        '      u: { max_response_bytes: 1000 }',
        '',
      ].join('\n'),
    );
    assert.equal(agent.limits.max_sse_event_bytes, 65_536);
    assert.equal(resolveCallLimits(agent, undefined, 8 * MiB).max_sse_event_bytes, 65_536);
    assert.equal(resolveCallLimits(agent, undefined, 1000).max_sse_event_bytes, 1000);
    assert.equal(resolveCallLimits(agent, 't', undefined).max_sse_event_bytes, 2 * MiB);
    assert.equal(resolveCallLimits(agent, 't', 1 * MiB).max_sse_event_bytes, 1 * MiB);
    assert.equal(resolveCallLimits(agent, 't', 8 * MiB).max_sse_event_bytes, 2 * MiB);
    assert.equal(resolveCallLimits(agent, 'u', undefined).max_sse_event_bytes, 1000);
  });

  it('an agent-level SSE limit equal to its response limit is still explicit', () => {
    const agent = agentFrom(
      'agents:\n  acme:\n    url: https://a.example/mcp\n    max_sse_event_bytes: 4194304\n    max_call_response_bytes: 16777216\n',
    );
    assert.equal(resolveCallLimits(agent, undefined, 8 * MiB).max_sse_event_bytes, 4 * MiB);
    const follows = agentFrom('agents:\n  acme:\n    url: https://a.example/mcp\n    max_call_response_bytes: 16777216\n');
    assert.equal(resolveCallLimits(follows, undefined, 8 * MiB).max_sse_event_bytes, 8 * MiB);
  });

  it('works on a hand-built AgentConfig (not from the loader)', () => {
    const handBuilt: AgentConfig = {
      name: 'x',
      url: new URL('https://x.example/mcp'),
      headers: {},
      max_request_bytes: 1000,
      max_batch_messages: 100,
      max_call_response_bytes: undefined,
      accept_encoding: ['identity'],
      tls_insecure_skip_verify: false,
      guard: BUILTIN_GUARD,
      limits: { ...BASE, max_response_bytes: 5000, max_sse_event_bytes: 5000 },
      tools: { t: { max_response_bytes: 100 } },
    };
    assert.deepEqual(resolveCallLimits(handBuilt, 't', undefined), { ...BASE, max_response_bytes: 100, max_sse_event_bytes: 100 });
    assert.deepEqual(resolveCallLimits(handBuilt, undefined, 10), { ...BASE, max_response_bytes: 10, max_sse_event_bytes: 10 });
    assert.equal(resolveCallLimits(handBuilt, undefined, 10_000).max_response_bytes, 5000);
  });
});

describe('resolveBatchLimits (a reviewer: a batch escaped its tools\' limits)', () => {
  const agent = agentFrom(
    [
      'defaults: { max_json_depth: 32 }',
      'agents:',
      '  acme:',
      '    url: https://a.example/mcp',
      '    max_response_bytes: 8388608', // 8 MiB
      '    response_deadline_ms: 10000',
      '    tools:',
      '      list_products: { max_response_bytes: 1048576, max_json_nodes: 500 }', // 1 MiB
      '      get_report: { max_response_bytes: 16777216, max_json_depth: 10, dedupe_text: "off", sse_idle_timeout_ms: 1000 }',
      '      t: { max_sse_event_bytes: 65536 }',
      '',
    ].join('\n'),
  );

  it('no element at a tool\'s level (none, other methods, unconfigured tools): the agent\'s precomputed limits', () => {
    for (const names of [undefined, [], [undefined], [undefined, 'get_products', 'constructor', '__proto__']]) {
      assert.equal(resolveBatchLimits(agent, names, undefined), agent.limits);
    }
  });

  it('one level: that level\'s precomputed limits, as for a single call of the tool', () => {
    assert.equal(resolveBatchLimits(agent, ['list_products'], undefined), resolveCallLimits(agent, 'list_products', undefined));
    assert.equal(resolveBatchLimits(agent, ['get_report', 'get_report'], undefined), resolveCallLimits(agent, 'get_report', undefined));
  });

  it('several levels: limit by limit the strictest, frozen', () => {
    const limits = resolveBatchLimits(agent, ['list_products', undefined, 'get_report'], undefined);
    assert.deepEqual(limits, {
      ...BASE,
      max_response_bytes: 1 * MiB,
      max_sse_event_bytes: 1 * MiB,
      max_json_depth: 10,
      max_json_nodes: 500,
      sse_idle_timeout_ms: 1000,
      dedupe_text: 'off',
    });
    assert.ok(Object.isFrozen(limits));
    // A looser tool and the agent: the agent's bound wins where it is the smaller.
    assert.deepEqual(resolveBatchLimits(agent, ['get_report', undefined], undefined), { ...BASE, max_json_depth: 10, dedupe_text: 'off', sse_idle_timeout_ms: 1000 });
  });

  it('the SSE event limit: the smallest explicit one of any level, capped by the resulting response limit', () => {
    assert.equal(resolveBatchLimits(agent, ['t', 'get_report'], undefined).max_sse_event_bytes, 65_536);
    assert.equal(resolveBatchLimits(agent, ['t', 'list_products'], 1000).max_sse_event_bytes, 1000);
    assert.equal(resolveBatchLimits(agent, ['get_report', 'list_products'], undefined).max_sse_event_bytes, 1 * MiB);
  });

  it('X-Max-Response-Bytes applies as for one call: lowers it; raises it only up to max_call_response_bytes', () => {
    assert.equal(resolveBatchLimits(agent, ['list_products', undefined], 1000).max_response_bytes, 1000);
    assert.equal(resolveBatchLimits(agent, ['list_products', undefined], 2 * MiB).max_response_bytes, 1 * MiB);
    const ceiling = agentFrom(
      [
        'agents:',
        '  acme:',
        '    url: https://a.example/mcp',
        '    max_call_response_bytes: 3145728', // 3 MiB
        '    tools:',
        '      list_products: { max_response_bytes: 1048576 }',
        '',
      ].join('\n'),
    );
    assert.equal(resolveBatchLimits(ceiling, ['list_products', undefined], 2 * MiB).max_response_bytes, 2 * MiB);
    assert.equal(resolveBatchLimits(ceiling, ['list_products', undefined], 8 * MiB).max_response_bytes, 3 * MiB);
  });

  it("a resumed stream's limit from its token (source `token`) is taken as is, as for one call", () => {
    assert.equal(resolveBatchLimits(agent, ['list_products', undefined], 4 * MiB, 'token').max_response_bytes, 4 * MiB);
    assert.equal(resolveBatchLimits(agent, ['t', 'get_report'], 4 * MiB, 'token').max_sse_event_bytes, 65_536);
  });
});

describe("resolveCallLimits with a resumed stream's limit (source `token`; hostile trial 24, F2)", () => {
  it('above the level and above max_call_response_bytes: as is, the event limit following it', () => {
    // A stream started at 8 MiB, resumed after a reload lowered the tool to 1 MiB: 8 MiB.
    assert.deepEqual(resolveCallLimits(ACME, 'list_products', 8 * MiB, 'token'), { ...BASE, max_json_nodes: 500 });
    // The header is clamped; the token is not.
    assert.equal(resolveCallLimits(ACME, undefined, 16 * MiB).max_response_bytes, 8 * MiB);
    assert.equal(resolveCallLimits(ACME, undefined, 16 * MiB, 'token').max_response_bytes, 16 * MiB);
    // Below the level: as is, as a header's.
    assert.deepEqual(resolveCallLimits(ACME, undefined, 5000, 'token'), resolveCallLimits(ACME, undefined, 5000));
    // Equal to the level: the precomputed object.
    assert.equal(resolveCallLimits(ACME, undefined, 8 * MiB, 'token'), ACME.limits);
  });

  it('an event limit the level sets applies, capped by the token limit', () => {
    const agent = agentFrom(['agents:', '  acme:', '    url: https://a.example/mcp', '    max_response_bytes: 20000', '    max_sse_event_bytes: 10000', ''].join('\n'));
    assert.deepEqual(
      [resolveCallLimits(agent, undefined, 4 * MiB, 'token').max_sse_event_bytes, resolveCallLimits(agent, undefined, 5000, 'token').max_sse_event_bytes],
      [10_000, 5000],
    );
  });
});

describe('parseMaxResponseBytesHeader', () => {
  it('absent -> undefined', () => {
    assert.deepEqual(parseMaxResponseBytesHeader(undefined), { ok: true, value: undefined });
    assert.deepEqual(parseMaxResponseBytesHeader([]), { ok: true, value: undefined });
  });

  it('a decimal integer >= 1', () => {
    assert.deepEqual(parseMaxResponseBytesHeader('1'), { ok: true, value: 1 });
    assert.deepEqual(parseMaxResponseBytesHeader('1048576'), { ok: true, value: 1_048_576 });
    assert.deepEqual(parseMaxResponseBytesHeader('007'), { ok: true, value: 7 });
    assert.deepEqual(parseMaxResponseBytesHeader(['2048']), { ok: true, value: 2048 });
    assert.deepEqual(parseMaxResponseBytesHeader('999999999999999'), { ok: true, value: 999_999_999_999_999 });
    assert.deepEqual(parseMaxResponseBytesHeader('99999999999999999999999'), { ok: true, value: Number.MAX_SAFE_INTEGER });
  });

  it('rejects anything else', () => {
    for (const bad of ['', '0', '000', '-1', '+1', ' 1', '1 ', '1e6', '1.0', '0x10', 'abc', '１']) {
      const result = parseMaxResponseBytesHeader(bad);
      assert.equal(result.ok, false, JSON.stringify(bad));
      assert.ok(!result.ok);
      assert.match(result.message, /^X-Max-Response-Bytes must be a single decimal integer >= 1 \(bytes\)$/);
    }
  });

  it('rejects a duplicated header', () => {
    assert.deepEqual(parseMaxResponseBytesHeader(['1', '2']), { ok: false, message: 'X-Max-Response-Bytes must be sent at most once' });
    assert.deepEqual(parseMaxResponseBytesHeader(['1', '1']), { ok: false, message: 'X-Max-Response-Bytes must be sent at most once' });
    // Node's join of two field lines, and a list in one (review 36: they were "a single decimal integer").
    for (const joined of ['1,2', '1, 2', '1, 1']) {
      assert.deepEqual(parseMaxResponseBytesHeader(joined), { ok: false, message: 'X-Max-Response-Bytes must be sent at most once' }, joined);
    }
  });
});
