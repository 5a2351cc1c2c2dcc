/**
 * A socket-free harness for the SSE stage (src/response/sse-stage.ts): a real exchange
 * (limits resolved from a YAML config by the real loader), the seller's body given as
 * chunks, and a fake host response that records every write. For unit tests of exact bytes
 * and write batching ("stages fed chunks, no sockets", ARCHITECTURE §6).
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { parseConfig } from '../../src/config/load.js';
import type { AgentConfig } from '../../src/config/types.js';
import { resolveCallLimits } from '../../src/config/resolve.js';
import { createExchange, type Exchange, type RpcPeek } from '../../src/exchange.js';
import { openBodySource, type BodySource } from '../../src/response/body-source.js';
import { handleSseBody } from '../../src/response/sse-stage.js';
import type { HostAnswerWaits } from '../../src/routing/host-answer-waits.js';
import type { PipelineHooks } from '../../src/response/pipeline.js';

export interface StageRun {
  readonly exchange: Exchange;
  /** Every write to the host, in order, as UTF-8 text. */
  readonly writes: string[];
  /** The whole body the host received. */
  readonly body: string;
  readonly ended: boolean;
  /** Response messages observed through the pipeline hook (discovery sizes): every byte through the response, and what came before it. */
  readonly observed: Array<{ message: unknown; bytes: number; before?: { events: number; bytes: number } }>;
  /** Warnings logged. */
  readonly warnings: unknown[];
  /** The reason of every dropped event, in order (the `onSseEventDropped` hook's runs, expanded: every drop, where the warnings are throttled). */
  readonly drops: string[];
  /** The `onSseEventDropped` calls, in order: [reason, count] (one per run of a reason in a chunk: sse-drop-metric.ts). */
  readonly dropRuns: Array<[string, number]>;
  /** The writes given as bytes (not text), as given: the raw path writes views of the seller's chunks. */
  readonly buffers: Buffer[];
  /** How many times the stage called the `onSseEnd` hook (once, as it ends). */
  readonly sseEnds: number;
  /** The seller's body stream, as the stage left it. */
  readonly stream: Readable;
}

export interface StageOptions {
  /** The exchange's host-answer waits and session (routing/host-answer-waits.ts; default: none). */
  hostAnswers?: { waits: HostAnswerWaits; session: string };
  /** Agent YAML lines under `agents.s:` besides `url` (e.g. `max_response_bytes: 8192`). */
  agentYaml?: string[];
  rpc?: RpcPeek;
  protocolVersion?: string;
  /** Resume token minting; default: `tok(<upstream id>,<count>)`. */
  mint?: (upstreamId: string, usedBytes: number) => string | undefined;
  /** Count already used (a resumed stream). */
  usedBytes?: number;
  /** false: record no writes (for timing the stage alone). */
  record?: boolean;
  /** Called after each recorded write, with the writes so far. */
  onWrite?: (writes: readonly string[]) => void;
  /** PipelineHooks.wantsResponseMessage (default true: the response is parsed and observed). */
  wantsResponseMessage?: boolean;
  /** The body's content codings (`['deflate']`: the chunks are the coded bytes, decoded as the gateway decodes them); default none. */
  codings?: readonly string[];
  /** PipelineHooks.onSseStart: given the stage's shutdown `end` (default: ignored). */
  onSseStart?: PipelineHooks['onSseStart'];
  /** PipelineHooks.shutdownTokensOutlive (default: none, no shutdown). */
  shutdownTokensOutlive?: PipelineHooks['shutdownTokensOutlive'];
  /** The body source the stage reads, made from the real one (to make its reads or its close fail). */
  wrapBody?: (body: BodySource) => BodySource;
}

export const TOOL_CALL: RpcPeek = { kind: 'request', id: 1, idText: undefined, method: 'tools/call', toolName: 'get_products', taskId: undefined };

/**
 * The agent each distinct agent YAML gives, parsed once per process: the cut and fuzz tests run
 * the stage thousands of times with the same few configs, and parsing (YAML, schema) was ~30%
 * of their CPU. The gateway too shares one `AgentConfig` among all its exchanges (the loader's
 * objects are read-only; nothing the stage does is kept on them). At most 1,000 kept (a test
 * that draws its limits at random starts over past that).
 */
const agents = new Map<string, AgentConfig>();
function agentFor(yaml: string): AgentConfig {
  let agent = agents.get(yaml);
  if (agent === undefined) {
    agent = parseConfig(yaml, { env: {}, source: 'sse-stage-kit' }).agents.get('s')!;
    if (agents.size >= 1_000) agents.clear();
    agents.set(yaml, agent);
  }
  return agent;
}

/**
 * Runs the SSE stage over `chunks` (each one read from the seller as one chunk; an async
 * iterable is read only as fast as the stage asks) and returns what the host got.
 */
