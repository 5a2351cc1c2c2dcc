/**
 * Regression (a re-read of hostile trial 52's fix, A: a seller's long event ids): a stream's
 * pending id (an id-only block's, src/response/sse-event-ids.ts pendingId) is kept across
 * events, until the next event without an id of its own or the stream's end, and was kept as
 * the seller's text whatever its length, up to the line cap (max_sse_event_bytes + 65,536, ~4
 * MiB by default) per stream, counted nowhere: the open event's count (sse-open-event.ts)
 * ends at the block's blank line. Yet no resume token can carry an id longer than a token
 * (4,096 characters, resume/token.ts MAX_RESUME_TOKEN_LENGTH): such an id always went out as
 * none, with a warning. Now such an id is kept as a one-character stand-in no token carries
 * (sse-event-ids.ts pendingIdFor): it still supersedes an earlier pending id and goes out as
 * none, with the same warning; its text is not kept.
 *
 * Input: the SSE stage fed in memory (test/unit/sse-stage-kit.ts), the standalone GET stream,
 * a mint that refuses what the gateway's refuses (an id over 4,096 characters, or one holding
 * NUL: routing/handler.ts, request/headers.ts isResumableEventId) and records the id it was asked for.
 * Expected: an id-only block of a 5,000-character id, then a notification without an id: the
 * notification goes out without an id (as before), one id not tokenized, and the id the
 * stream kept and asked a token for is not the 5,000 characters (before: it was).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSseStage } from '../unit/sse-stage-kit.js';
import type { RpcPeek } from '../../src/exchange.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const NOTE = 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}\n\n';

async function run(id: string): Promise<{ body: string; asked: number[] }> {
  const asked: number[] = [];
  const mint = (upstreamId: string, used: number): string | undefined => {
    asked.push(upstreamId.length);
    return upstreamId.length > 4096 || upstreamId.includes('\0') ? undefined : `tok(${upstreamId},${used})`;
  };
  const { body } = await runSseStage([`id: ${id}\n\n`, NOTE], { rpc: GET_STREAM, mint });
  return { body, asked };
}

test('an id-only block of a 5,000-character id: the notification after it goes out without an id, and the stream kept no 5,000-character id', async () => {
  const { body, asked } = await run('a'.repeat(5_000));
  assert.equal(body, NOTE);
  assert.equal(asked.length, 1);
  assert.ok(asked[0]! <= 4096, `the pending id kept was ${asked[0]} characters`);
});

test('an id-only block of a 4,096-character id or shorter is kept as it is (a token may carry it)', async () => {
  const { body, asked } = await run('7');
  assert.deepEqual(asked, [1]);
  assert.equal(body, `id: tok(7,0)\n${NOTE}`);
  assert.deepEqual((await run('b'.repeat(4096))).asked, [4096]);
});
