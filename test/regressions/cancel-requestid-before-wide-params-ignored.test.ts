/**
 * Regression (hostile trial 58, Medium): a host's `notifications/cancelled` whose `params` has
 * `requestId` FIRST, followed by 64 or more other members (`{"requestId":9,"m0":0,…,"m63":63}`),
 * was forwarded but matched no request: a call pipelined behind another answer on its
 * connection was still sent to the seller after its cancellation, and an open call's stream got
 * a made-up error event (the trial's `sse_idle`; here, with a seller that ends the stream on the
 * cancellation, `upstream_reset`) instead of a plain end with outcome `cancelled`. The trial ran
 * before 0585252 (mcp/cancelled-id.ts read an object's members by a scan that records only its
 * first 64, and gave up on a wider one); the order of the members never mattered, the width did.
 * Covered here for bodies the peek parses (under 1 KiB: request/peek.ts PEEK_SCAN_MIN_BYTES)
 * and scans (over it), for the three ways a call waits: pipelined, open at the seller, and
 * waiting out its agent's backoff (cancelled-while-held-still-sent's input otherwise).
 * Fails on b596433's cancelled-id.ts and peek.ts: 6 of 6.
 *
 * Input (raw seller on 127.0.0.1): agent `p` (held call ahead, a call pipelined behind it),
 * `s` (an SSE answer held after one progress event, ended by the seller when a cancellation
 * comes), `b0`/`b1` (backoff after one breach of max_response_bytes 1000, for 1 s). The
 * seller's `tools/call` ids tell what was sent.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml, type AgentYaml } from '../helpers/gateway.js';
import { openAnswer, toolCallPost } from '../helpers/open-answer.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { openRawConnection, responsesWhenWhole } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCallIdsSent, until } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-requestid-first';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };
const TOOL = 'create_media_buy';

/** The trial's cancellation of `id`: `requestId` first, then `others` members no peek reads. */
const cancelBody = (id: number, others: number): string =>
  `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}${Array.from({ length: others }, (_, i) => `,"m${i}":${i}`).join('')}}}`;

/** Below 1 KiB (the peek parses it) and above (the peek scans it); both wider than 64 members. */
const SIZES = [
  { name: 'under 1 KiB', others: 64, bytes: 633 },
  { name: 'over 1 KiB', others: 200, bytes: 2057 },
] as const;

const PROGRESS_FRAME = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } })}\n\n`;
/** Calls ahead of pipelined ones, held until the test ends them. */
const heldAhead = new Map<number, ServerResponse>();
/** Open SSE answers (agent `s`), ended by the seller when any cancellation comes. */
const openStreams: ServerResponse[] = [];

function answer(req: SeenRequest, res: ServerResponse): void {
  const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string };
  if (msg.method === 'notifications/cancelled') {
    res.writeHead(202).end();
    for (const open of openStreams.splice(0)) open.end();
    return;
  }
  if (msg.method !== 'tools/call') {
    res.writeHead(202).end();
    return;
  }
  const id = msg.id!;
  if (id === 60 || id === 62) return void heldAhead.set(id, res);
  if (id === 70 || id === 71) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(PROGRESS_FRAME);
    openStreams.push(res);
    return;
  }
  const text = id === 40 || id === 41 ? 'y'.repeat(5_000) : `done ${id}`;
  res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, { content: [{ type: 'text', text }] }));
}

const backoff = (url: string): AgentYaml => ({ url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 1000, backoff_max_ms: 1000 });

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) =>
    startObservedGateway(
      agentsYaml({ p: { url: seller.url }, s: { url: seller.url, sse_idle_timeout_ms: 1000 }, b0: backoff(seller.url), b1: backoff(seller.url) }),
    ),
);

const cancel = async (agent: string, id: number, others: number): Promise<number> => (await rawPost(stack.gateway.agentUrl(agent), cancelBody(id, others), HEADERS)).status;

const lineOf = async (agent: string, id: number): Promise<unknown[]> => {
  const l = await stack.gateway.exchangeLine(agent, id);
  return [l.outcome, l.reason, l.status, l.upstream_status];
};

/** A host's POST of tools/call `id` in the session. */
const post = (id: number): RequestInit => toolCallPost(id, TOOL, HEADERS);

function pipelined(id: number): string {
  const body = JSON.stringify(toolCall(id, TOOL));
  return (
    `POST /agents/p/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-session-id: ${SESSION}\r\nmcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

describe('cancel-requestid-before-wide-params-ignored', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the cancellations: requestId first, more than 64 members, under and over 1 KiB', () => {
    assert.deepEqual(
      SIZES.map((s) => Buffer.byteLength(cancelBody(9, s.others))),
      SIZES.map((s) => s.bytes),
    );
  });

  SIZES.forEach((size, n) => {
    test(`${size.name}: a call pipelined behind another is never sent; an empty SSE stream at its turn`, async () => {
      const [ahead, behind] = [60 + 2 * n, 61 + 2 * n];
      const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
      conn.socket.write(pipelined(ahead) + pipelined(behind));
      await until(`call ${ahead} at the seller, ${behind} waiting for its turn`, () => heldAhead.has(ahead) && stack.gateway.app.gateway.pipelinedWaiting === 1);
      assert.equal(await cancel('p', behind, size.others), 202);
      heldAhead.get(ahead)!.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(ahead, { content: [{ type: 'text', text: `done ${ahead}` }] }));
      const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
      conn.socket.destroy();
      assert.match(responses[0]!.body, new RegExp(`done ${ahead}`));
      assert.deepEqual([responses[1]!.status, responses[1]!.headers['content-type'], responses[1]!.body], [200, 'text/event-stream', '']);
      assert.deepEqual(await lineOf('p', behind), ['cancelled', null, 200, null]);
      assert.equal(toolCallIdsSent(stack.seller).includes(behind), false);
    });

    test(`${size.name}: an open call's stream ends plainly after its progress event, outcome cancelled (no made-up error)`, async () => {
      const id = 70 + n;
      const answer = await openAnswer(stack.gateway.agentUrl('s'), post(id));
      assert.equal(answer.status, 200);
      await until('the progress event', () => answer.text.includes(PROGRESS_FRAME));
      assert.equal(await cancel('s', id, size.others), 202);
      assert.equal(await withTimeout(answer.done, 5_000, 'end of stream'), PROGRESS_FRAME);
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], ['cancelled', 'upstream_reset']);
    });

    test(`${size.name}: a call waiting out its agent's backoff is answered at once with an empty SSE stream, never sent`, async () => {
      const [agent, breach, id] = [`b${n}`, 40 + n, 50 + n];
      const broke = await rawPost(stack.gateway.agentUrl(agent), toolCall(breach, TOOL), HEADERS);
      assert.match(broke.text(), /"reason\\":\\"raw_bytes\\"/);
      assert.equal((await stack.gateway.exchangeLine(agent, breach)).reason, 'raw_bytes');
      const waiting = fetch(stack.gateway.agentUrl(agent), post(id));
      await until(`call ${id} waits for its turn`, () => stack.gateway.app.gateway.openExchanges === 1);
      assert.equal(await cancel(agent, id, size.others), 202);
      const res = await withTimeout(waiting, 5_000, `call ${id} answered`);
      assert.deepEqual([res.status, res.headers.get('content-type'), await res.text()], [200, 'text/event-stream', '']);
      assert.deepEqual(await lineOf(agent, id), ['cancelled', null, 200, null]);
      assert.equal(toolCallIdsSent(stack.seller).includes(id), false);
    });
  });
});
