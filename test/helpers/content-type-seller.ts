/**
 * A seller whose answers' `Content-Type` field lines a test chooses per tool name, behind the
 * real gateway: the stack of the Content-Type regressions (repeated lines, equivalent
 * spellings, empty parameters, a 5xx with differing lines).
 */
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
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
