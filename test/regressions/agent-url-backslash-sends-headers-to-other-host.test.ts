/**
 * Regression (review 36, F1, Low; the class of hostile trials 45/46 and review 31): an agent
 * `url` holding a backslash passed config validation and `--check-config`. A WHATWG URL parser
 * (Node's `URL`, undici) reads `\` in an `http:`/`https:` url as `/`, so it ends the host where
 * an RFC 3986 reader (an operator's eyes, Python's `urlsplit`, curl) reads on:
 * `url: "http://evil.example\\@seller.example/mcp"` was valid, and the gateway sent the agent's
 * configured `authorization` to evil.example (path `/@seller.example/mcp`), while the operator
 * saw host seller.example with a userinfo `evil.example\`. `https://s/a\b` was quietly
 * rewritten to `/a/b`. Now a backslash in the url's host or path is an error at the url's YAML path
 * naming its position (never the url), and, when it is where an RFC 3986 reader still reads
 * the authority, the host a URL parser would read.
 *
 * Input: the reviewer's file (/tmp/r36/bs.yaml) with the CLI's `--check-config` (in process: helpers/check-config.ts), every other case with the
 * real loader. Expected: exit 2 / the exact problem; a url without a backslash passes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentUrlProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const WHY =
  'must not contain `\\` in its host or path: a URL parser (WHATWG, as Node and its HTTP client) reads it as `/`, which ends the host where other readers ' +
  '(RFC 3986: an operator, curl, Python) read on, so the requests could go to another host or path than the one written';
const ADVICE = 'write `/` to separate path segments, and percent-encode a backslash the path needs as %5C';
/** Where an `@` follows in the authority, what precedes the backslash may be a credential: never echoed. */
const NOT_SHOWN = 'a URL parser reads what precedes it as the host (not shown: other readers take it for userinfo)';

describe('agent-url-backslash-sends-headers-to-other-host', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it("--check-config, the reviewer's file: exit 2 (was: valid, and the credential went to evil.example)", async () => {
    const yaml = 'agents:\n  a:\n    url: "http://evil.example\\\\@seller.example/mcp"\n    headers:\n      authorization: "Bearer x"\n';
    const problem = `  agents.a.url (line 3, column 10): ${WHY}: \`\\\` at character 20; ${NOT_SHOWN}; ${ADVICE}`;
    await assertCheckConfigTextProblems(yaml, [problem]);
  });

  it('anywhere in its host or path, each named by its first position and how many more (was: accepted, rewritten)', () => {
    const cases: Array<[url: string, found: string]> = [
      ['http://evil.example\\@seller.example/mcp', `\`\\\` at character 20; ${NOT_SHOWN}`],
      // A token before the backslash and an `@` after it: not echoed (a re-read of this fix printed it as the host).
      ['https://ghp_S3cretT0ken\\@seller.example/mcp', `\`\\\` at character 24; ${NOT_SHOWN}`],
      ['http://seller.example\\.evil.example/mcp', '`\\` at character 22; a URL parser reads this host as seller.example'],
      ['https://s.example/a\\b', '`\\` at character 20'],
      ['https://s.example/m\\c\\p?q=a\\b', '`\\` at character 20, and 1 more'],
      // Through a variable: the same, the value never shown.
      ['${U}', `\`\\\` at character 20; ${NOT_SHOWN}`],
    ];
    for (const [url, found] of cases) {
      assert.deepEqual(agentUrlProblems(url, { U: 'http://evil.example\\@seller.example/mcp' }), [`agents.a.url: ${WHY}: ${found}; ${ADVICE}`], url);
    }
    assert.equal(agentUrlProblems('https://ghp_S3cretT0ken\\@seller.example/mcp').join('').toLowerCase().includes('s3crett0ken'), false, 'the token is never echoed');
  });

  it('control: a url without a backslash, one that percent-encodes it in the path, and one with it in the query, are accepted', () => {
    assert.deepEqual(agentUrlProblems('https://seller.example/mcp'), ['accepted https://seller.example/mcp']);
    assert.deepEqual(agentUrlProblems('https://seller.example/a%5Cb'), ['accepted https://seller.example/a%5Cb']);
    // In the query a URL parser sends it as written (a re-read: it was refused with a reason that did not hold there).
    assert.deepEqual(agentUrlProblems('https://seller.example/mcp?q=a\\b'), ['accepted https://seller.example/mcp?q=a\\b']);
  });
});