export async function runSseStage(chunks: ReadonlyArray<string | Buffer> | AsyncIterable<Buffer>, opts: StageOptions = {}): Promise<StageRun> {
  const yaml = ['log_level: silent', 'agents:', '  s:', '    url: http://127.0.0.1:9/mcp', ...(opts.agentYaml ?? []).map((l) => `    ${l}`), ''].join('\n');
  const agent = agentFor(yaml);
  const rpc = opts.rpc ?? TOOL_CALL;
  const limits = resolveCallLimits(agent, rpc.toolName, undefined);
  const protocolVersion = opts.protocolVersion ?? '2025-06-18';
  const exchange = createExchange({
    agent,
    rpc,
    limits,
    protocolVersion,
    normalize: protocolVersion >= '2025-06-18' && limits.dedupe_text !== 'off',
    stream: { startedAt: Date.now(), usedBytes: opts.usedBytes ?? 0, resumeFrom: undefined },
    mintEventId: opts.mint ?? ((id, used) => `tok(${id},${used})`),
    hostAnswers: opts.hostAnswers?.waits,
    session: opts.hostAnswers?.session,
  });
  const writes: string[] = [];
  const buffers: Buffer[] = [];
  let ended = false;
  let endedCorked = false;
  const raw = {
    writableEnded: false,
    destroyed: false,
    headersSent: false,
    writeHead() {
      raw.headersSent = true;
      return raw;
    },
    flushHeaders() {},
    write(chunk: string | Buffer, encoding?: BufferEncoding) {
      if (opts.record === false) return true;
      if (typeof chunk !== 'string') buffers.push(chunk);
      const text = typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8').toString('utf8') : chunk.toString('utf8');
      // Writes made while the response or its socket is corked reach the socket as one write.
      const corked = raw.corked + socket.writableCorked > 0;
      if (corked && raw.inCork) writes[writes.length - 1] += text;
      else writes.push(text);
      raw.inCork = corked;
      opts.onWrite?.(writes);
      return true;
    },
    end(chunk?: string | Buffer) {
      // Node 22/24 send the terminating chunk before writes held by a corked response
      // (nodejs/node#50167): the stage must never end a corked response. A corked socket is
      // fine: end() fully uncorks it, after the last write.
      if (raw.corked > 0) endedCorked = true;
      if (chunk !== undefined) raw.write(chunk);
      socket.writableCorked = 0;
      if (raw.corked === 0) raw.inCork = false;
      raw.writableEnded = true;
      ended = true;
    },
    corked: 0,
    inCork: false,
    cork() {
      raw.corked++;
    },
    uncork() {
      raw.corked--;
      if (raw.corked + socket.writableCorked === 0) raw.inCork = false;
    },
    /**
     * The connection: corked, it joins writes as a corked response does; `end()` uncorks it
     * fully; `uncork` when not corked does nothing (as `net.Socket`'s).
     */
    socket: {
      writableCorked: 0,
      cork() {
        socket.writableCorked++;
      },
      uncork() {
        if (socket.writableCorked === 0) return;
        socket.writableCorked--;
        if (raw.corked + socket.writableCorked === 0) raw.inCork = false;
      },
    },
    once() {
      return raw;
    },
    on() {
      return raw;
    },
    off() {
      return raw;
    },
  };
  const socket = raw.socket;
  const reply = { raw, hijack() {}, getHeaders: () => ({}), sent: false } as unknown as FastifyReply;
  const warnings: unknown[] = [];
  const log = { warn: (o: unknown) => warnings.push(o), debug() {}, info() {}, error() {} } as unknown as FastifyBaseLogger;
  const observed: Array<{ message: unknown; bytes: number; before?: { events: number; bytes: number } }> = [];
  const drops: string[] = [];
  const dropRuns: Array<[string, number]> = [];
  let sseEnds = 0;
  const hooks: PipelineHooks = {
    onSseStart: opts.onSseStart ?? (() => {}),
    shutdownTokensOutlive: opts.shutdownTokensOutlive,
    onSseEnd: () => {
      sseEnds++;
    },
    onSseEventDropped: (reason, count) => {
      dropRuns.push([reason, count]);
      for (let i = 0; i < count; i++) drops.push(reason);
    },
    onSseEventIdNotTokenized() {},
    onSeller202Answer() {},
    wantsResponseMessage: opts.wantsResponseMessage ?? true,
    onResponseMessage: (message, bytes, before) => observed.push(before === undefined ? { message, bytes } : { message, bytes, before }),
  };
  const source = Symbol.asyncIterator in chunks ? chunks : chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c));
  const stream = Readable.from(source, { objectMode: true, highWaterMark: 1 });
  const opened = openBodySource(stream, opts.codings ?? [], Infinity);
  const body = opts.wrapBody?.(opened) ?? opened;
  await handleSseBody(exchange, reply, { statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body }, log, hooks);
  assert.equal(endedCorked, false, 'end() was called on a corked response (Node 22/24 then send the terminating chunk before the corked writes)');
  return { exchange, writes, body: writes.join(''), ended, observed, warnings, drops, dropRuns, buffers, sseEnds, stream };
}

/** `bytes` cut at the given offsets. */
export function cut(bytes: Buffer, at: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...at, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}
