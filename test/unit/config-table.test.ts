// What --check-config prints: formatLimitsTable (one row per agent and per configured tool,
// resolved numbers, aligned, URL queries redacted), formatGatewaySection, configNotes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { displayUrl } from '../../src/config/display-url.js';
import { configNotes, formatGatewaySection, formatGuardTable, formatLimitsTable, GUARD_TABLE_COLUMNS, LIMITS_TABLE_COLUMNS } from '../../src/config/table.js';

const YAML = `agents:
  acme:
    url: https://sales.acme.example/mcp
    max_response_bytes: 8388608
    max_call_response_bytes: 16777216
    accept_encoding: [identity]
    tools:
      list_products: { max_response_bytes: 1048576, dedupe_text: "off" }
  b:
    url: http://127.0.0.1:3001/mcp
    max_batch_messages: 20
`;

describe('formatLimitsTable', () => {
  it('prints the exact, aligned table', () => {
    const expected = [
      'agent/tool          url                             max_response_bytes  max_sse_event_bytes  max_json_depth  max_json_nodes  response_deadline_ms  sse_idle_timeout_ms  sse_deadline_ms  dedupe_text  max_request_bytes  max_batch_messages  max_call_response_bytes  accept_encoding',
      '------------------  ------------------------------  ------------------  -------------------  --------------  --------------  --------------------  -------------------  ---------------  -----------  -----------------  ------------------  -----------------------  ---------------',
      'acme                https://sales.acme.example/mcp  8388608             8388608              64              100000          30000                 300000               3600000          summary      4194304            100                 16777216                 identity',
      'acme/list_products                                  1048576             1048576              64              100000          30000                 300000               3600000          off          4194304            100                 16777216                 identity',
      'b                   http://127.0.0.1:3001/mcp       4194304             4194304              64              100000          30000                 300000               3600000          summary      4194304            20                  4194304                  gzip,deflate,br',
    ].join('\n');
    assert.equal(formatLimitsTable(parseConfig(YAML, { env: {} })), expected);
  });

  it('is stable, has no trailing spaces and no color codes', () => {
    const config = parseConfig(YAML, { env: {} });
    const text = formatLimitsTable(config);
    assert.equal(formatLimitsTable(config), text);
    for (const line of text.split('\n')) assert.equal(line, line.trimEnd());
    assert.ok(!text.includes('\u001b'), 'no ANSI escapes');
    assert.deepEqual(text.split('\n')[0]?.split(/ {2,}/), [...LIMITS_TABLE_COLUMNS]);
  });
});

