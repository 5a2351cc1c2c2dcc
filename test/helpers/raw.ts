/**
 * Raw HTTP for byte-level comparisons: the same JSON-RPC request POSTed directly at the seller
 * and through the gateway, bodies compared as bytes.
 */
import assert from 'node:assert/strict';

export interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
  /** `body.byteLength` */
  readonly bytes: number;
  text(): string;
  json(): unknown;
}

export async function rawPost(url: string, message: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    headers: res.headers,
    body,
    bytes: body.byteLength,
    text: () => body.toString('utf8'),
    json: () => JSON.parse(body.toString('utf8')) as unknown,
  };
}

export function toolCall(id: string | number, name: string, args: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/**
 * The JSON-RPC messages in an SSE body (`data:` lines of each event joined by newlines).
 * For test assertions on small bodies only: no limits here.
 */
export function sseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''));
    if (data.length && data.join('\n').trim() !== '') out.push(JSON.parse(data.join('\n')));
  }
  return out;
}

/** An `adcp_error` as a final SSE error event carries it. */
export interface SseAdcpError {
  code: string;
  details: Record<string, unknown>;
}

/**
 * Splits a host's SSE body into what came before its final event and that event, which must
 * be the last, a tool-result error for `rpcId` with code `RESPONSE_TOO_LARGE`, `reason` and
 * `limit_bytes` `limit` (asserted). Returns the text before it, the event's text and its
 * `adcp_error`.
 */
export function finalSseError(text: string, rpcId: number, limit: number, reason = 'sse_cumulative'): { forwarded: string; finalEvent: string; err: SseAdcpError } {
  const finalAt = text.lastIndexOf('event: message\n');
  assert.ok(finalAt >= 0, `a final error event (the host got ${Buffer.byteLength(text)} bytes)`);
  const finalEvent = text.slice(finalAt);
  const [final, ...more] = sseMessages(finalEvent);
  assert.deepEqual(more, []);
  const msg = final as { id: number; result: { isError: boolean; structuredContent: { adcp_error: SseAdcpError } } };
  assert.equal(msg.id, rpcId);
  assert.equal(msg.result.isError, true);
  const err = msg.result.structuredContent.adcp_error;
  assert.equal(err.code, 'RESPONSE_TOO_LARGE');
  assert.equal(err.details.reason, reason);
  assert.equal(err.details.limit_bytes, limit);
  return { forwarded: text.slice(0, finalAt), finalEvent, err };
}

/** The `id:` values of an SSE body, in order. */
export function sseIds(text: string): string[] {
  return [...text.matchAll(/^id: (.*)$/gm)].map((m) => m[1]!);
}

/**
 * A raw stateful session (the seller's SSE endpoint needs initialize first): initialize, then
 * `notifications/initialized`, then `post(message)` with the session id and protocol header.
 */
export async function rawSession(url: string, protocolVersion = '2025-11-25', extraHeaders: Record<string, string> = {}): Promise<{
  sessionId: string | undefined;
  post(message: unknown): Promise<RawResponse>;
}> {
  const init = await rawPost(
    url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } } },
    extraHeaders,
  );
  if (init.status !== 200) throw new Error(`initialize at ${url}: HTTP ${init.status} ${init.text().slice(0, 200)}`);
  const sessionId = init.headers.get('mcp-session-id') ?? undefined;
  const headers: Record<string, string> = { ...extraHeaders, ...(sessionId ? { 'mcp-session-id': sessionId } : {}) };
  if (protocolVersion !== '2025-03-26') headers['mcp-protocol-version'] = protocolVersion;
  const initialized = await rawPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (initialized.status !== 202) throw new Error(`notifications/initialized at ${url}: HTTP ${initialized.status}`);
  return { sessionId, post: (message) => rawPost(url, message, headers) };
}
