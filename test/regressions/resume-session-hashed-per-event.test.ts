/**
 * Reported failure (a re-read of trial 54's F6 fix, hot path): every SSE event with an id mints
 * a resume token bound to the stream's `Mcp-Session-Id` (resume/token.ts payload key `h`), and
 * `mint` computed the session's keyed hash (one HMAC-SHA256) for each event, although every
 * token of a stream carries the same one: 50 events with ids, 51 tokens (the response's too),
 * 51 hashes of the same session ID (about 3 us each of a token's 10 to 14 us).
 *
 * Now the handler (routing/handler.ts) mints through `mintFor(seller, session)`, made once per
 * exchange, which hashes the session once, at the stream's first token.
 *
 * What this test holds, without timing anything: how many HMACs are fed the session ID while
 * one stream of 50 events passes through the gateway (every `createHmac` of the process
 * watched: 51 before, 1 now), that every token carries the same `h`, the host gets every event
 * with a token, and a token of the stream still resumes in its session only (the seller gets
 * the resume with its own event id).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, sseIds, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';

const SECRET = 'resume-session-hashed-per-event-0123456789';
const SESSION = 'sess-hashed-per-event-5b1e0c7a';
const VERSION = '2025-06-18';
const EVENTS = 50;
const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(200) } });
// Each event earns its own token (response/sse-token-credit.ts: 2 bytes of token per seller byte).
const RESULT = toolResponse(7, { content: [{ type: 'text', text: 'done' }] });
const ANSWER = `${Array.from({ length: EVENTS }, (_, k) => `id: e${k}\ndata: ${NOTE}\n\n`).join('')}id: r\ndata: ${RESULT}\n\n`;

/** How many HMACs (`crypto.createHmac`, as the gateway's modules import it) were fed `text` while `run` ran. */
async function hmacsOf<T>(text: string, run: () => Promise<T>): Promise<{ fed: number; value: T }> {
  const createHmac = crypto.createHmac;
  let fed = 0;
  crypto.createHmac = ((...args: Parameters<typeof createHmac>) => {
    const hmac = createHmac(...args);
    const update = hmac.update.bind(hmac) as (data: unknown, encoding?: BufferEncoding) => crypto.Hmac;
    hmac.update = ((data: unknown, encoding?: BufferEncoding) => {
      if (data === text) fed++;
      return update(data, encoding);
    }) as typeof hmac.update;
    return hmac;
  }) as typeof crypto.createHmac;
  syncBuiltinESMExports();
  try {
    const value = await run();
    return { fed, value };
  } finally {
    crypto.createHmac = createHmac;
    syncBuiltinESMExports();
  }
}

const sessionHashOf = (token: string): unknown => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>).h;

describe('a stream bound to a session: the session hashed once, not for each event', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req: SeenRequest, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(req.method === 'POST' ? ANSWER : `id: r\ndata: ${RESULT}\n\n`);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent', 'resume:', `  secret: ${SECRET}`])),
  );

  test('50 events with ids and the response: one HMAC of the session ID, every token with the same `h`', async () => {
    const headers = { 'mcp-protocol-version': VERSION, 'mcp-session-id': SESSION };
    const { fed, value: res } = await hmacsOf(SESSION, () => withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, 'get_products'), headers)));
    assert.equal(res.status, 200);
    const text = res.text();
    const ids = sseIds(text);
    assert.equal(ids.length, EVENTS + 1);
    assert.equal(sseMessages(text).length, EVENTS + 1);
    const hashes = new Set(ids.map(sessionHashOf));
    assert.equal(hashes.size, 1);
    assert.match(String([...hashes][0]), /^[A-Za-z0-9_-]{22}$/);
    assert.equal(fed, 1);

    // The last progress token still resumes in the session: the seller gets its own event id.
    const before = stack.seller.requests.length;
    const resumed = await withTimeout(
      fetch(stack.gateway.agentUrl('acme'), { headers: { accept: 'text/event-stream', 'last-event-id': ids[EVENTS - 1]!, 'mcp-protocol-version': VERSION, 'mcp-session-id': SESSION } }),
    );
    assert.equal(resumed.status, 200);
    await resumed.text();
    const get = stack.seller.requests.slice(before).find((r) => r.method === 'GET');
    assert.equal(get?.headers['last-event-id'], `e${EVENTS - 1}`);
    assert.equal(get?.headers['mcp-session-id'], SESSION);
  });
});
