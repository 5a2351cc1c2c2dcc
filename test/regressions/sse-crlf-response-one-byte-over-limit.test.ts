/**
 * Reported failure (review 33, item 1): "a CR LF response passes one byte over
 * max_response_bytes". The parser dispatches an event at the CR of its blank line (nothing
 * waits for a byte that may never come: sse-boundaries.ts SseLineFeeder emit), so with CR LF
 * line endings the response whose blank line's LF was the byte past the limit went out at its
 * CR, within the limit, and ended the stream ok before that LF was charged: 3,001 bytes with
 * the limit at 3,000 got the result, for every cut of the seller's bytes, where LF and CR-only
 * streams got `sse_cumulative`, observed_bytes 3,001 (docs/configuration.md: the LF of a CR LF
 * is counted, and the bound trips at the same byte with LF or CR LF).
 *
 * Now the byte past the limit is never parsed whatever it completes: in the range that crosses
 * the bound, a CR at the limit point followed by its LF is not parsed; a CR ending a chunk at
 * the limit waits for the next byte (an LF: past the bound with its CR; anything else, the
 * seller's end, or its silence for sse_idle_timeout_ms: the line ends at the CR, as on a
 * CR-only stream): sse-chunk-taker.ts `takeCounted`, `releaseCrAtLimit`.
 *
 * Input (the kit: a tools/call, id 1; max_response_bytes 3000): progress notifications, then
 * the response, `event: message` and one `data:` line each, with LF, CR LF or CR line endings,
 * the whole stream exactly 3000 bytes or 3001, cut in eight ways (the response's blank line
 * whole or cut between its CR and LF among them). Expected: the progress events as written
 * (LF), then at 3000 the result (outcome ok), at 3001 the RESPONSE_TOO_LARGE answer,
 * `sse_cumulative`, limit_bytes 3000, observed_bytes 3001, with every line ending and cut.
 * Then a CR LF stream of 3001 bytes whose LF comes 100 ms after its CR (sse_cumulative), and a
 * CR-only stream of 3000 bytes whose seller is silent after its last CR: the result goes out at
 * the idle timeout (not `sse_idle`).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cut, runSseStage, type StageRun } from '../unit/sse-stage-kit.js';
import { toolResponseOfSize } from '../support/raw-seller.js';

const LIMIT = 3000;
const ENDINGS = [
  ['LF', '\n'],
  ['CR LF', '\r\n'],
  ['CR', '\r'],
] as const;

const progress = (k: number): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: k } });

interface Stream {
  bytes: Buffer;
  /** Bytes before the response's block. */
  pre: number;
  /** What the host gets for the progress events (LF line endings). */
  progressOut: string;
  response: string;
}

/** Progress events, then the response, `total` bytes with `eol` line endings. */
function stream(eol: string, total: number): Stream {
  const frame = (data: string, e: string): string => `event: message${e}data: ${data}${e}${e}`;
  let pre = '';
  let progressOut = '';
  for (let k = 0; pre.length < 2500; k++) {
    pre += frame(progress(k), eol);
    progressOut += frame(progress(k), '\n');
  }
  const response = toolResponseOfSize(1, total - pre.length - frame('', eol).length);
  const bytes = Buffer.from(pre + frame(response, eol));
  assert.equal(bytes.length, total);
  return { bytes, pre: pre.length, progressOut, response };
}

/** The cuts: whole, in the progress events, in the response, around its blank line. */
function cuts(s: Stream): number[][] {
  const n = s.bytes.length;
  return [[], [s.pre], [s.pre + 30], [s.pre + 30, s.pre + 300], [s.pre - 5, n - 3], [n - 1], [n - 2], [n - 2, n - 1]];
}

/** What the host got after the progress events: `result`, or the error's reason/limit/observed. */
function ending(r: StageRun, s: Stream): string {
  if (!r.body.startsWith(s.progressOut)) return `progress events changed: ${JSON.stringify(r.body.slice(0, 200))}`;
  const rest = r.body.slice(s.progressOut.length);
  if (rest === `event: message\ndata: ${s.response}\n\n`) return `result ${r.exchange.outcome}`;
  const m = /^data: (.*)\n\n$/s.exec(rest) ?? /^event: message\ndata: (.*)\n\n$/s.exec(rest);
  if (m === null) return `unexpected ${JSON.stringify(rest.slice(0, 200))}`;
  const answer = JSON.parse(m[1]!) as { id: unknown; result?: { structuredContent?: { adcp_error?: { code: string; details: Record<string, unknown> } } } };
  const error = answer.result?.structuredContent?.adcp_error;
  if (error === undefined) return `unexpected ${JSON.stringify(rest.slice(0, 200))}`;
  const d = error.details;
  return `${error.code} id ${String(answer.id)} ${String(d.reason)} ${String(d.limit_bytes)} ${String(d.observed_bytes)} ${r.exchange.reason}`;
}

const OVER = `RESPONSE_TOO_LARGE id 1 sse_cumulative ${LIMIT} ${LIMIT + 1} sse_cumulative`;

describe('a CR LF response one byte over max_response_bytes', () => {
  for (const [name, eol] of ENDINGS) {
    for (const total of [LIMIT, LIMIT + 1]) {
      test(`${name} line endings, ${total} bytes: ${total > LIMIT ? 'sse_cumulative, observed_bytes 3001' : 'the result'}, every cut`, async () => {
        const s = stream(eol, total);
        const want = total > LIMIT ? OVER : 'result ok';
        const got: string[] = [];
        for (const at of cuts(s)) {
          const r = await runSseStage(cut(s.bytes, at), { agentYaml: [`max_response_bytes: ${LIMIT}`] });
          got.push(`${at.join('+') || 'whole'}: ${ending(r, s)}`);
        }
        assert.deepEqual(
          got,
          cuts(s).map((at) => `${at.join('+') || 'whole'}: ${want}`),
        );
      });
    }
  }

  /** The seller's chunks, each after `gapMs`, then silence for `silentMs` before its end. */
  async function* slowly(chunks: Buffer[], gapMs: number, silentMs: number): AsyncGenerator<Buffer> {
    for (const [k, c] of chunks.entries()) {
      if (k > 0) await new Promise((r) => setTimeout(r, gapMs));
      yield c;
    }
    await new Promise((r) => setTimeout(r, silentMs));
  }
  const SLOW = [`max_response_bytes: ${LIMIT}`, 'sse_idle_timeout_ms: 300'];

  test('CR LF, 3001 bytes, the LF 100 ms after the CR: sse_cumulative, observed_bytes 3001', async () => {
    const s = stream('\r\n', LIMIT + 1);
    const r = await runSseStage(slowly(cut(s.bytes, [LIMIT]), 100, 0), { agentYaml: SLOW });
    assert.equal(ending(r, s), OVER);
  });

  test('CR only, 3000 bytes, the seller silent after its last CR: the result at the idle timeout, not sse_idle', async () => {
    const s = stream('\r', LIMIT);
    const r = await runSseStage(slowly([s.bytes], 0, 1000), { agentYaml: SLOW });
    assert.equal(ending(r, s), 'result ok');
    assert.equal(r.exchange.reason, undefined);
  });
});
