/**
 * Reported failure (review 33, item 2): "on a CR-only stream, an over-cap event silences the
 * rest of the stream". On the standalone GET stream an event over the per-event cap
 * (max_sse_event_bytes + 64 KiB) is dropped and the rest of it skipped up to its blank line,
 * where the parser is reset and later events flow (get-stream-oversized-event.test.ts). The
 * skip ended only at blank lines the LF scanner sees (sse-boundaries.ts SseBoundaryScanner:
 * LF LF, LF CR LF); a blank line ended by a CR alone was taken as a block end
 * (blankLineEnds) but not as a boundary, so on a CR-only stream every later event was skipped
 * too, until `sse_undelivered` ended the stream: a 67 KB event then a small one got the host
 * nothing with CR line endings, the small one with LF and CR LF.
 *
 * Input (the kit: the standalone GET stream, max_sse_event_bytes 2048, so a cap of 67,584
 * bytes): `data: <a notification of 70,000 bytes>`, its blank line, then `data: <a small
 * notification>` and its blank line, with LF, CR LF or CR line endings; whole, in 16 KiB
 * chunks, cut between the big event's two last line breaks, and with those in one-byte
 * chunks. Expected: the host gets exactly the small notification (`data: ...` and a blank
 * line, LF), one drop (`sse_event`), and the stream ends when the seller ends it (outcome ok).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcPeek } from '../../src/exchange.js';
import { cut, runSseStage } from '../unit/sse-stage-kit.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const note = (text: string): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: text } });

describe('CR-only stream: an event over the cap, then a small one', () => {
  for (const [name, eol] of [
    ['LF', '\n'],
    ['CR LF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    test(`${name} line endings: the small event goes out, every cut`, async () => {
      const big = `data: ${note('n'.repeat(70_000))}${eol}${eol}`;
      const bytes = Buffer.from(`${big}data: ${note('small')}${eol}${eol}`);
      const stride: number[] = [];
      for (let at = 16_384; at < bytes.length; at += 16_384) stride.push(at);
      // The big event's data line break and its blank line (each 1 or 2 bytes).
      const blank = big.length - eol.length;
      const cuts: Array<[string, number[]]> = [
        ['whole', []],
        ['16 KiB chunks', stride],
        ['before the blank line', [blank]],
        ['the line breaks alone', [blank - eol.length, blank, big.length]],
        ['one-byte chunks around the blank line', [blank - 1, blank, blank + 1]],
      ];
      const got: string[] = [];
      for (const [label, at] of cuts) {
        const r = await runSseStage(cut(bytes, at), { rpc: GET_STREAM, agentYaml: ['max_response_bytes: 1048576', 'max_sse_event_bytes: 2048'] });
        got.push(`${label}: ${JSON.stringify(r.body)} ${r.drops.join(',')} ${r.exchange.outcome} ${r.ended}`);
      }
      const want = `${JSON.stringify(`data: ${note('small')}\n\n`)} sse_event ok true`;
      assert.deepEqual(
        got,
        cuts.map(([label]) => `${label}: ${want}`),
      );
    });
  }
});
