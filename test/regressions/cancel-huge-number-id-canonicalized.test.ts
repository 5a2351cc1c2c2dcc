/**
 * A follow-up of hostile trial 56 (F1's leftover): a host's 4 MB `notifications/cancelled`
 * `{"requestId":1e<4,000,000 nines>}` with 4 requests in flight in its session held the event
 * loop ~1.1 s, against ~0.24 s for a plain 4 MB number (and another agent's worst latency
 * 609 vs 180 ms). Profiled (the gateway as the tests start it, 4 requests in flight, 4 MB
 * cancellations): to compare the id with requests' ids like `1`, the matching
 * (routing/in-flight-requests.ts, response/json-value-at.ts requestIdMatcher) copied it out of
 * the body (`latin1`, 4 MB) and canonicalized it (json-numbers.ts exactDecimal: regular
 * expressions over it, and for an exponent another 4 MB string made and flattened when the
 * shift was added): 40-113 ms per cancellation with `1e<nines>`, 30-40 ms with plain nines.
 * Nothing else on the path differs between the two bodies (the peek's scan, cancelled-id.ts's
 * two member scans and the forwarding to the seller cost the same).
 *
 * Now the matcher reads the lengths the id's canonical text can have from its bytes
 * (json-numbers.ts exactDecimalLengthRange: one pass, nothing copied), and canonicalizes it
 * only for a request whose own canonical text has such a length: a long id against short ones
 * is decided by the lengths. Matches are unchanged (test/unit/json-numbers-differential.test.ts:
 * requestIdMatcher against isRequestId).
 *
 * Asserted without timing (test/helpers/long-number-work.ts): no copy of a number text over
 * 64 characters out of a Buffer while such cancellations are matched, in the registry and
 * through the gateway; a long cancellation that may match a long request id is still
 * canonicalized and compared exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InFlightRequests } from '../../src/routing/in-flight-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';
import type { RawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { sessionHost, startCutAndResumeSeller, type OpenCall } from '../helpers/cut-and-resume.js';
import { acceptedCancel, exchangeOf, SELLER, slotOf } from '../helpers/in-flight-exchanges.js';
import { countLongNumberWork } from '../helpers/long-number-work.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { hostRpc } from '../helpers/written-request-ids.js';

const N = 100_000;
const NINES = '9'.repeat(N);
const ZEROS = '0'.repeat(N);
const written = (text: string): WrittenRequestId => ({ bytes: Buffer.from(`{"requestId":${text}}`), range: [13, 13 + text.length] });

/** Cancellation ids of ~100,000 characters: none names a request `1`-`4` (nor any double). */
const LONG_IDS = [`1e${NINES}`, NINES, `1.${ZEROS}1`, `1e-${NINES}`, `-0.${ZEROS}1e${NINES}`, `1${ZEROS}`];

test('4 requests in flight (ids 1-4), 6 cancellations with 100,000-character ids: none marked, no copy of the id', async () => {
  const r = new InFlightRequests();
  for (const id of ['1', '2', '3', '4']) slotOf(r.open(exchangeOf('s', hostRpc(id, 'tools/call'), 'a')));
  const work = await countLongNumberWork(() => LONG_IDS.map((id) => acceptedCancel(r, SELLER, 'a', written(id))));
  assert.deepEqual(work.result, [0, 0, 0, 0, 0, 0]);
  assert.deepEqual({ reads: work.reads, copies: work.copies }, { reads: 0, copies: 0 });
});

test('a long cancellation that may name a long request id is still compared exactly: 1e-7 written two ways matches, 1e-8 does not', async () => {
  const r = new InFlightRequests();
  const x = exchangeOf('s', hostRpc(`1e-${ZEROS}7`, 'tools/call'), 'a');
  slotOf(r.open(x));
  slotOf(r.open(exchangeOf('s', hostRpc('2.5', 'tools/call'), 'a')));
  const work = await countLongNumberWork(() => [acceptedCancel(r, SELLER, 'a', written(`1e-${ZEROS}8`)), acceptedCancel(r, SELLER, 'a', written(`10e-0${ZEROS}8`))]);
  assert.deepEqual(work.result, [0, 1]);
  assert.equal(x.cancelled, true);
  // `1e-8` and `1e-7` have canonical texts of one length: each id is copied once and compared.
  assert.equal(work.copies, 2);
});

const SESSION = 'session-huge-cancel';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };
const stack = useSellerAndGateway<RawSeller, RunningGateway>(
  () => startCutAndResumeSeller(() => 'until-cancelled', (_req, res) => res.writeHead(405).end()),
  (seller) => startGateway(agentsYaml({ c: seller.url }, ['log_level: silent'])),
);
const host = sessionHost((agent) => stack.gateway.agentUrl(agent), HEADERS);

test('through the gateway: 4 calls held, a cancellation {"requestId":1e<100,000 nines>} cancels none and copies nothing; the calls are cancelled after as usual', { timeout: TEST_TIMEOUT_MS }, async () => {
  const calls: OpenCall[] = [];
  for (let id = 1; id <= 4; id++) calls.push(await withTimeout(host.openCall('c', id), undefined, `call ${id}`));
  const body = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e${NINES},"reason":"user"}}`;
  const work = await countLongNumberWork(() => withTimeout(rawPost(stack.gateway.agentUrl('c'), body, HEADERS), undefined, 'the long cancellation'));
  assert.equal(work.result.status, 202);
  assert.deepEqual({ reads: work.reads, copies: work.copies }, { reads: 0, copies: 0 });
  // None was marked: each call still ends only at its own cancellation, with no answer.
  for (let id = 1; id <= 4; id++) {
    assert.equal(await withTimeout(host.cancel('c', id), undefined, `cancel ${id}`), 202);
    assert.equal(await withTimeout(calls[id - 1]!.rest, undefined, `call ${id}'s end`), '');
  }
  const seen = stack.seller.requests.filter((q) => q.method === 'POST').map((q) => (JSON.parse(q.body.toString('utf8')) as { method: string }).method);
  assert.deepEqual(seen.filter((m) => m === 'notifications/cancelled').length, 5, 'the long cancellation is forwarded too');
});
