/**
 * The SSE stage fed chunks, no sockets (test/unit/sse-stage-kit.ts): what one input chunk
 * produces goes to the host in one write, intact and in order, before the next chunk is
 * read; ids get the exact count through their event wherever chunks are cut; only a
 * possible response is parsed; an endless line costs at most its bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { runSseStage, TOOL_CALL } from './sse-stage-kit.js';
import { kitTokenAdded } from '../helpers/sse-token-model.js';

const progress = (n: number): string =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n},"total":100}}\n\n`;
const result = (id: number | string, text = 'done'): string =>
  `event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"${text}"}]}}\n\n`;
const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined } as const;

test('the events of one chunk go out in one write, byte for byte, in order', async () => {
  const chunk1 = progress(1) + progress(2) + progress(3);
  const chunk2 = progress(4) + ': keepalive\n\n' + result(1);
  const r = await runSseStage([chunk1, chunk2]);
  assert.deepEqual(r.writes, [chunk1, progress(4) + ': keepalive\n' + result(1)]);
  assert.equal(r.ended, true);
  assert.equal(r.exchange.outcome, 'ok');
  assert.equal(r.exchange.bytesToHost, Buffer.byteLength(r.body));
});

test('events cut anywhere across chunks arrive intact; one write per chunk that completes any', async () => {
  const stream = progress(1) + progress(2) + 'data: é\n\n' + progress(3) + result(1);
  const bytes = Buffer.from(stream);
  for (const size of [1, 7, 50, 150, 400]) {
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
    const r = await runSseStage(chunks);
    assert.equal(r.body, stream, `chunks of ${size}`);
    assert.ok(r.writes.length <= chunks.length, `chunks of ${size}: ${r.writes.length} writes`);
    for (const w of r.writes) assert.ok(w.endsWith('\n'), 'a write ends at a line end');
  }
});

test('a chunk is written before the next one is read (no waiting to batch)', async () => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let writesWhenGated = -1;
  async function* body(): AsyncGenerator<Buffer> {
    yield Buffer.from(progress(1) + progress(2));
    await gate;
    yield Buffer.from(result(1));
  }
  const r = await runSseStage(body(), {
    onWrite: (writes) => {
      if (writes.length === 1) {
        writesWhenGated = writes.length;
        open();
      }
    },
  });
  assert.equal(writesWhenGated, 1);
  assert.deepEqual(r.writes, [progress(1) + progress(2), result(1)]);
});

test('resume tokens carry the exact count through their event, however the chunks are cut', async () => {
  const events = [`id: a\n${progress(1)}`, progress(2), `id: b\n${progress(3)}`, `: c\n\nid: c\r\n${progress(4)}`, `id: d\n${result(1)}`];
  const stream = events.join('');
  const expectedCounts = new Map<string, number>();
  let at = 0;
  // A token's count: the bytes through its event and what the earlier tokens added to the host's stream (sse-event-ids.ts chargeToken).
  let added = 0;
  for (const e of events) {
    at += Buffer.byteLength(e);
    const id = /id: (\w)/.exec(e)?.[1];
    if (id === undefined) continue;
    expectedCounts.set(id, at + added);
    added += kitTokenAdded(id, at + added);
  }
  const bytes = Buffer.from(stream);
  for (const size of [1, 2, 3, 5, 64, 1000]) {
    const chunks: Buffer[] = [];
    for (let p = 0; p < bytes.length; p += size) chunks.push(bytes.subarray(p, p + size));
    const r = await runSseStage(chunks);
    const tokens = [...r.body.matchAll(/^id: tok\((\w),(\d+)\)$/gm)].map((m) => [m[1], Number(m[2])]);
    assert.deepEqual(tokens, [...expectedCounts], `chunks of ${size}`);
  }
});

test('an empty id passes unchanged; a resumed stream counts from its token', async () => {
  const r = await runSseStage([`id\n${progress(1)}id: x\n${result(1)}`], { usedBytes: 1000 });
  const first = Buffer.byteLength(`id\n${progress(1)}`);
  assert.equal(r.body, `id\n${progress(1)}id: tok(x,${1000 + first + Buffer.byteLength(`id: x\n${result(1)}`)})\n${result(1)}`);
});

test('a response whose key is written with escapes is still the response: the stream ends there', async () => {
  const escaped = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"res\\u0075lt":{"content":[{"type":"text","text":"x"}]}}\n\n';
  const r = await runSseStage([progress(1) + escaped + progress(2)]);
  assert.equal(r.body, progress(1) + escaped);
  assert.equal(r.ended, true);
  assert.equal(r.observed.length, 1);
});

test('a progress notification is not parsed, but still bounded in depth', async () => {
  const deep = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"x":${'['.repeat(10)}${']'.repeat(10)}}}\n\n`;
  const r = await runSseStage([progress(1) + deep], { agentYaml: ['max_json_depth: 8'] });
  const last = JSON.parse(/data: (.*)\n\n$/.exec(r.body)![1]!) as { id: number; result: { structuredContent: { adcp_error: { details: Record<string, unknown> } } } };
  assert.equal(r.body.startsWith(progress(1)), true);
  assert.equal(last.id, 1);
  assert.equal(last.result.structuredContent.adcp_error.details.reason, 'json_depth');
});

/** An endless `data:` line: yields 64 KiB chunks of `A` after the line's start, counting them. */
function endless(head: string): { body: AsyncGenerator<Buffer>; pulled: () => number } {
  let pulled = 0;
  const fill = Buffer.alloc(64 * 1024, 0x41);
  async function* body(): AsyncGenerator<Buffer> {
    yield Buffer.from(head);
    for (let i = 0; i < 1600; i++) {
      pulled++;
      yield fill; // 100 MiB in all, never a line end
    }
  }
  return { body: body(), pulled: () => pulled };
}

