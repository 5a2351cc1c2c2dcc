/**
 * Review of 4741ba0 (Medium): sse-stage.ts `readAll` searches a chunk only for the plain
 * `"notifications/cancelled"`; a seller's cancellation whose method is escaped (PHP's
 * `"notifications\/cancelled"`, `"notifications/\u0063ancelled"`: hostile trial 59, I1) is read
 * because, on every stream where responses are judged (a request's, a batch's, the standalone
 * GET, a POSTed notification's: sse-chunk-taker.ts sets `answerable`, `responseKeys` and
 * `methodNamed` to `judged`), a block holding a backslash is never in a raw run, so it reaches
 * the parser and sellerCancelledIdOf. This guards that property in both planners (the reference
 * and the WebAssembly one the stage uses), for a stream cut at every byte; the end-to-end cases
 * are test/regressions/php-escaped-seller-cancel-keeps-stream-paused.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRawEvents, type RawEventLimits } from '../../src/response/sse-raw-events.js';
import { planRawEventsFast } from '../../src/response/sse-raw-plan.js';
import { MAX_ESCAPED_METHOD_BYTES, sellerCancelledIdOf } from '../../src/response/server-request-id.js';

const SCAN = { maxDepth: 64, maxNodes: 10_000 };
const judged = (j: boolean): RawEventLimits => ({ maxEventBytes: 65_536, maxDepth: 64, maxNodes: 65_536, answerable: j, responseKeys: j, methodNamed: j });
const progress = 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"message":"a\\nb"}}\n\n';
const SPELLINGS = [
  '{"jsonrpc":"2.0","method":"notifications\\/cancelled","params":{"requestId":"e\\/1"}}',
  '{"jsonrpc":"2.0","method":"notifications/\\u0063ancelled","params":{"requestId":7}}',
  '{"method":"notifications\\/cancelled","params":{"requestId":7},"jsonrpc":"2.0"}',
];

/** The blocks of `chunk` (from 0) that `plan` forwards raw, as text. */
function rawBlocks(chunk: Buffer, plan: { ends: number[]; raw: boolean[] }): string {
  let out = '';
  for (let k = 0, at = 0; k < plan.ends.length; at = plan.ends[k]!, k++) if (plan.raw[k]) out += chunk.toString('latin1', at, plan.ends[k]);
  return out;
}

test('on a judged stream no planner forwards an escaped cancellation raw, wherever the stream is cut', () => {
  let planned = 0;
  for (const data of SPELLINGS) {
    assert.notEqual(sellerCancelledIdOf(data, SCAN), undefined, data);
    const stream = progress + `data: ${data}\n\n` + progress;
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const piece of [stream.slice(0, cut), stream.slice(cut)]) {
        // Plan from the piece's first event start (the taker plans from a boundary).
        const from = piece.startsWith('data: ') ? 0 : piece.indexOf('\n\n') + 2;
        if (from < 2 && !piece.startsWith('data: ')) continue;
        const chunk = Buffer.from(piece, 'latin1');
        for (const plan of [planRawEvents, planRawEventsFast]) {
          planned++;
          assert.ok(!rawBlocks(chunk, plan(chunk, from, judged(true))).includes('cancelled'), `${plan.name} ${JSON.stringify(piece)}`);
        }
      }
    }
  }
  assert.ok(planned > 1000);
});

test('control: where responses are not judged (a batch stream resumed), the escaped cancellation beside progress goes out raw (documented: not read there)', () => {
  const chunk = Buffer.from(progress + `data: ${SPELLINGS[0]}\n\n` + progress, 'latin1');
  for (const plan of [planRawEvents, planRawEventsFast]) assert.equal(rawBlocks(chunk, plan(chunk, 0, judged(false))), chunk.toString('latin1'), plan.name);
});

test('a method value longer than any spelling of notifications/cancelled is not decoded, and the longest spelling is read', () => {
  const all = [...'notifications/cancelled'].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  assert.equal(all.length + 2, MAX_ESCAPED_METHOD_BYTES);
  const plain = sellerCancelledIdOf('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}', SCAN);
  assert.notEqual(plain, undefined);
  assert.equal(sellerCancelledIdOf(`{"jsonrpc":"2.0","method":"${all}","params":{"requestId":7}}`, SCAN), plain);
  assert.equal(sellerCancelledIdOf(`{"jsonrpc":"2.0","method":"${all} ","params":{"requestId":7}}`, SCAN), undefined);
  assert.equal(sellerCancelledIdOf(`{"jsonrpc":"2.0","method":"${'\\/'.repeat(100_000)}","params":{"requestId":7}}`, SCAN), undefined);
});
