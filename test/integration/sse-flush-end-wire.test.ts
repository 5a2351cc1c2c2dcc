/**
 * Through the real gateway, SSE streams whose multi-part flush (src/response/sse-encode.ts
 * corkSocketForThisTick) is followed in the same tick by the stream's end: an oversized event
 * (`sse_event`), the cumulative bound, the final response, a seller reset, a resumable end,
 * gzip bodies. Checked on the raw wire (net.connect): exact chunked framing, nothing after the
 * terminating chunk, the last event answers the request, and a second request on the same
 * keep-alive connection (sequential and pipelined) parses.
 *
 * Reported failure (review, 2026-12-01): a first version of the write joining corked the
 * *response* to the end of the tick; on Node 22 and 24 a corked response holds its chunked
 * writes and `end()` sends the terminating chunk before them (nodejs/node#50167), so the host
 * lost the last events and read them as the next response. With that version 24 of these 27
 * tests fail on Node 22; CI runs this file on Node 22 (.ci/run).
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { startIdDispatchingSeller, type IdAnswer } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { SseFrameBatch, type SseSink } from '../../src/response/sse-encode.js';
import { parseResponses, toolCallRequest as post } from '../helpers/http-wire.js';
import { MAX_WAITING_PER_CONNECTION } from '../../src/routing/pipelined-turn.js';

const LIMIT = 200 * 1024;
const PIPELINED = 1 + MAX_WAITING_PER_CONNECTION;
const EVENT_LIMIT = 64 * 1024;

// Counts flushes that corked the socket themselves (multi-part flushes on an uncorked socket).
let socketCorkingFlushes = 0;
const origFlush = SseFrameBatch.prototype.flush;
SseFrameBatch.prototype.flush = function (this: SseFrameBatch, sink: SseSink) {
  const before = sink.socket?.writableCorked ?? 0;
  const r = origFlush.call(this, sink);
  if ((sink.socket?.writableCorked ?? 0) > before) socketCorkingFlushes++;
  return r;
};
after(() => {
  SseFrameBatch.prototype.flush = origFlush;
});

const answers = new Map<number, IdAnswer>();
const stack = useSellerAndGateway(
  () => startIdDispatchingSeller(answers),
  (seller) =>
    startGateway(
      // No backoff: most scenarios break a bound on purpose, and a pipelined request is sent
      // only at its turn (src/routing/pipelined-turn.ts), so their breaches come one after
      // another on each connection and would back the agent off (agent_backoff answers).
      `log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n    max_sse_event_bytes: ${EVENT_LIMIT}\n    backoff_after_breaches: 0\n`,
    ),
);

const sseHead = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
const progress = (n: number) => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
const withId = (n: number) => `id: e${n}\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
const bigNote = (n: number, bytes: number) => {
  const base = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""},"n":${n}}`;
  return `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${'x'.repeat(bytes - base.length)}"},"n":${n}}\n\n`;
};
const result = (id: number, text = 'ok') => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } })}\n\n`;
const oversized = (id: number) => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'y'.repeat(EVENT_LIMIT + 10) }] } })}\n\n`;

/** A mixed chunk: raw blocks, an id event (parsed), a comment, a large event (its own parts). */
const mixed = (k: number) => progress(k) + withId(k) + ': c\n\n' + progress(k + 1) + bigNote(k, 20_000) + progress(k + 2);

const scenarios: Record<string, IdAnswer> = {
  // A multi-part flush, then sse_event's answer and end() in the same tick (same chunk).
  sseEventSameChunk: (res, id) => {
    sseHead(res);
    res.end(mixed(1) + oversized(id));
  },
  // The same, after a first chunk already out.
  sseEventSecondChunk: (res, id) => {
    sseHead(res);
    res.write(mixed(1));
    setTimeout(() => res.end(mixed(10) + oversized(id)), 10);
  },
  // The cumulative bound crossed after large events (multi-part) in the crossing chunk.
  cumulative: (res) => {
    sseHead(res);
    let s = '';
    for (let i = 0; Buffer.byteLength(s) < LIMIT + 5000; i++) s += mixed(i * 3);
    res.write(s);
  },
  // The final response right after a multi-part chunk (one seller write).
  finalSameWrite: (res, id) => {
    sseHead(res);
    res.end(mixed(1) + mixed(4) + result(id));
  },
  // Final response in the next seller write, quickly: after a turn of the seller's loop, so
  // that it is a write of its own on every Node (Node 24 sent the three writes of one turn in
  // one packet, which made this scenario finalSameWrite's: no socket-corking flush).
  finalNextWrite: (res, id) => {
    sseHead(res);
    res.write(mixed(1));
    res.write(mixed(4));
    setImmediate(() => res.end(result(id)));
  },
  // Seller drops after a multi-part chunk with no id before: upstream_reset answer.
  reset: (res) => {
    sseHead(res);
    res.write(progress(1) + ': c\n\n' + bigNote(1, 20_000) + progress(2));
    setImmediate(() => res.destroy());
  },
  // gzip: the decoded path (chunks through an async generator, microtasks).
  gzipResult: (res, id) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
    let s = '';
    for (let i = 0; i < 30; i++) s += mixed(i * 3);
    res.end(zlib.gzipSync(s + result(id)));
  },
  gzipOversized: (res, id) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
    let s = '';
    for (let i = 0; i < 5; i++) s += mixed(i * 3);
    res.end(zlib.gzipSync(s + oversized(id)));
  },
  // Seller drops after an id: resumable end (endPlainly) right after a multi-part chunk.
  resetAfterId: (res) => {
    sseHead(res);
    res.write(mixed(1));
    setImmediate(() => res.destroy());
  },
};

