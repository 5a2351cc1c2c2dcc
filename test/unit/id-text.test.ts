/**
 * src/mcp/id-text.ts: the one rule keeping a numeric JSON-RPC id's text as the host wrote it
 * (request/peek.ts, response/batch-answers.ts). Source: a hostile new-user trial 13, L2
 * (minted errors carry numeric host ids byte for byte:
 * test/regressions/minted-error-rewrites-host-id.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idTextOfNumber, writtenNumberId } from '../../src/mcp/id-text.js';

/** idTextOfNumber of a JSON number token, its value read as JSON.parse reads it. */
const kept = (written: string): string | undefined => idTextOfNumber(written, JSON.parse(written) as number);

test('idTextOfNumber: the text when JSON.stringify writes the number otherwise', () => {
  // Another spelling of the same value.
  for (const written of ['1.0', '1E2', '1e3', '0.1e1', '-0', '1.50', '-0.0', '1E+2']) assert.equal(kept(written), written, written);
  // A value one JSON.parse changes.
  for (const written of ['9007199254740993', '-12345678901234567890', '0.99999999999999999999', '1e-400', '-1e-400', '12345678901234567891']) {
    assert.equal(kept(written), written, written);
  }
});

test('idTextOfNumber: undefined when JSON.stringify writes the text itself', () => {
  for (const written of ['0', '1', '-42', '1.5', '0.1', '9007199254740992', '1e+21', '-1e-7', '12345678901234567000']) assert.equal(kept(written), undefined, written);
});

test('writtenNumberId: the kept text, else JSON.stringify of the number (the inverse)', () => {
  assert.equal(writtenNumberId(1, '1.0'), '1.0');
  assert.equal(writtenNumberId(0, '-0'), '-0');
  assert.equal(writtenNumberId(9007199254740992, '9007199254740993'), '9007199254740993');
  assert.equal(writtenNumberId(1, undefined), '1');
  assert.equal(writtenNumberId(-0, undefined), '0');
  assert.equal(writtenNumberId(1e21, undefined), '1e+21');
  // Round trip: the text written, whatever idTextOfNumber kept.
  for (const written of ['1.0', '1E2', '-0', '42', '1.5', '9007199254740993', '1e+21']) {
    const id = JSON.parse(written) as number;
    assert.equal(writtenNumberId(id, idTextOfNumber(written, id)), written, written);
  }
});
