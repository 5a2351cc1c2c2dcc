/**
 * Regression (a hostile new operator's trial 45, Info): the Dockerfile built and ran on
 * `node:22-bookworm-slim`, a tag that moves with every Node 22 release, while the tests pin a
 * Node 22 version (scripts/node-binary.ts `PINNED_NODE_VERSIONS`): an image built next month
 * ran a Node no test had run.
 *
 * Input: the Dockerfile. Expected: both stages `FROM node:<the pinned Node 22>-bookworm-slim`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PINNED_NODE_VERSIONS } from '../../scripts/node-binary.js';
import { REPO } from '../helpers/repo.js';

test('the Dockerfile pins the Node 22 the tests pin (was: node:22-bookworm-slim)', () => {
  const froms = readFileSync(join(REPO, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((line) => /^FROM\s/i.test(line))
    .map((line) => line.split(/\s+/)[1]);
  const image = `node:${PINNED_NODE_VERSIONS[22]}-bookworm-slim`;
  assert.deepEqual(froms, [image, image]);
});
