/**
 * Regression (hostile trial 46, item 4, Low; the class of trial 45 L3): an agent `url` holding a
 * non-ASCII character was quietly rewritten by the URL parser's IDNA mapping instead of refused,
 * and `--check-config` said `valid`: `http://exam\u00adple.com/mcp` (a soft hyphen) went to
 * `example.com`, a full-width `１２７.0.0.1` to `127.0.0.1`, `EXAMPLE.com\u3002evil.com` (an
 * ideographic full stop) to `example.com.evil.com`. Now any non-ASCII character is an error at
 * the url's YAML path naming the character (code point, a name where one is known, position),
 * never the url, with the advice to write an internationalized host in its punycode (`xn--`)
 * form and to percent-encode non-ASCII path bytes.
 *
 * Input: the soft hyphen through `${U}` with the real CLI (as the trial did), every other case
 * with the real loader. Expected: exit 2 / the exact problem; the ASCII spellings pass.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';

const WHY =
  'must be ASCII: a URL parser quietly rewrites any other character (a host\'s are mapped by IDNA, which drops some and turns others into ASCII ones; ' +
  'a path\'s or query\'s are percent-encoded), so the requests could go to another url than the one written';
const ADVICE = 'write an internationalized host in its punycode form (xn--...), and percent-encode the UTF-8 bytes of a non-ASCII character in the path or query';

/** The problems (`path: message`) of agent `a` with `url` (a JS string written as a YAML double-quoted scalar), or `accepted <href>`. */
function urlProblems(url: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    const config = parseConfig(`agents:\n  a:\n    url: ${JSON.stringify(url)}\n`, { env });
    return [`accepted ${config.agents.get('a')?.url.href ?? '?'}`];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

describe('agent-url-non-ascii-quietly-rewritten', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('--check-config, the trial\'s soft hyphen through ${U}: exit 2 (was: valid, example.com)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'url-non-ascii-'));
    try {
      const file = join(dir, 'u.yaml');
      await writeFile(file, 'agents:\n  a:\n    url: ${U}\n');
      const run = await runCli(['--config', file, '--check-config'], { env: { U: 'http://exam\u00adple.com/mcp' } });
      assert.deepEqual(run, { code: 2, stdout: '', stderr: `${file}: 1 problem\n  agents.a.url (line 3, column 10): ${WHY}: U+00AD (soft hyphen) at character 12; ${ADVICE}\n` });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('each form the trial found, and others', () => {
    const cases: Array<[url: string, found: string]> = [
      ['http://exam\u00adple.com/mcp', 'U+00AD (soft hyphen) at character 12'],
      ['http://\uff11\uff12\uff17.0.0.1:3001/mcp', 'U+FF11 (fullwidth digit one) at character 8, and 2 more'],
      ['http://EXAMPLE.com\u3002evil.com/mcp', 'U+3002 (ideographic full stop) at character 19'],
      ['http://example\uff0ecom/mcp', 'U+FF0E (fullwidth full stop) at character 15'],
      ['http://exa\u200bmple.com/mcp', 'U+200B (zero width space) at character 11'],
      ['https://s\u00e4les.example/mcp', 'U+00E4 (a non-ASCII character) at character 10'],
      ['https://sales.example/m\u00e9p', 'U+00E9 (a non-ASCII character) at character 24'],
      ['https://sales.example/mcp?q=\u00e9', 'U+00E9 (a non-ASCII character) at character 29'],
      ['https://sales.example/\u{1f600}/\u00e9', 'U+1F600 (a non-ASCII character) at character 23, and 1 more'],
    ];
    for (const [url, found] of cases) assert.deepEqual(urlProblems(url), [`agents.a.url: ${WHY}: ${found}; ${ADVICE}`], JSON.stringify(url));
    // Whitespace and controls keep their own problem (checked first).
    assert.match(urlProblems('http://s\u00e4les.example/mcp\u00a0')[0] ?? '', /^agents\.a\.url: must not contain whitespace or control characters, .*: U\+00A0 \(no-break space\) at character 25$/);
  });

  it('control: the ASCII spellings are accepted', () => {
    assert.deepEqual(urlProblems('https://xn--sles-loa.example/m%C3%A9p?q=%C3%A9'), ['accepted https://xn--sles-loa.example/m%C3%A9p?q=%C3%A9']);
    assert.deepEqual(urlProblems('http://127.0.0.1:3001/mcp'), ['accepted http://127.0.0.1:3001/mcp']);
  });
});
