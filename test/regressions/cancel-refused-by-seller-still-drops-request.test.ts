/**
 * Regression (a review, Low): "a cancellation the seller refuses still drops the request".
 * The gateway took a host's `notifications/cancelled` into effect when it came, before the
 * seller answered it: anyone who knew a session id (not its credentials) could have a request
 * held in a backoff wait or pipelined dropped unsent (an empty SSE stream, outcome
 * `cancelled`), and the request's resumes answered 405 without the seller, though the seller
 * refused that cancellation (401: other credentials; 404: a session it does not know).
 *
 * Now a cancellation takes effect only once the seller answers it 2xx (routing/handler.ts;
 * routing/in-flight-requests.ts PendingCancellation): a request marked meanwhile is not sent
 * before that answer (a held one whose turn comes waits for it), is sent after a refusal, and
 * nothing is remembered for resumes (routing/cancelled-requests.ts) unless it was accepted. A
 * seller answering 202 changes nothing (test/regressions/cancelled-while-held-still-sent.test.ts).
 *
 * Input (raw seller on 127.0.0.1; it answers a `notifications/cancelled` 401 when its
 * `Authorization` is not the host's, else {@link cancelStatus}): agent `b` (resume tokens on;
 * max_response_bytes 1000, backoff after one breach for 1 s): `create_media_buy` 49 breaks the
 * bound, 50 waits for its turn; agent `p`: 60 held by the seller, 61 pipelined behind it; agent
 * `r`: 70 and 71 in flight, each with one event `id: e<id>`, cut by the seller after the test
 * saw the seller's answer to the cancellation. A `tools/call` gets one event with an id and
 * its stream is cut; a resume (GET) is answered with its response.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { openRawConnection, responsesWhenWhole } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCallIdsSent, until } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-refused-cancel';
const HOST = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18', authorization: 'Bearer host' };
const OTHER = { ...HOST, authorization: 'Bearer someone-else' };

/** The seller's answer to a cancellation with the host's credentials. */
let cancelStatus = 404;
/** Answers the seller holds (60's, 62's, 64's, 70's, 71's), by id. */
const held = new Map<number, ServerResponse>();
/** Hold the next cancellation's answer (in {@link heldCancel}) until the test writes it. */
let holdCancel = false;
let heldCancel: ServerResponse | undefined;

const event = (id: number): string => `id: e${id}\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: 1 } })}\n\n`;

function answer(req: SeenRequest, res: ServerResponse): void {
  if (req.method === 'GET') {
    const id = Number(String(req.headers['last-event-id']).slice(1));
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: r${id}\ndata: ${toolResponse(id, { content: [{ type: 'text', text: `resumed ${id}` }] })}\n\n`);
    return;
  }
  const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string };
  if (msg.method === 'notifications/cancelled' && holdCancel) {
    holdCancel = false;
    heldCancel = res;
    return;
  }
  if (msg.method === 'notifications/cancelled') {
    res.writeHead(req.headers.authorization === HOST.authorization ? cancelStatus : 401).end();
    return;
  }
  if (msg.method !== 'tools/call') {
    res.writeHead(202).end();
    return;
  }
  const id = msg.id!;
  if (id === 49) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, { content: [{ type: 'text', text: 'y'.repeat(5_000) }] }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(event(id));
  if ([60, 62, 64, 70, 71].includes(id)) held.set(id, res);
  else res.end(); // cut after its event: the host resumes
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) =>
    startObservedGateway(
      agentsYaml(
        {
          b: { url: seller.url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 1000, backoff_max_ms: 1000, response_deadline_ms: 10000 },
          p: { url: seller.url },
          r: { url: seller.url, sse_idle_timeout_ms: 1000 },
        },
        RESUME_YAML,
      ),
    ),
);

/** The ids of the `tools/call`s that reached the seller, in order. */
const callsSent = (): unknown[] => toolCallIdsSent(stack.seller);

const cancel = async (agent: string, id: number, headers: Record<string, string>): Promise<number> =>
  (await rawPost(stack.gateway.agentUrl(agent), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id},"reason":"user"}}`, headers)).status;

/** Resumes from `token` at `agent`: [status, body]. */
async function resume(agent: string, token: string): Promise<[number, string]> {
  const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HOST } });
  return [res.status, await withTimeout(res.text(), 5_000, 'resume body')];
}

/** Reads a POSTed call's SSE answer until its first event: its token, and the rest of the body to come. */
async function firstEvent(res: Response): Promise<{ token: string; rest: Promise<string> }> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('\n\n')) {
    const r = await withTimeout(reader.read(), 5_000, 'first event');
    assert.ok(!r.done, `the stream ended before its first event: ${JSON.stringify(text)}`);
    text += decoder.decode(r.value, { stream: true });
  }
  const [token] = sseIds(text);
  assert.ok(token !== undefined && token.startsWith('agw1.'), text);
  const rest = (async () => {
    let more = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) more += decoder.decode(r.value, { stream: true });
    return more;
  })();
  return { token, rest };
}

