/**
 * The undelivered count of the standalone GET stream (src/response/sse-undelivered.ts) does
 * not depend on how the seller's bytes are cut, over random mixes of blocks: notifications
 * raw-forwardable or not (non-ASCII, `event: message`, `data:` without a space, two data
 * lines, a named event), events holding invalid UTF-8 (forwarded with U+FFFD, or dropped over
 * the per-event cap), responses (dropped), id-only blocks and events with ids, comments (alone
 * and inside a block), `retry:` lines, unknown-field blocks, lone blank lines; LF, CR LF or CR
 * line endings. For each mix, the probe (a block of `x:` lines, then a notification) is sized
 * by bisection so that the notification goes out whole at that size and the stream ends
 * (`sse_undelivered`) before it one byte more: the count after the mix, to the byte. Then both
 * sizes are cut in two at every byte of the mix and near the end: the same bytes to the host,
 * outcome, reason and drops.
 *
 * Guards the three chunk dependences fixed together (the regressions
 * get-stream-invalid-utf8-run-undelivered-chunks, get-stream-crlf-blank-line-lf-undelivered-chunks,
 * get-stream-event-credit-depends-on-chunks): on the code before them, one of these 8 mixes
 * ended differently cut (a non-ASCII notification cut inside it forgave less than whole).
 * About 10 s on one core.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcPeek } from '../../src/exchange.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { cut, runSseStage, type StageRun } from './sse-stage-kit.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const MAX_RESPONSE_BYTES = 1000;
/** The undelivered limit: `max_response_bytes` + the per-event cap (`max_sse_event_bytes` unset: equal to it, + the slack). */
const LIMIT = 2 * MAX_RESPONSE_BYTES + SSE_PENDING_SLACK_BYTES;
const FF = Buffer.from([0xff]);
const bytes = (s: string | Buffer): Buffer => (typeof s === 'string' ? Buffer.from(s) : s);
const BLOCKS: Buffer[] = [
  bytes('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":1}}\n\n'),
  bytes('data: {"jsonrpc":"2.0","method":"n","params":"éééééé"}\n\n'),
  bytes('event: message\ndata: {"jsonrpc":"2.0","method":"n","params":"é€"}\n\n'),
  bytes('data:{"jsonrpc":"2.0","method":"n"}\n\n'),
  Buffer.concat([bytes('data: {"jsonrpc":"2.0","method":"n","params":"'), FF, bytes('"}\n\n')]),
  Buffer.concat([bytes('data: '), Buffer.alloc(400, 0xff), bytes('\n\n')]),
  bytes('data: {"jsonrpc":"2.0","id":5,"result":{}}\n\n'),
  bytes('id: 7\n\n'),
  bytes('id: 8\ndata: {"jsonrpc":"2.0","method":"n"}\n\n'),
  bytes(': c\n\n'),
  bytes('x: a\n: mid\ndata: {"jsonrpc":"2.0","method":"n"}\n\n'),
  bytes('retry: 1000\n\n'),
  bytes(`x: ${'q'.repeat(300)}\n\n`),
  bytes('data: {"jsonrpc":"2.0","method":"n",\ndata: "params":{}}\n\n'),
  bytes('\n'),
  bytes('event: x-custom\ndata: 5\n\n'),
  bytes('data: {}\n\n'),
];
const PROBE = 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":2}}\n\n';
/** Bytes taken for nothing before the mix: the count is past what one small frame forgives. */
const BEFORE = 20_000;

let seed = 7;
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
/** A block of unknown-field lines of exactly `n` bytes, its blank line included (LF). */
const pad = (n: number): string => {
  const line = `x: ${'a'.repeat(996)}\n`;
  const lines = Math.floor((n - 1) / line.length) - 1;
  const last = n - 1 - lines * line.length - 'x: \n'.length;
  return `${line.repeat(lines)}x: ${'b'.repeat(last)}\n\n`;
};
const withEol = (b: Buffer, eol: string): Buffer => Buffer.from(b.toString('latin1').replaceAll('\n', eol), 'latin1');
const brief = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason, drops: run.drops });
const runIt = (chunks: Buffer[]): Promise<StageRun> => runSseStage(chunks, { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${MAX_RESPONSE_BYTES}`] });

test('random mixes of blocks: the count after them, to the byte, is the same at every cut', async () => {
  const differ: string[] = [];
  for (let round = 0; round < 8; round++) {
    const eol = ['\n', '\r\n', '\r'][rand(3)]!;
    const mix = Buffer.concat(Array.from({ length: 3 + rand(8) }, () => BLOCKS[rand(BLOCKS.length)]!));
    const head = withEol(bytes(pad(BEFORE)), eol);
    const prefix = Buffer.concat([head, withEol(mix, eol)]);
    const streamWith = (probePad: number): Buffer => Buffer.concat([prefix, withEol(bytes(pad(probePad) + PROBE), eol)]);
    const probeOut = async (probePad: number): Promise<boolean> => (await runIt([streamWith(probePad)])).body.endsWith(PROBE);
    // Bisection: the largest probe pad after which the probe still goes out, whole.
    let lo = 1200;
    let hi = LIMIT;
    assert.ok(await probeOut(lo), `round ${round}: the mix leaves room for the probe`);
    assert.ok(!(await probeOut(hi)), `round ${round}: the probe pad alone reaches the limit`);
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (await probeOut(mid)) lo = mid;
      else hi = mid;
    }
    for (const probePad of [lo, hi]) {
      const stream = streamWith(probePad);
      const want = brief(await runIt([stream]));
      const points: number[] = [];
      for (let at = head.length - 4; at < prefix.length + 2; at++) points.push(at);
      for (let at = stream.length - 120; at < stream.length; at++) points.push(at);
      for (const at of points) {
        if (brief(await runIt(cut(stream, [at]))) !== want) {
          differ.push(`round ${round} (${JSON.stringify(eol)}, probe pad ${probePad}): cut at ${at}, mix ${JSON.stringify(mix.toString('latin1'))}`);
          break;
        }
      }
    }
  }
  assert.deepEqual(differ, []);
});
