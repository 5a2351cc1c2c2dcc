import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayHoldSellerCancel, sellerCancelledIdOf } from '../../src/response/server-request-id.js';

const LIMITS = { maxDepth: 64, maxNodes: 10_000 };
const progress = 'data: {"jsonrpc":"2.0","method":"notifications\\/progress","params":{"progressToken":1,"progress":2,"message":"a\\nb"}}\n\n';

/** Each complete `data:` block of `piece` (after a blank line, or from its start when `atStart`): its data. */
function completeBlocks(piece: string, atStart: boolean): string[] {
  const starts = atStart ? [0] : [];
  for (let i = piece.indexOf('\n\n'); i !== -1; i = piece.indexOf('\n\n', i + 2)) starts.push(i + 2);
  const out: string[] = [];
  for (let s = 0; s + 1 < starts.length; s++) {
    const block = piece.slice(starts[s], starts[s + 1]);
    if (block.startsWith('data: ')) out.push(block.slice(0, -2).split('\n').map((l) => l.slice('data: '.length)).join('\n'));
  }
  return out;
}

/**
 * Hostile trial 59, I1 (test/regressions/php-escaped-seller-cancel-keeps-stream-paused.test.ts):
 * the per-chunk search that decides whether a chunk is parsed event by event (sse-stage.ts
 * `readAll`) must catch every spelling of the method the reader reads. A block cut by a chunk
 * boundary is parsed line by line whatever the search says (sse-chunk-taker.ts), so each piece
 * of a stream cut at every offset must be searched true when it holds a complete block that
 * is a cancellation.
 */
test('every complete cancellation in a chunk, however its method is escaped and wherever the stream is cut, makes the chunk searched', () => {
  const spellings = [
    '{"jsonrpc":"2.0","method":"notifications\\/cancelled","params":{"requestId":"e\\/1"}}',
    '{"jsonrpc":"2.0","method":"notifications/\\u0063ancelled","params":{"requestId":7}}',
    '{"jsonrpc":"2.0","method"\n : "\\u006Eotifications\\u002fcancelle\\u0064","params":{"requestId":7}}',
    '{"params":{"requestId":7},"method":"notifications/cancelled","jsonrpc":"2.0"}',
  ];
  let checked = 0;
  for (const data of spellings) {
    assert.notEqual(sellerCancelledIdOf(data, LIMITS), undefined, data);
    const event = data.split('\n').map((l) => `data: ${l}`).join('\n') + '\n\n';
    const stream = progress + event + progress;
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const [piece, atStart] of [[stream.slice(0, cut), true], [stream.slice(cut), stream.slice(0, cut).endsWith('\n\n') || cut === 0]] as const) {
        const read = completeBlocks(piece, atStart).some((d) => sellerCancelledIdOf(d, LIMITS) !== undefined);
        if (read) {
          checked++;
          assert.equal(mayHoldSellerCancel(Buffer.from(piece)), true, JSON.stringify(piece));
        }
      }
    }
  }
  assert.ok(checked > 0);
});

test('a chunk of plain progress notifications with escapes in their texts is not searched true', () => {
  const plain = progress.replace('notifications\\/progress', 'notifications/progress');
  assert.equal(mayHoldSellerCancel(Buffer.from(plain.repeat(8))), false);
  assert.equal(mayHoldSellerCancel(Buffer.from('data: {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}\n\n')), true);
});
