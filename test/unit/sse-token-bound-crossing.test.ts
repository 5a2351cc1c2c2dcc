/**
 * Resume tokens (src/response/sse-stage.ts, sse-id-only.ts): id-only blocks and events with ids around the cumulative bound (the crossing path),
 * resumed streams (usedBytes > 0), random chunkings, LF and CR LF endings. Expected: the tokens
 * of the blocks dispatched within the limit, each with its exact count (at most the limit), then
 * the sse_cumulative answer when the stream passes the limit. The count includes what the
 * earlier tokens added to the host's stream, and a block whose token would take it past the
 * limit is not delivered (the reference model's `limit`: test/helpers/sse-token-model.ts); the
 * limits run from one byte to one byte past the whole stream, its tokens included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from './sse-stage-kit.js';
import { kitTokenAdded, model, randomCuts } from '../helpers/sse-token-model.js';

const BLOCKS = ['id: a\n\n', 'data: x\n\n', 'id: b\ndata: y\n\n', ': k\nid: c\n\n', 'id: d\nretry: 7\n\n', 'event: e\nid: f\n\n', 'id: g\n\n'];

for (const eol of ['\n', '\r\n']) {
  test(`crossing the bound, ${JSON.stringify(eol)}`, async () => {
    const input = BLOCKS.join('').replaceAll('\n', eol);
    const bytes = Buffer.from(input);
    const failures: string[] = [];
    for (const base of [0, 5]) {
      // The whole stream's count, every token delivered: the last limit that passes (with what
      // the blocks' encoding added: `id: d\nretry: 7\n\n` goes out 3 bytes longer with LF, its
      // `retry:` on a block of its own and clamped to 500: sse-encode.ts clampSseRetryMs).
      const all = model(bytes, base);
      assert.equal(all.grown, eol === '\n' ? 3 : 0);
      const whole = base + bytes.length + all.grown + all.tokens.reduce((sum, [id, count]) => sum + kitTokenAdded(id, count), 0);
      let passed = 0;
      let cut = 0;
      for (let limit = base + 1; limit <= whole + 1 && failures.length < 5; limit++) {
        // A block is delivered when the byte that dispatches it (its blank line's CR with CR LF)
        // is within the limit and so is its token's added length (the model with the limit).
        const exp = model(bytes, base, limit);
        const want = exp.tokens.map(([id, count]) => `${id},${count}`);
        const over = exp.over;
        if (over) cut++;
        else passed++;
        for (const chunks of [[bytes], ...randomCuts(bytes, 20, limit)]) {
          const r = await runSseStage(chunks, { usedBytes: base, agentYaml: [`max_response_bytes: ${limit}`] });
          const got = [...r.body.matchAll(/^id: tok\(([^,]*),(\d+)\)$/gm)].map((m) => `${m[1]},${m[2]}`);
          const errOk = over === /sse_cumulative/.test(r.body);
          if (JSON.stringify(got) !== JSON.stringify(want) || !errOk) {
            failures.push(`base ${base} limit ${limit} cuts ${JSON.stringify(chunks.map((c) => c.toString()))}\n  want ${JSON.stringify(want)} over=${over}\n  got  ${JSON.stringify(got)} body ${JSON.stringify(r.body.slice(0, 300))}`);
            break;
          }
        }
      }
      // Exactly the whole count passes; one byte less is cut.
      assert.equal(model(bytes, base, whole).over, false);
      assert.equal(model(bytes, base, whole - 1).over, true);
      assert.equal(passed, 2, `base ${base}: only the limits equal to the whole count and one past it pass`);
      assert.ok(cut > bytes.length, `base ${base}: ${cut} limits cut the stream`);
    }
    assert.deepEqual(failures, []);
  });
}
