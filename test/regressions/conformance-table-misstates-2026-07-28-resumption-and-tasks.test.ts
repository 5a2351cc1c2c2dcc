/**
 * Reported failure (hostile trial 39, item 3, docs): README's "MCP revisions and conformance"
 * table said `Last-Event-ID` resumption is "none" on 2026-07-28, and tasks "none" on
 * 2025-06-18 and "the rest untouched" on 2026-07-28. What the gateway does (unchanged here):
 * - on 2026-07-28 it tokenizes a POST stream's event ids and resumes a GET with such a token
 *   as on every revision (the seller gets its own event id; a seller's 405 is answered
 *   `upstream_status`); from the token of the event that carried the response, HTTP 200 and an
 *   empty SSE stream held open (`already_answered`, the seller not contacted) until the
 *   agent's `sse_idle_timeout_ms`, then ended after one event `id:` with that token (the trial
 *   saw 200 and a stream held open);
 * - `tasks/result` is normalized like `tools/call` on every revision from 2025-06-18
 *   (response/rewrite.ts TOOL_RESULT_METHODS), 2026-07-28 included.
 * Now the table says so.
 *
 * Input: a raw seller behind the real gateway (`sse_idle_timeout_ms: 700`): a 2026-07-28
 * `tasks/get` answered over SSE with `id: e1` (a status notification) and `id: e2` (the
 * response), GETs resuming from each token (the seller replays the response for `e1`), a
 * `tools/call` stream broken after `id: p1` resumed against a seller whose GET answers 405,
 * and `tasks/result` answers with a liftable text on 2025-06-18 and 2026-07-28. Expectation:
 * the exact bytes and exchange lines, and the table's cells.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, sseMessages } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { REPO } from '../helpers/repo.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const V = '2026-07-28';
const IDLE_MS = 700;
const STATUS = '{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}';
const taskGet = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"result":{"resultType":"complete","taskId":"t1","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,"result":{"content":[{"type":"text","text":"done"}]}}}`;
const LIFTABLE = '{"status":"ok","a":1}';
const toolResult = (id: number): string => `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(LIFTABLE)}}]}}`;

/** The id of the last call the seller answered over SSE (a resumed GET replays its response). */
let lastId = 0;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const gone = req.url.includes('gone');
      if (req.method === 'GET') {
        if (gone) return void res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Method not allowed."}}');
        return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: e2\ndata: ${taskGet(lastId)}\n\n`);
      }
      const call = JSON.parse(req.body.toString('utf8')) as { id: number; method: string };
      lastId = call.id;
      if (call.method === 'tasks/result') return void res.writeHead(200, { 'content-type': 'application/json' }).end(toolResult(call.id));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (gone) {
        res.write('id: p1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
        return void setTimeout(() => res.destroy(), 20);
      }
      res.end(`id: e1\ndata: ${STATUS}\n\nid: e2\ndata: ${taskGet(call.id)}\n\n`);
    }),
  (seller) =>
    startObservedGateway(
      agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: IDLE_MS }, g: { url: seller.url.replace('/mcp', '/gone'), sse_idle_timeout_ms: IDLE_MS } }, RESUME_YAML),
    ),
);

const HEADERS = { 'mcp-protocol-version': V };
const gets = (): number => stack.seller.requests.filter((q) => q.method === 'GET').length;

async function tokensOfTaskGet(id: number): Promise<string[]> {
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', id, method: 'tasks/get', params: { taskId: 't1' } }, HEADERS));
  assert.equal(r.status, 200);
  const ids = sseIds(r.text());
  assert.equal(ids.length, 2, r.text());
  return ids;
}

describe('on 2026-07-28 the gateway resumes Last-Event-ID streams, and normalizes tasks/result from 2025-06-18 on; the table says so', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a 2026-07-28 POST stream: the seller event ids go out as gateway tokens', async () => {
    const ids = await tokensOfTaskGet(100);
    for (const token of ids) assert.match(token, /^agw1\./);
  });

  test('a GET resuming from a token of an event before the response: sent to the seller with its own id, the response reaches the host', async () => {
    const [first] = await tokensOfTaskGet(101);
    const before = gets();
    const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': first!, ...HEADERS } }));
    assert.equal(res.status, 200);
    assert.deepEqual(sseMessages(await res.text()), [JSON.parse(taskGet(101))]);
    assert.equal(gets(), before + 1);
    const get = stack.seller.requests.filter((q) => q.method === 'GET').at(-1)!;
    assert.equal(get.headers['last-event-id'], 'e1');
  });

  test('a GET resuming from the token of the response event: 200, an empty SSE stream held open until sse_idle_timeout_ms, then `id: <token>`; already_answered, the seller not contacted', async () => {
    const [, final] = await tokensOfTaskGet(102);
    const before = gets();
    const started = performance.now();
    const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': final!, ...HEADERS } }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const body = await res.text();
    const heldMs = performance.now() - started;
    assert.equal(body, `id: ${final}\n\n`);
    assert.ok(heldMs >= IDLE_MS - 50, `held ${Math.round(heldMs)} ms`);
    assert.equal(gets(), before);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && l.rpc_id === 102);
    assert.deepEqual([line.method, line.outcome, line.reason, line.upstream_status], ['tasks/get', 'already_answered', null, null]);
  });

  test("a 2026-07-28 seller's 405 to the resuming GET: the request's error, upstream_status 405", async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('g'), { jsonrpc: '2.0', id: 103, method: 'tools/call', params: { name: 'get_x', arguments: {} } }, HEADERS));
    const [token] = sseIds(r.text());
    assert.ok(token !== undefined, r.text());
    const res = await withTimeout(fetch(stack.gateway.agentUrl('g'), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } }));
    assert.equal(res.status, 200);
    const [message] = sseMessages(await res.text()) as Array<{ id: number; result: { structuredContent: { adcp_error: { details: Record<string, unknown> } } } }>;
    assert.equal(message!.id, 103);
    assert.deepEqual(message!.result.structuredContent.adcp_error.details, { reason: 'upstream_status', upstream_status: 405 });
  });

  for (const version of ['2025-06-18', '2026-07-28']) {
    test(`tasks/result on ${version}: normalized like tools/call (the text lifted)`, async () => {
      const id = version === V ? 105 : 104;
      const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId: 't1' } }, { 'mcp-protocol-version': version }));
      assert.equal(
        r.text(),
        `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"Result in structuredContent (21 bytes): status=ok; a."}],"structuredContent":${LIFTABLE}}}`,
      );
    });
  }

  test('the README table says what the gateway does (was: "none" for resumption on 2026-07-28, tasks "none" on 2025-06-18)', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const row = (name: string): string[] => {
      const line = readme.split('\n').find((l) => l.startsWith(`| ${name} |`));
      assert.ok(line !== undefined, name);
      return line.slice(2, -2).split(' | ').slice(1);
    };
    const resumption = row('`Last-Event-ID` resumption');
    assert.equal(
      resumption[3],
      "the revision has none, but the gateway does as on the others: a seller's event ids on a POST's SSE stream become gateway tokens, and a GET with one is resumed (sent to the seller with its own event id; a seller's 405 is answered `upstream_status`); a token from the event that carried the response: HTTP 200 and an empty SSE stream held open (`already_answered`, the seller not contacted) until the host closes it, for at most the agent's `sse_idle_timeout_ms` (5 min by default), then ended after one event `id:` with that token",
    );
    const tasks = row('tasks');
    assert.deepEqual(tasks, [
      'none in the revision; `tasks/*` answers bounded, not normalized; over a limit a `tasks/result` gets a tool error result',
      'none in the revision; a `tasks/result` answered anyway is normalized like `tools/call` (as on 2025-11-25); the rest bounded, untouched',
      '`tasks/result` normalized like `tools/call`; handles, `tasks/get`, `tasks/list` bounded, untouched',
      'extension: a completed task\'s `result` inside `tasks/get` normalized; a `tasks/result` (which the extension removes) answered anyway normalized like `tools/call`; the rest bounded, untouched',
    ]);
  });
});
