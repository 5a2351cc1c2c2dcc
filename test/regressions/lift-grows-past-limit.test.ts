/**
 * Regression (found in review of the dedupe fix, aa1b0a7): the legacy lift could still make
 * the host receive more than `max_response_bytes`. A text-only tool result whose text holds a
 * JSON object gets `,"structuredContent":` + the object appended to `result`, and the text
 * replaced by its summary sentence (up to 202 bytes as a JSON string): for a short text the
 * answer grows, by at most ~220 bytes, once per answer. With the limit set to the seller's
 * exact answer size, the host received 60, 70 and 141 bytes over the limit (reported), as
 * JSON and as a one-event SSE stream; with this file's answers, before the fix: 77 (scan and
 * parse paths), 72 (re-serialized) and 135 bytes (a 14-key summary) over, on both.
 *
 * Input: a raw seller answering `tools/call` with a legacy result (no `structuredContent`,
 * `content[0].text` a JSON object), host on 2025-06-18; the limit from `X-Max-Response-Bytes`
 * or the agent's `max_response_bytes` (and, for SSE, `max_sse_event_bytes`).
 *
 * Expected (response/rewrite-room.ts): a lift whose output would not fit the limit in force is
 * not made, and the answer goes out exactly as the seller wrote it (it fit), with no error:
 * - JSON: the rewritten body over `max_response_bytes`;
 * - SSE: the stream's count (the seller's bytes so far, with what each resume token added,
 *   across events and resumes) plus what the lift adds over `max_response_bytes`, or the
 *   rewritten data over `max_sse_event_bytes`.
 * With room for it (the limit at the lifted answer's exact size), the lift is made, byte for
 * byte as before; one byte less and the seller's answer goes out.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { createResumeCodec } from '../../src/resume/token.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { runSseStage } from '../unit/sse-stage-kit.js';

const SECRET = 'lift-grows-past-limit-secret-0123456789';
const PROTOCOL = '2025-06-18';
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });

/** The legacy payload: short, so its summary sentence is longer than its text. */
const PAYLOAD = { status: 'completed', products: [{ id: 'p1', name: 'CTV' }] };
const PAYLOAD_TEXT = JSON.stringify(PAYLOAD);
/** Its summary (summary.ts format), written out here rather than computed by the code under test. */
const SUMMARY = `Result in structuredContent (${Buffer.byteLength(PAYLOAD_TEXT)} bytes): status=completed; products[1].`;
/** A payload whose summary lists many keys: the longest growth of these cases. */
const WIDE = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`key_${i}`, i]));
const WIDE_TEXT = JSON.stringify(WIDE);
const WIDE_SUMMARY = `Result in structuredContent (${Buffer.byteLength(WIDE_TEXT)} bytes): ${Object.keys(WIDE).join(', ')}.`;

type Kind = 'scan' | 'parse' | 'reserialized' | 'wide';
const text = (t: string): { type: string; text: string } => ({ type: 'text', text: t });

/**
 * The seller's message for `kind` (JSON text) and the message the lift makes of it:
 * - `scan`: one text item: lifted from the scan (lift-splice.ts);
 * - `parse`: a later text holding another object: the parse path (normalize.ts, splice.ts);
 * - `reserialized`: a top-level key written with an escape: parsed and re-serialized;
 * - `wide`: as `scan`, with a payload whose summary is ~150 bytes.
 */
function messages(kind: Kind, id: number): { seller: string; lifted: string } {
  switch (kind) {
    case 'scan':
      return {
        seller: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(PAYLOAD_TEXT)] } }),
        lifted: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(SUMMARY)], structuredContent: PAYLOAD } }),
      };
    case 'wide':
      return {
        seller: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(WIDE_TEXT)] } }),
        lifted: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(WIDE_SUMMARY)], structuredContent: WIDE } }),
      };
    case 'parse':
      return {
        seller: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(PAYLOAD_TEXT), text('{"note":1}')] } }),
        lifted: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(SUMMARY), text('{"note":1}')], structuredContent: PAYLOAD } }),
      };
    case 'reserialized':
      return {
        seller: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(PAYLOAD_TEXT)] } }).replace('"jsonrpc"', '"jsonrp\\u0063"'),
        lifted: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [text(SUMMARY)], structuredContent: PAYLOAD } }),
      };
  }
}

