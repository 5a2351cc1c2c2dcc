/**
 * The repository root, whether this file runs from source (`node --import tsx --test
 * test/x.test.ts`) or compiled (`npm test` runs dist-test/test/x.test.js: scripts/repo-root.ts).
 * Tests name the repository's files (docs/, package.json, test/vectors/, test/support/*.ts they
 * spawn through tsx) as `join(REPO, ...)`, never relative to their own `import.meta.url`.
 */
import { repoRoot } from '../../scripts/repo-root.js';

export const REPO = repoRoot(import.meta.url, 2);
