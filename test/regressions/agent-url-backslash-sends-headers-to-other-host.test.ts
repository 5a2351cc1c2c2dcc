/**
 * Regression (review 36, F1, Low; the class of hostile trials 45/46 and review 31): an agent
 * `url` holding a backslash passed config validation and `--check-config`. A WHATWG URL parser
 * (Node's `URL`, undici) reads `\` in an `http:`/`https:` url as `/`, so it ends the host where
 * an RFC 3986 reader (an operator's eyes, Python's `urlsplit`, curl) reads on:
 * `url: "http://evil.example\\@seller.example/mcp"` was valid, and the gateway sent the agent's
 * configured `authorization` to evil.example (path `/@seller.example/mcp`), while the operator
 * saw host seller.example with a userinfo `evil.example\`. `https://s/a\b` was quietly
 * rewritten to `/a/b`. Now a backslash anywhere in the url is an error at the url's YAML path
 * naming its position (never the url), and, when it is where an RFC 3986 reader still reads
 * the authority, the host a URL parser would read.
 *
 * Input: the reviewer's file (/tmp/r36/bs.yaml) with the real CLI, every other case with the
 * real loader. Expected: exit 2 / the exact problem; a url without a backslash passes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentUrlProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems, PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const WHY =
  'must not contain `\\`: a URL parser (WHATWG, as Node and its HTTP client) reads it as `/`, which ends the host where other readers ' +
  '(RFC 3986: an operator, curl, Python) read on, so the requests could go to another host or path than the one written';
const ADVICE = 'write `/` to separate path segments, and percent-encode a backslash the path or query needs as %5C';

describe('agent-url-backslash-sends-headers-to-other-host', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it("--check-config, the reviewer's file: exit 2 (was: valid, and the credential went to evil.example)", async () => {
    const yaml = 'agents:\n  a:\n    url: "http://evil.example\\\\@seller.example/mcp"\n    headers:\n      authorization: "Bearer x"\n';
    const problem = `  agents.a.url (line 3, column 10): ${WHY}: \`\\\` at character 20; a URL parser reads this host as evil.example; ${ADVICE}`;
    await assertCheckConfigTextProblems(yaml, [problem]);
  });

  it('anywhere in the url, each named by its first position and how many more (was: accepted, rewritten)', () => {
    const cases: Array<[url: string, found: string]> = [
      ['http://evil.example\\@seller.example/mcp', '`\\` at character 20; a URL parser reads this host as evil.example'],
      ['http://seller.example\\.evil.example/mcp', '`\\` at character 22; a URL parser reads this host as seller.example'],
      ['https://s.example/a\\b', '`\\` at character 20'],
      ['https://s.example/mcp?q=a\\b\\c', '`\\` at character 26, and 1 more'],
      // Through a variable: the same, the value never shown.
      ['${U}', '`\\` at character 20; a URL parser reads this host as evil.example'],
    ];
    for (const [url, found] of cases) {
      assert.deepEqual(agentUrlProblems(url, { U: 'http://evil.example\\@seller.example/mcp' }), [`agents.a.url: ${WHY}: ${found}; ${ADVICE}`], url);
    }
  });

  it('control: a url without a backslash, and one that percent-encodes it in the path, are accepted', () => {
    assert.deepEqual(agentUrlProblems('https://seller.example/mcp'), ['accepted https://seller.example/mcp']);
    assert.deepEqual(agentUrlProblems('https://seller.example/a%5Cb'), ['accepted https://seller.example/a%5Cb']);
  });
});
