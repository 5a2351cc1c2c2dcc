/**
 * The SSE stage alone, in a loop (issue 5, "SSE events/s"): CPU ns per event and per byte of
 * src/response/sse-stage.ts handleSseBody over one long stream of small events, without
 * sockets, HTTP or the seller. What it measures is the stage's own work (chunk planning, raw
 * forwarding, parsing, the checks, the encoder, the host writes into a fake response that only
 * counts bytes), which the bench's flood figure mixes with both processes' HTTP work.
 *
 *   node --import tsx bench/sse-loop.ts [--events 200000] [--reps 3] [--case progress,small,idonly,comment,junk,empty,deep]
 *        [--chunk writes,16384,65536] [--rpc request|get] [--node-flags '--cpu-prof --cpu-prof-dir=/tmp/prof']
 *   node --import tsx bench/profile-summary.ts /tmp/prof/CPU.<...>.cpuprofile
 *
 * As the bench's children, it runs the code compiled (compile.ts: a snapshot of src/ and
 * bench/ compiled with tsc to a temporary directory, removed at the end), under plain `node`
 * with `--node-flags`, so that profiles name real lines; `--tsx` runs it in place instead.
 *
 * Cases (each stream `--events` events, then the bench's 1 KiB (a) result, which ends it):
 * - `progress`: the bench's flood notifications (bench/cases.ts progressEvent, ~190 bytes,
 *   `event: message` and one `data:` line);
 * - `small`: `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}` and the
 *   blank line (72 bytes);
 * - `idonly`: id-only blocks, `id: <n>` and the blank line (~9 bytes; a hostile trial's flood);
 * - `comment`: `: keepalive` and the blank line (13 bytes);
 * - `junk`: a line with an unknown field, `x` (2 bytes; the parser's `ParseError` per line,
 *   charged 1,024 bytes more: src/response/sse-ignored-lines.ts, hostile trial 52, F2; its
 *   "events" are lines);
 * - `empty`: `data: {}` and the blank line (10 bytes; dropped, `message_without_kind` on a
 *   request's stream, `get_stream_response` on the GET stream; each but the first charged
 *   1,024 bytes more: src/response/sse-ignored-lines.ts SSE_DROPPED_EVENT_CHARGE_BYTES);
 * - `deep`: `data: ` and 65 nested empty arrays (138 bytes; over the default max_json_depth
 *   64: dropped on the GET stream, `json_depth`, charged as `empty`; the first one answers a
 *   request's stream, so use it with `--rpc get`).
 *
 * Chunking (`--chunk`): `writes`, the seller's writes of FLOOD_EVENTS_PER_WRITE events each as
 * undici hands them over (one chunk per HTTP chunk: the bench's flood), or a byte count, the
 * stream cut every that many bytes wherever it falls (socket reads of 16-64 KiB).
 *
 * The stream is a request's (`tools/call` id 1, MCP 2025-06-18, bounded: the bench's flood),
 * or with `--rpc get` the standalone GET stream (no cumulative bound). Limits: the bench
 * agents' (bench/cases.ts BENCH_AGENT_LIMITS) but `max_response_bytes` 1 GiB, so that the
 * whole stream fits. The chunks are all buffered in the body stream before the stage starts,
 * so the stage runs them in one turn (no waits): CPU time (process.cpuUsage, user + system)
 * around the call, over the stream's events and bytes. One untimed warm-up stream per case,
 * then `--reps` timed ones; printed: min and median ns per event and per byte. Bounded:
 * `--events` at most 2,000,000, `--reps` at most 50.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { parseConfig } from '../src/config/load.js';
import { resolveCallLimits } from '../src/config/resolve.js';
import { createExchange, type RpcPeek } from '../src/exchange.js';
import { openBodySource } from '../src/response/body-source.js';
import { handleSseBody } from '../src/response/sse-stage.js';
import type { PipelineHooks } from '../src/response/pipeline.js';
import { compileSnapshot } from './compile.js';
import { compiledModule } from './children.js';
import { BENCH_AGENT_LIMITS, FLOOD_EVENTS_PER_WRITE, KiB, progressEvent, sizedMessage, sseEvent } from './cases.js';

const CASES: Readonly<Record<string, (i: number, total: number) => string>> = {
  progress: (i, total) => progressEvent(i, total),
  small: () => 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
  idonly: (i) => `id: ${i}\n\n`,
  comment: () => ': keepalive\n\n',
  junk: () => 'x\n',
  empty: () => 'data: {}\n\n',
  deep: () => `data: ${'['.repeat(65)}${']'.repeat(65)}\n\n`,
};

const TOOL_CALL: RpcPeek = { kind: 'request', id: 1, idText: undefined, method: 'tools/call', toolName: 'get_products', taskId: undefined };
const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at !== -1 && at + 1 < process.argv.length ? process.argv[at + 1]! : fallback;
}

/** The stream of `events` events of `kind`, then the result, cut as `chunk` says. */
function streamChunks(kind: string, events: number, chunk: string): Buffer[] {
  const make = CASES[kind];
  if (make === undefined) throw new Error(`unknown case ${kind}`);
  const result = sseEvent(sizedMessage('a', KiB));
  if (chunk === 'writes') {
    const chunks: Buffer[] = [];
    let batch = '';
    for (let i = 1; i <= events; i++) {
      batch += make(i, events);
      if (i % FLOOD_EVENTS_PER_WRITE === 0) {
        chunks.push(Buffer.from(batch));
        batch = '';
      }
    }
    chunks.push(Buffer.from(batch + result));
    return chunks;
  }
  const size = Number(chunk);
  if (!Number.isInteger(size) || size < 1) throw new Error(`bad --chunk ${chunk}`);
  const parts: string[] = [];
  for (let i = 1; i <= events; i++) parts.push(make(i, events));
  parts.push(result);
  const all = Buffer.from(parts.join(''));
  const chunks: Buffer[] = [];
  // Each chunk its own Buffer, as a socket read is (not views of one allocation).
  for (let at = 0; at < all.length; at += size) chunks.push(Buffer.from(all.subarray(at, Math.min(all.length, at + size))));
  return chunks;
}

