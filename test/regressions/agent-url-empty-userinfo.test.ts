/**
 * Regression (a hostile new user's trial): an agent url with credentials
 * (`https://u:p@seller.example/mcp`) was refused, but one with an empty userinfo,
 * `https://@seller.example/mcp` or `https://:@seller.example/mcp`, passed `--check-config`:
 * WHATWG URL parsing drops an empty userinfo, so the parsed url's username and password are
 * empty and the check of them saw none. RFC 9110 §4.2.4: a sender MUST NOT generate the
 * userinfo subcomponent (and its `@` delimiter) of an http(s) URI, and a recipient SHOULD
 * treat its presence as an error (it is used to obscure the authority). Now the userinfo is
 * read from the url's text after `${VAR}` expansion (config/url-authority.ts), as the host is.
 *
 * Input: a config with such a url checked with the CLI's `--check-config` (in process: helpers/check-config.ts); urls with an
 * empty userinfo parsed in-process (written, and from a variable).
 * Expected: the credentials problem at `agents.<agent>.url` (the message credentials get,
 * never echoing the url); exit 2 for the CLI. An `@` in the path or the query is still
 * accepted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const CREDENTIALS = 'must not contain credentials (user:password@); send them with `headers` instead';

/** The problems (`path: message` lines) of parsing `url` as agent `seller`'s url, or `accepted <href>`. */
function urlProblems(url: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    const config = parseConfig(`agents:\n  seller:\n    url: ${JSON.stringify(url)}\n`, { env });
    return [`accepted ${config.agents.get('seller')?.url.href ?? '?'}`];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

describe('an agent url with an empty userinfo is refused as credentials are', () => {
  it('--check-config: `https://@seller.example/mcp` is an error at agents.seller.url (was: valid)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'empty-userinfo-'));
    try {
      const file = join(dir, 'userinfo.yaml');
      await writeFile(file, 'agents:\n  seller:\n    url: https://@seller.example/mcp\n    headers: { Authorization: "Bearer tok-12345678" }\n');
      const run = await checkConfigRun(file);
      assert.deepEqual(run, { code: 2, stdout: '', stderr: `${file}: 1 problem\n  agents.seller.url (line 3, column 10): ${CREDENTIALS}\n` });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an empty user, an empty user and password, any case, a port, loopback: the credentials problem (was: accepted)', () => {
    for (const url of [
      'https://@seller.example/mcp',
      'https://:@seller.example/mcp',
      'HTTPS://@Seller.Example/mcp',
      'https://@seller.example:8443/mcp',
      'http://:@127.0.0.1:3001/mcp',
      'http://@[::1]:3001/mcp',
    ]) {
      assert.deepEqual(urlProblems(url), [`agents.seller.url: ${CREDENTIALS}`], JSON.stringify(url));
    }
    // With a space or a tab, which the URL parser drops, the url is refused for that first
    // (since a hostile trial 45, L3: agent-url-control-characters-quietly-rewritten.test.ts).
    for (const [url, found] of [
      [' https://@seller.example/mcp', 'U+0020 (space) at character 1'],
      ['https://\t@seller.example/mcp', 'U+0009 (tab) at character 9'],
    ]) {
      assert.deepEqual(urlProblems(url as string), [`agents.seller.url: must not contain whitespace or control characters, which a URL parser quietly drops or percent-encodes (the requests would go to another url than the one written): ${found}`]);
    }
  });

  it('an empty userinfo from a variable is refused too (the text after expansion is read)', () => {
    assert.deepEqual(urlProblems('https://${SELLER_AUTHORITY}/mcp', { SELLER_AUTHORITY: '@seller.example' }), [`agents.seller.url: ${CREDENTIALS}`]);
  });

  it('still as before: credentials refused once; an `@` in the path or query accepted', () => {
    assert.deepEqual(urlProblems('https://u:p@seller.example/mcp'), [`agents.seller.url: ${CREDENTIALS}`]);
    assert.deepEqual(urlProblems('https://seller.example/@team/mcp'), ['accepted https://seller.example/@team/mcp']);
    assert.deepEqual(urlProblems('https://seller.example/mcp?contact=a@b.example'), ['accepted https://seller.example/mcp?contact=a@b.example']);
  });
});
