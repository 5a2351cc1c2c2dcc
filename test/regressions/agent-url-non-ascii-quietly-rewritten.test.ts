/**
 * Regression (hostile trial 46, item 4, Low; the class of trial 45 L3): an agent `url` holding a
 * non-ASCII character was quietly rewritten by the URL parser's IDNA mapping instead of refused,
 * and `--check-config` said `valid`: `http://exam\u00adple.com/mcp` (a soft hyphen) went to
 * `example.com`, a full-width `１２７.0.0.1` to `127.0.0.1`, `EXAMPLE.com\u3002evil.com` (an
 * ideographic full stop) to `example.com.evil.com`. Now any non-ASCII character is an error at
 * the url's YAML path naming the character (code point, a name where one is known, position),
 * never the url, with the advice to write an internationalized host in its punycode (`xn--`)
 * form and to percent-encode non-ASCII path bytes; the problem names the host the parser
 * reads when the character is in the host.
 *
 * Review 31, finding 1 (Medium): the same characters percent-encoded in the host passed (the
 * parser decodes a host's `%xx` before IDNA): `http://exam%C2%ADple.com/mcp` was accepted as
 * example.com, `EXAMPLE.com%E3%80%82evil.com` as example.com.evil.com, and
 * `%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1` as 127.0.0.1. Now any `%` between `//` and the path is an
 * error at the url's YAML path, naming its position and the host the parser would read.
 *
 * Input: the soft hyphen through `${U}` with the CLI's `--check-config` (as the trial did; in process: helpers/check-config.ts), every other case
 * with the real loader. Expected: exit 2 / the exact problem; the ASCII spellings pass.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentUrlProblems } from '../helpers/config-problems.js';
import { assertCheckConfigTextProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const WHY =
  'must be ASCII: a URL parser quietly rewrites any other character (a host\'s are mapped by IDNA, which drops some and turns others into ASCII ones; ' +
  'a path\'s or query\'s are percent-encoded), so the requests could go to another url than the one written';
const ADVICE = 'write an internationalized host in its punycode form (xn--...), and percent-encode the UTF-8 bytes of a non-ASCII character in the path or query';

const PERCENT_WHY =
  'must not contain `%` between `//` and the path: a URL parser decodes a host\'s percent-encoded bytes before mapping it (IDNA), ' +
  'so the requests could go to another host than the one written (`exam%C2%ADple.com` is read as `example.com`), and a host never needs one';
const PERCENT_ADVICE = 'write the host itself, an internationalized one in its punycode form (xn--...)';

describe('agent-url-non-ascii-quietly-rewritten', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('--check-config, the trial\'s soft hyphen through ${U}: exit 2 (was: valid, example.com)', async () => {
    const problem = `  agents.a.url (line 3, column 10): ${WHY}: U+00AD (soft hyphen) at character 12; a URL parser reads this host as example.com; ${ADVICE}`;
    await assertCheckConfigTextProblems('agents:\n  a:\n    url: ${U}\n', [problem], { U: 'http://exam\u00adple.com/mcp' });
  });

  it('each form the trial found, and others', () => {
    const cases: Array<[url: string, found: string]> = [
      ['http://exam\u00adple.com/mcp', 'U+00AD (soft hyphen) at character 12; a URL parser reads this host as example.com'],
      ['http://\uff11\uff12\uff17.0.0.1:3001/mcp', 'U+FF11 (fullwidth digit one) at character 8, and 2 more; a URL parser reads this host as 127.0.0.1'],
      ['http://EXAMPLE.com\u3002evil.com/mcp', 'U+3002 (ideographic full stop) at character 19; a URL parser reads this host as example.com.evil.com'],
      ['http://example\uff0ecom/mcp', 'U+FF0E (fullwidth full stop) at character 15; a URL parser reads this host as example.com'],
      ['http://exa\u200bmple.com/mcp', 'U+200B (zero width space) at character 11; a URL parser reads this host as example.com'],
      ['https://s\u00e4les.example/mcp', 'U+00E4 (a non-ASCII character) at character 10; a URL parser reads this host as xn--sles-loa.example'],
      ['https://sales.example/m\u00e9p', 'U+00E9 (a non-ASCII character) at character 24'],
      ['https://sales.example/mcp?q=\u00e9', 'U+00E9 (a non-ASCII character) at character 29'],
      ['https://sales.example/\u{1f600}/\u00e9', 'U+1F600 (a non-ASCII character) at character 23, and 1 more'],
    ];
    for (const [url, found] of cases) assert.deepEqual(agentUrlProblems(url), [`agents.a.url: ${WHY}: ${found}; ${ADVICE}`], JSON.stringify(url));
    // Whitespace and controls keep their own problem (checked first).
    assert.match(agentUrlProblems('http://s\u00e4les.example/mcp\u00a0')[0] ?? '', /^agents\.a\.url: must not contain whitespace or control characters, .*: U\+00A0 \(no-break space\) at character 25$/);
  });

  it('the same characters percent-encoded in the host (review 31, finding 1; was: accepted, example.com, example.com.evil.com, 127.0.0.1)', () => {
    const cases: Array<[url: string, found: string]> = [
      ['http://exam%C2%ADple.com/mcp', '`%` at character 12, and 1 more; a URL parser reads this host as example.com'],
      ['http://EXAMPLE.com%E3%80%82evil.com/mcp', '`%` at character 19, and 2 more; a URL parser reads this host as example.com.evil.com'],
      ['http://%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1:9/mcp', '`%` at character 8, and 8 more; a URL parser reads this host as 127.0.0.1'],
      ['http://127.0.0.%31:3001/mcp', '`%` at character 16; a URL parser reads this host as 127.0.0.1'],
      // Elsewhere in the authority: no host to name (a port cannot hold one; a userinfo is refused anyway).
      ['http://127.0.0.1:%33001/mcp', '`%` at character 18'],
      ['http://u%40:p@127.0.0.1:3001/mcp', '`%` at character 9'],
    ];
    for (const [url, found] of cases) assert.deepEqual(agentUrlProblems(url), [`agents.a.url: ${PERCENT_WHY}: ${found}; ${PERCENT_ADVICE}`], url);
  });

  it('--check-config, a percent-encoded host through ${U}: exit 2, one problem at the url\'s YAML path', async () => {
    const found = '`%` at character 19, and 2 more; a URL parser reads this host as example.com.evil.com';
    const problem = `  agents.a.url (line 3, column 10): ${PERCENT_WHY}: ${found}; ${PERCENT_ADVICE}`;
    await assertCheckConfigTextProblems('agents:\n  a:\n    url: ${U}\n', [problem], { U: 'http://EXAMPLE.com%E3%80%82evil.com/mcp' });
  });

  it('control: the ASCII spellings are accepted', () => {
    assert.deepEqual(agentUrlProblems('https://xn--sles-loa.example/m%C3%A9p?q=%C3%A9'), ['accepted https://xn--sles-loa.example/m%C3%A9p?q=%C3%A9']);
    assert.deepEqual(agentUrlProblems('http://127.0.0.1:3001/mcp'), ['accepted http://127.0.0.1:3001/mcp']);
  });
});