/** One SSE `message` event, with the seller's id when given. */
const frame = (data: string, id?: string): string => `${id !== undefined ? `id: ${id}\n` : ''}event: message\ndata: ${data}\n\n`;
const PROGRESS = frame('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}');

interface CallArgs {
  kind: Kind;
  sse?: boolean;
  /** The seller's event id (SSE). */
  eventId?: string;
  /** A progress event before the response (SSE). */
  progress?: boolean;
}

/** The seller's body for a call. */
function sellerBody(id: number, args: CallArgs): string {
  const { seller } = messages(args.kind, id);
  if (!args.sse) return seller;
  return (args.progress ? PROGRESS : '') + frame(seller, args.eventId);
}

// Agents whose configured limits are a fixed answer's exact size (the config, not the header).
const CFG_ID = 801;
const EVENT_ID_UNCHANGED = 802;
const EVENT_ID_LIFTED = 803;

const ended = new Map<number, Exchange>();
const waiters = new Map<number, (exchange: Exchange) => void>();
const stack = useSellerAndGateway<RawSeller, RunningGateway>(
  () =>
    startRawSeller((req, res) => {
      const call = JSON.parse(req.body.toString('utf8')) as { id: number; params: { arguments: CallArgs } };
      const args = call.params.arguments;
      res.writeHead(200, { 'content-type': args.sse ? 'text/event-stream' : 'application/json' });
      res.end(sellerBody(call.id, args));
    }),
  async (seller) => {
    const gw = await startGateway(
      agentsYaml(
        {
          s: seller.url,
          cfg: { url: seller.url, max_response_bytes: Buffer.byteLength(sellerBody(CFG_ID, { kind: 'scan' })) },
          // The response limit stays 4 MiB: only the per-event bound is at the data's size.
          ev0: { url: seller.url, max_sse_event_bytes: Buffer.byteLength(messages('scan', EVENT_ID_UNCHANGED).seller) },
          ev1: { url: seller.url, max_sse_event_bytes: Buffer.byteLength(messages('scan', EVENT_ID_LIFTED).lifted) },
        },
        ['log_level: silent', 'resume:', `  secret: ${SECRET}`],
      ),
    );
    gw.app.gateway.onExchangeEnd((exchange) => {
      if (exchange.rpc.kind !== 'request') return;
      const id = exchange.rpc.id as number;
      ended.set(id, exchange);
      waiters.get(id)?.(exchange);
    });
    return gw;
  },
);

function exchangeEnd(id: number): Promise<Exchange> {
  const done = ended.get(id);
  return withTimeout(done ? Promise.resolve(done) : new Promise<Exchange>((resolve) => waiters.set(id, resolve)), undefined, `exchange ${id}`);
}

/**
 * Calls through the gateway (agent `agent`, per-call limit `limit` when given) and checks the
 * host got exactly `want` (bytes; the caller checks an answer it cannot predict), within the
 * limit, with the exchange's outcome and actions. Returns the host's body.
 */
