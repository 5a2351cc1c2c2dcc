/**
 * Regression (a hostile new user's trial 12, L8a, Low): a credential in an agent `url`'s path
 * (`http://127.0.0.1:9/mcp/sk-live-SECRET123abcdefXYZ0987/`, a key some sellers put in the
 * path) was printed whole by `--check-config`'s limits table and by `probe`'s report (the
 * table's first line and `--json`'s `seller`), where a query or userinfo was already shown as
 * `[redacted]`. Both now show the url through one function, `displayUrl`
 * (src/config/display-url.ts): each path segment shaped like a credential becomes `[redacted]`
 * (16+ characters mixing letters and digits, 32+ characters, a `=`, or a known key prefix), the
 * rest of the path stays.
 *
 * Input: a config whose agent url has the key as a path segment; `--check-config`; `probe`
 * (table and `--json`) against a raw seller on 127.0.0.1 that answers at that path.
 * Expected: the key in no output; the url shown `http://127.0.0.1:<port>/mcp/[redacted]/`
 * (`?[redacted]` after it for a query, which probe left out before); the seller still receives
 * the path whole. `displayPath`'s rule, segment by segment.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { displayPath, displayUrl } from '../../src/config/display-url.js';
import { initializeResult, METHOD_NOT_FOUND, startProbeSeller } from '../helpers/probe-seller.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import type { RawSeller } from '../support/raw-seller.js';

const KEY = 'sk-live-SECRET123abcdefXYZ0987';

let seller: RawSeller;
let origin: string;
let dir: string;
const file = (name: string): string => join(dir, name);

before(async () => {
  seller = await startProbeSeller((method) => {
    if (method === 'initialize') return initializeResult('pathkey', '1');
    if (method === 'tools/list') return { result: { tools: [] } };
    return METHOD_NOT_FOUND;
  });
  origin = new URL(seller.url).origin;
  dir = await mkdtemp(join(tmpdir(), 'gw-path-credential-'));
  await writeFile(file('path.yaml'), `agents:\n  p:\n    url: ${origin}/mcp/${KEY}/\n`);
  await writeFile(file('path-query.yaml'), `agents:\n  p:\n    url: ${origin}/adcp/${KEY}/mcp?api_key=abcdefghijkl\n`);
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

describe('an agent url with a key in its path', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('--check-config shows the path segment as [redacted] (was: the whole url)', async () => {
    const run = await checkConfigRun(file('path.yaml'));
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stdout.includes('SECRET123'), run.stdout);
    const row = run.stdout.split('\n').find((line) => line.startsWith('p '));
    assert.equal(row?.split(/ {2,}/)[1], `${origin}/mcp/[redacted]/`);
  });

  it('probe: the table and --json show the same url; the seller gets the path whole', async () => {
    const seen = seller.requests.length;
    const table = await runCli(['probe', 'p', '--config', file('path.yaml')]);
    assert.equal(table.code, 0, table.stderr);
    assert.ok(!table.stdout.includes('SECRET123'), table.stdout);
    assert.equal(table.stdout.split('\n')[0], `probe: agent p -> ${origin}/mcp/[redacted]/, through the gateway's pipeline`);
    assert.ok(seller.requests.slice(seen).length > 0);
    for (const req of seller.requests.slice(seen)) assert.equal(req.url, `/mcp/${KEY}/`);

    const json = await runCli(['probe', 'p', '--json', '--config', file('path.yaml')]);
    assert.equal(json.code, 0, json.stderr);
    assert.ok(!json.stdout.includes('SECRET123'), json.stdout);
    assert.equal((JSON.parse(json.stdout) as { seller: string }).seller, `${origin}/mcp/[redacted]/`);
  });

  it('a query too: --check-config and probe print the same text', async () => {
    const expected = `${origin}/adcp/[redacted]/mcp?[redacted]`;
    const check = await checkConfigRun(file('path-query.yaml'));
    assert.equal(check.code, 0, check.stderr);
    assert.equal(check.stdout.split('\n').find((line) => line.startsWith('p '))?.split(/ {2,}/)[1], expected);
    const probe = await runCli(['probe', 'p', '--json', '--config', file('path-query.yaml')]);
    assert.equal(probe.code, 0, probe.stderr);
    assert.equal((JSON.parse(probe.stdout) as { seller: string }).seller, expected);
    assert.ok(!`${check.stdout}${probe.stdout}`.includes('SECRET123') && !`${check.stdout}${probe.stdout}`.includes('abcdefghijkl'));
  });
});

describe('displayPath: which segments are hidden', () => {
  const cases: [string, string][] = [
    // Plain paths stay as they are.
    ['/mcp', '/mcp'],
    ['/adcp/mcp/', '/adcp/mcp/'],
    ['/api/v2/sales-agent/mcp', '/api/v2/sales-agent/mcp'],
    ['/mcp/2025-11-25/tenant/12345', '/mcp/2025-11-25/tenant/12345'],
    ['/locale/sk-sk/mcp', '/locale/sk-sk/mcp'],
    ['/a-very-long-plain-path-segment/', '/a-very-long-plain-path-segment/'], // 30 characters, no digit
    ['/mcp/abcdef12345678z/', '/mcp/abcdef12345678z/'], // 15 characters: under the mixed rule
    // 16+ characters mixing letters and digits.
    ['/mcp/abcdef123456789z/', '/mcp/[redacted]/'],
    ['/t/3f2504e0-4f89-11d3-9a0c-0305e82c3301/mcp', '/t/[redacted]/mcp'],
    // 32+ characters, whatever they are.
    ['/mcp/abcdefghijklmnopqrstuvwxyzabcdef', '/mcp/[redacted]'],
    // A name=value in the path.
    ['/mcp;api_key=x', '/[redacted]'],
    // Known key prefixes followed by 8+ characters.
    ['/sk-liveSECRET/mcp', '/[redacted]/mcp'],
    ['/hooks/xoxb-abcdefgh/', '/hooks/[redacted]/'],
    ['/mcp/eyJhbGciOiJIUzI1NiJ9.e30.sig', '/mcp/[redacted]'],
    ['/mcp/GHP_abcdefgh', '/mcp/[redacted]'],
    ['/sk-abcdefg/mcp', '/sk-abcdefg/mcp'], // 7 after the prefix
  ];
  for (const [path, shown] of cases) {
    it(`${path} -> ${shown}`, () => assert.equal(displayPath(path), shown));
  }

  it('displayUrl: origin as it is, path by displayPath, query, userinfo and fragment hidden', () => {
    assert.equal(displayUrl(new URL(`http://127.0.0.1:9/mcp/${KEY}/`)), 'http://127.0.0.1:9/mcp/[redacted]/');
    assert.equal(displayUrl(new URL(`https://u:p@seller.example/x/${KEY}?k=v#f`)), 'https://[redacted]@seller.example/x/[redacted]?[redacted]#[redacted]');
    assert.equal(displayUrl(new URL('https://seller.example:8443/adcp/mcp')), 'https://seller.example:8443/adcp/mcp');
  });
});
