/**
 * The stack of the backoff-kind regressions (which requests share a kind's backoff,
 * admission/agent-guard.ts `callKind`): a raw seller answering every POST with 200 and the JSON
 * the test gives for its body, behind the real gateway as agent `a` with a 60 s backoff and a
 * 1 s `response_deadline_ms`.
 */
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startGateway } from './gateway.js';
import { rawPost } from './raw.js';
import { useSellerAndGateway } from './stack.js';
import { withTimeout } from './timeout.js';

/** A JSON-RPC `-32601 Method not found` error for `id`, as the seller writes it. */
export const methodNotFound = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });

/** A `tools/call` result for `id` of one 5,000-byte text item: over a 1000-byte `max_response_bytes`. */
export const oversizedResult = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'y'.repeat(5_000) }] });

/**
 * Starts (in `before`, closed in `after`: see useSellerAndGateway) the seller answering each
 * POST body with `answer(body)` and the gateway (no log) whose agent `a` has the 60 s backoff,
 * the 1 s deadline and `agentLines` (YAML lines of `a`'s further settings, indented as under
 * `a`). `post(message)` sends `message` to `a` through the gateway with
 * `mcp-protocol-version: <protocolVersion>`.
 */
export function useBackoffStack(answer: (body: string) => string, agentLines: readonly string[], protocolVersion: string) {
  const stack = useSellerAndGateway(
    () => startRawSeller((req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(answer(req.body.toString('utf8')))),
    (seller) =>
      startGateway(
        [
          'log_level: silent',
          'agents:',
          '  a:',
          `    url: ${seller.url}`,
          '    backoff_base_ms: 60000',
          '    backoff_max_ms: 60000',
          '    response_deadline_ms: 1000',
          ...agentLines.map((line) => `    ${line}`),
          '',
        ].join('\n'),
      ),
  );
  const post = (message: unknown) => withTimeout(rawPost(stack.gateway.agentUrl('a'), message, { 'mcp-protocol-version': protocolVersion }));
  return { stack, post };
}