test('a never-ending event fails at the per-event bound, having read only about that much', async () => {
  const eventLimit = 256 * 1024;
  const lineHead = 'data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"';
  const { body, pulled } = endless(progress(1) + 'event: message\n' + lineHead);
  const r = await runSseStage(body, { agentYaml: ['max_response_bytes: 4194304', `max_sse_event_bytes: ${eventLimit}`] });
  const cap = eventLimit + SSE_PENDING_SLACK_BYTES;
  // observed_bytes: the line's bytes read through the 64 KiB chunk that took it over the cap
  // (test/regressions/sse-event-cap-observed-bytes.test.ts; it was the cap + 1).
  const read = lineHead.length + Math.ceil((cap + 1 - lineHead.length) / (64 * 1024)) * 64 * 1024;
  assert.equal(r.writes[0], progress(1));
  const last = JSON.parse(/data: (.*)\n\n$/.exec(r.body)![1]!) as { id: number; result: { structuredContent: { adcp_error: { code: string; details: Record<string, unknown> } } } };
  assert.equal(last.id, 1);
  assert.equal(last.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
  assert.deepEqual(last.result.structuredContent.adcp_error.details, { reason: 'sse_event', limit_bytes: eventLimit, observed_bytes: read });
  // The line is held until it passes the cap: 320 KiB of 64 KiB chunks, then the one over.
  assert.ok(pulled() <= Math.ceil(cap / (64 * 1024)) + 1, `read ${pulled()} chunks`);
  assert.equal(r.exchange.reason, 'sse_event');
});

test('a never-ending event with the default limits: sse_cumulative at the response limit', async () => {
  const { body, pulled } = endless('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"');
  const r = await runSseStage(body);
  const last = JSON.parse(/data: (.*)\n\n$/.exec(r.body)![1]!) as { result: { structuredContent: { adcp_error: { details: Record<string, unknown> } } } };
  assert.equal(last.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
  assert.equal(last.result.structuredContent.adcp_error.details.limit_bytes, 4 * 1024 * 1024);
  assert.ok(pulled() <= 4 * 16 + 1, `read ${pulled()} chunks`);
  assert.equal(r.writes.length, 1, 'only the error frame');
});

test('standalone GET stream: an event over the parser cap is dropped and the events after it, in the same chunk, still flow', async () => {
  // 40000 chars of complete data lines, then a held line of 30000 bytes: the parser's buffer
  // (data so far + the line) passes 2048 + 65536 when the line is handed over.
  const lines = Array.from({ length: 40 }, () => `data: ${'d'.repeat(994)}\n`).join('');
  // No ids: chunks are taken in one piece (ids would make the stage take them block by block).
  const note = (n: number): string => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"g${n}"}}\n\n`;
  const chunks = [note(1) + 'event: message\n' + lines + 'data: ' + 'x'.repeat(30000), 'xx\n\n' + note(2) + note(3)];
  const r = await runSseStage(chunks, { rpc: GET_STREAM, agentYaml: ['max_response_bytes: 1048576', 'max_sse_event_bytes: 2048'] });
  assert.deepEqual(r.writes, [note(1), note(2) + note(3)]);
  assert.equal(r.exchange.reason, 'sse_event');
  assert.deepEqual(
    r.warnings.map((w) => (w as { observed_bytes: number }).observed_bytes),
    [2048 + SSE_PENDING_SLACK_BYTES + 1],
  );
});

test('a rewritten response (deduped text) and the bytes it saved', async () => {
  // Long enough that its summary is shorter than the copy (a shorter copy is kept as written).
  const sc = { products: [{ id: 'p1', name: 'Premium sports CTV, prime time, national reach' }] };
  const data = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { structuredContent: sc, content: [{ type: 'text', text: JSON.stringify(sc) }] } });
  const r = await runSseStage([progress(1), `event: message\ndata: ${data}\n\n`], { rpc: TOOL_CALL });
  assert.equal(r.writes[0], progress(1));
  assert.equal(r.exchange.outcome, 'rewritten');
  assert.deepEqual(r.exchange.actions, ['deduped']);
  const out = r.writes[1]!;
  assert.equal(r.exchange.bytesSaved, Buffer.byteLength(data) - Buffer.byteLength(/data: (.*)\n\n$/.exec(out)![1]!));
  assert.ok(r.exchange.bytesSaved > 0);
});

test('standalone GET stream: after a dropped event the parser is reset, and a next line starting with "ï»¿" is not taken for a BOM', async () => {
  // eventsource-parser drops "\u00ef\u00bb\u00bf" from the first text it gets after a reset;
  // decoded UTF-8, those are the seller's characters: "\u00ef\u00bb\u00bfdata" is an unknown field.
  const lines = Array.from({ length: 40 }, () => `data: ${'d'.repeat(994)}\n`).join('');
  const note = (n: number): string => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"g${n}"}}\n\n`;
  const chunks = [note(1) + 'event: message\n' + lines + 'data: ' + 'x'.repeat(30000), 'xx\n\n\u00ef\u00bb\u00bfdata: {"x":1}\n\n' + note(2)];
  const r = await runSseStage(chunks, { rpc: GET_STREAM, agentYaml: ['max_response_bytes: 1048576', 'max_sse_event_bytes: 2048'] });
  assert.equal(r.body, note(1) + note(2));
  assert.equal(r.exchange.reason, 'sse_event');
});
