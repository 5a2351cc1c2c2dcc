/**
 * SSE resumption through gateway resume tokens (ARCHITECTURE §4; spec: the SSE bound is
 * cumulative per request, "carried across Last-Event-ID resumption rather than reset by it").
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, sseMessages, toolCall, sseIds } from '../helpers/raw.js';

const LIMIT = 8192;
const SECRET = 'test-resume-secret-0123456789abcdef';
let seller: RawSeller;
let gwA: RunningGateway;
let gwB: RunningGateway;
let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const yaml = (extra = '') =>
  `log_level: silent\nresume:\n  secret: ${SECRET}\n${extra}agents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n  other:\n    url: ${seller.url}\n`;

before(async () => {
  seller = await startRawSeller((req, res) => answer(req, res));
  gwA = await startGateway(yaml());
  gwB = await startGateway(yaml()); // a second replica sharing the secret
});
after(async () => {
  await gwA.close();
  await gwB.close();
  await seller.close();
});

const progress = (id: string, n: number, pad: number) =>
  `id: ${id}\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n},"message":"${'p'.repeat(pad)}"}}\n\n`;
async function openStream(gw: RunningGateway, rpcId: number): Promise<{ text: string; token: string; sent: number }> {
  const first = progress('s1', 1, 2000);
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(first);
    setTimeout(() => res.destroy(), 30); // drop after an event id, before the response
  };
  const r = await rawPost(gw.agentUrl('s'), toolCall(rpcId, 'list_products'), { 'mcp-protocol-version': '2025-11-25' });
  const ids = sseIds(r.text());
  assert.equal(ids.length, 1);
  return { text: r.text(), token: ids[0]!, sent: Buffer.byteLength(first) };
}

function resume(gw: RunningGateway, token: string, agent = 's') {
  return fetch(gw.agentUrl(agent), { headers: { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': '2025-11-25' } });
}

describe('resume tokens', () => {
  test('the count survives a reconnect: the replay crosses the limit and the original id gets sse_cumulative', async () => {
    const { token, sent } = await openStream(gwA, 41);
    let seenLastEventId: string | undefined;
    const replayEvent = progress('s2', 2, 2000);
    let replay = '';
    while (Buffer.byteLength(replay) < LIMIT) replay += replayEvent;
    answer = (req, res) => {
      seenLastEventId = req.headers['last-event-id'] as string;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(replay);
    };
    const r = await resume(gwA, token);
    assert.equal(r.status, 200);
    assert.equal(seenLastEventId, 's1', 'the seller gets its own event id back');
    const text = await r.text();
    const msgs = sseMessages(text);
    const last = msgs.at(-1) as { id: number; result: { structuredContent: { adcp_error: { code: string; details: Record<string, number | string> } } } };
    assert.equal(last.id, 41);
    assert.equal(last.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    assert.equal(last.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    // Exactly the replayed events that fit in LIMIT - sent bytes were delivered before the error.
    const fit = Math.floor((LIMIT - sent) / Buffer.byteLength(replayEvent));
    assert.equal(msgs.length, fit + 1);
  });

  test('a stream opened on one replica resumes on another sharing the secret, count intact', async () => {
    const { token } = await openStream(gwA, 42);
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(progress('s9', 9, 7000)); // 2.1 KB already counted + 7 KB > 8 KiB
    };
    const r = await resume(gwB, token);
    const last = sseMessages(await r.text()).at(-1) as { id: number; result: { structuredContent: { adcp_error: { details: { reason: string } } } } };
    assert.equal(last.id, 42);
    assert.equal(last.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
  });

  test('a normal resume delivers every event once, then the response ends the stream', async () => {
    const { token } = await openStream(gwA, 43);
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(progress('s2', 2, 10));
      res.write(`id: s3\nevent: message\ndata: {"jsonrpc":"2.0","id":43,"result":{"content":[{"type":"text","text":"done"}]}}\n\n`);
      res.write(': the seller keeps the stream open\n\n');
    };
    const r = await resume(gwA, token);
    const text = await r.text();
    const msgs = sseMessages(text) as Array<{ id?: number; params?: { progress: number } }>;
    assert.deepEqual(
      msgs.map((m) => m.id ?? m.params?.progress),
      [2, 43],
    );
    assert.equal(sseIds(text).length, 2);
  });

  test('refused with 400 before the seller is contacted: raw seller id, tampered, other agent', async () => {
    const { token } = await openStream(gwA, 44);
    const before = seller.requests.length;
    const tampered = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
    for (const [t, agent, reason] of [
      ['s1', 's', 'resume_token_invalid'],
      ['42', 's', 'resume_token_invalid'],
      [tampered, 's', 'resume_token_invalid'],
      [token, 'other', 'resume_token_invalid'],
    ] as const) {
      const r = await resume(gwA, t, agent);
      assert.equal(r.status, 400, `${t.slice(0, 12)} on ${agent}`);
      const body = (await r.json()) as { error: { code: number; data: { reason: string } } };
      assert.equal(body.error.code, -32600);
      assert.equal(body.error.data.reason, reason);
    }
    assert.equal(seller.requests.length, before);
  });

  test('an expired token is refused with resume_token_expired', async () => {
    const short = await startGateway(yaml('').replace(`secret: ${SECRET}\n`, `secret: ${SECRET}\n  ttl_ms: 1\n`));
    try {
      const { token } = await openStream(short, 45);
      await new Promise((r) => setTimeout(r, 20));
      const r = await resume(short, token);
      assert.equal(r.status, 400);
      assert.equal(((await r.json()) as { error: { data: { reason: string } } }).error.data.reason, 'resume_token_expired');
    } finally {
      await short.close();
    }
  });
});
