/**
 * Regression (a review, Low): "the cancellation store sweeps expired entries only when a new one
 * is remembered". routing/cancelled-requests.ts dropped expired entries from the front in
 * `remember` only; after `resume.ttl_ms` with nothing else remembered, an expired entry stayed,
 * and with it its session's tally, so every new request in that session (`forget`, at each
 * POST's open) and every resume there (`has`) hashed a key (SHA-256, ~2.5 µs) for nothing,
 * until some other cancellation came.
 *
 * Now `has`, `forget` and `renewRequest` drop expired entries from the front too (only while
 * the front is expired: nothing read when it is not). Asserted with the store's injected clock:
 * its size and its sessions with something remembered (a session without a tally hashes nothing).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcPeek } from '../../src/exchange.js';
import { CancelledRequests, CANCELLED_REQUESTS_REMEMBERED } from '../../src/routing/cancelled-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';

const written = (text: string): WrittenRequestId => ({ bytes: Buffer.from(text), range: [0, text.length] });
const request = (id: number): Pick<RpcPeek, 'kind' | 'id' | 'idText'> => ({ kind: 'request', id, idText: undefined });
const SELLER = 'http://127.0.0.1:9/mcp';

for (const [label, ask] of [
  ['a new request in the session (forget)', (c: CancelledRequests) => c.forget(SELLER, 'a', request(2))],
  ['a resume in another session (has)', (c: CancelledRequests) => void c.has(SELLER, 'b', request(1))],
  ["a cancelled resume's end in the session (renewRequest)", (c: CancelledRequests) => c.renewRequest(SELLER, 'a', request(2))],
] as const) {
  test(`after resume.ttl_ms with nothing else remembered, ${label} drops the expired entries and their session's tally`, () => {
    let now = 1_000_000;
    const c = new CancelledRequests(1_000, CANCELLED_REQUESTS_REMEMBERED, () => now);
    c.rememberWritten(SELLER, 'a', written('1'));
    now += 500;
    c.rememberWritten(SELLER, 'a', written('3'));
    now += 600; // the first expired, the second not
    ask(c);
    assert.deepEqual([c.size, c.sessionCount], [1, 1], 'only the expired front goes');
    now += 500; // both expired
    ask(c);
    assert.deepEqual([c.size, c.sessionCount], [0, 0]);
  });
}
