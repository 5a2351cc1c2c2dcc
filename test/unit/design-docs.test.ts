// docs/design/ holds pinned copies of the design guide and the AdCP spec pages the code
// cites (a user's clone has no ../shared): they must stay identical to ../shared whenever
// that folder exists (the same rule as test/vectors/, ARCHITECTURE §5).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/repo.js';

const repoRoot = REPO;
const designDir = path.join(repoRoot, 'docs', 'design');
const sharedDir = path.resolve(repoRoot, '..', 'shared');

/** Copied file (relative to docs/design/) -> its source (relative to ../shared/). */
function copies(): Array<[string, string]> {
  const spec = readdirSync(path.join(designDir, 'spec')).filter((f) => f.endsWith('.md'));
  return [['ARCHITECTURE.md', 'ARCHITECTURE.md'], ...spec.map((f): [string, string] => [path.join('spec', f), path.join('spec', f)])];
}

describe('docs/design (pinned copies of ../shared)', () => {
  test('the clone has the design guide and both spec pages', () => {
    assert.deepEqual(copies().map(([copy]) => copy).sort(), ['ARCHITECTURE.md', 'spec/README.md', 'spec/managing-response-size.md', 'spec/mcp-response-extraction.md']);
  });

  test('each copy is identical to ../shared, and no shared page is missing', { skip: !existsSync(sharedDir) && 'no ../shared beside this clone' }, () => {
    for (const [copy, source] of copies()) {
      assert.equal(readFileSync(path.join(designDir, copy), 'utf8'), readFileSync(path.join(sharedDir, source), 'utf8'), copy);
    }
    const sharedSpec = readdirSync(path.join(sharedDir, 'spec')).filter((f) => f.endsWith('.md')).sort();
    assert.deepEqual(readdirSync(path.join(designDir, 'spec')).filter((f) => f.endsWith('.md')).sort(), sharedSpec);
  });
});
