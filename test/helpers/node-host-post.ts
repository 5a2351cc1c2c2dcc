/**
 * A host that POSTs one JSON-RPC message to the gateway with node:http (a fresh connection,
 * no agent; node:http's defaults: a 16 KiB header limit, 2,000 header lines kept), for tests of
 * what a host's HTTP client makes of the answer's head. Rejects with the client's error
 * (`HPE_HEADER_OVERFLOW` for a head over its limit).
 */
import http from 'node:http';
import { withTimeout } from './timeout.js';

export interface NodeHostAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Header lines node:http kept (rawHeaders holds a name and a value for each). */
  lines: number;
  body: string;
}

/** POSTs `message` (MCP 2025-06-18 headers) to `url` and reads the whole answer. */
export function nodeHostPost(url: string, message: unknown): Promise<NodeHostAnswer> {
  const body = JSON.stringify(message);
  return withTimeout(
    new Promise<NodeHostAnswer>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, lines: res.rawHeaders.length / 2, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    }),
    undefined,
    'the host POST',
  );
}