/** Sends `requests` on one connection (all at once if `pipelined`, else each after the previous response completed) and returns the wire. */
async function exchange(ids: number[], pipelined: boolean, timeoutMs = 10_000): Promise<Buffer> {
  const url = new URL(stack.gateway.agentUrl('s'));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(url.port), '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`timeout; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(-300))}`));
    }, timeoutMs);
    let sent = 0;
    const finish = () => {
      clearTimeout(timer);
      // Linger for stray bytes after the last response.
      setTimeout(() => {
        socket.destroy();
        resolve(Buffer.concat(chunks));
      }, 100);
    };
    socket.on('connect', () => {
      if (pipelined) {
        socket.write(ids.map((id) => post(id)).join(''));
        sent = ids.length;
      } else {
        socket.write(post(ids[0]!));
        sent = 1;
      }
    });
    // The bytes after the responses already whole, and how many are: each chunk is parsed
    // with the response it ends or continues only (parsing every byte so far at each chunk was
    // quadratic: ~2 s of CPU in this file).
    let pending = Buffer.alloc(0);
    let done = 0;
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      pending = Buffer.concat([pending, c]);
      while (done < sent) {
        let rest: string;
        try {
          ({ rest } = parseResponses(pending, 1));
        } catch {
          break;
        }
        pending = pending.subarray(pending.length - rest.length);
        done++;
      }
      if (done < sent) return;
      if (done === ids.length) finish();
      else if (!pipelined && done === sent) {
        socket.write(post(ids[sent]!));
        sent++;
      }
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

let nextId = 100;
for (const [name, answer] of Object.entries(scenarios)) {
  describe(name, () => {
    for (const pipelined of [false, true]) {
      test(`${pipelined ? 'pipelined' : 'sequential'}: wire well-formed, nothing after the terminator, the next response parses`, async () => {
        const id1 = nextId++;
        const id2 = nextId++;
        answers.set(id1, answer);
        answers.set(id2, (res, id) => {
          sseHead(res);
          res.end(mixed(50) + result(id, 'second'));
        });
        const corks = socketCorkingFlushes;
        const wire = await exchange([id1, id2], pipelined);
        const { responses, rest } = parseResponses(wire, 2);
        assert.equal(rest, '', 'bytes after the last response');
        const [r1, r2] = responses;
        assert.equal(r1!.status, 200);
        assert.ok(r1!.headers['content-type']!.startsWith('text/event-stream'));
        // Every SSE block is complete, and the last is the answer for id1 (result or error).
        assert.ok(r1!.body.endsWith('\n\n'), JSON.stringify(r1!.body.slice(-200)));
        const last = r1!.body.trimEnd().split('\n\n').at(-1)!;
        if (name !== 'resetAfterId') assert.match(last, new RegExp(`"id":${id1}[,}]`), `last event of response 1: ${last.slice(0, 300)}`);
        // Non-final events are all there and in order.
        const seenProgress = [...r1!.body.matchAll(/"progress":(\d+)/g)].map((m) => Number(m[1]));
        assert.deepEqual(seenProgress, [...seenProgress].sort((a, b) => a - b));
        assert.equal(r2!.status, 200);
        assert.ok(r2!.body.endsWith(result(id2, 'second')), JSON.stringify(r2!.body.slice(-200)));
        assert.equal([...r2!.body.matchAll(/"progress":(\d+)/g)].length, 4);
        // finalSameWrite: one chunk, ended by endPlainly (its own socket cork): no corking flush.
        if (name !== 'finalSameWrite') assert.ok(socketCorkingFlushes > corks, 'the scenario made a socket-corking flush');
      });
    }
  });
}

// 17 per connection: the one answered first and the 16 a connection lets wait for their turn
// (src/routing/pipelined-turn.ts MAX_WAITING_PER_CONNECTION; one more is refused pipeline_too_deep).
test(`many interleaved requests on 4 keep-alive connections, each ${PIPELINED} pipelined`, async () => {
  const names = Object.keys(scenarios);
  const runs: Promise<void>[] = [];
  for (let c = 0; c < 4; c++) {
    const ids: number[] = [];
    const kinds: string[] = [];
    for (let i = 0; i < PIPELINED; i++) {
      const id = nextId++;
      const kind = names[(c + i) % names.length]!;
      answers.set(id, scenarios[kind]!);
      ids.push(id);
      kinds.push(kind);
    }
    runs.push(
      exchange(ids, true, 30_000).then((wire) => {
        const { responses, rest } = parseResponses(wire, ids.length);
        assert.equal(rest, '');
        responses.forEach((r, i) => {
          assert.equal(r.status, 200);
          assert.ok(r.body.endsWith('\n\n'));
          if (kinds[i] !== 'resetAfterId') assert.match(r.body.trimEnd().split('\n\n').at(-1)!, new RegExp(`"id":${ids[i]}[,}]`));
        });
      }),
    );
  }
  await Promise.all(runs);
});

test('HTTP/1.0 host (no chunking, close-delimited): the events then the answer, then the close', async () => {
  for (const kind of ['sseEventSameChunk', 'cumulative', 'finalNextWrite', 'gzipOversized']) {
    const id = nextId++;
    answers.set(id, scenarios[kind]!);
    const url = new URL(stack.gateway.agentUrl('s'));
    const wire = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = net.connect(Number(url.port), '127.0.0.1', () => socket.write(post(id).replace('HTTP/1.1', 'HTTP/1.0')));
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('timeout'));
      }, 10_000);
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
      socket.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const body = wire.slice(wire.indexOf('\r\n\r\n') + 4);
    assert.ok(body.endsWith('\n\n'), kind);
    assert.match(body.trimEnd().split('\n\n').at(-1)!, new RegExp(`"id":${id}[,}]`), kind);
  }
});
