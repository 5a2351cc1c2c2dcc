/**
 * A raw MCP seller (test/support/raw-seller.ts) whose `tools/call` results are chosen by tool
 * name, written as given: `{"jsonrpc":"2.0","id":<id>,"result":<results[name]>}`, as a JSON body,
 * or as one `message` SSE event when the call's arguments say `sse: true`. It answers
 * `initialize` and the other session requests too (answerSessionRequests), so a real MCP SDK
 * client can connect to it directly or through the gateway. An unknown tool gets HTTP 500.
 * Shared by the normalization regressions of a hostile trial 24 (L1, L2).
 */
import { answerSessionRequests, startRawSeller, type RawSeller } from '../support/raw-seller.js';

/** The seller's message for call `id` of a tool whose result is `result` (raw JSON text). */
export function resultMessageText(id: number | string, result: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
}

/** The one-event SSE body a seller writes for `data`. */
export function messageEvent(data: string): string {
  return `event: message\ndata: ${data}\n\n`;
}

/** Starts the seller; `results`: the raw JSON text of each tool's `result`, by tool name. */
export function startToolResultSeller(results: Readonly<Record<string, string>>, serverName: string): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const left = answerSessionRequests(req, res, serverName);
    if (left?.msg === undefined) return;
    const { id, params } = left.msg as { id: number; params?: { name?: string; arguments?: { sse?: boolean } } };
    const result = results[params?.name ?? ''];
    if (result === undefined) return void res.writeHead(500).end();
    const body = resultMessageText(id, result);
    if (params?.arguments?.sse === true) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(messageEvent(body));
    else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
}
