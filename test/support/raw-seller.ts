/**
 * A raw HTTP seller for integration tests: a real node:http server on 127.0.0.1 whose
 * answer is whatever the test's handler writes, byte for byte (hostile framing included).
 * Records every request it receives.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface RawSeller {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type RawHandler = (req: SeenRequest, res: http.ServerResponse) => void | Promise<void>;

export async function startRawSeller(handler: RawHandler): Promise<RawSeller> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(seen);
      Promise.resolve(handler(seen, res)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A JSON-RPC `tools/call` response envelope around `result`. */
export function toolResponse(id: string | number, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** Pads a tools/call response with a text item so the serialized message is exactly `bytes` long. */
export function toolResponseOfSize(id: string | number, bytes: number): string {
  const base = toolResponse(id, { content: [{ type: 'text', text: '' }] });
  const pad = bytes - Buffer.byteLength(base);
  if (pad < 0) throw new Error(`cannot make a message of ${bytes} bytes (minimum ${Buffer.byteLength(base)})`);
  // The padding spliced into the empty text (the last `""` of `base`): the bytes JSON.stringify
  // would give, without a pass over a string of up to tens of MB.
  const at = base.lastIndexOf('""') + 1;
  return base.slice(0, at) + 'x'.repeat(pad) + base.slice(at);
}

/** How a test answers the request with JSON-RPC id `id` ({@link startIdDispatchingSeller}). */
export type IdAnswer = (res: http.ServerResponse, id: number) => void;

/**
 * A raw seller that answers each JSON-RPC request with the test's answer for its id (from
 * `answers`, set before the request is sent), or HTTP 500 when there is none.
 */
export function startIdDispatchingSeller(answers: ReadonlyMap<number, IdAnswer>): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    const answer = answers.get(id);
    if (answer) answer(res, id);
    else res.writeHead(500).end();
  });
}

/** A JSON-RPC message a raw seller read from a POST body. */
export interface SeenMessage {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
}

/**
 * What a raw MCP seller answers to everything but a call it streams: `initialize` (JSON, with
 * tools and `serverName`), a POST without an id (202), a GET without `Last-Event-ID` (405: no
 * standalone stream), a DELETE (200). Returns `{ msg }` for what is left to the caller (a POST
 * of a request, with its message; a GET resuming a stream, `msg` undefined), or undefined once
 * it has answered.
 */
export function answerSessionRequests(req: SeenRequest, res: http.ServerResponse, serverName: string): { msg: SeenMessage | undefined } | undefined {
  const msg = req.body.length > 0 ? (JSON.parse(req.body.toString('utf8')) as SeenMessage) : undefined;
  if (req.method === 'POST' && msg?.method === 'initialize') {
    const result = { protocolVersion: msg.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: serverName, version: '1' } };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    return undefined;
  }
  if (req.method === 'POST' && msg?.id === undefined) return void res.writeHead(202).end();
  if (req.method === 'GET' && req.headers['last-event-id'] === undefined) return void res.writeHead(405).end();
  if (req.method === 'DELETE') return void res.writeHead(200).end();
  return { msg };
}

/**
 * A raw seller answering every `tools/call` with an empty result and the raw header lines
 * `headerLines` (each `Name: value`, any case; each character written as one byte, latin1, so a
 * line may carry any byte) in its head: as JSON, or
 * as one SSE event (`id: e1`) when the called tool is named `sse`. For the header-policy
 * regression tests (what of a seller's head reaches the host).
 */
export function startHeaderLinesSeller(headerLines: readonly string[]): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const { id, params } = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
    const sse = params.name === 'sse';
    const message = `{"jsonrpc":"2.0","id":${id},"result":{"content":[]}}`;
    const body = sse ? `id: e1\ndata: ${message}\n\n` : message;
    const head =
      `HTTP/1.1 200 OK\r\nContent-Type: ${sse ? 'text/event-stream' : 'application/json'}\r\n` +
      headerLines.map((line) => `${line}\r\n`).join('') +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    res.socket!.end(Buffer.from(head + body, 'latin1'));
  });
}
