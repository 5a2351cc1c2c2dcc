/**
 * A review of e6f624a (the request peek remembers a `notifications/cancelled`'s requestId per
 * body Buffer): the cancelled request id depended on which path read the body. The peek reads
 * an object's members with request/message-members.ts readObjectMembers, which keeps the
 * name-like keys of an object of 65-1000 members; mcp/cancelled-id.ts's own scan
 * (json-scan.ts scanTopMembers) gave up on any object of more than 64. So a cancellation whose
 * `params` (or top level) had 72 members named request 7 after a 1639-byte body the peek
 * scanned, and none for a 639-byte one (the peek parses it: nothing remembered), for a
 * pipelined body with a leading BOM (routing/handler.ts withoutLeadingBom makes a new
 * subarray: the lookup misses), for a copy, and for a seller's event
 * (response/server-request-id.ts sellerCancelledIdOf -> requestIdInParams).
 *
 * Now every path reads members as the peek does (message-members.ts objectMembersOf): the same
 * answer whichever path reads the body. Through the gateway, a 639-byte wide cancellation of an
 * open call cancels it (its stream ends plainly, outcome `cancelled`, as for a narrow one:
 * before, the seller's end of the stream brought the host a made-up `upstream_reset` error).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelledRequestIdOf } from '../../src/mcp/cancelled-id.js';
import { withoutLeadingBom } from '../../src/mcp/utf8-bom.js';
import { peekJsonRpc } from '../../src/request/peek.js';
import { sellerCancelledIdOf } from '../../src/response/server-request-id.js';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { openAnswer, toolCallPost } from '../helpers/open-answer.js';
import { rawPost } from '../helpers/raw.js';
import { until } from '../helpers/raw-stack.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** 70 members no peek reads: with `requestId` and `reason`, `params` has 72 (more than the scan's 64). */
const EXTRA = Array.from({ length: 70 }, (_, i) => `"k${i}":0`).join(',');
/** A cancellation of request `id` with 72 members in `params`, its reason `pad` bytes. */
const wideParams = (pad: number, id = 7): string =>
  `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{${EXTRA},"requestId":${id},"reason":"${'x'.repeat(pad)}"}}`;
/** A cancellation of request 7 with 73 members at the top level, its reason `pad` bytes. */
const wideTop = (pad: number): string => `{"jsonrpc":"2.0",${EXTRA},"method":"notifications/cancelled","params":{"requestId":7,"reason":"${'x'.repeat(pad)}"}}`;

const textOf = (w: ReturnType<typeof cancelledRequestIdOf>): string | undefined => w?.bytes.toString('latin1', w.range[0], w.range[1]);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

const CASES: [string, string][] = [
  ['params wide, small (parsed by the peek)', wideParams(0)],
  ['params wide, large (scanned by the peek)', wideParams(1000)],
  ['top wide, small (parsed by the peek)', wideTop(0)],
  ['top wide, large (scanned by the peek)', wideTop(1000)],
];

test('a 72-member cancellation names request 7 whichever path reads it: fresh, after the peek, a copy, BOM-led', () => {
  assert.deepEqual(
    CASES.map(([, text]) => text.length),
    [639, 1639, 639, 1639],
  );
  for (const [name, text] of CASES) {
    assert.equal(textOf(cancelledRequestIdOf(Buffer.from(text))), '7', `${name}: before any peek`);
    const body = Buffer.from(text);
    const peek = peekJsonRpc(body);
    assert.ok(peek.ok && peek.peek.method === 'notifications/cancelled', name);
    assert.equal(textOf(cancelledRequestIdOf(body, peek.peek)), '7', `${name}: after the peek`);
    assert.equal(textOf(cancelledRequestIdOf(Buffer.from(body))), '7', `${name}: a copy`);
    // As routing/handler.ts reads a BOM-led body: each withoutLeadingBom is a new subarray.
    const led = Buffer.concat([BOM, body]);
    const ledPeek = peekJsonRpc(withoutLeadingBom(led));
    assert.ok(ledPeek.ok, `${name}: BOM-led peek`);
    assert.equal(textOf(cancelledRequestIdOf(withoutLeadingBom(led), ledPeek.peek)), '7', `${name}: BOM-led`);
    assert.equal(textOf(cancelledRequestIdOf(withoutLeadingBom(led))), '7', `${name}: BOM-led, no peek`);
  }
});

test("a seller's cancellation event with 72 members in params names request 7", () => {
  const limits = { maxDepth: 64, maxNodes: 100_000 };
  assert.equal(sellerCancelledIdOf(wideParams(0), limits), 'n7e0');
  assert.equal(sellerCancelledIdOf(Buffer.from(wideParams(1000)), limits), 'n7e0');
});

const PROGRESS_FRAME = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } })}\n\n`;
/** The open tools/call answer (one at a time). */
let open: ServerResponse | undefined;

/** A seller that holds a tools/call's SSE answer after a progress event, and ends it without a response when a cancellation comes (whatever id it names). */
function answer(req: SeenRequest, res: ServerResponse): void {
  const msg = JSON.parse(req.body.toString('utf8')) as { method?: string };
  if (msg.method === 'tools/call') {
    open = res;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(PROGRESS_FRAME);
    return;
  }
  res.writeHead(202).end();
  if (msg.method === 'notifications/cancelled') open?.end();
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 1000 } })),
);

test('through the gateway: a 639-byte cancellation with 72 members in params cancels the call it names (no made-up error)', { timeout: TEST_TIMEOUT_MS }, async () => {
  const headers = { 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 'session-wide-cancel' };
  const answer = await openAnswer(stack.gateway.agentUrl('s'), toolCallPost(7, 'get_products', headers));
  assert.equal(answer.status, 200);
  await until('the progress event', () => answer.text.includes(PROGRESS_FRAME));
  const posted = await withTimeout(rawPost(stack.gateway.agentUrl('s'), wideParams(0), headers), undefined, 'the cancellation');
  assert.equal(posted.status, 202);
  // Marked cancelled: the stream ends plainly after the progress event, no error event for id 7.
  assert.equal(await withTimeout(answer.done, 5_000, 'end of stream'), PROGRESS_FRAME);
  const line = await stack.gateway.exchangeLine('s', 7);
  assert.deepEqual([line.outcome, line.reason], ['cancelled', 'upstream_reset']);
});
