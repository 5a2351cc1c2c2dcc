/**
 * A seller whose answers' `Content-Type` field lines a test chooses per tool name, behind the
 * real gateway: the stack of the Content-Type regressions (repeated lines, equivalent
 * spellings, empty parameters, a 5xx with differing lines).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from './gateway.js';
import { rawPost, toolCall } from './raw.js';
import { useSellerAndGateway } from './stack.js';
import { withTimeout } from './timeout.js';

/** What the seller answers a `tools/call` of one tool name. */
export interface ContentTypeAnswer {
  /** HTTP status; 200 when absent. */
  readonly status?: number;
  /** The `Content-Type` values, each sent as a field line of its own (node:http writes an array so). */
  readonly contentType: readonly string[];
  /** The body for the request's id. */
  readonly body: (id: number) => string;
}

/**
 * Starts (per test file, `before`/`after`) a raw seller on 127.0.0.1 answering each
 * `tools/call` with `answers[params.name]` (500 with no body for any other name) behind the
 * real gateway as agent `s`. `post(id, tool)` sends that call through the gateway as an MCP
 * 2025-06-18 host and gives the raw answer.
 */
export function useContentTypeSeller(answers: Readonly<Record<string, ContentTypeAnswer>>) {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params?: { name?: string } };
        const answer = answers[msg.params?.name ?? ''];
        if (answer === undefined) return void res.writeHead(500).end();
        const values = answer.contentType;
        res.writeHead(answer.status ?? 200, { 'content-type': values.length === 1 ? values[0]! : [...values] }).end(answer.body(msg.id));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );
  const post = (id: number, tool: string) => withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' }), undefined, 'the POST');
  return { stack, post };
}

/** Answers of status 200 from a table of `tool -> [Content-Type values, body]`. */
export function contentTypeAnswers(table: Readonly<Record<string, readonly [readonly string[], (id: number) => string]>>): Record<string, ContentTypeAnswer> {
  return Object.fromEntries(Object.entries(table).map(([tool, [contentType, body]]) => [tool, { contentType, body }]));
}

/** The seller's tool result for `id` (one text item, `ok`): the body of most Content-Type cases. */
export const okResult = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });
/** {@link okResult} as one SSE event. */
export const okSseBody = (id: number): string => `event: message\ndata: ${okResult(id)}\n\n`;

/** What {@link useContentTypeSeller} gives: the stack and the POST through the gateway. */
export type ContentTypeSeller = ReturnType<typeof useContentTypeSeller>;

/**
 * Registers one test per case (call inside a `describe`): `tool`'s answer, for request `id`,
 * reaches the host as sent: 200, Content-Type `type`, the seller's exact bytes `body(id)`, and
 * the exchange line says `ok`. `title` names the test.
 */
export function testAnswersPass(seller: ContentTypeSeller, cases: ReadonlyArray<readonly [tool: string, id: number, type: string, body: (id: number) => string]>, title: (tool: string, type: string) => string): void {
  for (const [tool, id, type, body] of cases) {
    test(title(tool, type), async () => {
      const r = await seller.post(id, tool);
      assert.deepEqual([r.status, r.headers.get('content-type'), r.text()], [200, type, body(id)]);
      const line = await seller.stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], ['ok', null]);
    });
  }
}

/**
 * Registers one test per case (call inside a `describe`): `tool`'s answer, for request `id`,
 * is refused: the host gets 200 with the `upstream_not_mcp` tool error for the id (the seller's
 * status 200), and the exchange line says `local_error`, `upstream_not_mcp`.
 */
export function testAnswersNotMcp(seller: ContentTypeSeller, cases: ReadonlyArray<readonly [tool: string, id: number]>, title: (tool: string) => string): void {
  for (const [tool, id] of cases) {
    test(title(tool), async () => {
      const r = await seller.post(id, tool);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(r.text(), expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await seller.stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], ['local_error', 'upstream_not_mcp']);
    });
  }
}
