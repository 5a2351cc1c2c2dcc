/**
 * Regression: an oversized tools/call result split across a reconnect, driven by a REAL MCP
 * SDK 1.x client (@modelcontextprotocol/sdk StreamableHTTPClientTransport).
 *
 * How the 1.x client resumes a POST stream (node_modules/@modelcontextprotocol/sdk/dist/esm/
 * client/streamableHttp.js, `_handleSseStream`): it remembers the id of every event (here,
 * gateway resume tokens) and any `retry:`; when the POST's SSE stream ends or breaks after
 * an event with an id and before the response, it schedules `_startOrAuthSse` after the
 * server's `retry` delay: a GET with `Last-Event-ID: <last id>`, whose events it reads like
 * the POST's (a response there resolves the pending call).
 *
 * Input (default limits, 4194304 bytes): initialize, notifications/initialized (the
 * client's standalone GET gets the seller's 405), then callTool(get_products). The seller
 * answers the POST over SSE: the priming event (`id: s1-0`, `retry: 30`, empty data), 6
 * logging notifications of exactly 524288 bytes (3 MiB) with ids s1-1..s1-6, then the
 * connection drops. The client resumes with the token of s1-6; the seller gets `s1-6` and
 * replays 4 more events of 524288 bytes (2 MiB), s1-7..s1-10, and never answers.
 * Expectation: the POST stream reaches the client whole and ends plainly; s1-7 ends at
 * 3670043 seller bytes and is forwarded, its token carrying that count plus what the tokens of
 * s1-0..s1-6 added to the host's stream (a token's length over its seller id's; s1-6's token
 * carries the count before its own length, and the resume from it adds that length: the
 * host received it; test/regressions/resume-loop-exceeds-cumulative-bound.test.ts); s1-8
 * crosses 4194304: the client's callTool resolves with the gateway's tool error
 * for the ORIGINAL request id, RESPONSE_TOO_LARGE `sse_cumulative`, limit_bytes 4194304,
 * observed_bytes in (4194304, 4194331 + what the tokens of s1-0..s1-7 added]
 * (4194331 = the end of s1-8).
 * Exactly 7 notifications reached the client. Bytes the host received, exactly: the POST
 * body is `retry: 500\n\n` (the seller's 30 clamped: sse-retry-field-passes-through.test.ts)
 * + the priming event + s1-1..s1-6 (ids as tokens); the GET body is
 * s1-7 (id as token) + the error frame. The seller saw exactly one GET with Last-Event-ID.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MIB, RESUME_TOKEN, expectedErrorFrame, notificationFrame, withToken, RESUME_YAML, useHostileStack } from '../support/hostile-seller.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';
import { recordingFetch, type SeenExchange } from '../helpers/recording-fetch.js';

const LIMIT = 4 * MIB;
const EVENT = 512 * 1024;
const PRIMING = 'id: s1-0\nretry: 30\ndata: \n\n';
/**
 * What the gateway's encoding of the priming block adds over its bytes (with the seller's id
 * in place of the token): its `retry:` goes out as a block of its own, with a blank line the
 * seller did not send, its value clamped to 500 (2 bytes, counted: sse-encoding-charge.ts charge,
 * sse-encode.ts clampSseRetryMs).
 */
const PRIMING_GROWTH = 'retry: 500\n\nid: s1-0\ndata: \n\n'.length - PRIMING.length;
const stack = useHostileStack(
  (seller) => ({ split: seller.url('sse-reconnect', { priming: 1, retry_ms: 30, event_bytes: EVENT, first_events: 6, second_events: 4 }) }),
  RESUME_YAML,
);

type Seen = SeenExchange;