interface Run {
  cpuNs: number;
  bytesOut: number;
  outcome: string | undefined;
}

async function runOnce(chunks: readonly Buffer[], rpc: RpcPeek): Promise<Run> {
  const yaml = [
    'log_level: silent',
    'agents:',
    '  s:',
    '    url: http://127.0.0.1:9/mcp',
    '    max_response_bytes: 1073741824',
    `    max_json_nodes: ${BENCH_AGENT_LIMITS.max_json_nodes}`,
    '',
  ].join('\n');
  const agent = parseConfig(yaml, { env: {}, source: 'sse-loop' }).agents.get('s')!;
  const limits = resolveCallLimits(agent, rpc.kind === 'request' ? rpc.toolName : undefined, undefined);
  const exchange = createExchange({
    agent,
    rpc,
    limits,
    protocolVersion: '2025-06-18',
    normalize: limits.dedupe_text !== 'off',
    stream: { startedAt: Date.now(), usedBytes: 0, resumeFrom: undefined },
    mintEventId: (id, used) => `tok(${id},${used})`,
  });
  let bytesOut = 0;
  const socket = {
    writableCorked: 0,
    cork() {
      socket.writableCorked++;
    },
    uncork() {
      if (socket.writableCorked > 0) socket.writableCorked--;
    },
  };
  const raw = {
    writableEnded: false,
    destroyed: false,
    headersSent: false,
    writableLength: 0,
    socket,
    writeHead: () => raw,
    flushHeaders() {},
    write(chunk: string | Buffer, encoding?: BufferEncoding) {
      bytesOut += typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding ?? 'utf8') : chunk.length;
      return true;
    },
    end(chunk?: string | Buffer) {
      if (chunk !== undefined) raw.write(chunk);
      raw.writableEnded = true;
    },
    cork() {},
    uncork() {},
    once: () => raw,
    on: () => raw,
    off: () => raw,
  };
  const reply = { raw, hijack() {}, getHeaders: () => ({}), sent: false } as unknown as FastifyReply;
  const log = { warn() {}, debug() {}, info() {}, error() {} } as unknown as FastifyBaseLogger;
  const hooks: PipelineHooks = {
    onSseStart() {},
    onSseEnd() {},
    onSseEventDropped() {},
    onSseEventIdNotTokenized() {},
    onSeller202Answer() {},
    wantsResponseMessage: false,
    onResponseMessage() {},
  };
  // Byte mode, as undici's body: each read() hands over one pushed chunk (body-source.ts).
  const stream = new Readable({ read() {}, highWaterMark: 1 << 30 });
  for (const c of chunks) stream.push(c);
  stream.push(null);
  const body = openBodySource(stream, [], Infinity);
  const t0 = process.cpuUsage();
  await handleSseBody(exchange, reply, { statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body }, log, hooks);
  const t = process.cpuUsage(t0);
  return { cpuNs: (t.user + t.system) * 1000, bytesOut, outcome: exchange.outcome };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  const events = Math.min(2_000_000, Math.max(1, Number(option('events', '200000'))));
  const reps = Math.min(50, Math.max(1, Number(option('reps', '3'))));
  const kinds = option('case', 'progress,small,idonly,comment').split(',');
  const chunkings = option('chunk', 'writes,16384,65536').split(',');
  const rpc = option('rpc', 'request') === 'get' ? GET_STREAM : TOOL_CALL;
  console.log(`node ${process.version}, ${events} events per stream, ${reps} timed streams after 1 warm-up, rpc ${rpc.kind}`);
  console.log('| case | chunk | bytes/event | chunks | ns/event min | median | ns/byte min | median | out/in bytes | outcome |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const kind of kinds) {
    for (const chunking of chunkings) {
      const chunks = streamChunks(kind, events, chunking);
      const bytesIn = chunks.reduce((s, c) => s + c.length, 0);
      const perEvent: number[] = [];
      let last: Run | undefined;
      for (let r = 0; r <= reps; r++) {
        const run = await runOnce(chunks, rpc);
        if (r > 0) perEvent.push(run.cpuNs / events);
        last = run;
      }
      const min = Math.min(...perEvent);
      const med = median(perEvent);
      const perByte = bytesIn / events;
      console.log(
        `| ${kind} | ${chunking} | ${perByte.toFixed(1)} | ${chunks.length} | ${min.toFixed(0)} | ${med.toFixed(0)} | ${(min / perByte).toFixed(2)} | ${(med / perByte).toFixed(2)} | ${(last!.bytesOut / bytesIn).toFixed(3)} | ${last!.outcome} |`,
      );
    }
  }
}

/** Upper bound on the compiled run (its loops are bounded by `--events` and `--reps`). */
const RUN_TIMEOUT_MS = 20 * 60_000;

/** Compiles the snapshot, runs this module there under plain node (`--node-flags`), removes it. */
function runCompiled(): number {
  const snap = compileSnapshot(undefined, ['sse-loop.ts']);
  try {
    if (snap.diagnostics !== undefined) console.error(`tsc: ${snap.diagnostics}`);
    const flags = option('node-flags', '').split(/\s+/).filter((f) => f !== '');
    const args = process.argv.slice(2).filter((a, i, all) => a !== '--node-flags' && all[i - 1] !== '--node-flags');
    const run = spawnSync(process.execPath, [...flags, compiledModule(snap.out, 'sse-loop.ts'), '--compiled', ...args], { stdio: 'inherit', timeout: RUN_TIMEOUT_MS });
    if (run.error !== undefined) throw run.error;
    return run.status ?? 1;
  } finally {
    rmSync(snap.dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--compiled') || process.argv.includes('--tsx')) await main();
else process.exitCode = runCompiled();
