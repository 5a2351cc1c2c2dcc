// The docs and the shipped config files stay in sync with the one schema.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import { listSchemaKeyPaths } from '../../src/config/schema.js';
import { REPO } from '../helpers/repo.js';

const root = (path: string): string => join(REPO, path);

/** Key paths in the first column of the tables of docs/configuration.md's "## Reference" section. */
function documentedKeyPaths(): string[] {
  const doc = readFileSync(root('docs/configuration.md'), 'utf8');
  const start = doc.indexOf('\n## Reference\n');
  assert.ok(start >= 0, 'docs/configuration.md has a "## Reference" section');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] as string);
}

describe('docs/configuration.md', () => {
  it('documents every schema key, and only schema keys', () => {
    const schema = listSchemaKeyPaths();
    const documented = documentedKeyPaths();
    assert.deepEqual(
      schema.filter((k) => !documented.includes(k)),
      [],
      'schema keys missing from the reference',
    );
    assert.deepEqual(
      documented.filter((k) => !schema.includes(k)),
      [],
      'reference rows that are not schema keys',
    );
    assert.equal(new Set(documented).size, documented.length, 'each key documented once');
  });

  it('lists the schema keys we expect (guards the walker itself)', () => {
    const schema = listSchemaKeyPaths();
    for (const key of [
      'listen.port',
      'defaults.max_response_bytes',
      'defaults.max_request_bytes',
      'resume.secret',
      'agents.<agent>.url',
      'agents.<agent>.headers',
      'agents.<agent>.max_call_response_bytes',
      'agents.<agent>.tools.<tool>.max_response_bytes',
    ]) {
      assert.ok(schema.includes(key), key);
    }
    assert.equal(schema.length, 61); // 43 + ops_listen (3) + shutdown_grace_ms (1) + shutdown_sse_retry_ms (1) + request_timeout_ms (1) + allowed_origins (1) + allowed_hosts (1) + the guard's 4 keys in defaults and agents + max_batch_messages in defaults and agents
  });
});

describe('config/gateway.yaml', () => {
  const text = readFileSync(root('config/gateway.yaml'), 'utf8');

  it('is valid with no environment variables and serves agent demo', () => {
    const config = parseConfig(text, { env: {}, source: 'config/gateway.yaml' });
    assert.deepEqual([...config.agents.keys()], ['demo']);
    assert.equal(config.agents.get('demo')?.url.href, 'http://127.0.0.1:3001/mcp');
    assert.deepEqual(config.listen, { host: '127.0.0.1', port: 8787 });
    assert.equal(config.agents.get('demo')?.tls_insecure_skip_verify, false);
  });

  it('mentions every key (set or commented out)', () => {
    const names = new Set(listSchemaKeyPaths().map((p) => p.split('.').pop() as string));
    names.delete('<agent>');
    names.delete('<tool>');
    for (const name of names) assert.match(text, new RegExp(`\\b${name}:`), name);
  });
});

describe('docker/config/gateway.yaml', () => {
  it('is valid when its variables are set', { skip: !existsSync(root('docker/config/gateway.yaml')) }, () => {
    const text = readFileSync(root('docker/config/gateway.yaml'), 'utf8');
    const config = parseConfig(text, { env: { EXAMPLE_SELLER_TOKEN: 'x' } });
    assert.ok(config.agents.size >= 1);
  });
});
