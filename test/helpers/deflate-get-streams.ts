/**
 * A raw seller on 127.0.0.1 answering each agent's standalone GET stream with a fixed SSE body,
 * deflate-coded, behind the real gateway (one agent per body, each with `max_response_bytes`),
 * and a host reading a stream whole with fetch. Shared by the undelivered-bytes regressions
 * of streams without a total (get-stream-tiny-comments-reset-undelivered,
 * get-stream-empty-events-reset-undelivered).
 */
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { agentsYaml } from './gateway.js';
import { useSellerAndGateway } from './stack.js';
import { withTimeout } from './timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine } from '../support/hostile-seller.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { UNDELIVERED_FRAME_CREDIT } from '../../src/response/sse-undelivered.js';
import { SSE_IGNORED_LINE_CHARGE_BYTES } from '../../src/response/sse-ignored-lines.js';

export interface DeflateGetStreams<Case extends string> {
  /** The host's GET stream of agent `agent`, read to its end (at most 10 s). */
  readStream(agent: Case): Promise<string>;
  /** The exchange line of agent `agent`'s stream (at most 5 s). */
  exchangeLine(agent: Case): Promise<LogLine>;
}

/** Starts the seller and the gateway for the test file (before/after hooks: helpers/stack.ts). */
export function useDeflateGetStreams<Case extends string>(bodies: Readonly<Record<Case, string>>, maxResponseBytes: number): DeflateGetStreams<Case> {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const kind = new URL(req.url, 'http://x').searchParams.get('case') as Case;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'deflate' });
        res.end(deflateSync(bodies[kind]));
      }),
    (seller) =>
      startObservedGateway(agentsYaml(Object.fromEntries(Object.keys(bodies).map((kind) => [kind, { url: `${seller.url}?case=${kind}`, max_response_bytes: maxResponseBytes }])))),
  );
  return {
    async readStream(agent) {
      const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream' } });
      assert.equal(res.status, 200);
      return withTimeout(res.text(), 10_000, `the ${agent} stream`);
    },
    exchangeLine: (agent) => stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent, 5_000),
  };
}

/** `max_response_bytes` of the junk-stream regressions (get-stream-*-reset-undelivered). */
export const JUNK_MAX_RESPONSE_BYTES = 10_000;
/** Their `sse_undelivered` limit: `max_response_bytes` + the per-event cap (`max_sse_event_bytes`, by default `max_response_bytes`, + the stage's 64 KiB slack). */
export const JUNK_LIMIT = 2 * JUNK_MAX_RESPONSE_BYTES + SSE_PENDING_SLACK_BYTES;
/** One read of the gateway past the limit point, at most. */
export const JUNK_READ = 65_536;
/** A ~1 KB unknown-field line: decoded bytes that reach the host as nothing (and, since hostile trial 52, F2, charged SSE_IGNORED_LINE_CHARGE_BYTES more). */
export const JUNK_LINE = `x: ${'a'.repeat(994)}\n`;
/** A notification as the seller frames it and the gateway forwards it. */
export const junkNote = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;

/**
 * Where a stream of `first` then `units` repeats of a `unitBytes` unit, each unit forwarding one
 * frame of `frameBytes` at its end and holding `ignoredLines` lines the parser ignores (each
 * charged SSE_IGNORED_LINE_CHARGE_BYTES before that frame: sse-ignored-lines.ts), ends by the
 * `sse_undelivered` count's rules (sse-undelivered.ts): the units delivered before the limit
 * point, and the decoded bytes through it (the next unit's bytes up to the limit point, all of
 * them when only its charges pass it).
 */
export function undeliveredEnd(firstBytes: number, unitBytes: number, frameBytes: number, units: number, ignoredLines = 0): { units: number; decodedThrough: number } {
  const charged = unitBytes + ignoredLines * SSE_IGNORED_LINE_CHARGE_BYTES;
  let count = 0;
  let delivered = 0;
  for (; delivered < units && count + charged <= JUNK_LIMIT; delivered++) count = Math.max(0, count + charged - UNDELIVERED_FRAME_CREDIT * frameBytes);
  return { units: delivered, decodedThrough: firstBytes + delivered * unitBytes + Math.min(unitBytes, JUNK_LIMIT - count) };
}
