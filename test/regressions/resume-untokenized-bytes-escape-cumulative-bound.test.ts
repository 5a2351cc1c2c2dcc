/**
 * Reported failure (hostile trial 24, F1): the cumulative bound on a POST's SSE stream
 * (`max_response_bytes`, "counted across Last-Event-ID resumes") was bypassed without limit.
 * The seller sends `retry: 1`, one small event `id: L-1`, then 3 progress notifications of
 * ~30 KB WITHOUT an id, and drops the connection; every resume (Last-Event-ID L-1) gets L-1
 * again, the same bulk, and the same drop. The bytes after the stream's last token are in no
 * token, so a resume from that token started counting from its older count: a real MCP SDK
 * client's one callTool got 20 resumes and 1,802,397 bytes through an agent with
 * max_response_bytes 100000 (18x the bound), each resumed exchange logged `resumable_end`,
 * never `sse_cumulative`.
 * Now (src/resume/tail-ledger.ts; sse-event-ids.ts `noteTail`) a stream that ends resumable with
 * bytes after the last token the host took as its Last-Event-ID is remembered, keyed by that
 * token, with its count at its end, and a resume from it starts from that count
 * (routing/resumed-stream.ts resumedCount): the bound trips at the same byte as on one unbroken
 * stream holding the same events.
 *
 * Input: a raw seller on 127.0.0.1 (the trial's modes/loop.mjs) answering up to 12 resumes
 * that way, then the call's result; agent `max_response_bytes: 100000`; a real MCP SDK 1.x
 * client (maxRetries 2) calls the tool through the gateway, progress handler on.
 * Expected: one resume (Last-Event-ID the token of L-1 on the POST stream; the seller gets
 * `L-1`); callTool resolves with the gateway's tool error for the call's id,
 * RESPONSE_TOO_LARGE `sse_cumulative`, limit_bytes 100000; the host received, before that
 * error event, the POST stream (`retry: 500`, L-1 with its token, the 3 notifications) and L-1
 * again with a new token: at most 100000 bytes, and those bytes plus the next notification's
 * frame over 100000 (the bound trips at the frame where one unbroken stream's would);
 * observed_bytes is exactly those bytes plus that frame. The resumed exchange's line says
 * reason `sse_cumulative`. 5 progress notifications reached the client (L-1 twice).
 * Was: 12 resumes, the call's result (`done after 12 resumes`), 1,088,765 bytes to the host.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { answerSessionRequests, startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { recordingFetch, type SeenExchange } from '../helpers/recording-fetch.js';
import { sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const LIMIT = 100_000;
/** Resumes after which the seller answers the call (the trial's K). */
const MAX_RESUMES = 12;
const BULK_CHARS = 30_000;

let resumes = 0;
let callId: number | string = 0;
let progressToken: string | number = 'p';
const progress = (n: number, size: number): string =>
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: n, message: 'x'.repeat(size) } });
/** A notification of the bulk, as the seller frames it (and the gateway forwards it: LF-only, `data: ` with the space). */
const bulkFrame = (n: number): string => `data: ${progress(n, BULK_CHARS)}\n\n`;

