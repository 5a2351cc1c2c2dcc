/**
 * Regression (review of hostile trial 55, F1's fix, Medium): the memory of cancellations
 * (src/routing/cancelled-requests.ts) parsed and hashed every `requestId` whole, however long:
 * a 4 MB `notifications/cancelled` with a 4M-character string id cost 59-180 ms of the event
 * loop (JSON.parse, then SHA-256 of its 8 MB of UTF-16), and a request with such an id cost the
 * hash again when its exchange ended. Such an id is remembered for nothing: a resume names its
 * request through a resume token, at most MAX_RESUME_TOKEN_LENGTH (4096) characters, which
 * carries the id, so no resume of it can ever come. Now an id no token could carry is not
 * remembered, decided from its length before anything is parsed or hashed.
 *
 * Input: a CancelledRequests memory (no timing: the memory's size says whether an id was
 * remembered); cancellations (`rememberWritten`) and cancelled requests at their end
 * (`rememberRequest`) with ids too long for any token: a 4M-character string, a string of
 * 3,100 characters, a 4,000-character number, a 4M-character number spelling of 1, and
 * requests with a 4M-character string id and a 4,000-digit number text. Controls: ids the
 * real codec (src/resume/token.ts) mints a token for (a 2,000-character string; 500 `\u0041`
 * escapes, 3,002 bytes written, 500 characters read; a number written `1.0`) are remembered
 * and found as before.
 * Expectation: the memory's size stays 0 for the long ids; the controls are remembered.
 * Before the fix 2 of 3 tests failed (the long ids remembered: size 1); the controls passed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcPeek } from '../../src/exchange.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';
import { CancelledRequests } from '../../src/routing/cancelled-requests.js';
import { createResumeCodec } from '../../src/resume/token.js';
import { withSeller } from '../helpers/resume-codec.js';

const SELLER = 'http://127.0.0.1:9/mcp';
const written = (text: string): WrittenRequestId => ({ bytes: Buffer.from(`{"requestId":${text}}`), range: [13, 13 + Buffer.byteLength(text)] });
const request = (id: string | number, idText?: string): Pick<RpcPeek, 'kind' | 'id' | 'idText'> => ({ kind: 'request', id, idText });
const codec = withSeller(createResumeCodec({ secret: 'cancel-huge-request-id-hashed-0123456789', ttlMs: 60_000, now: () => 1_000_000 }));
const mintFor = (rpcId: string | number, rpcIdText?: string): string =>
  codec.mint({ upstreamId: 'e', agent: 'a', rpcId, ...(rpcIdText !== undefined ? { rpcIdText } : {}), method: 'tools/call', toolName: 't', usedBytes: 0, limitBytes: 1, protocolVersion: '2025-06-18', streamStartedAt: 1_000_000 });

test('a cancellation whose requestId no resume token could carry is not remembered', () => {
  const c = new CancelledRequests(60_000);
  const huge = 'a'.repeat(4_000_000);
  c.rememberWritten(SELLER, 's', written(`"${huge}"`));
  assert.equal(c.size, 0, 'a 4M-character string id');
  assert.throws(() => mintFor('b'.repeat(3_100)), /over 4096/);
  c.rememberWritten(SELLER, 's', written(`"${'b'.repeat(3_100)}"`));
  assert.equal(c.size, 0, 'a 3,100-character string id');
  c.rememberWritten(SELLER, 's', written('7'.repeat(4_000)));
  assert.equal(c.size, 0, 'a 4,000-character number');
  c.rememberWritten(SELLER, 's', written(`1.${'0'.repeat(4_000_000)}`));
  assert.equal(c.size, 0, 'a 4M-character spelling of 1');
});

test('a cancelled request whose id no resume token could carry is not remembered at its end', () => {
  const c = new CancelledRequests(60_000);
  c.rememberRequest(SELLER, 's', request('a'.repeat(4_000_000)));
  c.rememberRequest(SELLER, 's', request(1.2345, `1.2345${'0'.repeat(4_000)}`));
  assert.equal(c.size, 0);
});

test('controls: ids a token carries are remembered and found', () => {
  const c = new CancelledRequests(60_000);
  const long = 'c'.repeat(2_000);
  assert.ok(mintFor(long).length <= 4096);
  c.rememberWritten(SELLER, 's', written(`"${long}"`));
  const escaped = '\\u0041'.repeat(500);
  assert.ok(mintFor('A'.repeat(500)).length <= 4096);
  c.rememberWritten(SELLER, 's', written(`"${escaped}"`));
  c.rememberWritten(SELLER, 's', written('1.0'));
  c.rememberRequest(SELLER, 's', request('d'.repeat(2_000)));
  assert.equal(c.size, 4);
  assert.deepEqual(
    [request(long), request('A'.repeat(500)), request(1), request('d'.repeat(2_000))].map((r) => c.has(SELLER, 's', r)),
    [true, true, true, true],
  );
});
