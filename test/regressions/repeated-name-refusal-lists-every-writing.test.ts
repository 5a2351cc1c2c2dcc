/**
 * Reported failure (the complexity audit after a hostile trial 16): a host request writing a
 * member the gateway reads many times got an `invalid_request` whose message quoted every
 * writing: `"params"` 40,000 times made a 480 KB message. Now at most SHOWN_WRITINGS (8) are
 * quoted, then how many more (request/repeated-request-names.ts judgeKeys), on both readings
 * of a request (the parse, under 1 KiB, and the scan: request/peek.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peekJsonRpc, PEEK_SCAN_MIN_BYTES } from '../../src/request/peek.js';
import { SHOWN_WRITINGS } from '../../src/request/repeated-request-names.js';

const refusalOf = (repeats: number, padding: number): { kind: string; message: string } => {
  const names = Array.from({ length: repeats }, (_, i) => `"${i % 2 === 0 ? 'method' : 'Method'}":"ping"`).join(',');
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,${names},"pad":"${'x'.repeat(padding)}"}`);
  const r = peekJsonRpc(body);
  assert.equal(r.ok, false);
  return r.ok ? { kind: '', message: '' } : { kind: r.kind, message: r.message };
};
const quoted = '"method", "Method", "method", "Method", "method", "Method", "method", "Method"';

test('40 writings of "method" in a small request (the parse reading): 8 quoted, then how many more', () => {
  assert.equal(SHOWN_WRITINGS, 8);
  assert.deepEqual(refusalOf(40, 0), { kind: 'invalid_request', message: `Invalid Request: the member "method" is written 40 times (${quoted}, and 32 more); send it once.` });
});

test('900 writings in a request over 1 KiB (the scan reading): 8 quoted, then how many more', () => {
  assert.deepEqual(refusalOf(900, PEEK_SCAN_MIN_BYTES), { kind: 'invalid_request', message: `Invalid Request: the member "method" is written 900 times (${quoted}, and 892 more); send it once.` });
});

test('4,000 writings: over the 1000 members a message object may have, refused for that first (hostile trial 54, F1)', () => {
  assert.deepEqual(refusalOf(4000, PEEK_SCAN_MIN_BYTES), { kind: 'invalid_request', message: 'Invalid Request: the message has 4003 members, more than the 1000 the gateway reads.' });
});

test('8 writings: all quoted, nothing more said', () => {
  assert.deepEqual(refusalOf(8, 0), { kind: 'invalid_request', message: `Invalid Request: the member "method" is written 8 times (${quoted}); send it once.` });
});
