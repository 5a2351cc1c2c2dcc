/**
 * Resume tokens against the reference model (test/helpers/sse-token-model.ts): random blocks (events with and without ids, id-only blocks, comments, retry,
 * event-only, NUL ids, bare `id`) with random line endings (LF, CR LF, CR, mixed), random
 * chunkings. The host body must equal the model's up to token counts; no count may be under
 * the model's exact count; with LF or CR LF endings only, counts must be exact.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from './sse-stage-kit.js';
import { model, randomCuts } from '../helpers/sse-token-model.js';

const PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}';
const LINES: string[][] = [
  ['event: message', `data: ${PROGRESS}`],
  [`data: ${PROGRESS}`],
  ['id: A'],
  ['id: B', 'data: b'],
  ['data: c', 'id: C'],
  [': k', 'id: D'],
  ['id: E', 'retry: 9'],
  ['event: foo', 'id: F'],
  ['id'],
  ['id: a\0b'],
  ['id: G', 'id: H'],
  ['event: only'],
  ['id:'],
  [': keepalive'],
  ['id:I'],
  ['id: J', 'data:'],
];

function gen(seed: number, mode: 'lf' | 'crlf' | 'cr' | 'mixed'): string {
  let s = seed >>> 0;
  const rnd = (): number => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const eol = (): string => (mode === 'lf' ? '\n' : mode === 'crlf' ? '\r\n' : mode === 'cr' ? '\r' : ['\n', '\r\n', '\r'][Math.floor(rnd() * 3)]!);
  let out = '';
  const nBlocks = 2 + Math.floor(rnd() * 5);
  for (let b = 0; b < nBlocks; b++) {
    const lines = LINES[Math.floor(rnd() * LINES.length)]!;
    for (const l of lines) out += l + eol();
    out += eol();
  }
  return out;
}

const counts = (body: string): Array<[string, number]> => [...body.matchAll(/^id: tok\(([^,]*),(\d+)\)$/gm)].map((m) => [m[1]!, Number(m[2])]);
const strip = (body: string): string => body.replace(/event: message\ndata: [^\n]*upstream_reset[^\n]*\n\n$/, '').replace(/tok\(([^,]*),\d+\)/g, 'tok($1)');

/**
 * Random chunkings per input. It was 25 (15,000 stage runs in all); 150 inputs of 10 chunkings
 * each still catch what this fuzz found: with the fix of ed57ec3 undone (sse-encoding-charge.ts
 * `endedBlockLf` never set) mixed seeds 88 and 91 fail at their 1st chunking and 128 at its 2nd,
 * and no other seed at any of its 25; a room one byte too large per range over 7 bytes fails 57 lf
 * seeds, 47 of them within 10 chunkings (cr and mixed seeds too). (Fewer inputs would lose the rare one.)
 */
const CHUNKINGS = 10;

for (const mode of ['lf', 'crlf', 'cr', 'mixed'] as const) {
  test(`fuzz ${mode}`, async () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= 150 && failures.length < 6; seed++) {
      const input = gen(seed * 7919, mode);
      const bytes = Buffer.from(input, 'latin1');
      const exp = model(bytes);
      for (const chunks of randomCuts(bytes, CHUNKINGS, seed)) {
        const r = await runSseStage(chunks);
        const label = JSON.stringify(chunks.map((c) => c.toString('latin1')));
        if (strip(r.body) !== strip(exp.body)) {
          failures.push(`body ${label}\n  exp ${JSON.stringify(exp.body)}\n  got ${JSON.stringify(r.body)}`);
          break;
        }
        const got = counts(r.body);
        const bad = got.findIndex(([, c], k) => (mode === 'lf' || mode === 'crlf' ? c !== exp.tokens[k]![1] : c < exp.tokens[k]![1]));
        if (bad !== -1) {
          failures.push(`count ${label}\n  exp ${JSON.stringify(exp.tokens)}\n  got ${JSON.stringify(got)}`);
          break;
        }
      }
    }
    assert.deepEqual(failures, []);
  });
}