async function call(id: number, args: CallArgs, want: string | undefined, lifted: boolean, opts: { agent?: string; limit?: number } = {}): Promise<string> {
  const headers: Record<string, string> = { 'mcp-protocol-version': PROTOCOL };
  if (opts.limit !== undefined) headers['x-max-response-bytes'] = String(opts.limit);
  const r = await withTimeout(rawPost(stack.gateway.agentUrl(opts.agent ?? 's'), toolCall(id, 'get_products', { ...args }), headers), undefined, 'the POST');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', args.sse ? /^text\/event-stream/ : /^application\/json/);
  const exchange = await exchangeEnd(id);
  const limit = exchange.limits.max_response_bytes;
  // Was: the lifted answer, 60-141 bytes over the limit.
  assert.ok(r.bytes <= limit, `the host got ${r.bytes} bytes, over the ${limit}-byte limit`);
  if (want !== undefined) assert.equal(r.text(), want);
  assert.equal(exchange.bytesToHost, r.bytes);
  assert.equal(exchange.reason, undefined);
  assert.equal(exchange.outcome, lifted ? 'rewritten' : 'ok');
  assert.deepEqual(exchange.actions, lifted ? ['lifted'] : []);
  return r.text();
}

const KINDS: readonly Kind[] = ['scan', 'parse', 'reserialized', 'wide'];
let nextId = 100;

