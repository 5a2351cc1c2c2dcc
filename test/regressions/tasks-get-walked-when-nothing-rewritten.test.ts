/**
 * Reported failure (a re-read of review 38's fix, work before need): the parse path
 * (src/response/scanned-message.ts rewriteScanned) walked every parsed 2026-07-28 `tasks/get`
 * answer's bytes to locate its `result.result` (splice.ts spliceTarget ->
 * mcp/tool-result-ranges.ts locateToolResult: one pass over the whole message) before asking
 * the rewrite whether it changes anything, also for the answers it then left as the seller
 * wrote them: a task not `completed`, a tool result with `isError`, a text that parses to no
 * object to lift, an `adcp_error`-only `structuredContent`.
 *
 * Now the walk is made when the rewrite first asks for what it finds (the seller's bytes of
 * `structuredContent` for a dedupe's copy check, a copy's written length), or once a rewrite
 * was made (to splice it), once at most; a `tools/call`'s `result` is read from the scan as
 * before.
 *
 * What this test holds: how many times rewriteScanned asks for the tool result's place
 * (its `locate` seam, spliceTarget counted) for each answer, 1 before and 0 now for each
 * answer left unchanged; 1 for a dedupe, a lift and a `structuredContent` with a text that is
 * no copy (the dedupe's check reads its bytes); and the exact bytes the host would get, the
 * same as without the seam.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Exchange } from '../../src/exchange.js';
import { scanJson, type JsonScanSummary } from '../../src/mcp/json-scan.js';
import { rewriteScanned } from '../../src/response/scanned-message.js';
import { spliceTarget } from '../../src/response/splice.js';

const LIMITS = { max_response_bytes: 1 << 20, max_json_depth: 64, max_json_nodes: 100_000 };
const DATA = { status: 'completed', items: [1, 2, 3], message: 'Three items matched the brief; each is listed in items.' };
const TEXT = JSON.stringify(DATA);

function exchange(method: string, protocolVersion: string): Exchange {
  return {
    rpc: { kind: 'request', id: 7, method, toolName: undefined },
    protocolVersion,
    normalize: true,
    limits: LIMITS,
    actions: [],
    bytesSaved: 0,
  } as unknown as Exchange;
}

const taskAnswer = (status: string, result: string | undefined): string =>
  `{"jsonrpc":"2.0","id":7,"result":{"taskId":"t1","status":"${status}","createdAt":"2026-01-01T00:00:00Z"${result === undefined ? '' : `,"result":${result}`}}}`;
const text = (t: string): string => `{"type":"text","text":${JSON.stringify(t)}}`;

/** rewriteScanned on `body` for `method`, with spliceTarget counted through its seam: the count, the bytes out, and the bytes out without the seam. */
function run(body: string, method = 'tasks/get', protocolVersion = '2026-07-28'): { located: number; out: string; action: string; plain: string } {
  const bytes = Buffer.from(body, 'utf8');
  const scan = scanJson(bytes, { maxDepth: 64, maxNodes: 100_000 });
  assert.ok(scan.ok);
  let located = 0;
  const counted: typeof spliceTarget = (...args) => {
    located++;
    return spliceTarget(...args);
  };
  const { rewritten, out } = rewriteScanned(exchange(method, protocolVersion), JSON.parse(body), bytes, scan as JsonScanSummary, counted);
  const plain = rewriteScanned(exchange(method, protocolVersion), JSON.parse(body), bytes, scan as JsonScanSummary).out.toString('utf8');
  return { located, out: out.toString('utf8'), action: rewritten.changed ? rewritten.action : 'none', plain };
}

describe('a 2026-07-28 tasks/get answer is walked only when a rewrite needs its ranges', () => {
  const unchanged: Record<string, string> = {
    'a task still working, its text an object': taskAnswer('working', `{"content":[${text(TEXT)}]}`),
    'a completed task whose tool result has isError': taskAnswer('completed', `{"content":[${text(TEXT)}],"isError":true}`),
    'a completed task whose only text is no JSON object': taskAnswer('completed', `{"content":[${text('{"items": [1, 2, 3] and more')}]}`),
    'a completed task whose structuredContent is an adcp_error only': taskAnswer(
      'completed',
      `{"content":[${text('{"adcp_error":{"code":"X","message":"no"}}')}],"structuredContent":{"adcp_error":{"code":"X","message":"no"}}}`,
    ),
    'a completed task without a result': taskAnswer('completed', undefined),
  };
  for (const [name, body] of Object.entries(unchanged)) {
    test(`${name}: not walked, the seller's bytes out`, () => {
      const r = run(body);
      assert.equal(r.action, 'none');
      assert.equal(r.out, body);
      assert.equal(r.plain, body);
      assert.equal(r.located, 0);
    });
  }

  test('a dedupe: walked once, the copy replaced in the seller bytes', () => {
    const body = taskAnswer('completed', `{"content":[${text(TEXT)}],"structuredContent":${TEXT}}`);
    const r = run(body);
    assert.equal(r.action, 'deduped');
    assert.equal(r.located, 1);
    assert.equal(r.out, r.plain);
    assert.ok(r.out.endsWith(`"structuredContent":${TEXT}}}}`) && !r.out.includes(JSON.stringify(TEXT)), r.out);
  });

  test('a lift: walked once, the text lifted as written', () => {
    const body = taskAnswer('completed', `{"content":[${text(TEXT)}]}`);
    const r = run(body);
    assert.equal(r.action, 'lifted');
    assert.equal(r.located, 1);
    assert.equal(r.out, r.plain);
    assert.ok(r.out.includes(`"structuredContent":${TEXT}`), r.out);
  });

  test('structuredContent with a text that is no copy: walked once (the copy check reads its bytes), unchanged', () => {
    const body = taskAnswer('completed', `{"content":[${text(JSON.stringify({ ...DATA, status: 'failed' }))}],"structuredContent":${TEXT}}`);
    const r = run(body);
    assert.equal(r.action, 'none');
    assert.equal(r.out, body);
    assert.equal(r.located, 1);
  });

  test('a tools/call result is read from the scan: not walked unless rewritten', () => {
    const left = `{"jsonrpc":"2.0","id":7,"result":{"content":[${text(TEXT)}],"isError":true}}`;
    const r = run(left, 'tools/call', '2025-06-18');
    assert.deepEqual([r.action, r.out, r.located], ['none', left, 0]);
    const deduped = run(`{"jsonrpc":"2.0","id":7,"result":{"content":[${text(TEXT)}],"structuredContent":${TEXT}}}`, 'tools/call', '2025-06-18');
    assert.deepEqual([deduped.action, deduped.located], ['deduped', 1]);
    assert.equal(deduped.out, deduped.plain);
  });
});
