/**
 * Reported failure (hostile trial 25, F1; a regression of the fix for trial 24, F1): a
 * seller's connection that drops in the middle of an event had that event's bytes counted as
 * if the host had received them. The seller sends `id: C-1` with a small progress
 * notification, then the first 40,000 bytes of its ~70 KB answer event (`id: C-2`) and drops;
 * on the resume (Last-Event-ID C-1) it sends the whole answer. The host had received ~350
 * bytes, yet the stream's end noted its count with the cut-off 40 KB in it (resume/tail-ledger.ts),
 * the resume started from there, and the answer was refused RESPONSE_TOO_LARGE
 * `sse_cumulative` through an agent with max_response_bytes 100000 (docs: the count is never
 * lower than what the host received, and a cut-off event is not forwarded). Before the ledger
 * (55f6548) the same client got its 70 KB result.
 * Now the ledger takes the count through the last frame the host got (sse-stage.ts
 * `deliveredCount`).
 *
 * Input: a raw seller on 127.0.0.1 as above; a real MCP SDK 1.x client calls the tool through
 * the gateway. Expected: one resume, from C-1's token; callTool resolves with the seller's
 * result (its text, 70,000 characters), not an error; the POST stream gave the host exactly
 * `retry`, C-1's event, nothing of the cut-off event.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { answerSessionRequests, startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { recordingFetch, type SeenExchange } from '../helpers/recording-fetch.js';
import { sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const LIMIT = 100_000;

/** The answer's text length, and how many bytes of its event the POST stream sends before the drop. */
const textChars = 70_000;
const cutAfterBytes = 40_000;
let callId: number | string = 0;
let progressToken: string | number = 'p';

const progress = (): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 1, message: 'working' } });
const answerEvent = (): string => `id: C-2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: 'r'.repeat(textChars) }] } })}\n\n`;

const answer = async (req: SeenRequest, res: ServerResponse): Promise<void> => {
  const left = answerSessionRequests(req, res, 'cut');
  if (left === undefined) return;
  const { msg } = left;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (req.method === 'POST') {
    callId = msg!.id!;
    progressToken = ((msg!.params!._meta ?? {}) as { progressToken?: string | number }).progressToken ?? 'p';
    res.write(`retry: 500\nid: C-1\ndata: ${progress()}\n\n`);
    await new Promise((r) => setTimeout(r, 20));
    res.write(answerEvent().slice(0, cutAfterBytes));
    await new Promise((r) => setTimeout(r, 50));
    res.socket?.destroy();
    return;
  }
  res.end(answerEvent());
};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ cut: { url: seller.url, max_response_bytes: LIMIT, sse_deadline_ms: 60_000 } }, RESUME_YAML)),
);

async function callThroughGateway(): Promise<{ result: CallToolResult; postText: string; gets: SeenExchange[] }> {
  const seen: SeenExchange[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(stack.gateway.agentUrl('cut')), {
    fetch: recordingFetch(seen),
    reconnectionOptions: { initialReconnectionDelay: 30, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 2 },
  });
  const client = new Client({ name: 'host', version: '1.0.0' });
  try {
    await withTimeout(client.connect(transport), 10_000, 'connect');
    const result = (await withTimeout(client.callTool({ name: 'cut', arguments: {} }, undefined, { onprogress: () => {}, timeout: 15_000 }), 15_000, 'callTool')) as CallToolResult;
    const post = seen.find((s) => s.method === 'POST' && s.body?.includes('"tools/call"'));
    assert.ok(post);
    const postText = await withTimeout(post.text, 5_000, 'POST body');
    return { result, postText, gets: seen.filter((s) => s.method === 'GET' && s.lastEventId !== null) };
  } finally {
    await client.close();
  }
}

describe('an event cut off by the seller\'s drop, then the resume', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the 40 KB the host never received do not count: the 70 KB answer arrives', async () => {
    const { result, postText, gets } = await callThroughGateway();
    assert.equal(result.isError, undefined, JSON.stringify(result).slice(0, 300));
    assert.deepEqual(result.content, [{ type: 'text', text: 'r'.repeat(70_000) }]);
    const [postToken] = sseIds(postText);
    assert.match(postToken!, RESUME_TOKEN);
    // Nothing of the cut-off event reached the host.
    assert.equal(postText, `retry: 500\n\nid: ${postToken}\ndata: ${progress()}\n\n`);
    assert.equal(gets.length, 1);
    assert.equal(gets[0]!.lastEventId, postToken);
  });

});
