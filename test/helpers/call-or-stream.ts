/**
 * One raw HTTP request to an MCP endpoint, as the host-side refusal tests send it: a POSTed
 * `tools/call` for id 7 (`get_products`), or a GET of the SSE stream. node:http, so any `Host`
 * and any header a browser would send can be set exactly
 * (test/regressions/dns-rebinding-host-get-uses-credentials.test.ts,
 * cross-site-get-no-origin-uses-credentials.test.ts).
 */
import http from 'node:http';
import { toolCall } from './raw.js';
import { withTimeout } from './timeout.js';

/** The answer: its HTTP status and its body as UTF-8 text. */
export interface CallOrStreamAnswer {
  status: number;
  text: string;
}

/**
 * Sends `method` to `url` with `headers` over the base ones (a POST's `content-type`, `accept`
 * and `content-length`; a GET's `accept`, `getAccept`, default `text/event-stream`; a header
 * given as undefined is not sent, e.g. `{ 'content-type': undefined }`), and reads the whole
 * answer (a GET's stream must end). Bounded by withTimeout's default.
 */
export function sendCallOrStream(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string | undefined>,
  getAccept = 'text/event-stream',
): Promise<CallOrStreamAnswer> {
  const payload = method === 'POST' ? JSON.stringify(toolCall(7, 'get_products')) : undefined;
  const base: Record<string, string> =
    method === 'POST'
      ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(Buffer.byteLength(payload!)) }
      : { accept: getAccept };
  return withTimeout(
    new Promise<CallOrStreamAnswer>((resolve, reject) => {
      const sent = Object.fromEntries(Object.entries({ ...base, ...headers }).filter((e): e is [string, string] => e[1] !== undefined));
      const req = http.request(url, { method, headers: sent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.end(payload);
    }),
  );
}
