/**
 * Regression (a docs review of the day's changes, finding 8): an agent's `headers:` refused
 * `mcp-session-id`, `last-event-id` and `content-type` (config/owned-headers.ts), but
 * `--check-config` accepted `headers: { mcp_session_id: x, last_event_id: y, content_type: z }`
 * and the gateway sent them on every request, while a seller behind CGI, WSGI, PHP or Rack
 * reads `_` and `-` in a header name alike (RFC 3875 §4.1.18: `HTTP_MCP_SESSION_ID`): one
 * session for every host, a resume id the gateway did not verify, a pinned body type, each the
 * thing the dash spelling is refused for. The request side already judged a host's `_` name as
 * its `-` spelling (request/headers.ts; test/regressions/underscore-twin-headers-reach-seller.test.ts).
 *
 * Now a configured name holding `_` is judged as its `-` spelling: refused with the same
 * reason at its YAML path, naming the spelling such a seller reads; and two configured names
 * that are one name so read (`x_api_key` beside `X-Api-Key`) are refused as a repeat.
 *
 * Input: the finding's headers, checked with the CLI's `--check-config` (in process: helpers/check-config.ts); then the real
 * loader on a twin pair, on `proxy_authorization` / `Mcp_Param_Region` (prefix families), and on
 * underscore names no owned header reads as (`x_trace_id`).
 * Expected: exit 2 and exactly the problems below (was: exit 0, valid); the control loads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentHeaderProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

/** What the message says between the name and the reason (the reason is the `-` spelling's, word for word). */
const READ_AS = (dashed: string) => `(a seller behind CGI, WSGI, PHP or Rack reads it as \`${dashed}\`)`;

describe('underscore spellings of the headers an agent may not configure', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it("--check-config, the finding's headers: exit 2, one problem each (was: valid)", async () => {
    await assertCheckConfigTextProblems(
      'agents:\n  a:\n    url: http://127.0.0.1:3001/mcp\n    headers: { mcp_session_id: x, last_event_id: y, content_type: z }\n',
      [
        `  agents.a.headers.mcp_session_id (line 4, column 16): header \`mcp_session_id\` may not be configured ${READ_AS('mcp-session-id')}: the session the seller gave each host at initialize: a configured one would put every host in one session`,
        `  agents.a.headers.last_event_id (line 4, column 35): header \`last_event_id\` may not be configured ${READ_AS('last-event-id')}: set by the gateway from a host's resume token`,
        `  agents.a.headers.content_type (line 4, column 53): header \`content_type\` may not be configured ${READ_AS('content-type')}: set by each host for the body it sends (application/json): a configured one would mislabel every body`,
      ],
    );
  });

  it('prefix families and a twin pair (was: loaded)', () => {
    assert.deepEqual(agentHeaderProblems(['Proxy_Authorization: "Basic eDp5"', 'Mcp_Param_Region: eu', 'X-Api-Key: k1', 'x_api_key: k2']), [
      `agents.a.headers.Proxy_Authorization: header \`proxy_authorization\` may not be configured ${READ_AS('proxy-authorization')}: a hop-by-hop header (proxy-*)`,
      `agents.a.headers.Mcp_Param_Region: header \`mcp_param_region\` may not be configured ${READ_AS('mcp-param-region')}: an MCP transport header, which each host sets for its own requests (Mcp-Method, Mcp-Name, Mcp-Param-*): a configured one would replace every host's`,
      'agents.a.headers.x_api_key: header `x_api_key` repeats `X-Api-Key` (a seller behind CGI, WSGI, PHP or Rack reads `_` in a header name as `-`)',
    ]);
  });

  it('control: underscore names no owned header is read as still load', () => {
    assert.deepEqual(agentHeaderProblems(['x_trace_id: t', 'X_Api_Key: k', 'session_token: s']), ['loaded {"x_trace_id":"t","x_api_key":"k","session_token":"s"}']);
  });
});
