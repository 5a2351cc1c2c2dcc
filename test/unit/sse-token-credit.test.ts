/**
 * The token budget of every SSE stream (src/response/sse-token-credit.ts, used by
 * src/response/sse-stage.ts): tokens add at most twice the seller's bytes, plus the start; an
 * event that finds the budget spent goes out without an id, its id pending for the next event
 * without one, or the stream's end; the event carrying the response gets its token whatever
 * the budget. Reported failures: events `id:N`, `data` made the host receive 14.3x the seller's
 * bytes on the standalone GET stream (a new user's trial 9, F3:
 * test/regressions/get-stream-id-only-token-amplification.test.ts), and ~18x on a request's
 * stream, up to its cumulative bound (hostile trials:
 * test/regressions/request-stream-short-id-token-amplification.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOKEN_CREDIT_MAX_BYTES, TOKEN_CREDIT_START_BYTES, TokenCredit } from '../../src/response/sse-token-credit.js';
import { runSseStage } from './sse-stage-kit.js';
import { randomCuts } from '../helpers/sse-token-model.js';

const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined } as const;
/** A token 600 characters longer than the seller id (the kit's `mint`). */
const long = (id: string): string => 'T'.repeat(600) + id;

test('TokenCredit: starts with 1024 bytes, earns 2 per seller byte up to 64 KiB, spends a token\'s addition', () => {
  const c = new TokenCredit();
  c.spend(TOKEN_CREDIT_START_BYTES - 1);
  assert.equal(c.available, true);
  c.spend(1);
  assert.equal(c.available, false);
  c.spend(0);
  c.spend(-5);
  c.earn(1);
  assert.equal(c.available, true);
  c.spend(3);
  assert.equal(c.available, false);
  // Capped: a long run without tokens keeps at most TOKEN_CREDIT_MAX_BYTES.
  c.earn(10 * TOKEN_CREDIT_MAX_BYTES);
  c.spend(TOKEN_CREDIT_MAX_BYTES);
  assert.equal(c.available, false);
});

test('the standalone GET stream: an event over the budget goes out without its id; the next event without one carries it, or the end', async () => {
  // a: 1024 + 30 -> token (-600) 454; b: 484 -> token -116; c: -86, refused (pending);
  // `data: y` (9 bytes): -68, still refused; the end writes c alone.
  const events = 'id: a\ndata: x\n\nid: b\ndata: x\n\nid: c\ndata: x\n\ndata: y\n\n';
  const spent = await runSseStage([events], { rpc: GET_STREAM, mint: long });
  assert.equal(spent.body, `id: ${long('a')}\ndata: x\n\nid: ${long('b')}\ndata: x\n\ndata: x\n\ndata: y\n\nid: ${long('c')}\n\n`);
  // A 104-byte comment block earns 208: the event after it carries c.
  const comment = `: ${'k'.repeat(100)}\n\n`;
  const earned = await runSseStage([events + comment + 'data: z\n\n'], { rpc: GET_STREAM, mint: long });
  assert.equal(earned.body, `id: ${long('a')}\ndata: x\n\nid: ${long('b')}\ndata: x\n\ndata: x\n\ndata: y\n\n: ${'k'.repeat(100)}\nid: ${long('c')}\ndata: z\n\n`);
  // An event with an id of its own supersedes the pending one.
  const own = await runSseStage([events + comment + 'id: d\ndata: z\n\n'], { rpc: GET_STREAM, mint: long });
  assert.equal(own.body, `id: ${long('a')}\ndata: x\n\nid: ${long('b')}\ndata: x\n\ndata: x\n\ndata: y\n\n: ${'k'.repeat(100)}\nid: ${long('d')}\ndata: z\n\n`);
});

test('a request\'s stream has the budget too: an event over it goes out without its id, the end writes it', async () => {
  // As on the GET stream above: c refused, pending; the seller's end writes it alone.
  const events = 'id: a\ndata: x\n\nid: b\ndata: x\n\nid: c\ndata: x\n\n';
  const r = await runSseStage([events], { mint: long });
  assert.equal(r.body, `id: ${long('a')}\ndata: x\n\nid: ${long('b')}\ndata: x\n\ndata: x\n\nid: ${long('c')}\n\n`);
  assert.equal(r.exchange.outcome, 'resumable_end');
});

test('the event carrying the response gets its token whatever the budget: its own id, or the pending one', async () => {
  /** A token 2000 characters longer than the seller id: the first one spends the budget. */
  const longer = (id: string): string => 'T'.repeat(2000) + id;
  const result = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }], structuredContent: { ok: true } } });
  // a: 1054 -> token -946; b: -916, refused; the response: ~-750, its token all the same.
  const own = await runSseStage([`id: a\ndata: x\n\nid: b\ndata: x\n\nid: r\ndata: ${result}\n\n`], { mint: longer });
  assert.equal(own.body, `id: ${longer('a')}\ndata: x\n\ndata: x\n\nid: ${longer('r')}\ndata: ${result}\n\n`);
  assert.equal(own.exchange.outcome, 'ok');
  // Without an id of its own it carries b, the id pending.
  const pending = await runSseStage([`id: a\ndata: x\n\nid: b\ndata: x\n\ndata: ${result}\n\n`], { mint: longer });
  assert.equal(pending.body, `id: ${longer('a')}\ndata: x\n\ndata: x\n\nid: ${longer('b')}\ndata: ${result}\n\n`);
  // A later event over the budget on the same stream would not get one: a notification.
  const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
  const notified = await runSseStage([`id: a\ndata: x\n\nid: n\ndata: ${note}\n\ndata: ${result}\n\n`], { mint: longer });
  assert.equal(notified.body, `id: ${longer('a')}\ndata: x\n\ndata: ${note}\n\nid: ${longer('n')}\ndata: ${result}\n\n`);
});

test('which events with ids get their tokens does not depend on how the seller\'s bytes are cut (LF, CR LF)', async () => {
  for (const eol of ['\n', '\r\n']) {
    let events = '';
    for (let n = 1; n <= 40; n++) events += n % 7 === 0 ? `: k${eol}${eol}` : `id:${n}${eol}data${eol}${eol}`;
    const bytes = Buffer.from(events);
    const whole = (await runSseStage([bytes], { rpc: GET_STREAM, mint: long })).body;
    // Some refused: fewer tokens than ids.
    assert.ok((whole.match(/^id: /gm) ?? []).length < 30, whole);
    for (const chunks of randomCuts(bytes, 60, eol.length)) {
      const r = await runSseStage(chunks, { rpc: GET_STREAM, mint: long });
      assert.equal(r.body, whole, JSON.stringify(chunks.map((c) => c.toString())));
    }
  }
});
