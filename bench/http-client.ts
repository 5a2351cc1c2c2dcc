/**
 * The bench's own small HTTP clients (node:http), each request bounded by a timeout that
 * destroys it: one call read whole (checks, memory case), an SSE client that measures each
 * event's delivery delay from the seller's `sent_at`, and an SSE client that only counts
 * events (flood case).
 */
import http from 'node:http';
import { REQUEST_BODY, REQUEST_HEADERS, sharedClockMs } from './cases.js';

export interface CallResult {
  status: number;
  body: Buffer;
  /** From sending the request to the end of the response. */
  elapsedMs: number;
}

/** A keep-alive agent per target, so runs reuse connections as a real host does. */
export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets });
}

function post(url: string, agent: http.Agent, timeoutMs: number, onResponse: (res: http.IncomingMessage, done: (err?: Error) => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const req = http.request(url, { method: 'POST', agent, headers: { ...REQUEST_HEADERS, 'content-length': Buffer.byteLength(REQUEST_BODY) } }, (res) => {
      res.on('error', (e) => finish(e));
      onResponse(res, finish);
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`request timed out after ${timeoutMs} ms: ${url}`));
      finish(new Error(`request timed out after ${timeoutMs} ms: ${url}`));
    }, timeoutMs);
    req.on('error', (e) => finish(e));
    req.end(REQUEST_BODY);
  });
}

/** One `tools/call`, the whole response read. */
export async function callOnce(url: string, agent: http.Agent, timeoutMs: number): Promise<CallResult> {
  const start = performance.now();
  let status = 0;
  const chunks: Buffer[] = [];
  await post(url, agent, timeoutMs, (res, done) => {
    status = res.statusCode ?? 0;
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done());
  });
  return { status, body: Buffer.concat(chunks), elapsedMs: performance.now() - start };
}

export interface SseDelays {
  /** receive time - `sent_at` for every event carrying one, ms. */
  delaysMs: number[];
  events: number;
}

/**
 * Reads one SSE response; for every event whose data carries `"sent_at":<ms>` (the seller's
 * shared-clock timestamp), records the time it arrived here minus that timestamp.
 */
export async function sseDelays(url: string, agent: http.Agent, timeoutMs: number): Promise<SseDelays> {
  const delaysMs: number[] = [];
  let events = 0;
  await post(url, agent, timeoutMs, (res, done) => {
    let buffered = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = sharedClockMs();
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!/^data:/m.test(block)) continue;
        events++;
        const at = block.indexOf('"sent_at":');
        if (at !== -1) {
          const sentAt = Number.parseFloat(block.slice(at + 10, at + 40));
          if (Number.isFinite(sentAt)) delaysMs.push(now - sentAt);
        }
      }
    });
    res.on('end', () => done());
  });
  return { delaysMs, events };
}

/** Reads one SSE response and counts its events (blank-line terminated blocks). */
export async function sseCount(url: string, agent: http.Agent, timeoutMs: number): Promise<number> {
  let events = 0;
  await post(url, agent, timeoutMs, (res, done) => {
    let prevLf = false;
    res.on('data', (chunk: Buffer) => {
      if (prevLf && chunk[0] === 0x0a) events++;
      let i = chunk.indexOf('\n\n');
      while (i !== -1) {
        events++;
        i = chunk.indexOf('\n\n', i + 2);
      }
      prevLf = chunk[chunk.length - 1] === 0x0a && !(chunk.length >= 2 && chunk[chunk.length - 2] === 0x0a);
    });
    res.on('end', () => done());
  });
  return events;
}

export interface PacedResult {
  ok: number;
  failed: number;
  latenciesMs: number[];
}

/**
 * Open-loop load for latency: one `tools/call` every 1000/`rate` ms whatever the previous
 * ones are doing (so a slow answer cannot slow the load down and hide itself), on a
 * keep-alive agent of `maxSockets` connections; latency runs from the call to the end of its
 * response, waiting for a free connection included. Bounded by `count`, `durationMs` and a
 * timeout per call. (autocannon's rate limit sends each second's requests in one burst, which
 * measures the burst, not the gateway.)
 */
export async function pacedLoad(url: string, opts: { rate: number; count: number; durationMs: number; maxSockets: number; timeoutMs: number }): Promise<PacedResult> {
  const agent = keepAliveAgent(opts.maxSockets);
  const latenciesMs: number[] = [];
  let ok = 0;
  let failed = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  const interval = 1000 / opts.rate;
  try {
    for (let i = 0; i < opts.count; i++) {
      const due = start + i * interval;
      if (due - start > opts.durationMs) break;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(
        callOnce(url, agent, opts.timeoutMs).then(
          (r) => {
            if (r.status >= 200 && r.status < 300) {
              ok++;
              latenciesMs.push(r.elapsedMs);
            } else failed++;
          },
          () => {
            failed++;
          },
        ),
      );
    }
    await Promise.all(pending);
  } finally {
    agent.destroy();
  }
  return { ok, failed, latenciesMs };
}