describe('formatGuardTable and the guard notes', () => {
  it('prints each agent\'s guard settings, aligned, 0 as off', () => {
    const config = parseConfig(
      'agents:\n  acme: { url: https://a.example/mcp }\n  quiet: { url: https://b.example/mcp, backoff_after_breaches: 0, max_buffered_response_bytes: 1048576 }\n',
      { env: {} },
    );
    assert.equal(
      formatGuardTable(config),
      [
        'agent  max_buffered_response_bytes  backoff_after_breaches  backoff_base_ms  backoff_max_ms',
        '-----  ---------------------------  ----------------------  ---------------  --------------',
        'acme   67108864                     3                       250              10000',
        'quiet  1048576                      0 (off)                 250              10000',
      ].join('\n'),
    );
    assert.deepEqual(formatGuardTable(config).split('\n')[0]?.split(/ {2,}/), [...GUARD_TABLE_COLUMNS]);
    // quiet's default 4 MiB response limit is above its 1 MiB cap: the buffered-bytes note.
    assert.deepEqual(configNotes(config), [
      "note: quiet: max_response_bytes 4194304 is above max_buffered_response_bytes 1048576: an answer that large is received only as the agent's oldest in flight; concurrent ones wait for room within their response_deadline_ms",
    ]);
  });

  it("notes structure bounds no answer can meet (a new user's hostile trial 12, L5: they passed with no note and every call failed)", () => {
    const config = parseConfig(
      [
        'agents:',
        '  d1: { url: https://a.example/mcp, max_json_depth: 1 }',
        '  n3: { url: https://b.example/mcp, max_json_nodes: 3 }',
        '  ok: { url: https://c.example/mcp, max_json_depth: 2, max_json_nodes: 4, tools: { t: { max_json_depth: 3, max_json_nodes: 6 }, u: { max_json_depth: 2, max_json_nodes: 4 }, c5: { max_json_depth: 3, max_json_nodes: 5 } } }',
        // A call is held to its tool's bounds, a tool without its own to the agent's (a hostile
        // trial 22, F2): the smallest call, 6 values, refused at 5.
        '  n5: { url: https://d.example/mcp, max_json_depth: 3, max_json_nodes: 5 }',
        '  n6: { url: https://e.example/mcp, max_json_depth: 3, max_json_nodes: 6 }',
        // A host's initialize is held to its agent's bounds: the smallest, 10 values, refused at
        // 9 and below (a hostile new-user trial 23, L2: max_json_nodes 8 drew no note).
        '  n10: { url: https://f.example/mcp, max_json_depth: 3, max_json_nodes: 10 }',
      ].join('\n'),
      { env: {} },
    );
    assert.deepEqual(configNotes(config), [
      'note: d1: max_json_depth 1 refuses every answer: the smallest, {"jsonrpc":"2.0","id":1,"result":{}}, has depth 2',
      'note: n3: max_json_nodes 3 refuses every answer: the smallest, {"jsonrpc":"2.0","id":1,"result":{}}, has 4 values',
      'note: ok: max_json_depth 2 refuses every result of a tool without limits of its own: the smallest, {"jsonrpc":"2.0","id":1,"result":{"content":[]}}, has depth 3',
      'note: ok: max_json_nodes 4 refuses every result of a tool without limits of its own: the smallest, {"jsonrpc":"2.0","id":1,"result":{"content":[]}}, has 5 values',
      'note: ok/u: max_json_depth 2 refuses every tool result: the smallest, {"jsonrpc":"2.0","id":1,"result":{"content":[]}}, has depth 3',
      'note: ok/u: max_json_nodes 4 refuses every tool result: the smallest, {"jsonrpc":"2.0","id":1,"result":{"content":[]}}, has 5 values',
      'note: ok/c5: max_json_nodes 5 refuses every call of it: the smallest, {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"c5"}}, has 6 values',
      'note: n5: max_json_nodes 5 refuses every call of a tool without limits of its own: the smallest, {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}, has 6 values',
      'note: n6: max_json_nodes 6 refuses every initialize request: the smallest, {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}, has 10 values',
    ]);
  });

  it('notes a base above the maximum, and a deadline a backoff outlasts (found by a new user: neither was visible)', () => {
    const config = parseConfig('agents:\n  a: { url: https://a.example/mcp, backoff_base_ms: 20000, backoff_max_ms: 30000, response_deadline_ms: 30000 }\n  b: { url: https://b.example/mcp, backoff_base_ms: 5000, backoff_max_ms: 1000 }\n', { env: {} });
    assert.deepEqual(configNotes(config), [
      'note: a: response_deadline_ms 30000 is not above backoff_max_ms 30000: during a long backoff, waiting requests are answered agent_backoff before the next probe',
      'note: b: backoff_base_ms 5000 is above backoff_max_ms 1000: every backoff is 1000 ms',
    ]);
  });

  it('notes a deadline that leaves less than the send margin after the longest backoff (found by a new user: 10500 against 10000 drew no note)', () => {
    const config = parseConfig(
      'agents:\n  a: { url: https://a.example/mcp, response_deadline_ms: 10500 }\n  b: { url: https://b.example/mcp, response_deadline_ms: 11000 }\n  c: { url: https://c.example/mcp, backoff_max_ms: 1000, response_deadline_ms: 1200 }\n',
      { env: {} },
    );
    assert.deepEqual(configNotes(config), [
      'note: a: response_deadline_ms 10500 leaves less than 1000 ms after backoff_max_ms 10000: during a long backoff, a waiting request gets its turn too late to be sent and is answered agent_backoff',
      'note: c: response_deadline_ms 1200 leaves less than 300 ms after backoff_max_ms 1000: during a long backoff, a waiting request gets its turn too late to be sent and is answered agent_backoff',
    ]);
  });

  it("notes a response limit above the agent's buffered-bytes cap (a new user's trial, F8: a 1 GiB tool limit drew no note)", () => {
    const config = parseConfig(
      [
        'agents:',
        '  a:',
        '    url: https://a.example/mcp',
        '    max_buffered_response_bytes: 1048576',
        '    max_response_bytes: 1048576',
        '    max_call_response_bytes: 2097152',
        '    tools:',
        '      big: { max_response_bytes: 1073741824 }',
        '      small: { max_response_bytes: 1000 }',
        '  b: { url: https://b.example/mcp }',
        '',
      ].join('\n'),
      { env: {} },
    );
    const tail = "an answer that large is received only as the agent's oldest in flight; concurrent ones wait for room within their response_deadline_ms";
    assert.deepEqual(configNotes(config), [
      'note: a/big: max_call_response_bytes 2097152 is below max_response_bytes 1073741824: X-Max-Response-Bytes can lower the limit but never raise it',
      `note: a: max_call_response_bytes 2097152 is above max_buffered_response_bytes 1048576: ${tail}`,
      `note: a/big: max_response_bytes 1073741824 is above max_buffered_response_bytes 1048576: ${tail}`,
    ]);
  });
});

