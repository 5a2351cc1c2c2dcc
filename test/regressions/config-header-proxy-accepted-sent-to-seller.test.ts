/**
 * Regression (review 36, F5, Nit): an agent's `headers: { proxy: ... }` passed `--check-config`
 * and was sent to the seller on every request, although `Proxy` is the httpoxy name the gateway
 * strips from every host's request (request/proxy-name.ts: CGI, WSGI, PHP and Rack read it as
 * `HTTP_PROXY`, the variable many HTTP clients take for their outbound proxy, CVE-2016-5385),
 * and the config already refused `proxy-*` and `proxy_*`. Now it is refused at the name's YAML
 * path, saying why (config/owned-headers.ts, the family read as request/proxy-name.ts reads it).
 *
 * Input: the reviewer's header (/tmp/r36/proto.mts) with the CLI's `--check-config` (in process: helpers/check-config.ts) and the real loader.
 * Expected: exit 2 / exactly the problem below; names that only start with the letters pass.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentHeaderProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const WHY =
  'the httpoxy name: a seller behind CGI, WSGI, PHP or Rack reads it as `HTTP_PROXY`, the variable many HTTP clients take for their outbound proxy ' +
  "(CVE-2016-5385), so it would send its own requests through the configured one; the gateway strips it from every host's request";

describe('config-header-proxy-accepted-sent-to-seller', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it("--check-config, the reviewer's header: exit 2 (was: valid, sent to the seller)", async () => {
    const yaml = 'agents:\n  a:\n    url: https://s.example/mcp\n    headers:\n      proxy: "http://evil:8080"\n';
    await assertCheckConfigTextProblems(yaml, [`  agents.a.headers.proxy (line 5, column 7): header \`proxy\` may not be configured: ${WHY}`]);
  });

  it('any letter case; the rest of the family keeps its reason', () => {
    assert.deepEqual(agentHeaderProblems(['Proxy: "http://evil:8080"']), [`agents.a.headers.Proxy: header \`proxy\` may not be configured: ${WHY}`]);
    assert.deepEqual(agentHeaderProblems(['proxy-connection: x']), ['agents.a.headers.proxy-connection: header `proxy-connection` may not be configured: a hop-by-hop header (proxy-*)']);
  });

  it('control: names that only start with its letters are sent', () => {
    assert.deepEqual(agentHeaderProblems(['proxyish: a', 'x-proxy: b']), ['loaded {"proxyish":"a","x-proxy":"b"}']);
  });
});
