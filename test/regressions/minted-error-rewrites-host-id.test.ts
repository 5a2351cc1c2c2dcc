/**
 * Regression: a gateway-minted error rewrote some numeric host ids and kept others as written,
 * and a request whose id is a number outside the double range was refused with a message
 * naming the wrong fault.
 *
 * Reported failure (a hostile new-user trial 13, L2): a `tools/call` to a seller answering 500
 * got its `upstream_status` error with id `1` for `1.0`, `100` for `1E2`, `0` for `-0` and `1`
 * for `0.1e1`, while `12345678901234567891` and `-1e-400` came back exactly as written
 * (docs/errors.md, "Where a minted error goes": "its id as the host wrote it"); and `"id":1e400`
 * (a valid JSON number) was refused `invalid_request` with `"id" must be a string, a number or
 * null.` Now every minted answer carries the host's id bytes as written (request/peek.ts
 * RpcPeek.idText, kept whenever `JSON.stringify` would write the parsed id differently), on
 * every path that mints one, and the refusal of `1e400` says the number is outside the range
 * of a double.
 *
 * Input: a raw seller (127.0.0.1): tool `e500` answers 500 `text/plain`; `sse_foreign` answers
 * SSE with one event holding a response for id "not-yours" (the request's stream ends with
 * `upstream_not_mcp`); `resumed` answers SSE with an event with an id and empty data, then
 * ends (the host resumes with the gateway's token: the seller answers the GET like
 * `sse_foreign`); a batch gets the same by its first element's tool. Ids written `1.0`,
 * `1E2`, `-0`, `0.1e1`, `1e-400`, `-1e-400`, `12345678901234567891`, `7` and `"s"`.
 * Expectation: each answer is exactly the error the gateway mints for that request, its id
 * the bytes the host wrote: a single request's JSON error, its SSE error event, a batch's JSON
 * array and SSE events, the error ending a single and a batch stream resumed with
 * Last-Event-ID, and a refusal (unknown agent); `1e400` and `-1e400`: 400 `invalid_request`,
 * id null, `Invalid Request: "id" is a number outside the range of a double, which reads it
 * as infinite; use a smaller number or a string.`
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import {
  RESUME_YAML,
  expectedBatchErrorFrames,
  expectedBatchErrorJson,
  expectedErrorJson,
  startObservedGateway,
  type ObservedGateway,
} from '../support/hostile-seller.js';
import type { LocalErrorInput } from '../../src/errors/local-reply.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, sseIds } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

/** Ids as the host writes them (JSON texts). */
const IDS = ['1.0', '1E2', '-0', '0.1e1', '1e-400', '-1e-400', '12345678901234567891', '7', '"s"'];
const FOREIGN = 'event: message\ndata: {"jsonrpc":"2.0","id":"not-yours","result":{"content":[]}}\n\n';

/** A tools/call of `tool` whose id is written `idText`. */
const callText = (idText: string, tool: string): string => `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"${tool}","arguments":{}}}`;

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(FOREIGN);
    }
    const msg = JSON.parse(req.body.toString('utf8')) as { params: { name: string } } | Array<{ params: { name: string } }>;
    const tool = (Array.isArray(msg) ? msg[0]! : msg).params.name;
    if (tool === 'e500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (tool === 'sse_foreign') return void res.end(FOREIGN);
    res.end('id: r-1\nretry: 500\ndata: \n\n');
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url }, RESUME_YAML)));
const gw = (): ObservedGateway => stack.gateway;

/** `text` (minted JSON-RPC message texts, one or several) with each id written as JSON.stringify writes `idText`'s value replaced by `idText`. */
function withIdAsWritten(text: string, idText: string): string {
  return text.split(`{"jsonrpc":"2.0","id":${JSON.stringify(JSON.parse(idText))},`).join(`{"jsonrpc":"2.0","id":${idText},`);
}