describe('agent URLs in the table', () => {
  it('displayUrl replaces the query and userinfo with [redacted], keeps the rest', () => {
    assert.equal(displayUrl(new URL('http://127.0.0.1:1/mcp?key=abcdefghijkl')), 'http://127.0.0.1:1/mcp?[redacted]');
    assert.equal(displayUrl(new URL('https://user:pass@sales.example/a/b?x=1&y=2')), 'https://[redacted]@sales.example/a/b?[redacted]');
    assert.equal(displayUrl(new URL('https://sales.example:8443/mcp')), 'https://sales.example:8443/mcp');
    assert.equal(displayUrl(new URL('http://[::1]:3001/mcp?t=1')), 'http://[::1]:3001/mcp?[redacted]');
    assert.equal(displayUrl(new URL('http://h.example/mcp#frag')), 'http://h.example/mcp#[redacted]');
  });

  it('the table never shows a query string', () => {
    const config = parseConfig('agents:\n  q:\n    url: http://127.0.0.1:1/mcp?key=abcdefghijkl\n', { env: {} });
    const text = formatLimitsTable(config);
    assert.doesNotMatch(text, /abcdefghijkl|key=/);
    assert.match(text, /^q {2,}http:\/\/127\.0\.0\.1:1\/mcp\?\[redacted\] {2,}4194304 /m);
  });
});

describe('max_call_response_bytes below the limit it caps', () => {
  const config = parseConfig(
    `agents:
  acme:
    url: https://sales.acme.example/mcp
    max_response_bytes: 8388608
    max_call_response_bytes: 2000000
    tools:
      small: { max_response_bytes: 1000000 }
      big: { max_response_bytes: 3000000 }
`,
    { env: {} },
  );

  it('is accepted, and shown as configured next to the effective ceiling', () => {
    const cells = (label: string): string[] => {
      const line = formatLimitsTable(config).split('\n').find((l) => l.startsWith(`${label} `));
      assert.ok(line, label);
      return line.split(/ {2,}/);
    };
    const column = LIMITS_TABLE_COLUMNS.indexOf('max_call_response_bytes');
    assert.equal(cells('acme')[column], '8388608 (configured 2000000)');
    assert.equal(cells('acme/small')[column - 1], '2000000'); // no url cell on tool rows
    assert.equal(cells('acme/big')[column - 1], '3000000 (configured 2000000)');
  });

  it('gets a note per row it does not raise', () => {
    assert.deepEqual(configNotes(config), [
      'note: acme: max_call_response_bytes 2000000 is below max_response_bytes 8388608: X-Max-Response-Bytes can lower the limit but never raise it',
      'note: acme/big: max_call_response_bytes 2000000 is below max_response_bytes 3000000: X-Max-Response-Bytes can lower the limit but never raise it',
    ]);
    assert.deepEqual(configNotes(parseConfig(YAML, { env: {} })), []);
  });

  it('configNotes warns about tls_insecure_skip_verify', () => {
    const insecure = parseConfig('agents:\n  t:\n    url: https://x.example/mcp\n    tls_insecure_skip_verify: true\n', { env: {} });
    assert.deepEqual(configNotes(insecure), ['WARNING: agent t: TLS certificate verification is OFF (tls_insecure_skip_verify)']);
  });
});