/** A POSTed `create_media_buy` `id` to agent `p`, as written on a raw connection. */
function pipelined(id: number): string {
  const body = JSON.stringify(toolCall(id, 'create_media_buy'));
  return (
    `POST /agents/p/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-session-id: ${SESSION}\r\nmcp-protocol-version: 2025-06-18\r\nauthorization: ${HOST.authorization}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

const post = (agent: string, id: number): Promise<Response> =>
  fetch(stack.gateway.agentUrl(agent), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HOST },
    body: JSON.stringify(toolCall(id, 'create_media_buy')),
  });

describe('cancel-refused-by-seller-still-drops-request', { timeout: TEST_TIMEOUT_MS }, () => {
  test('held in a backoff wait, cancelled with other credentials (seller 401): still sent at its turn, its resume reaches the seller', async () => {
    assert.match((await rawPost(stack.gateway.agentUrl('b'), toolCall(49, 'create_media_buy'), HOST)).text(), /raw_bytes/);
    assert.equal((await stack.gateway.exchangeLine('b', 49)).reason, 'raw_bytes');
    const waiting = post('b', 50);
    await until('call 50 waits for its turn', () => stack.gateway.app.gateway.openExchanges === 1);
    assert.equal(await cancel('b', 50, OTHER), 401);
    const { token, rest } = await firstEvent(await withTimeout(waiting, 5_000, 'call 50 answered'));
    assert.equal(await withTimeout(rest, 5_000, 'end of the cut stream'), '');
    assert.deepEqual(callsSent(), [49, 50]);
    const [status, body] = await resume('b', token);
    assert.equal(status, 200);
    assert.match(body, /resumed 50/);
  });

  test('pipelined behind another answer, cancelled (seller 404): still sent at its turn', async () => {
    cancelStatus = 404;
    const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
    conn.socket.write(pipelined(60) + pipelined(61));
    await until('call 60 at the seller, 61 waiting for its turn', () => held.has(60) && stack.gateway.app.gateway.pipelinedWaiting === 1);
    assert.equal(await cancel('p', 61, HOST), 404);
    held.get(60)!.end();
    const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
    conn.socket.destroy();
    assert.equal(responses[1]!.status, 200);
    assert.match(responses[1]!.body, /^id: agw1\.[^\n]*\ndata: .*"progressToken":61/);
    assert.deepEqual(callsSent().slice(-2), [60, 61]);
  });

  test('in flight, cancelled (seller 404), then cut: its resume reaches the seller; accepted (202): 405 as before', async () => {
    cancelStatus = 404;
    const refused = await firstEvent(await post('r', 70));
    assert.equal(await cancel('r', 70, HOST), 404);
    held.get(70)!.end();
    assert.equal(await withTimeout(refused.rest, 5_000, 'end of the cut stream'), '');
    const [status, body] = await resume('r', refused.token);
    assert.equal(status, 200);
    assert.match(body, /resumed 70/);

    cancelStatus = 202;
    const accepted = await firstEvent(await post('r', 71));
    assert.equal(await cancel('r', 71, HOST), 202);
    held.get(71)!.end();
    assert.equal(await withTimeout(accepted.rest, 5_000, 'end of the cut stream'), '');
    assert.deepEqual(await resume('r', accepted.token), [405, '']);
    assert.equal(stack.seller.requests.filter((r) => r.method === 'GET').length, 2, "71's resume not sent");
  });

  for (const [status, sent] of [
    [202, false],
    [404, true],
  ] as const) {
    test(`pipelined, its turn comes before the seller answers the cancellation: it waits; answered ${status}: ${sent ? 'sent' : 'never sent'}`, async () => {
      const [ahead, behind] = sent ? [62, 63] : [64, 65];
      cancelStatus = status;
      const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
      conn.socket.write(pipelined(ahead) + pipelined(behind));
      await until(`call ${ahead} at the seller, ${behind} waiting for its turn`, () => held.has(ahead) && stack.gateway.app.gateway.pipelinedWaiting === 1);
      holdCancel = true;
      const cancelled = cancel('p', behind, HOST);
      await until('the seller holds the cancellation', () => heldCancel !== undefined);
      held.get(ahead)!.end();
      // The answer ahead is whole: the turn of the one behind has come, and it waits.
      await until(`${behind}'s turn`, () => conn.text().includes('0\r\n\r\n') && stack.gateway.app.gateway.pipelinedWaiting === 0);
      assert.equal(callsSent().includes(behind), false, 'not sent while the cancellation awaits its answer');
      heldCancel!.writeHead(status).end();
      heldCancel = undefined;
      assert.equal(await cancelled, status);
      const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
      conn.socket.destroy();
      assert.equal(responses[1]!.status, 200);
      if (sent) assert.match(responses[1]!.body, new RegExp(`"progressToken":${behind}`));
      else assert.deepEqual([responses[1]!.headers['content-type'], responses[1]!.body], ['text/event-stream', '']);
      assert.equal(callsSent().includes(behind), sent);
    });
  }
});
