/**
 * Regression (hostile trial 54, F6): a resume token was not bound to the MCP session its
 * stream belonged to. A token minted on a stream of session A, sent as `Last-Event-ID` with
 * session B's `Mcp-Session-Id` (or with none), verified and was forwarded to the seller with
 * session B's id and session A's stream's event id (the SDK seller answered 200 and sent
 * nothing): a host of one session could ask a seller to replay another session's stream,
 * under its count and limits.
 *
 * Now (src/resume/token.ts) a token minted for a request that carried an `Mcp-Session-Id`
 * holds a keyed hash of it (payload key `h`: 16 bytes of HMAC-SHA256 under a key derived from
 * the resume secret; the session ID itself is not in the token); a resume with another
 * `Mcp-Session-Id`, or none, is refused `resume_token_invalid` (400, its own message), no
 * seller contacted. Compatibility (a rolling restart, one secret): a token without `h` (minted
 * by an older process, or for a request without a session) resumes as before, whatever the
 * session, until it expires.
 *
 * Input: a raw seller that answers a POSTed tools/call with a progress notification as
 * `id: c-1`, then ends its stream before the result (a break), and a GET with the result as
 * `id: c-2`; the gateway with a resume secret; the call POSTed with `Mcp-Session-Id: sess-A`.
 * Expected: its token resumed with `sess-B` gets exactly the session refusal, with no
 * `Mcp-Session-Id` the missing-session refusal, each logged, no GET reaching the seller;
 * controls: with `sess-A` the resume reaches the seller (`Last-Event-ID: c-1`, `sess-A`); the
 * same payload without `h`, signed as an older process signed it, resumes with `sess-B`; a
 * call POSTed without a session has a token that resumes with any.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { signedToken } from '../helpers/resume-codec.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';

const SECRET = 'resume-token-other-session-forwarded-0123456789';
const VERSION = '2025-06-18';
const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
const OTHER_SESSION =
  'Last-Event-ID resume token belongs to another MCP session than this request\'s Mcp-Session-Id: a stream is resumed only in the session it was opened in (send the Mcp-Session-Id of that session).';
const NO_SESSION =
  'Last-Event-ID resume token belongs to an MCP session, and this request carries no Mcp-Session-Id: send the Mcp-Session-Id of the session the stream was opened in.';

describe('a resume token of one MCP session resumed in another (hostile trial 54, F6)', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req: SeenRequest, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (req.method === 'POST') res.end(`id: c-1\ndata: ${PROGRESS}\n\n`);
        else res.end(`id: c-2\ndata: ${toolResponse(Number(new URL(req.url, 'http://x').searchParams.get('rpc')), { content: [{ type: 'text', text: 'done' }] })}\n\n`);
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url }, ['resume:', `  secret: ${SECRET}`])),
  );
  const gets = (): SeenRequest[] => stack.seller.requests.filter((r) => r.method === 'GET');

  /** POSTs tools/call `rpcId` (with `session` when given) and returns the token of `c-1`. */
  async function tokenOf(rpcId: number, session: string | undefined): Promise<string> {
    const headers: Record<string, string> = { 'mcp-protocol-version': VERSION, ...(session === undefined ? {} : { 'mcp-session-id': session }) };
    const r = await withTimeout(rawPost(`${stack.gateway.agentUrl('s')}?rpc=${rpcId}`, toolCall(rpcId, 'get_delivery'), headers), undefined, 'the POST');
    assert.equal(r.status, 200);
    const [token] = sseIds(r.text());
    assert.ok(token !== undefined && token.startsWith('agw1.'), r.text());
    return token;
  }

  function resume(token: string, rpcId: number, session: string | undefined): Promise<Response> {
    const headers: Record<string, string> = { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': VERSION };
    if (session !== undefined) headers['mcp-session-id'] = session;
    return withTimeout(fetch(`${stack.gateway.agentUrl('s')}?rpc=${rpcId}`, { headers }), undefined, 'the resume');
  }

  async function assertRefused(token: string, rpcId: number, session: string | undefined, message: string): Promise<void> {
    const before = gets().length;
    const linesBefore = stack.gateway.lines.length;
    const r = await resume(token, rpcId, session);
    assert.equal(r.status, 400);
    assert.equal(await r.text(), JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason: 'resume_token_invalid' } } }));
    assert.equal(gets().length, before, 'the seller got no GET');
    const line = await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= linesBefore);
    assert.deepEqual({ reason: line.reason, status: line.status, http_method: line.http_method }, { reason: 'resume_token_invalid', status: 400, http_method: 'GET' });
  }

  async function assertForwarded(token: string, rpcId: number, session: string | undefined): Promise<void> {
    const before = gets().length;
    const r = await resume(token, rpcId, session);
    assert.equal(r.status, 200);
    assert.match(await r.text(), /"text":"done"/);
    const sent = gets().slice(before);
    assert.deepEqual(
      sent.map((g) => ({ lastEventId: g.headers['last-event-id'], session: g.headers['mcp-session-id'] })),
      [{ lastEventId: 'c-1', session }],
    );
  }

  test("session A's token with session B's Mcp-Session-Id: refused, not forwarded", async () => {
    await assertRefused(await tokenOf(1, 'sess-A'), 1, 'sess-B', OTHER_SESSION);
  });

  test("session A's token with no Mcp-Session-Id: refused, not forwarded", async () => {
    await assertRefused(await tokenOf(2, 'sess-A'), 2, undefined, NO_SESSION);
  });

  test("control: session A's token with session A's Mcp-Session-Id resumes at the seller", async () => {
    await assertForwarded(await tokenOf(3, 'sess-A'), 3, 'sess-A');
  });

  test('compatibility: the same payload without the session hash (an older process, same secret) resumes in any session', async () => {
    const token = await tokenOf(4, 'sess-A');
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    delete payload.h;
    await assertForwarded(signedToken(SECRET, payload, stack.gateway.sellerUrl('s')), 4, 'sess-B');
  });

  test('a token minted for a request without a session resumes with any session', async () => {
    await assertForwarded(await tokenOf(5, undefined), 5, 'sess-B');
  });
});
