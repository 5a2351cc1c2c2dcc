/**
 * A raw MCP seller on 127.0.0.1 for the `probe` regressions: it answers a POSTed JSON-RPC
 * request with 200 and the JSON-RPC response `answer` gives for it (its `result` or `error`
 * member: the id is added), as JSON or, when `sseHead` gives text for it, as an SSE stream,
 * a notification with 202 and no body, and a DELETE (the probe ending its session) with 405.
 */
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';

/** The member of a JSON-RPC response that answers a request: `{ result }` or `{ error }`. */
export type ProbeAnswer = { result: unknown } | { error: { code: number; message: string } };

/** `initialize`'s result for a 2025-11-25 seller with tools and this server name and version. */
export function initializeResult(name = 'raw', version = '1'): ProbeAnswer {
  return { result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name, version } } };
}

/** The answer to any method the seller does not serve. */
export const METHOD_NOT_FOUND: ProbeAnswer = { error: { code: -32601, message: 'Method not found' } };

/**
 * Starts the seller. `answer(method, url)` gives the response member for a request of
 * `method` sent to the path `url`. When `sseHead(method, url)` gives text, the answer is
 * `text/event-stream`: that text as it is (SSE lines of the test's choosing), then the
 * response as one event (`data: <json>` and a blank line).
 */
export function startProbeSeller(
  answer: (method: string | undefined, url: string) => ProbeAnswer,
  sseHead?: (method: string | undefined, url: string) => string | undefined,
): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(405).end();
    const msg = JSON.parse(req.body.toString('utf8') || 'null') as { id?: unknown; method?: string } | null;
    if (msg?.id === undefined) return void res.writeHead(202).end();
    const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...answer(msg.method, req.url ?? '/') });
    const head = sseHead?.(msg.method, req.url ?? '/');
    if (head !== undefined) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${head}data: ${body}\n\n`);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
}
