/**
 * A "cut-and-resume" raw seller and the host side that drives it through the gateway, for the
 * regressions on cancelled, cut and resumed `tools/call` streams (remembered cancellations:
 * src/routing/cancelled-requests.ts; hostile trials 55 F1 and 56 F2/F3). Used by
 * test/regressions/cancelled-call-resumed-gets-sse-idle.test.ts,
 * test/regressions/respelled-agent-url-not-sharing-in-flight-ids.test.ts and
 * test/regressions/reused-id-after-cancel-resume-gets-405.test.ts.
 *
 * The seller ({@link startCutAndResumeSeller}) is a real node:http server on 127.0.0.1
 * (test/support/raw-seller.ts, so it records each request in `requests`). It answers each
 * `tools/call` POST 200 `text/event-stream` with one priming event ({@link primingEvent}:
 * `id: e<id>`, a progress notification), then does with the stream what the test's plan says
 * ({@link AfterEvent}); any other POST gets 202 with no body, and a `notifications/cancelled`
 * ends the stream held `until-cancelled` for its `requestId` (MCP: no response for a cancelled
 * request). A GET (a resume with `Last-Event-ID`) is the test's to answer ({@link resumeAnswer}
 * writes the usual response event). Streams and resumes still held are cut when the seller
 * closes (`closeAllConnections`).
 *
 * The host side ({@link sessionHost}) POSTs calls, cancellations and resume GETs to an agent
 * of the gateway, in one session (the headers given).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { rawPost, toolCall } from './raw.js';

/** The event the seller writes first on the stream of `tools/call` `id`: `id: e<id>`, a `notifications/progress` (token `id`, progress 1). */
export const primingEvent = (id: number): string =>
  `id: e${id}\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: 1 } })}\n\n`;

/**
 * What the seller does with the stream of `tools/call` `id` (the `nth` call with that id it
 * got, from 1) after its priming event: `cut` ends it at once (the response never sent);
 * `until-cancelled` holds it until a `notifications/cancelled` naming `id` reaches the seller,
 * then ends it; `hold` holds it open whatever comes (the gateway's sse_idle_timeout_ms ends it).
 */
export type AfterEvent = (id: number, nth: number) => 'cut' | 'until-cancelled' | 'hold';

/** Answers a GET the seller got (a resume: `req.headers['last-event-id']` is `e<id>`), or holds it. */
export type ResumeHandler = (req: SeenRequest, res: ServerResponse) => void;

/** The seller on 127.0.0.1 (url `http://127.0.0.1:<port>/mcp`), as described above. */
export function startCutAndResumeSeller(afterEvent: AfterEvent, onResume: ResumeHandler): Promise<RawSeller> {
  const untilCancelled = new Map<number, ServerResponse>();
  const callsOf = new Map<number, number>();
  return startRawSeller((req, res) => {
    if (req.method === 'GET') return onResume(req, res);
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { requestId?: number } };
    if (msg.method === 'tools/call') {
      const id = msg.id!;
      const nth = (callsOf.get(id) ?? 0) + 1;
      callsOf.set(id, nth);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(primingEvent(id));
      const plan = afterEvent(id, nth);
      if (plan === 'cut') res.end();
      else if (plan === 'until-cancelled') untilCancelled.set(id, res);
      return;
    }
    res.writeHead(202).end();
    if (msg.method === 'notifications/cancelled') untilCancelled.get(msg.params!.requestId!)?.end();
  });
}

/**
 * The SSE event answering a resume of call `id`: event id `eventId` (default `r<id>`), data the
 * `tools/call` response with one text item `done <id>`.
 */
export const resumeAnswer = (id: number, eventId = `r${id}`): string => `id: ${eventId}\ndata: ${toolResponse(id, { content: [{ type: 'text', text: `done ${id}` }] })}\n\n`;

/** A `tools/call` open through the gateway: its first event, and the rest of its body to come. */
export interface OpenCall {
  /** The host's body up to the end of its first event (`\n\n`), as text. */
  readonly first: string;
  /** The rest of the body, once the host's stream ends. */
  readonly rest: Promise<string>;
}

/** What a host in one session does at the gateway's agents ({@link sessionHost}). */
export interface SessionHost {
  /** POSTs `tools/call` `id` (tool `get_products`) to `agent`; resolves once its first event arrived (asserts the stream did not end before it). */
  readonly openCall: (agent: string, id: number) => Promise<OpenCall>;
  /** POSTs `notifications/cancelled` for `id` (reason `user`) to `agent`; resolves with the HTTP status. */
  readonly cancel: (agent: string, id: number) => Promise<number>;
  /** GETs `agent` with `Last-Event-ID: token` (accept `text/event-stream`): the resume, its body unread. */
  readonly resume: (agent: string, token: string) => Promise<Response>;
}

/**
 * The host side: `agentUrl` names an agent's url at the gateway (called at each request, so it
 * may read a gateway started later); `headers` (session id, protocol version) go on each request.
 */
export function sessionHost(agentUrl: (agent: string) => string, headers: Record<string, string>): SessionHost {
  return {
    openCall: async (agent, id) => {
      const res = await fetch(agentUrl(agent), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(toolCall(id, 'get_products')),
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let first = '';
      while (!first.includes('\n\n')) {
        const r = await reader.read();
        assert.ok(!r.done, 'the stream ended before its first event');
        first += decoder.decode(r.value, { stream: true });
      }
      const rest = (async () => {
        let text = '';
        for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
        return text;
      })();
      return { first, rest };
    },
    cancel: async (agent, id) =>
      (await rawPost(agentUrl(agent), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id},"reason":"user"}}`, headers)).status,
    resume: (agent, token) => fetch(agentUrl(agent), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...headers } }),
  };
}
