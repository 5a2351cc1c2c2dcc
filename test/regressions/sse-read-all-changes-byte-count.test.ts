/**
 * Reported failure (review of hostile trial 57 F3's fix, Medium): while a request of the
 * seller's was awaited in a session (routing/host-answer-waits.ts), the SSE chunk taker parsed
 * every block (`readAll`) but took a chunk of several complete blocks as one piece, so one
 * block's encoding slack paid for the next block's growth (sse-encoding-charge.ts): the stream's
 * count, the resume tokens it minted and where `max_response_bytes` ended it depended on
 * whether anything was awaited elsewhere in the session (`tok(7,28)` against `tok(7,29)`; at a
 * limit of 28 one passed, the other was answered `sse_cumulative`). Now such a chunk is taken
 * block by block, as a planned one is: the same bytes and count either way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from '../unit/sse-stage-kit.js';
import { HostAnswerWaits, sessionKeyOf } from '../../src/routing/host-answer-waits.js';

const CHUNKS = [': c\n\ndata:x\n\n', 'id: 7\ndata: y\n\n'];
const SELLER = 'http://127.0.0.1:9/mcp';
const SESSION = 'session-1';

/** A session where a request of the seller's (id 99, on another stream) is awaited: its streams are read block by block. */
function awaitingSession(): { waits: HostAnswerWaits; session: string } {
  const waits = new HostAnswerWaits();
  waits.openStream(SELLER, SESSION, undefined).awaitShared('n99');
  assert.equal(waits.anyAwaitedIn(sessionKeyOf(SELLER, SESSION)), true);
  return { waits, session: SESSION };
}

test('sse-read-all-changes-byte-count: the host gets the same bytes and tokens whether or not a seller request is awaited in the session', async () => {
  const plain = await runSseStage(CHUNKS);
  const readAll = await runSseStage(CHUNKS, { hostAnswers: awaitingSession() });
  assert.equal(plain.body, ': c\ndata: x\n\nid: tok(7,29)\ndata: y\n\n');
  assert.equal(readAll.body, plain.body);
});

test('sse-read-all-changes-byte-count: max_response_bytes ends the stream at the same byte either way', async () => {
  for (const limit of [27, 28, 29, 30]) {
    const agentYaml = [`max_response_bytes: ${limit}`];
    const plain = await runSseStage(CHUNKS, { agentYaml });
    const readAll = await runSseStage(CHUNKS, { agentYaml, hostAnswers: awaitingSession() });
    assert.equal(readAll.body, plain.body, `limit ${limit}`);
  }
});

/** A chunk holding a seller's cancellation (of a request nobody awaits): the one chunk read block by block while a request is awaited (sse-stage.ts `readAll`). */
const CANCEL_CHUNKS = [': c\n\ndata:x\n\n', 'data: {"method":"notifications/cancelled","params":{"requestId":98},"jsonrpc":"2.0"}\n\nid: 7\ndata: y\n\n'];

test('sse-read-all-changes-byte-count: a chunk holding a cancellation, read block by block, gives the same bytes, tokens and end', async () => {
  for (const limit of [undefined, 100, 110, 118, 119, 120, 130]) {
    const agentYaml = limit === undefined ? [] : [`max_response_bytes: ${limit}`];
    const plain = await runSseStage(CANCEL_CHUNKS, { agentYaml });
    const readAll = await runSseStage(CANCEL_CHUNKS, { agentYaml, hostAnswers: awaitingSession() });
    assert.equal(readAll.body, plain.body, `limit ${limit}`);
  }
});
