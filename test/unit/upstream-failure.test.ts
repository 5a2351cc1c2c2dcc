/**
 * Which failures before a response head the exchange line explains by itself
 * (src/routing/upstream-failure.ts): transport failures, by their code anywhere along the
 * cause chain; anything else (TLS, no code, an unknown code) is not one, so it gets a warning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isTransportFailure, rootCode } from '../../src/routing/upstream-failure.js';

const coded = (code: string, cause?: unknown) => Object.assign(new Error(code, cause === undefined ? {} : { cause }), { code });

test('transport failures: system and undici codes, parser errors by prefix, through causes', () => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'HPE_INVALID_CONSTANT']) {
    assert.equal(isTransportFailure(coded(code)), true, code);
  }
  // reply-from and undici wrap: the innermost code decides.
  assert.equal(isTransportFailure(coded('FST_REPLY_FROM_INTERNAL_SERVER_ERROR', coded('ECONNREFUSED'))), true);
  assert.equal(rootCode(coded('A', coded('B', new Error('no code')))), 'B');
});

test('not transport failures: TLS, no code, an unknown code', () => {
  for (const err of [coded('ERR_SSL_WRONG_VERSION_NUMBER'), coded('DEPTH_ZERO_SELF_SIGNED_CERT'), new TypeError('bug'), coded('UND_ERR_INVALID_ARG'), 'a string', undefined]) {
    assert.equal(isTransportFailure(err), false, String(err));
  }
});

test("undici's HTTPParserError without a code (bytes after an interim 1xx that are no head) is one, alone or as a cause", () => {
  const parserError = Object.assign(new Error('Response does not match the HTTP/1.1 protocol'), { name: 'HTTPParserError' });
  assert.equal(isTransportFailure(parserError), true);
  assert.equal(isTransportFailure(new Error('wrapped', { cause: parserError })), true);
  // Named so, but with a code not of a transport failure: the code decides.
  assert.equal(isTransportFailure(Object.assign(new Error('x'), { name: 'HTTPParserError', code: 'UND_ERR_INVALID_ARG' })), false);
  const cycle = new Error('cycle');
  (cycle as { cause?: unknown }).cause = cycle;
  assert.equal(isTransportFailure(cycle), false);
});

test('a cause cycle ends', () => {
  const a = coded('ECONNRESET');
  (a as { cause?: unknown }).cause = a;
  assert.equal(rootCode(a), 'ECONNRESET');
});
