/**
 * Resume tokens on the standalone GET stream: id-only blocks around an event dropped for
 * max_sse_event_bytes (the stage skips to the next block boundary, then resets its parser).
 * The last id-only block's id goes out with the next event, or alone at the end (sse-stage.ts
 * pendingId; a new user's trial 9, F3); an earlier one's (`p`) is superseded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from './sse-stage-kit.js';
const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined } as const;
const yaml = ['max_sse_event_bytes: 100'];
const X = 'x'.repeat(70_000);
test('GET stream: id-only blocks around an event skipped for the cap', async () => {
  const cases: Array<[string[], string]> = [];
  for (const eol of ['\n', '\r\n']) {
    const e = (s: string) => s.replaceAll('\n', eol);
    cases.push([[e(`id: q\ndata: ${X}\n\nid: a\n\n`), e('data: y\n\n')], 'id: tok(a,0)\ndata: y\n\n']);
    cases.push([[e(`id: q\ndata: ${X}`), e('x\n\nid: a\n\n'), e('data: y\n\n')], 'id: tok(a,0)\ndata: y\n\n']);
    cases.push([[e(`id: p\n\nid: q\ndata: ${X}`), e('x\n'), e('\nid: a\n'), e('\n')], 'id: tok(a,0)\n\n']);
    cases.push([[e(`data: ${X}\nid: q\n\nid: a\n\n`)], 'id: tok(a,0)\n\n']);
    cases.push([[e(`data: ${'x'.repeat(40000)}\ndata: ${'x'.repeat(40000)}\nid: q\n\nid: a\n\n`)], 'id: tok(a,0)\n\n']);
    cases.push([[e(`data: ${'x'.repeat(40000)}\n`), e(`data: ${'x'.repeat(40000)}\n`), e('id: q\n\nid: a\n\n')], 'id: tok(a,0)\n\n']);
  }
  const fails: string[] = [];
  for (const [chunks, want] of cases) {
    const r = await runSseStage(chunks, { rpc: GET_STREAM, agentYaml: yaml });
    if (r.body !== want) fails.push(`${JSON.stringify(chunks.map((c) => c.length > 60 ? c.slice(0, 20) + '…' + c.slice(-20) : c))}: want ${JSON.stringify(want)} got ${JSON.stringify(r.body)}`);
  }
  assert.deepEqual(fails, []);
});
