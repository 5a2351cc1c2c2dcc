// AdCP's own test vectors (test/vectors/, a commit-pinned copy of ../shared/vectors/):
// every mcp-response-extraction vector through extractAdcpResponse, every MCP
// transport-error-mapping vector through extractAdcpError, and the copy kept identical to
// ../shared/vectors/ whenever that folder exists (ARCHITECTURE §5, last trap).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { extractAdcpError, extractAdcpResponse } from '../../src/mcp/extract.js';
import { normalizeToolResult } from '../../src/mcp/normalize.js';
import { REPO } from '../helpers/repo.js';

const repoRoot = REPO;
const vectorsDir = path.join(repoRoot, 'test', 'vectors');
const sharedDir = path.resolve(repoRoot, '..', 'shared', 'vectors');

interface ExtractionVector {
  id: string;
  path: string;
  response: unknown;
  expected_data: Record<string, unknown> | null;
}
interface ErrorVector {
  id: string;
  transport: string;
  response: unknown;
  expected_error: Record<string, unknown> | null;
}

function load<T>(name: string): T[] {
  return (JSON.parse(readFileSync(path.join(vectorsDir, name), 'utf8')) as { vectors: T[] }).vectors;
}

/** The 16 ids of mcp-response-extraction.json at the pinned commit: a vector that disappears fails the run. */
const EXTRACTION_IDS = [
  'structured-content-products',
  'structured-content-media-buy',
  'text-fallback-json',
  'plain-text-no-json',
  'is-error-true',
  'is-error-true-no-structured',
  'empty-structured-content',
  'multiple-text-items',
  'text-not-json',
  'text-parses-as-array',
  'structured-content-adcp-error-only',
  'structured-content-wins-over-text',
  'working-status',
  'input-required-status',
  'text-fallback-adcp-error-only',
  'proto-pollution-structured',
];

const NORMALIZE_LIMITS = { maxTextBytes: 4_194_304, maxDepth: 64, maxNodes: 100_000 };

describe('mcp-response-extraction vectors', () => {
  const vectors = load<ExtractionVector>('mcp-response-extraction.json');
  const executed = new Set<string>();

  test('the file holds exactly the 16 known vectors', () => {
    assert.equal(vectors.length, 16);
    assert.deepEqual(vectors.map((v) => v.id).sort(), [...EXTRACTION_IDS].sort());
  });

  for (const vector of vectors) {
    test(`${vector.id} (${vector.path})`, () => {
      assert.deepStrictEqual(extractAdcpResponse(vector.response), vector.expected_data);
      // Normalization never changes what extraction yields.
      const normalized = normalizeToolResult(vector.response, NORMALIZE_LIMITS);
      assert.deepStrictEqual(extractAdcpResponse(normalized.result), vector.expected_data);
      executed.add(vector.id);
    });
  }

  test('every known vector was executed', () => {
    assert.deepEqual([...executed].sort(), [...EXTRACTION_IDS].sort());
  });

  test('the __proto__ vector keeps __proto__ as own data and pollutes nothing', () => {
    const vector = vectors.find((v) => v.id === 'proto-pollution-structured');
    assert.ok(vector);
    const data = extractAdcpResponse(vector.response);
    assert.ok(data);
    assert.ok(Object.hasOwn(data, '__proto__'));
    assert.equal(Object.getPrototypeOf(data), Object.prototype);
    assert.equal((data as { isAdmin?: unknown }).isAdmin, undefined);
    assert.equal(({} as { isAdmin?: unknown }).isAdmin, undefined);
  });
});

describe('transport-error-mapping vectors (transport mcp)', () => {
  const all = load<ErrorVector>('transport-error-mapping.json');
  const mcp = all.filter((v) => v.transport === 'mcp');
  const executed = new Set<string>();

  for (const vector of mcp) {
    test(vector.id, () => {
      assert.deepStrictEqual(extractAdcpError(vector.response), vector.expected_error);
      executed.add(vector.id);
    });
  }

  test('every mcp vector was executed', () => {
    assert.ok(mcp.length > 0, 'no transport "mcp" vector found');
    assert.equal(executed.size, mcp.length);
    assert.deepEqual([...executed].sort(), mcp.map((v) => v.id).sort());
  });
});

test('test/vectors is byte-identical to ../shared/vectors', (t) => {
  if (!existsSync(sharedDir)) {
    t.skip(`${sharedDir} does not exist (a clone without the shared folder): copy check skipped`);
    return;
  }
  const ours = readdirSync(vectorsDir).sort();
  const theirs = readdirSync(sharedDir).sort();
  assert.deepEqual(ours, theirs, 'the two folders list different files');
  for (const name of theirs) {
    const a = readFileSync(path.join(vectorsDir, name));
    const b = readFileSync(path.join(sharedDir, name));
    assert.ok(a.equals(b), `test/vectors/${name} differs from ${path.join(sharedDir, name)}`);
  }
});
