/**
 * Regression (a new user's trial 9, F4, Medium): an agent `url` whose host comes from an
 * environment variable set to the empty string, `url: "https://${SELLER_HOST}/adcp/mcp"` with
 * `SELLER_HOST=""` (compose files and systemd `Environment=` lines make such values easily),
 * passed `--check-config` as valid and became `https://adcp/mcp`: WHATWG URL parsing skips
 * the slashes after `https:`, so the first path segment became the host, and the agent's
 * configured headers (its `Authorization`) went to whatever `adcp` resolves to. The literal
 * spellings `http:///mcp`, `http:/127.0.0.1:3001/mcp` and `http:127.0.0.1:3001/mcp` were
 * accepted and quietly rewritten the same way. RFC 9110 §4.2.1: an http(s) URI with an empty
 * host is invalid.
 *
 * Input: the trial's config checked with the CLI's `--check-config` (in process: helpers/check-config.ts; the variable set but
 * empty); configs parsed in-process with an empty variable elsewhere in the url, and with
 * urls written without `//` and a host.
 * Expected: a config error at `agents.<agent>.url` naming the variable (never its value or
 * the header's), or saying the url has no host / no `//`; exit 2 for the CLI. A set variable,
 * brackets, upper case and an empty variable outside a url and its header values are still
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

const WHY = "(an empty variable in a url is an error: it changes where the agent's requests and headers go)";
const NO_HOST = "has no host between `//` and the path (a URL parser would take the first path segment as the host, and the agent's headers would go there)";
const NO_SLASHES = 'must be written scheme://host[:port]/path: `//` and the host must follow the scheme';

/** The problems (`path: message` lines) of parsing `url` as agent `acme`'s url, or `accepted <href>`. */
function urlProblems(url: string, env: NodeJS.ProcessEnv): string[] {
  try {
    const config = parseConfig(`agents:\n  acme:\n    url: ${JSON.stringify(url)}\n`, { env });
    return [`accepted ${config.agents.get('acme')?.url.href ?? '?'}`];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

describe('an agent url must keep an explicit host', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('--check-config: the trial\'s config with SELLER_HOST="" is an error naming the variable (was: valid, https://adcp/mcp)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'empty-env-url-'));
    try {
      const file = join(dir, 'emptyhost.yaml');
      await writeFile(file, 'agents:\n  acme: {url: "https://${SELLER_HOST}/adcp/mcp", headers: {authorization: "Bearer ${ACME_TOKEN}"}}\n');
      const run = await checkConfigRun(file, { SELLER_HOST: '', ACME_TOKEN: 'tok-12345678' });
      assert.deepEqual(run, {
        code: 2,
        stdout: '',
        stderr: `${file}: 1 problem\n  agents.acme.url (line 2, column 15): environment variable \`SELLER_HOST\` is set but empty, which leaves the url without a host ${WHY}\n`,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an empty variable anywhere in a url is an error naming it; a host made of the path is said so', () => {
    // The trial's loopback proof: the first path segment would have been the host.
    assert.deepEqual(urlProblems('http://${SELLER_HOST}/127.0.0.1:3001/mcp', { SELLER_HOST: '' }), [
      `agents.acme.url: environment variable \`SELLER_HOST\` is set but empty, which leaves the url without a host ${WHY}`,
    ]);
    assert.deepEqual(urlProblems('https://sales.example/${TENANT}/mcp', { TENANT: '' }), [
      `agents.acme.url: environment variable \`TENANT\` is set but empty ${WHY}`,
    ]);
    // Each empty variable its own problem; only the host's says the host is gone.
    assert.deepEqual(urlProblems('https://${H}/${P}/mcp', { H: '', P: '' }), [
      `agents.acme.url: environment variable \`H\` is set but empty, which leaves the url without a host ${WHY}`,
      `agents.acme.url: environment variable \`P\` is set but empty ${WHY}`,
    ]);
    assert.deepEqual(urlProblems('${SELLER_URL}', { SELLER_URL: '' }), [`agents.acme.url: environment variable \`SELLER_URL\` is set but empty ${WHY}`]);
  });

  it('a url written without a host after `//`, or without `//`, is an error (was: rewritten by the URL parser)', () => {
    for (const url of ['http:///mcp', 'https:///adcp/mcp', 'https://\\adcp/mcp', 'https:////adcp/mcp']) {
      assert.deepEqual(urlProblems(url, {}), [`agents.acme.url: ${NO_HOST}`], url);
    }
    for (const url of ['http:/127.0.0.1:3001/mcp', 'http:127.0.0.1:3001/mcp', 'https:\\\\sales.example/mcp', 'https:/\\sales.example/mcp']) {
      assert.deepEqual(urlProblems(url, {}), [`agents.acme.url: ${NO_SLASHES}`], url);
    }
  });

  it('still accepted: a set variable, an IPv6 host, upper case, an empty variable outside a url', () => {
    assert.deepEqual(urlProblems('https://${SELLER_HOST}/adcp/mcp', { SELLER_HOST: 'sales.example' }), ['accepted https://sales.example/adcp/mcp']);
    assert.deepEqual(urlProblems('http://[::1]:3001/mcp', {}), ['accepted http://[::1]:3001/mcp']);
    assert.deepEqual(urlProblems('HTTPS://Sales.Example:8443/mcp', {}), ['accepted https://sales.example:8443/mcp']);
    // Outer spaces, which the URL parser trims, are refused since a hostile trial 45, L3
    // (agent-url-control-characters-quietly-rewritten.test.ts).
    assert.deepEqual(urlProblems(' https://sales.example/mcp ', {}), [
      'agents.acme.url: must not contain whitespace or control characters, which a URL parser quietly drops or percent-encodes (the requests would go to another url than the one written): U+0020 (space) at character 1, and 1 more',
    ]);
    // (In a header value an empty variable is an error too: empty-env-var-header-value.test.ts.)
    const config = parseConfig('listen: { host: "127.0.0.1${SUFFIX}" }\nagents:\n  acme:\n    url: https://sales.example/mcp\n', { env: { SUFFIX: '' } });
    assert.equal(config.listen.host, '127.0.0.1');
  });
});
