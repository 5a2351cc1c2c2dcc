/**
 * Regression (review 36, F5, Nit): `url: http://seller.example:0/mcp` was reported valid by
 * `--check-config`, then every call to the agent failed `upstream_unreachable` (no seller can
 * listen on port 0; a connection to it fails). Now port 0, however written (`:0`, `:00`), is
 * an error at the url's YAML path saying so.
 *
 * Input: the reviewer's url (/tmp/r36/cfg3.mts, `port0`) with the CLI's `--check-config` (in process: helpers/check-config.ts) and the real loader.
 * Expected: exit 2 / exactly the problem below; a written port 1 .. 65535 or none passes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentUrlProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const WHY =
  'has port 0, where no seller can listen (a connection to it fails, so every call would fail upstream_unreachable): ' +
  "write the seller's port (1 .. 65535), or none for the scheme's default (80 for http:, 443 for https:)";

describe('agent-url-port-zero-every-call-fails', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it("--check-config, the reviewer's url: exit 2 (was: valid)", async () => {
    await assertCheckConfigTextProblems('agents:\n  a:\n    url: http://seller.example:0/mcp\n', [`  agents.a.url (line 3, column 10): ${WHY}`]);
  });

  it('any spelling of port 0, either scheme', () => {
    for (const url of ['http://seller.example:0/mcp', 'https://seller.example:00/mcp', 'http://[::1]:000/mcp']) {
      assert.deepEqual(agentUrlProblems(url), [`agents.a.url: ${WHY}`], url);
    }
  });

  it('control: a port 1 .. 65535, or none, is accepted', () => {
    assert.deepEqual(agentUrlProblems('http://seller.example:1/mcp'), ['accepted http://seller.example:1/mcp']);
    assert.deepEqual(agentUrlProblems('https://seller.example:65535/mcp'), ['accepted https://seller.example:65535/mcp']);
    assert.deepEqual(agentUrlProblems('https://seller.example/mcp'), ['accepted https://seller.example/mcp']);
  });
});
