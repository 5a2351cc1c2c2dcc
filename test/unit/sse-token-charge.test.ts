/**
 * What resume tokens add to the host's stream counts toward a request's cumulative bound
 * (src/response/sse-event-ids.ts chargeToken; test/regressions/sse-resume-token-amplification.test.ts),
 * on the paths that count the seller's bytes without parsing them: a chunk whose seller bytes
 * fit may no longer fit once the tokens of its first blocks are counted, so the blocks after
 * them that would be forwarded raw, or held as bytes, are bounded like any range that crosses
 * the limit. And a response whose token takes the stream over is not delivered, nor recorded
 * as delivered. Kit tokens: `tok(<id>,<count>)` (test/unit/sse-stage-kit.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from './sse-stage-kit.js';

const PROGRESS = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}\n\n';
type Err = { details: Record<string, unknown> };
const errorOf = (body: string): Err => {
  const data = /event: message\ndata: (.*)\n\n$/.exec(body)![1]!;
  return (JSON.parse(data) as { result: { structuredContent: { adcp_error: Err } } }).result.structuredContent.adcp_error;
};

test('a block forwarded raw after a token in the same chunk: bounded with the token counted', async () => {
  // One chunk: an event with `id: a` (15 bytes; its token `tok(a,15)` adds 8) and a progress
  // event the stage forwards as the seller's bytes. The seller's bytes are within the limit,
  // with the token they are not: the progress event does not go out; sse_cumulative with the
  // count through it.
  const chunk = 'id: a\ndata: x\n\n' + PROGRESS;
  const limit = chunk.length + 7;
  const r = await runSseStage([chunk], { agentYaml: [`max_response_bytes: ${limit}`] });
  assert.equal(r.body.slice(0, r.body.indexOf('event: message')), 'id: tok(a,15)\ndata: x\n\n');
  assert.deepEqual(errorOf(r.body).details, { reason: 'sse_cumulative', limit_bytes: limit, observed_bytes: chunk.length + 8 });
  // Exactly at the limit with the token: the progress event goes out, raw.
  const at = await runSseStage([chunk], { agentYaml: [`max_response_bytes: ${chunk.length + 8}`] });
  assert.equal(at.body, 'id: tok(a,15)\ndata: x\n\n' + PROGRESS);
  assert.equal(at.exchange.outcome, 'resumable_end');
});

test('an event held as bytes after a token in the same chunk: bounded with the token counted', async () => {
  // One chunk: an event with `id: a` then the start of an event in the form held across
  // chunks (no LF after `data: `), whose bytes the stage counts without parsing
  // (sse-held-block.ts). Within the limit as the seller's bytes, past it with the token:
  // sse_cumulative there, with the count through the chunk, even when the stream ends with that
  // chunk (it was: no error, the stream ended as resumable, the count past the limit).
  const head = 'id: a\ndata: x\n\nevent: message\ndata: {"method":"x"';
  const limit = head.length + 7;
  for (const chunks of [[head], [head, '}\n\n']]) {
    const r = await runSseStage(chunks, { agentYaml: [`max_response_bytes: ${limit}`] });
    assert.equal(r.body.slice(0, r.body.indexOf('event: message')), 'id: tok(a,15)\ndata: x\n\n', JSON.stringify(chunks));
    assert.deepEqual(errorOf(r.body).details, { reason: 'sse_cumulative', limit_bytes: limit, observed_bytes: head.length + 8 });
  }
  // With room for the token: the event, held, then completed by the next chunk.
  const at = await runSseStage([head, '}\n\n'], { agentYaml: [`max_response_bytes: ${head.length + 8 + 3}`] });
  assert.equal(at.body, 'id: tok(a,15)\ndata: x\n\nevent: message\ndata: {"method":"x"}\n\n');
});

test('an id-only block before a block forwarded raw, or held as bytes: that event carries its id, its token counted', async () => {
  // `id: a` (7 bytes) dispatches nothing: the progress event after it, raw-forwarded otherwise,
  // is parsed and carries `a`, the token's count through it; bounded with what the token adds.
  const chunk = 'id: a\n\n' + PROGRESS;
  const token = `tok(a,${chunk.length})`;
  const at = await runSseStage([chunk], { agentYaml: [`max_response_bytes: ${chunk.length + token.length - 1}`] });
  assert.equal(at.body, `id: ${token}\n` + PROGRESS);
  assert.equal(at.exchange.outcome, 'resumable_end');
  const over = await runSseStage([chunk], { agentYaml: [`max_response_bytes: ${chunk.length + token.length - 2}`] });
  assert.deepEqual(errorOf(over.body).details, { reason: 'sse_cumulative', limit_bytes: chunk.length + token.length - 2, observed_bytes: chunk.length + token.length - 1 });
  assert.equal(over.body.includes('tok('), false);
  // Held across chunks: the event completed by the next chunk carries it.
  const head = 'id: a\n\nevent: message\ndata: {"method":"x"';
  const held = await runSseStage([head, '}\n\n']);
  assert.equal(held.body, `id: tok(a,${head.length + 3})\nevent: message\ndata: {"method":"x"}\n\n`);
});

test('a response whose token takes the stream over: not delivered, not observed, no rewrite recorded', async () => {
  // A result whose text duplicates its structuredContent (deduped when delivered), with `id: r`.
  // (Long enough that its summary is shorter than the copy: a shorter copy is kept as written.)
  const sc = { products: [{ id: 'p1', name: 'Premium sports CTV, prime time, national reach' }] };
  const result = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc } });
  const event = `id: r\nevent: message\ndata: ${result}\n\n`;
  const count = event.length;
  const added = `tok(r,${count})`.length - 'r'.length;
  const over = await runSseStage([event], { agentYaml: [`max_response_bytes: ${count + added - 1}`] });
  assert.equal(over.body.includes('tok('), false);
  assert.deepEqual(errorOf(over.body).details, { reason: 'sse_cumulative', limit_bytes: count + added - 1, observed_bytes: count + added });
  assert.deepEqual(over.observed, []);
  assert.deepEqual(over.exchange.actions, []);
  assert.equal(over.exchange.bytesSaved, 0);
  assert.equal(over.exchange.lastEventIdSent, undefined);
  // Exactly at the limit with its token: delivered, deduped.
  const at = await runSseStage([event], { agentYaml: [`max_response_bytes: ${count + added}`] });
  assert.match(at.body, new RegExp(`^id: tok\\(r,${count}\\)\\nevent: message\\ndata: `));
  assert.equal(at.observed.length, 1);
  assert.equal(at.exchange.outcome, 'rewritten');
  assert.equal(at.exchange.lastEventIdSent, `tok(r,${count})`);
});

test('the standalone GET stream: tokens are not counted (it has no cumulative bound)', async () => {
  const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined } as const;
  const blocks = Array.from({ length: 50 }, (_, n) => `id: ${n}\ndata: x\n\n`).join('');
  const r = await runSseStage([blocks], { rpc: GET_STREAM, agentYaml: ['max_response_bytes: 100'] });
  assert.equal(r.body, Array.from({ length: 50 }, (_, n) => `id: tok(${n},0)\ndata: x\n\n`).join(''));
});