const answer = async (req: SeenRequest, res: ServerResponse): Promise<void> => {
  const left = answerSessionRequests(req, res, 'loop');
  if (left === undefined) return;
  const { msg } = left;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (req.method === 'POST') {
    resumes = 0;
    callId = msg!.id!;
    progressToken = ((msg!.params!._meta ?? {}) as { progressToken?: string | number }).progressToken ?? 'p';
    res.write(`retry: 1\nid: L-1\ndata: ${progress(1, 10)}\n\n`);
  } else {
    resumes++;
    res.write(`id: L-1\ndata: ${progress(1, 10)}\n\n`);
  }
  if (resumes >= MAX_RESUMES) {
    res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: `done after ${resumes} resumes` }] } })}\n\n`);
    return;
  }
  for (let i = 0; i < 3; i++) {
    res.write(bulkFrame(2 + i));
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 50));
  res.socket?.destroy();
};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ loop: { url: seller.url, max_response_bytes: LIMIT, sse_deadline_ms: 60_000 } }, RESUME_YAML)),
);

describe('bytes without an id after the last token, then a drop, on every resume', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a real SDK client: sse_cumulative at the frame one unbroken stream trips at', async (t) => {
    const seen: SeenExchange[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(stack.gateway.agentUrl('loop')), {
      fetch: recordingFetch(seen),
      reconnectionOptions: { initialReconnectionDelay: 30, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 2 },
    });
    const client = new Client({ name: 'hostile-host', version: '1.0.0' });
    let notes = 0;
    try {
      await withTimeout(client.connect(transport), 10_000, 'connect');
      const result = (await withTimeout(
        client.callTool({ name: 'loop', arguments: {} }, undefined, { onprogress: () => void notes++, timeout: 15_000 }),
        15_000,
        'callTool',
      )) as CallToolResult;

      const post = seen.find((s) => s.method === 'POST' && s.body?.includes('"tools/call"'));
      assert.ok(post);
      const postText = await withTimeout(post.text, 5_000, 'POST body');
      const gets = seen.filter((s) => s.method === 'GET' && s.lastEventId !== null);
      const getTexts = await withTimeout(Promise.all(gets.map((g) => g.text)), 5_000, 'GET bodies');
      const hostBytes = Buffer.byteLength(postText) + getTexts.reduce((n, t) => n + Buffer.byteLength(t), 0);
      assert.equal(result.isError, true, `${gets.length} resumes, ${hostBytes} bytes to the host, result ${JSON.stringify(result).slice(0, 120)}`);
      const err = (result.structuredContent as { adcp_error: { code: string; details: { reason: string; limit_bytes: number; observed_bytes: number } } }).adcp_error;
      assert.equal(err.code, 'RESPONSE_TOO_LARGE');
      assert.equal(err.details.reason, 'sse_cumulative');
      assert.equal(err.details.limit_bytes, LIMIT);

      // One resume, from the token of L-1 on the POST stream; the seller got L-1.
      assert.equal(gets.length, 1);
      assert.equal(resumes, 1);
      const [postToken] = sseIds(postText);
      assert.match(postToken!, RESUME_TOKEN);
      assert.equal(gets[0]!.lastEventId, postToken);
      assert.equal(stack.seller.requests.filter((q) => q.method === 'GET' && q.headers['last-event-id'] === 'L-1').length, 1);
      assert.equal(postText, `retry: 500\n\nid: ${postToken}\ndata: ${progress(1, 10)}\n\n${bulkFrame(2)}${bulkFrame(3)}${bulkFrame(4)}`);

      // The resumed stream: L-1 again with a new token, then the error (the first notification does not fit).
      const getText = getTexts[0]!;
      const [getToken] = sseIds(getText);
      assert.match(getToken!, RESUME_TOKEN);
      const errorFrame = expectedErrorFrame({ id: callId, method: 'tools/call', toolName: 'loop', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: err.details.observed_bytes });
      assert.equal(getText, `id: ${getToken}\ndata: ${progress(1, 10)}\n\n${errorFrame}`);
      const received = hostBytes - Buffer.byteLength(errorFrame);
      // As on one unbroken stream holding the same events: all that fit, and the next frame would not.
      assert.ok(received <= LIMIT, `the host received ${received} bytes before the error`);
      assert.ok(received + Buffer.byteLength(bulkFrame(2)) > LIMIT, `the host received ${received} bytes before the error`);
      assert.equal(err.details.observed_bytes, received + Buffer.byteLength(bulkFrame(2)));
      assert.equal(notes, 5);

      const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === 'tools/call' && l.reason === 'sse_cumulative');
      assert.equal(line.rpc_id, callId);
      t.diagnostic(`the host received ${received} bytes before the sse_cumulative error (limit ${LIMIT})`);
    } finally {
      await client.close();
    }
  });
});