describe('a lift that would not fit the limit is not made: the seller answer goes out as written', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const kind of KINDS) {
    test(`JSON, ${kind}: limit = the seller's size -> the seller's bytes; = the lifted size -> lifted; one less -> the seller's`, async () => {
      let id = nextId++;
      const { seller, lifted } = messages(kind, id);
      const grows = Buffer.byteLength(lifted) - Buffer.byteLength(seller);
      assert.ok(grows > 0, `the lift grows this answer (${grows} bytes)`);
      await call(id, { kind }, seller, false, { limit: Buffer.byteLength(seller) });
      // The ids below have as many digits: the same sizes.
      id = nextId++;
      await call(id, { kind }, messages(kind, id).lifted, true, { limit: Buffer.byteLength(lifted) });
      id = nextId++;
      await call(id, { kind }, messages(kind, id).seller, false, { limit: Buffer.byteLength(lifted) - 1 });
    });

    test(`SSE, one event, ${kind}: the same, counted on the stream's bytes`, async () => {
      let id = nextId++;
      const { seller, lifted } = messages(kind, id);
      await call(id, { kind, sse: true }, frame(seller), false, { limit: Buffer.byteLength(frame(seller)) });
      id = nextId++;
      await call(id, { kind, sse: true }, frame(messages(kind, id).lifted), true, { limit: Buffer.byteLength(frame(lifted)) });
      id = nextId++;
      await call(id, { kind, sse: true }, frame(messages(kind, id).seller), false, { limit: Buffer.byteLength(frame(lifted)) - 1 });
    });
  }

  test('JSON: the limit from the agent config (max_response_bytes = the seller answer size)', async () => {
    await call(CFG_ID, { kind: 'scan' }, messages('scan', CFG_ID).seller, false, { agent: 'cfg' });
  });

  test('SSE: a progress event first: the count is the stream\'s, not the one event\'s', async () => {
    let id = nextId++;
    const seller = PROGRESS + frame(messages('scan', id).seller);
    await call(id, { kind: 'scan', sse: true, progress: true }, seller, false, { limit: Buffer.byteLength(seller) });
    id = nextId++;
    const lifted = PROGRESS + frame(messages('scan', id).lifted);
    await call(id, { kind: 'scan', sse: true, progress: true }, lifted, true, { limit: Buffer.byteLength(lifted) });
  });

  test('SSE: the response event with an id: what its resume token adds is counted before the lift', async () => {
    // The token's length is known in advance: base64url of its JSON payload (only digits vary).
    // It is the response event's: it carries `final` (resume/token.ts).
    const tokenAdded = (id: number, usedBytes: number, limit: number): number =>
      codec.mint({
        upstreamId: '7',
        agent: 's',
        rpcId: id,
        method: 'tools/call',
        toolName: 'get_products',
        final: true,
        usedBytes,
        limitBytes: limit,
        protocolVersion: PROTOCOL,
        streamStartedAt: Date.now(),
      }, stack.gateway.sellerUrl('s')).length - '7'.length;
    /** The limit L = `bytes` + what the token adds under L (its digits settle at once). */
    const limitWith = (id: number, sellerBytes: number, bytes: number): number => {
      let limit = bytes + 300;
      for (let i = 0; i < 4; i++) limit = bytes + tokenAdded(id, sellerBytes, limit);
      return limit;
    };
    const args: CallArgs = { kind: 'scan', sse: true, eventId: '7' };
    for (const lifted of [false, true]) {
      const id = nextId++;
      const m = messages('scan', id);
      const sellerBytes = Buffer.byteLength(frame(m.seller, '7'));
      // Room for the seller's answer and its token, and for the lift too or not.
      const grows = Buffer.byteLength(m.lifted) - Buffer.byteLength(m.seller);
      const limit = limitWith(id, sellerBytes, sellerBytes + (lifted ? grows : 0));
      const body = await call(id, args, undefined, lifted, { limit });
      // The token is only known from the answer.
      const [token] = sseIds(body);
      assert.ok(token !== undefined);
      assert.equal(body, frame(lifted ? m.lifted : m.seller, token));
      assert.equal(Buffer.byteLength(body), limit, 'the host got exactly the limit');
      const state = codec.verify(token, 's', stack.gateway.sellerUrl('s'));
      assert.ok(state.ok);
      // Its count: the seller's bytes through the event (a token does not count itself).
      assert.equal(state.state.usedBytes, sellerBytes);
    }
  });

  test('SSE: max_sse_event_bytes at the seller data size -> the seller bytes; at the lifted data size -> lifted', async () => {
    await call(EVENT_ID_UNCHANGED, { kind: 'scan', sse: true }, frame(messages('scan', EVENT_ID_UNCHANGED).seller), false, { agent: 'ev0' });
    await call(EVENT_ID_LIFTED, { kind: 'scan', sse: true }, frame(messages('scan', EVENT_ID_LIFTED).lifted), true, { agent: 'ev1' });
  });

  test('SSE, a resumed stream (the stage, its count seeded from the token): the resumed count decides', async () => {
    const { seller, lifted } = messages('scan', 1);
    const grows = Buffer.byteLength(lifted) - Buffer.byteLength(seller);
    const used = 5_000;
    for (const crlf of [false, true]) {
      // CR LF cut before the last LF: the event is dispatched at its CR, the LF still to come
      // (counted, as the token counts it).
      const sellerFrame = crlf ? frame(seller, '7').replaceAll('\n', '\r\n') : frame(seller, '7');
      const chunks = crlf ? [sellerFrame.slice(0, -1), '\n'] : [sellerFrame];
      const sellerBytes = Buffer.byteLength(sellerFrame);
      // The kit's token for seller id `7` is `tok(7,<count>)`: what it adds is known.
      const token = `tok(7,${used + sellerBytes})`;
      const added = token.length - 1;
      for (const [limit, sent] of [
        [used + sellerBytes + added, seller],
        [used + sellerBytes + added + grows - 1, seller],
        [used + sellerBytes + added + grows, lifted],
      ] as const) {
        for (const wantsResponseMessage of [false, true]) {
          const r = await runSseStage(chunks, { usedBytes: used, agentYaml: [`max_response_bytes: ${limit}`], wantsResponseMessage });
          const what = `${crlf ? 'CR LF' : 'LF'}, limit ${limit}`;
          assert.equal(r.body, frame(sent, token), what);
          assert.ok(used + Buffer.byteLength(r.body) <= limit, what);
          assert.equal(r.exchange.reason, undefined);
          assert.equal(r.exchange.outcome, sent === seller ? 'ok' : 'rewritten');
          // The message observed (discovery sizes) is the one sent, measured on the bytes the host got
          // through it without the `id:` line carrying the resume token (hostile trial 58, 1:
          // probe-and-live-discovery-size-disagree).
          if (wantsResponseMessage) assert.deepEqual(r.observed, [{ message: JSON.parse(sent), bytes: Buffer.byteLength(r.body) - Buffer.byteLength(`id: ${token}\n`), before: { events: 0, bytes: 0 } }]);
        }
      }
    }
  });
});
