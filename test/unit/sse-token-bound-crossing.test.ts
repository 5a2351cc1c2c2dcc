/**
 * Resume tokens (src/response/sse-stage.ts, sse-id-only.ts): id-only blocks and events with ids around the cumulative bound (the crossing path),
 * resumed streams (usedBytes > 0), random chunkings, LF and CR LF endings. Expected: the tokens
 * of the blocks dispatched within the limit, each with its exact count (at most the limit), then
 * the sse_cumulative answer when the stream passes the limit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from './sse-stage-kit.js';
import { model, randomCuts } from '../helpers/sse-token-model.js';

const BLOCKS = ['id: a\n\n', 'data: x\n\n', 'id: b\ndata: y\n\n', ': k\nid: c\n\n', 'id: d\nretry: 7\n\n', 'event: e\nid: f\n\n', 'id: g\n\n'];

for (const eol of ['\n', '\r\n']) {
  test(`crossing the bound, ${JSON.stringify(eol)}`, async () => {
    const input = BLOCKS.join('').replaceAll('\n', eol);
    const bytes = Buffer.from(input);
    const failures: string[] = [];
    for (const base of [0, 5]) {
      const exp = model(bytes, base);
      for (let limit = base + 1; limit <= base + bytes.length + 1 && failures.length < 5; limit++) {
        // A block is delivered when the byte that dispatches it (its blank line's CR with CR LF) is within the limit.
        const want = exp.tokens.filter(([, end]) => end - (eol === '\r\n' ? 1 : 0) <= limit).map(([id, end]) => `${id},${Math.min(end, limit)}`);
        for (const chunks of [[bytes], ...randomCuts(bytes, 20, limit)]) {
          const r = await runSseStage(chunks, { usedBytes: base, agentYaml: [`max_response_bytes: ${limit}`] });
          const got = [...r.body.matchAll(/^id: tok\(([^,]*),(\d+)\)$/gm)].map((m) => `${m[1]},${m[2]}`);
          const over = base + bytes.length > limit;
          const errOk = over === /sse_cumulative/.test(r.body);
          if (JSON.stringify(got) !== JSON.stringify(want) || !errOk) {
            failures.push(`base ${base} limit ${limit} cuts ${JSON.stringify(chunks.map((c) => c.toString()))}\n  want ${JSON.stringify(want)} over=${over}\n  got  ${JSON.stringify(got)} body ${JSON.stringify(r.body.slice(0, 300))}`);
            break;
          }
        }
      }
    }
    assert.deepEqual(failures, []);
  });
}
