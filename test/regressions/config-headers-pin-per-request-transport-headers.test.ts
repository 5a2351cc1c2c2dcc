/**
 * Regression (a hostile new operator's trial 45, L6, Low): an agent's `headers:` could pin the
 * transport headers each request carries for itself: `content-type: text/plain`,
 * `accept: text/html`, `mcp-protocol-version: "1999-01-01"`, `mcp-session-id: shared-session`
 * passed `--check-config` and were sent verbatim on every request, replacing the host's own
 * (one `Mcp-Session-Id` for every host: their sessions mixed at the seller), while
 * `content-encoding` was already refused as one that "would mislabel every one".
 *
 * Now (config/owned-headers.ts, one list): every header the gateway or the protocol owns per
 * request is refused at the name's YAML path, saying why: those the request policy strips or
 * the gateway sets (as before), `content-type`, `accept`, and every `Mcp-*` transport header.
 *
 * Input: the trial's headers, checked with the CLI's `--check-config` (in process: helpers/check-config.ts); the other MCP
 * transport names and headers that stay allowed, with the real loader.
 * Expected: exit 2 and exactly the problems below; allowed ones load.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentHeaderProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const MCP = 'an MCP transport header, which each host sets for its own requests (Mcp-Method, Mcp-Name, Mcp-Param-*): a configured one would replace every host\'s';

describe('per-request transport headers may not be configured', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it("--check-config, the trial's headers: exit 2, one problem each (was: valid, sent verbatim)", async () => {
    await assertCheckConfigTextProblems(
      'agents:\n  a:\n    url: http://127.0.0.1:3001/mcp\n    headers: {content-type: text/plain, accept: text/html, mcp-protocol-version: "1999-01-01", mcp-session-id: shared-session}\n',
      [
        '  agents.a.headers.content-type (line 4, column 15): header `content-type` may not be configured: set by each host for the body it sends (application/json): a configured one would mislabel every body',
        "  agents.a.headers.accept (line 4, column 41): header `accept` may not be configured: set by each host for each request (MCP requires application/json and text/event-stream on a POST, text/event-stream on a GET): a configured one would replace every host's",
        '  agents.a.headers.mcp-protocol-version (line 4, column 60): header `mcp-protocol-version` may not be configured: the MCP version each host negotiated at initialize: a configured one would tell the seller every host speaks it',
        '  agents.a.headers.mcp-session-id (line 4, column 96): header `mcp-session-id` may not be configured: the session the seller gave each host at initialize: a configured one would put every host in one session',
      ],
    );
  });

  it('the other Mcp-* transport headers, in any case', () => {
    assert.deepEqual(agentHeaderProblems(['Mcp-Method: tools/call', 'mcp-name: t', 'Mcp-Param-Region: eu', 'MCP-Anything: x']), [
      `agents.a.headers.Mcp-Method: header \`mcp-method\` may not be configured: ${MCP}`,
      `agents.a.headers.mcp-name: header \`mcp-name\` may not be configured: ${MCP}`,
      `agents.a.headers.Mcp-Param-Region: header \`mcp-param-region\` may not be configured: ${MCP}`,
      `agents.a.headers.MCP-Anything: header \`mcp-anything\` may not be configured: ${MCP}`,
    ]);
  });

  it('control: credentials and other end-to-end headers still load', () => {
    assert.deepEqual(agentHeaderProblems(['Authorization: "Bearer abcdefghijkl"', 'x-api-key: k', 'user-agent: buyer/1', 'cookie: a=b', 'origin: "https://buyer.example"', 'x-mcp-tenant: t']), [
      'loaded {"authorization":"Bearer abcdefghijkl","x-api-key":"k","user-agent":"buyer/1","cookie":"a=b","origin":"https://buyer.example","x-mcp-tenant":"t"}',
    ]);
  });
});
