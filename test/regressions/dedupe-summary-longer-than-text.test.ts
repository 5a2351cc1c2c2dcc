/**
 * Regression (a new user's trial): the dedupe replaced each `content[].text` copy of
 * `structuredContent` by its summary sentence even when the copy was shorter than the
 * sentence, so the answer grew, past the per-call limit the gateway promises to enforce.
 *
 * Reported: 20,000 items `{"type":"text","text":"{\"a\":1}"}` with structuredContent
 * `{"a":1}`, host on 2025-06-18 with `X-Max-Response-Bytes: 1000000`: the seller's 700,075
 * bytes reached the host as 1,340,075 (`bytes_saved` -640,000). With `max_json_nodes: 1000000`
 * and 110,000 items `"{}"` (structuredContent `{}`): 3,080,070 bytes became 8,250,070 as JSON,
 * and 8,250,319 over SSE as one event, with no `sse_cumulative` error.
 *
 * Expectation: a copy whose JSON string (as the seller wrote it) is no longer than the
 * summary's stays exactly as written; longer copies in the same answer are still replaced
 * (normalize.ts summaryShortens, dedupe-splice.ts). A dedupe never grows an answer:
 * bytes_to_host <= bytes from the seller, so within the limit the seller's answer was within.
 * Here with 2,000 items, over JSON and SSE, with the limit set to the seller's exact size.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const ITEMS = 2_000;
const text = (t: string): { type: string; text: string } => ({ type: 'text', text: t });
const message = (id: number, result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, result });

/** `{"a":1}` written with every character as a `\u` escape: a byte copy longer than its 43-byte summary. */
const ESCAPED_COPY = `"${[...'{"a":1}'].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
/** A deep-equal copy of `{"a":1}` spaced out: longer than its summary (the parse path's copy). */
const SPACED_COPY = `{ "a" : ${' '.repeat(60)}1 }`;

/** The seller's answer to tool `name` (with request id `id`), as the exact bytes it sends. */
function answer(name: string, id: number): string {
  switch (name) {
    case 'short-copies':
      return message(id, { structuredContent: { a: 1 }, content: Array.from({ length: ITEMS }, () => text('{"a":1}')) });
    case 'empty-copies':
      return message(id, { structuredContent: {}, content: Array.from({ length: ITEMS }, () => text('{}')) });
    case 'mixed-scan':
      // Within the 16 items the scan locates: the byte path (dedupe-splice.ts) decides.
      return `{"jsonrpc":"2.0","id":${id},"result":{"structuredContent":{"a":1},"content":[{"type":"text","text":"{\\"a\\":1}"},{"type":"text","text":${ESCAPED_COPY}},{"type":"text","text":"{\\"a\\":1}"},{"type":"text","text":"Found a."}]}}`;
    case 'mixed-parse':
      // A deep-equal copy that is no byte copy, among many short ones: the parse path (normalize.ts) decides.
      return message(id, { structuredContent: { a: 1 }, content: [text('{"a":1}'), text(SPACED_COPY), ...Array.from({ length: ITEMS }, () => text('{"a":1}'))] });
    default:
      throw new Error(name);
  }
}

/** What the host must get for tool `name`: the seller's bytes, but for the long copies replaced by their summary. */
function expected(name: string, id: number): string {
  const seller = answer(name, id);
  switch (name) {
    case 'mixed-scan':
      return seller.replace(ESCAPED_COPY, JSON.stringify('Result in structuredContent (7 bytes): a.'));
    case 'mixed-parse':
      return seller.replace(JSON.stringify(SPACED_COPY), JSON.stringify(`Result in structuredContent (${Buffer.byteLength(SPACED_COPY)} bytes): a.`));
    default:
      return seller;
  }
}

/** One SSE `message` event carrying `data` (one line). */
const sseFrame = (data: string): string => `event: message\ndata: ${data}\n\n`;

let seller: RawSeller;
let gw: RunningGateway;
const ended = new Map<number, Exchange>();
const waiters = new Map<number, (exchange: Exchange) => void>();

before(async () => {
  seller = await startRawSeller((req, res) => {
    const call = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string; arguments: { sse?: boolean } } };
    const body = answer(call.params.name, call.id);
    if (call.params.arguments.sse) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sseFrame(body));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    }
  });
  gw = await startGateway(agentsYaml({ s: { url: seller.url, max_json_nodes: 1_000_000 } }, ['log_level: silent']));
  gw.app.gateway.onExchangeEnd((exchange) => {
    if (exchange.rpc.kind !== 'request') return;
    const id = exchange.rpc.id as number;
    ended.set(id, exchange);
    waiters.get(id)?.(exchange);
  });
});
after(async () => {
  await gw.close();
  await seller.close();
});

function exchangeEnd(id: number): Promise<Exchange> {
  const done = ended.get(id);
  return done ? Promise.resolve(done) : new Promise((resolve) => waiters.set(id, resolve));
}

/** The data of the SSE body's events, joined (one event here). */
function sseData(body: string): string {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).replace(/^ /, ''))
    .join('\n');
}

let nextId = 1;

/** Calls tool `name` through the gateway with the per-call limit at the seller's exact size; checks the host's answer. */
async function check(name: string, sse: boolean): Promise<{ exchange: Exchange; sellerBytes: number; hostBytes: number }> {
  const id = nextId++;
  const sellerBody = answer(name, id);
  const sellerBytes = Buffer.byteLength(sellerBody);
  // The limit: the seller's exact answer (the SSE count includes the event's framing).
  const limit = sellerBytes + (sse ? Buffer.byteLength(sseFrame('')) : 0);
  const r = await rawPost(gw.agentUrl('s'), toolCall(id, name, { sse }), {
    'mcp-protocol-version': '2025-06-18',
    'x-max-response-bytes': String(limit),
  });
  assert.equal(r.status, 200);
  const want = expected(name, id);
  // Compared without printing 70 KB on a failure.
  const got = sse ? sseData(r.text()) : r.text();
  if (sse) assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.ok(got === want, `the host's answer (${Buffer.byteLength(got)} bytes, seller ${sellerBytes}, expected ${Buffer.byteLength(want)}) starts ${got.slice(0, 300)}`);
  const exchange = await exchangeEnd(id);
  assert.equal(exchange.bytesToHost, r.bytes);
  assert.ok(exchange.bytesToHost <= exchange.bytesFromSeller, `bytes_to_host ${exchange.bytesToHost} > bytes_from_seller ${exchange.bytesFromSeller}`);
  assert.ok(exchange.bytesToHost <= limit, `bytes_to_host ${exchange.bytesToHost} over the ${limit}-byte limit`);
  assert.equal(exchange.bytesSaved, sellerBytes - Buffer.byteLength(want));
  assert.ok(exchange.bytesSaved >= 0, `bytes_saved ${exchange.bytesSaved}`);
  return { exchange, sellerBytes, hostBytes: r.bytes };
}