describe('formatGatewaySection', () => {
  const AGENT = 'agents:\n  a:\n    url: http://127.0.0.1:3001/mcp\n';

  it('built-ins, no resume secret: a warning, never a value', () => {
    assert.equal(
      formatGatewaySection(parseConfig(AGENT, { env: {} })),
      [
        'gateway',
        '  listen                 127.0.0.1:8787',
        '  ops_listen             none (/healthz, /readyz, /metrics are served on listen)',
        '  log_level              info',
        '  shutdown_grace_ms      10000',
        '  shutdown_sse_retry_ms  5000',
        '  request_timeout_ms     30000',
        '  allowed_origins        none (and localhost, 127.0.0.1, [::1]: any other Origin is refused)',
        '  allowed_hosts          none (and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)',
        '  resume secret          random per process (warning: SSE resume tokens will not survive a restart or work across replicas; set resume.secret or ADCP_GATEWAY_RESUME_SECRET)',
        '  resume ttl_ms          3600000',
      ].join('\n'),
    );
  });

  it('every setting as configured; the secret is only "configured"', () => {
    const secret = 's'.repeat(40);
    const yaml = `listen: { host: "::1", port: 0 }\nops_listen: { host: 0.0.0.0, port: 9464 }\nlog_level: warn\nshutdown_grace_ms: 2500\nrequest_timeout_ms: 5000\nresume: { secret: "${secret}", ttl_ms: 60000 }\n${AGENT}`;
    const text = formatGatewaySection(parseConfig(yaml, { env: {} }));
    assert.equal(
      text,
      [
        'gateway',
        '  listen                 [::1]:0 (any free port)',
        '  ops_listen             0.0.0.0:9464',
        '  log_level              warn',
        '  shutdown_grace_ms      2500',
        '  shutdown_sse_retry_ms  5000',
        '  request_timeout_ms     5000',
        '  allowed_origins        none (and localhost, 127.0.0.1, [::1]: any other Origin is refused)',
        '  allowed_hosts          none (and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)',
        '  resume secret          configured',
        '  resume ttl_ms          60000',
      ].join('\n'),
    );
    assert.ok(!text.includes('ssss'), 'the secret is never printed');
    const fromEnv = formatGatewaySection(parseConfig(AGENT, { env: { ADCP_GATEWAY_RESUME_SECRET: secret } }));
    assert.match(fromEnv, /^ {2}resume secret {10}configured$/m);
    assert.ok(!fromEnv.includes('ssss'));
  });

  it('allowed_origins and allowed_hosts: the lists, and whether Host is checked (listen.host loopback, or allowed_hosts set)', () => {
    const rows = (yaml: string): string[] => formatGatewaySection(parseConfig(`${yaml}\n${AGENT}`, { env: {} })).split('\n').filter((l) => l.startsWith('  allowed_'));
    assert.deepEqual(rows('allowed_origins: ["https://console.example.com"]\nallowed_hosts: [gw.internal, "gw.example:8787"]'), [
      '  allowed_origins        https://console.example.com (and localhost, 127.0.0.1, [::1]: any other Origin is refused)',
      '  allowed_hosts          gw.internal, gw.example:8787 (and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)',
    ]);
    assert.deepEqual(rows('listen: { host: 0.0.0.0 }').slice(1), ['  allowed_hosts          none (Host is not checked: listen.host is not loopback)']);
    assert.deepEqual(rows('listen: { host: 0.0.0.0 }\nallowed_hosts: [gateway]').slice(1), [
      '  allowed_hosts          gateway (and localhost, 127.0.0.1, [::1]: any other Host is refused, allowed_hosts is set)',
    ]);
    assert.deepEqual(rows('listen: { host: localhost }').slice(1), [
      '  allowed_hosts          none (and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)',
    ]);
  });
});
