/**
 * Id-only and comment-only blocks of one ASCII line, read by the SSE stage from their bytes
 * (src/response/sse-simple-block.ts, sse-chunk-taker.ts takeSimple) instead of through the line
 * feeder, sse-id-only.ts and eventsource-parser (issue 5: floods of such blocks cost ~0.5 µs
 * each, bench/sse-loop.ts). The behaviour must be the parser path's, byte for byte: each
 * stream is run in one chunk (planned: the new path) and byte by byte (no chunk holds a
 * whole block: the parser path), and the host's bytes, the tokens in them, the outcome and
 * the drops must agree; one stream's exact bytes are asserted too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMENT_ONLY, ID_ONLY, NOT_SIMPLE, simpleBlock, simpleValueStart } from '../../src/response/sse-simple-block.js';
import { runSseStage, type StageOptions } from './sse-stage-kit.js';

const kindOf = (block: string): number => {
  const b = Buffer.from(block, 'latin1');
  return simpleBlock(b, 0, b.length);
};

test('simpleBlock: one ASCII id or comment line then the blank line; anything else is the parser path', () => {
  for (const block of ['id: 5\n\n', 'id:5\n\n', 'id:\n\n', 'id: \n\n', 'id:  two spaces\n\n', `id: ${'x'.repeat(252)}\n\n`]) assert.equal(kindOf(block), ID_ONLY, block);
  for (const block of [': keepalive\n\n', ':x\n\n', ':\n\n', ': \n\n', '::\n\n', ': id: 5\n\n']) assert.equal(kindOf(block), COMMENT_ONLY, block);
  for (const block of [
    'id\n\n', // `id` alone sets the empty id: the parser path
    'id: a\0b\n\n', // an id holding NUL is ignored
    ': a\0b\n\n',
    'id: é\n\n', // non-ASCII: decoded
    ': é\n\n',
    `id: ${'x'.repeat(253)}\n\n`, // over SIMPLE_BLOCK_MAX_LINE
    'id: 5\nid: 6\n\n', // two lines
    ': a\n: b\n\n',
    'id: 5\ndata: x\n\n',
    'data: x\n\n',
    'ID: 5\n\n',
    'idx: 5\n\n',
    '\n',
  ]) {
    assert.equal(kindOf(block), NOT_SIMPLE, JSON.stringify(block));
  }
});

test('simpleValueStart: after `id:` or `:` and one optional space', () => {
  const value = (block: string): string => {
    const b = Buffer.from(block, 'latin1');
    return b.toString('latin1', simpleValueStart(b, 0, b.length, kindOf(block) as typeof ID_ONLY), b.length - 2);
  };
  assert.deepEqual(['id: 5\n\n', 'id:5\n\n', 'id:\n\n', 'id: \n\n', 'id:  5\n\n'].map(value), ['5', '5', '', '', ' 5']);
  assert.deepEqual([': k\n\n', ':k\n\n', ':\n\n', ': \n\n', ':  k\n\n'].map(value), ['k', 'k', '', '', ' k']);
});

/**
 * Every simple form, between events forwarded raw and parsed ones, on LF line endings; but
 * `:x`, whose frame `: x` is charged against the bytes of its block received when it is
 * parsed (sse-encoding-charge.ts charge), so byte by byte (its blank line not come yet) it adds
 * a byte that in one chunk it does not: see the exact-bytes test.
 */
const SIMPLE = ['id: 5\n\n', 'id:6\n\n', 'id:\n\n', 'id: \n\n', 'id:  7\n\n', ': keepalive\n\n', ':\n\n', ': \n\n', ':  two\n\n'];
const NOTE = 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n';
const NOTE_WITH_ID = 'id: n1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n';
const RESPONSE = 'data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}\n\n';
const GET_STREAM: StageOptions['rpc'] = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };

function stream(withResponse: boolean): string {
  let s = '';
  for (const block of SIMPLE) s += block + NOTE + block + block + NOTE_WITH_ID;
  return s + (withResponse ? RESPONSE : '');
}

/** The stream in one chunk (planned: the simple blocks read from their bytes) and byte by byte (every block parsed): the same host bytes, outcome and drops. */
async function sameBothWays(body: string, opts: StageOptions, label: string): Promise<void> {
  const bytes = Buffer.from(body);
  const whole = await runSseStage([bytes], opts);
  const bytewise = await runSseStage(
    Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1)),
    opts,
  );
  assert.equal(whole.body, bytewise.body, label);
  assert.equal(whole.exchange.outcome, bytewise.exchange.outcome, label);
  assert.equal(whole.exchange.reason, bytewise.exchange.reason, label);
  assert.deepEqual(whole.drops, bytewise.drops, label);
}

test('a request stream: the same bytes, tokens and outcome as the parser path', async () => {
  await sameBothWays(stream(true), {}, 'with the response');
  await sameBothWays(stream(false), {}, 'ended without the response');
});

test('the standalone GET stream: the same bytes and tokens as the parser path', async () => {
  await sameBothWays(stream(false), { rpc: GET_STREAM }, 'GET stream');
});

test('a comment block that a resume token before it took the room for: answered sse_cumulative through that block, as the parser path does', async () => {
  // The chunk's seller bytes fit the bound; n1's token (its length over `n1`) leaves fewer
  // than the comment's 13 bytes: the comment crosses, and the request is answered with the
  // count through it (sse-chunk-taker.ts take), nothing of it forwarded.
  const chunk = NOTE_WITH_ID + ': keepalive\n\n' + NOTE;
  const noteBytes = Buffer.byteLength(NOTE_WITH_ID);
  const added = `tok(n1,${noteBytes})`.length - 2;
  for (let limit = Buffer.byteLength(chunk); limit < noteBytes + added + 13; limit++) {
    const r = await runSseStage([chunk], { agentYaml: [`max_response_bytes: ${limit}`] });
    assert.equal(r.exchange.reason, 'sse_cumulative', `limit ${limit}`);
    assert.ok(r.body.startsWith(`id: tok(n1,${noteBytes})\n${NOTE_WITH_ID.slice('id: n1\n'.length)}event: message\n`), `limit ${limit}`);
    assert.match(r.body, new RegExp(`\\\\"limit_bytes\\\\":${limit},\\\\"observed_bytes\\\\":${noteBytes + added + 13}\\}`), `limit ${limit}`);
  }
});

test('exact bytes: comments go out as `: text` lines, an id-only block\'s id as the next event\'s token', async () => {
  const head = ': keepalive\n\n:x\n\n: \n\nid: 5\n\n' + NOTE;
  const all = head + 'id:6\n\n' + RESPONSE;
  // The frames add nothing over their blocks' bytes (`:x` and its blank line make `: x` and
  // its LF) but `id:6`'s (`id: 6`: one byte); each token its length over the seller id's.
  const token5 = `tok(5,${Buffer.byteLength(head)})`;
  const token6 = `tok(6,${Buffer.byteLength(all) + token5.length - 1 + 1})`;
  for (const chunks of [[all], all.split(/(?<=\n\n)/)]) {
    const r = await runSseStage(chunks);
    assert.equal(r.body, `: keepalive\n: x\n:\nid: ${token5}\n${NOTE}id: ${token6}\n${RESPONSE}`, `${chunks.length} chunks`);
    assert.equal(r.exchange.outcome, 'ok');
  }
});