describe('SSE resume with a real SDK client', { timeout: TEST_TIMEOUT_MS }, () => {
  test('3 MiB, drop, resume, 2 MiB more: sse_cumulative for the original id at 4 MiB', async () => {
    const seen: Seen[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(stack.gateway.agentUrl('split')), {
      fetch: recordingFetch(seen),
      // The server's retry (30 ms, clamped to 500 by the gateway) sets the delay; maxRetries
      // must be >= 1 for any reconnect.
      reconnectionOptions: { initialReconnectionDelay: 30, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 2 },
    });
    const client = new Client({ name: 'hostile-host', version: '1.0.0' });
    const notes: number[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notes.push(String(n.params.data).length));
    const tokens: string[] = [];
    try {
      await withTimeout(client.connect(transport), 10_000, 'connect');
      const result = (await withTimeout(
        client.callTool({ name: 'get_products', arguments: {} }, undefined, { onresumptiontoken: (t) => void tokens.push(t), timeout: 15_000 }),
        15_000,
        'callTool',
      )) as CallToolResult;

      const post = seen.find((s) => s.method === 'POST' && s.body?.includes('"tools/call"'));
      assert.ok(post);
      const rpcId = (JSON.parse(post.body!) as { id: number }).id;
      assert.equal(result.isError, true);
      const err = (result.structuredContent as { adcp_error: { code: string; recovery: string; details: { reason: string; limit_bytes: number; observed_bytes: number } } }).adcp_error;
      assert.equal(err.code, 'RESPONSE_TOO_LARGE');
      assert.equal(err.recovery, 'correctable');
      assert.equal(err.details.reason, 'sse_cumulative');
      assert.equal(err.details.limit_bytes, LIMIT);
      const observed = err.details.observed_bytes;
      const endOf8 = PRIMING.length + 8 * EVENT;
      assert.equal(endOf8, 4194331);
      assert.deepEqual(notes.length, 7);

      // The tokens the client stored: priming + 6 on the POST, 1 on the GET.
      assert.equal(tokens.length, 8);
      for (const t of tokens) assert.match(t, RESUME_TOKEN);
      // What each token added to the host's stream over its seller id (`s1-0`..`s1-7`: 4 bytes).
      const added = tokens.map((t) => t.length - 's1-0'.length);
      // s1-6's token included: the resume counts the token it resumed from.
      const beforeResume = added.slice(0, 7).reduce((a, b) => a + b, 0);
      const codec = createResumeCodec({ secret: RESUME_YAML[1].split(': ')[1]!, ttlMs: 60_000 });
      // Bound to the client's MCP session (resume/token.ts `h`: hostile trial 54, F6).
      const state7 = codec.verify(tokens[7]!, 'split', stack.gateway.sellerUrl('split'), [], transport.sessionId);
      assert.ok(state7.ok);
      assert.equal(PRIMING_GROWTH, 2);
      assert.equal(state7.state.usedBytes, PRIMING.length + PRIMING_GROWTH + 7 * EVENT + beforeResume);
      assert.ok(observed > LIMIT && observed <= endOf8 + PRIMING_GROWTH + beforeResume + added[7]!, `observed_bytes ${observed}`);
      const postText = await withTimeout(post.text, 5_000, 'POST body');
      const expectedPost = `retry: 500\n\nid: ${tokens[0]}\ndata: \n\n` + [1, 2, 3, 4, 5, 6].map((n) => withToken(notificationFrame(EVENT, `s1-${n}`), tokens[n]!)).join('');
      assert.equal(postText.length, expectedPost.length);
      assert.ok(postText === expectedPost, 'POST body differs');

      const resumes = seen.filter((s) => s.method === 'GET' && s.lastEventId !== null);
      assert.equal(resumes.length, 1);
      assert.equal(resumes[0]!.lastEventId, tokens[6]);
      assert.equal(resumes[0]!.status, 200);
      const getText = await withTimeout(resumes[0]!.text, 5_000, 'GET body');
      const expectedGet =
        withToken(notificationFrame(EVENT, 's1-7'), tokens[7]!) +
        expectedErrorFrame({ id: rpcId, method: 'tools/call', toolName: 'get_products', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: observed });
      assert.equal(getText.length, expectedGet.length);
      assert.ok(getText === expectedGet, 'GET body differs');

      const sellerGets = stack.seller.requestsFor('sse-reconnect').filter((q) => q.method === 'GET' && q.headers['last-event-id'] !== undefined);
      assert.deepEqual(
        sellerGets.map((q) => q.headers['last-event-id']),
        ['s1-6'],
      );
      const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === 'tools/call' && l.reason === 'sse_cumulative');
      assert.equal(line.rpc_id, rpcId);
      assert.equal(line.bytes_to_host, Buffer.byteLength(getText));
    } finally {
      await client.close();
    }
  });
});