/** The minted error for a call of `tool` with the id written `idText`, as the host must get it. */
function expectedJson(idText: string, tool: string, e: LocalErrorInput): string {
  return withIdAsWritten(expectedErrorJson({ id: JSON.parse(idText) as number | string, method: 'tools/call', toolName: tool, ...e }), idText);
}

const batchCalls = (a: string, b: string, tool: string) => [a, b].map((idText) => ({ id: JSON.parse(idText) as number | string, idText, method: 'tools/call', toolName: tool }));

/** Resumes the stream whose first answer is `first` with the gateway's token; the GET's body. */
async function resumeFrom(first: string): Promise<string> {
  const [token] = sseIds(first);
  assert.ok(token, 'the gateway minted a resume token');
  const res = await fetch(gw().agentUrl('seller'), { headers: { accept: 'text/event-stream', 'last-event-id': token } });
  return res.text();
}

const STATUS_500 = { reason: 'upstream_status', upstreamStatus: 500 } as const;
const NOT_MCP = { reason: 'upstream_not_mcp', upstreamStatus: 200 } as const;

describe('a minted error carries the host id as written', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const idText of IDS) {
    test(`id ${idText}: a single request's JSON error, its SSE error event, and the error ending its resumed stream`, async () => {
      const json = await rawPost(gw().agentUrl('seller'), callText(idText, 'e500'));
      assert.equal(json.status, 200);
      assert.equal(json.text(), expectedJson(idText, 'e500', STATUS_500));

      const sse = await rawPost(gw().agentUrl('seller'), callText(idText, 'sse_foreign'));
      assert.equal(sse.text(), `event: message\ndata: ${expectedJson(idText, 'sse_foreign', NOT_MCP)}\n\n`);

      const first = await rawPost(gw().agentUrl('seller'), callText(idText, 'resumed'));
      assert.equal(await resumeFrom(first.text()), `event: message\ndata: ${expectedJson(idText, 'resumed', NOT_MCP)}\n\n`);
    });
  }

  for (const [a, b] of [['1.0', '1E2'], ['-0', '0.1e1'], ['-1e-400', '12345678901234567891'], ['7', '"s"']] as const) {
    test(`a batch of ids ${a} and ${b}: its JSON errors, its SSE error events, and those ending its resumed stream`, async () => {
      const body = (tool: string): string => `[${callText(a, tool)},${callText(b, tool)}]`;
      const json = await rawPost(gw().agentUrl('seller'), body('e500'));
      assert.equal(json.status, 200);
      assert.equal(json.text(), expectedBatchErrorJson(batchCalls(a, b, 'e500'), STATUS_500));

      const sse = await rawPost(gw().agentUrl('seller'), body('sse_foreign'));
      assert.equal(sse.text(), expectedBatchErrorFrames(batchCalls(a, b, 'sse_foreign'), NOT_MCP));

      const first = await rawPost(gw().agentUrl('seller'), body('resumed'));
      assert.equal(await resumeFrom(first.text()), expectedBatchErrorFrames(batchCalls(a, b, 'resumed'), NOT_MCP));
    });
  }

  test('a refusal (unknown agent) carries the id as written', async () => {
    for (const idText of ['1.0', '1E2', '-0', '0.1e1']) {
      const r = await rawPost(`${gw().baseUrl}/agents/nope/mcp`, callText(idText, 'e500'));
      assert.equal(r.status, 404);
      assert.ok(r.text().startsWith(`{"jsonrpc":"2.0","id":${idText},"error":`), r.text());
    }
  });

  test('an id outside the double range is refused saying so', async () => {
    for (const idText of ['1e400', '-1e400']) {
      const r = await rawPost(gw().agentUrl('seller'), callText(idText, 'e500'));
      assert.equal(r.status, 400);
      const m = r.json() as { id: unknown; error: { message: string; data: { reason: string } } };
      assert.deepEqual([m.id, m.error.data.reason, m.error.message], [
        null,
        'invalid_request',
        'Invalid Request: "id" is a number outside the range of a double, which reads it as infinite; use a smaller number or a string.',
      ]);
    }
  });
});
