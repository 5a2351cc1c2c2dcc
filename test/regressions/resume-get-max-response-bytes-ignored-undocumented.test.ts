/**
 * Regression (a hostile new user's trial 15, L3c, Low, docs): `X-Max-Response-Bytes` on a GET
 * that resumes a request's SSE stream (`Last-Event-ID: <token>`) was ignored without a word:
 * the stream's limit comes from its resume token (the call's own, as the POST set it), so a
 * resume with a larger value raised nothing and one with a smaller value lowered nothing. The
 * behaviour is the intended one (the limit is the whole stream's, counted across resumes:
 * `max_response_bytes` is per message), but docs/configuration.md, which documents the header,
 * did not say it. Now its "`X-Max-Response-Bytes`: per-call limit" section does; a malformed
 * value on such a GET is still refused 400, as on any request.
 *
 * Input: an agent with `max_response_bytes: 20000` before a raw seller whose POST answer is one
 * event with an id, then a dropped connection; its resume answer (GET, `Last-Event-ID: e1`) is
 * the response, 3,000 bytes of data. A POST with `X-Max-Response-Bytes: 1000` resumed with
 * `X-Max-Response-Bytes: 20000`; a POST without the header resumed with `X-Max-Response-Bytes:
 * 500`; a resume with `X-Max-Response-Bytes: abc`.
 * Expected: the first resume ends `sse_cumulative` with `limit_bytes` 1000 (the token's limit);
 * the second passes the response whole (the agent's 20000); the third is refused 400
 * `invalid_request`; the doc says what happens.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { REPO } from '../helpers/repo.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const PROGRESS = 'id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';
/** The response the resume carries: 3,000 bytes of data, over 1000 and 500, under 20000. */
const RESPONSE = toolResponse(1, { content: [{ type: 'text', text: 'x'.repeat(3_000 - toolResponse(1, { content: [{ type: 'text', text: '' }] }).length) }] });

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.method === 'GET') return void res.end(`data: ${RESPONSE}\n\n`);
      res.write(PROGRESS);
      setTimeout(() => res.destroy(), 20);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: 20000 } }, RESUME_YAML)),
);

/** POSTs the call (with `headers`), returns the resume token of its first event. */
async function opened(headers: Record<string, string>): Promise<string> {
  const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(1, 'get_products'), headers);
  const [token] = sseIds(r.text());
  assert.ok(token !== undefined, r.text());
  return token;
}

async function resume(token: string, xMax: string): Promise<{ status: number; text: string }> {
  const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, 'x-max-response-bytes': xMax } });
  return { status: res.status, text: await res.text() };
}

describe("X-Max-Response-Bytes on a resuming GET: the token's limit holds, and the doc says so", { timeout: TEST_TIMEOUT_MS }, () => {
  test('POST with 1000, resumed with 20000: still 1000 (sse_cumulative, limit_bytes 1000)', async () => {
    assert.equal(RESPONSE.length, 3_000);
    const r = await resume(await opened({ 'x-max-response-bytes': '1000' }), '20000');
    assert.equal(r.status, 200);
    const [last] = sseMessages(r.text).slice(-1) as Array<{ result?: { structuredContent?: { adcp_error?: { details?: Record<string, unknown> } } } }>;
    const details = last?.result?.structuredContent?.adcp_error?.details;
    assert.deepEqual([details?.reason, details?.limit_bytes], ['sse_cumulative', 1000], r.text);
  });

  test("POST without it, resumed with 500: the agent's 20000 (the response passes whole)", async () => {
    const r = await resume(await opened({}), '500');
    assert.equal(r.status, 200);
    assert.deepEqual(sseMessages(r.text), [JSON.parse(RESPONSE)]);
  });

  test('a malformed value on the resuming GET is refused 400 invalid_request, as on any request', async () => {
    const r = await resume(await opened({}), 'abc');
    assert.equal(r.status, 400);
    assert.match(r.text, /"reason":"invalid_request"/);
  });

  test('docs/configuration.md says it where X-Max-Response-Bytes is documented (was: nothing)', () => {
    const doc = readFileSync(join(REPO, 'docs/configuration.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## `X-Max-Response-Bytes`: per-call limit'), doc.indexOf('## `${VAR}`'));
    assert.ok(
      section.includes(
        '- On a GET that resumes a stream (`Last-Event-ID` with a resume token), the limit is the\n' +
          "  stream's own, carried in its token: the one its POST got (with that POST's\n" +
          "  `X-Max-Response-Bytes`, if any), since it bounds the whole stream across resumes. The GET's\n" +
          '  own `X-Max-Response-Bytes` is ignored: it neither raises nor lowers it (a malformed one is\n' +
          '  still refused 400).',
      ),
      section,
    );
  });
});
