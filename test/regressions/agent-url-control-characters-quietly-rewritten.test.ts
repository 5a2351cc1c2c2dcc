/**
 * Regression (a hostile new operator's trial 45, L3, Low): an agent `url` holding a control
 * character or whitespace was quietly rewritten by the URL parser instead of refused:
 * `url: "http://127.0.0.\n1:3001/mcp"` (and the same through `${URLV}` holding a newline)
 * passed `--check-config` and was shown as `http://127.0.0.1:3001/mcp`; `…/mc\tp` became
 * `/mcp`; a trailing NUL or trailing spaces were dropped; `…/mc\u0000p` became `/mc%00p`.
 * docs/configuration.md: the url is read from the text after `${VAR}` expansion, and forms a
 * URL parser would quietly turn into another are errors.
 *
 * Input: the trial's configs (the newline written in the file and through a variable) with
 * the CLI's `--check-config` (in process: helpers/check-config.ts), and every other case with the real loader.
 * Expected: a problem at `agents.<agent>.url` naming the character (code point, name,
 * position), never the url; exit 2. A url without any still passes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentUrlProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const WHY = 'must not contain whitespace or control characters, which a URL parser quietly drops or percent-encodes (the requests would go to another url than the one written)';

describe('an agent url with whitespace or a control character is refused', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('--check-config, the trial\'s newline in the file and through ${URLV}: exit 2 (was: valid, shown as http://127.0.0.1:3001/mcp)', async () => {
    const problem = `  agents.a.url (line 3, column 10): ${WHY}: U+000A (line feed) at character 16`;
    // In the file.
    await assertCheckConfigTextProblems('agents:\n  a:\n    url: "http://127.0.0.\\n1:3001/mcp"\n', [problem]);
    // Through a variable.
    await assertCheckConfigTextProblems('agents:\n  a:\n    url: "${URLV}"\n', [problem], { URLV: 'http://127.0.0.\n1:3001/mcp' });
  });

  it('each form the trial found, and the other whitespace and controls', () => {
    const cases: Array<[url: string, found: string]> = [
      ['http://127.0.0.1:3001/mc\tp', 'U+0009 (tab) at character 25'],
      ['http://127.0.0.1:3001/mcp\u0000', 'U+0000 (NUL) at character 26'],
      ['http://127.0.0.1:3001/mcp  ', 'U+0020 (space) at character 26, and 1 more'],
      ['http://127.0.0.1:3001/mc\u0000p', 'U+0000 (NUL) at character 25'],
      [' http://127.0.0.1:3001/mcp', 'U+0020 (space) at character 1'],
      ['http://127.0.0.1:3001/m cp', 'U+0020 (space) at character 24'],
      ['http://127.0.0.1:3001/mcp\r', 'U+000D (carriage return) at character 26'],
      ['http://127.0.0.1:3001/mcp\u0001', 'U+0001 (a control character) at character 26'],
      ['http://127.0.0.1:3001/mcp\u007f', 'U+007F (DEL) at character 26'],
      ['http://127.0.0.1:3001/mcp\u0085', 'U+0085 (a control character) at character 26'],
      ['http://127.0.0.1:3001/mcp\u00a0', 'U+00A0 (no-break space) at character 26'],
      ['http://127.0.0.1:3001/mcp\u2028', 'U+2028 (whitespace) at character 26'],
      ['http://127.0.0.1:3001/mcp\ufeff', 'U+FEFF (whitespace) at character 26'],
    ];
    for (const [url, found] of cases) assert.deepEqual(agentUrlProblems(url), [`agents.a.url: ${WHY}: ${found}`], JSON.stringify(url));
    // Several: the first is named, with how many there are.
    assert.deepEqual(agentUrlProblems('http://127.0.0.1:3001/ m\tc p '), [`agents.a.url: ${WHY}: U+0020 (space) at character 23, and 3 more`]);
    // Through a variable: the same (the value is never shown).
    assert.deepEqual(agentUrlProblems('${URLV}', { URLV: 'http://127.0.0.1:3001/mc\tp' }), [`agents.a.url: ${WHY}: U+0009 (tab) at character 25`]);
  });

  it('control: urls without any are accepted as before', () => {
    assert.deepEqual(agentUrlProblems('http://127.0.0.1:3001/mcp'), ['accepted http://127.0.0.1:3001/mcp']);
    assert.deepEqual(agentUrlProblems('https://sales.example/m%20cp?q=a+b'), ['accepted https://sales.example/m%20cp?q=a+b']);
    // An internationalized host in its punycode form (written `säles.example`, refused since hostile trial 46:
    // test/regressions/agent-url-non-ascii-quietly-rewritten.test.ts).
    assert.deepEqual(agentUrlProblems('https://xn--sles-loa.example/mcp'), ['accepted https://xn--sles-loa.example/mcp']);
  });
});