describe('a copy shorter than its summary stays as written: a dedupe never grows the answer', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const sse of [false, true]) {
    const via = sse ? 'SSE' : 'JSON';

    test(`${via}: 2,000 copies of {"a":1} go out as the seller wrote them, within the limit`, async () => {
      const { exchange, sellerBytes, hostBytes } = await check('short-copies', sse);
      assert.equal(exchange.outcome, 'ok');
      assert.deepEqual(exchange.actions, []);
      if (!sse) assert.equal(hostBytes, sellerBytes);
    });

    test(`${via}: 2,000 copies of {} (structuredContent {}) go out as the seller wrote them, within the limit`, async () => {
      const { exchange, sellerBytes, hostBytes } = await check('empty-copies', sse);
      assert.equal(exchange.outcome, 'ok');
      assert.deepEqual(exchange.actions, []);
      if (!sse) assert.equal(hostBytes, sellerBytes);
    });

    test(`${via}: mixed, from the scan: the long (escaped) copy replaced, the short ones kept`, async () => {
      const { exchange, sellerBytes, hostBytes } = await check('mixed-scan', sse);
      assert.equal(exchange.outcome, 'rewritten');
      assert.deepEqual(exchange.actions, ['deduped']);
      assert.equal(exchange.bytesSaved, 1, 'the 44-byte escaped copy became the 43-byte summary');
      if (!sse) assert.equal(hostBytes, sellerBytes - 1);
    });

    test(`${via}: mixed, parsed: the long (spaced) copy replaced, the 2,000 short ones kept`, async () => {
      const { exchange, sellerBytes, hostBytes } = await check('mixed-parse', sse);
      assert.equal(exchange.outcome, 'rewritten');
      assert.deepEqual(exchange.actions, ['deduped']);
      assert.ok(exchange.bytesSaved > 0);
      if (!sse) assert.ok(hostBytes < sellerBytes);
    });
  }
});
