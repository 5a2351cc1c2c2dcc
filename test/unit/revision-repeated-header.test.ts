/**
 * isRepeatedProtocolVersion (src/mcp/revision.ts): an `MCP-Protocol-Version` header sent more
 * than once (Node's `"a, b"` join, an array) is told apart from one value, a revision date or
 * not (a new user's trial, 2026-12-03: test/regressions/protocol-version-header-sent-twice.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isRepeatedProtocolVersion } from '../../src/mcp/revision.js';

test('repeated: a joined value, a value with a comma, an array of two', () => {
  for (const header of ['2025-06-18, 2025-06-18', '2025-06-18,2025-11-25', ',', ['2025-06-18', '2025-06-18'], ['a,b']]) {
    assert.equal(isRepeatedProtocolVersion(header), true, JSON.stringify(header));
  }
});

test('one value: absent, a revision, no revision date, empty', () => {
  for (const header of [undefined, '2025-06-18', 'draft', '', ' 2025-06-18 ', ['2025-06-18'], []]) {
    assert.equal(isRepeatedProtocolVersion(header), false, JSON.stringify(header));
  }
});
