/**
 * Regression: an agent's `headers:` took `expect` and `content-encoding`, which break every
 * request the gateway forwards to that agent.
 *
 * Reported failure (a new user's trial, 2026-12-03, F8): `headers: { expect: "100-continue" }`
 * passed `--check-config` (exit 0), then every call to the agent failed inside undici
 * ("expect header not supported") and the host got `upstream_unreachable`, the seller never
 * contacted; `content-encoding: gzip` passed too, and labelled every plain body the gateway
 * forwards as gzip.
 * Now (config/owned-headers.ts `FORBIDDEN_HEADERS`): both are refused at the header name's YAML
 * path, saying why, and so is every header the request header policy strips or the gateway
 * sets itself (request/headers.ts `STRIPPED_REQUEST_HEADERS`) but `origin` and `referer`,
 * which may be configured on purpose.
 *
 * Input: the trial's config file, and one with `content-encoding`, checked with the CLI's `--check-config` (in process: helpers/check-config.ts)
 * (`--check-config`); every stripped name, with the real loader (`parseConfig`).
 * Expected: exit 2, nothing on stdout, exactly the stderr below; one problem per stripped name.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { STRIPPED_REQUEST_HEADERS } from '../../src/request/headers.js';
import { assertCheckConfigProblems } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const LISTEN = 'listen: { host: 127.0.0.1, port: 4201 }\n';

const CASES: ReadonlyArray<readonly [label: string, file: string, text: string, problems: readonly string[]]> = [
  [
    'expect: 100-continue (the trial)',
    'expect.yaml',
    `${LISTEN}agents:\n  exp: { url: "http://127.0.0.1:4101/mcp", headers: { expect: "100-continue" } }\n`,
    [
      '  agents.exp.headers.expect (line 3, column 55): header `expect` may not be configured: the gateway sends each request whole, and its HTTP client refuses the header, so every call would fail',
    ],
  ],
  [
    'Content-Encoding: gzip',
    'content-encoding.yaml',
    `${LISTEN}agents:\n  a:\n    url: http://127.0.0.1:4101/mcp\n    headers:\n      Content-Encoding: gzip\n`,
    [
      '  agents.a.headers.Content-Encoding (line 6, column 7): header `content-encoding` may not be configured: the gateway forwards request bodies uncompressed, and this would mislabel every one',
    ],
  ],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-header-config-'));
  for (const [, file, text] of CASES) await writeFile(join(dir, file), text);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config refuses headers that break every call', { concurrency: true }, () => {
  for (const [label, file, , problems] of CASES) {
    test(`${label}: exit 2, exactly this problem`, OPTIONS, async () => {
      await assertCheckConfigProblems(join(dir, file), problems);
    });
  }
});

describe('the loader', () => {
  /** Sent as configured: a host's are never forwarded (request/headers.ts). */
  const CONFIGURABLE = new Set(['origin', 'referer']);

  test('refuses every header the request header policy strips, but origin and referer', () => {
    const names = [...STRIPPED_REQUEST_HEADERS].filter((name) => !CONFIGURABLE.has(name));
    const text = `agents:\n  a:\n    url: http://127.0.0.1:9/mcp\n    headers:\n${names.map((name) => `      ${name}: v\n`).join('')}`;
    let problems: Array<[string, string]> = [];
    try {
      parseConfig(text, { env: {} });
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      problems = err.problems.map((p) => [p.path, p.message.replace(/: .*$/, '')]);
    }
    assert.deepEqual(
      problems,
      names.map((name) => [`agents.a.headers.${name}`, `header \`${name}\` may not be configured`]),
    );
  });

  test('sends a configured origin and referer', () => {
    const config = parseConfig('agents:\n  a:\n    url: http://127.0.0.1:9/mcp\n    headers: { origin: "https://buyer.example", referer: "https://buyer.example/" }\n', { env: {} });
    assert.deepEqual({ ...config.agents.get('a')?.headers }, { origin: 'https://buyer.example', referer: 'https://buyer.example/' });
  });
});
