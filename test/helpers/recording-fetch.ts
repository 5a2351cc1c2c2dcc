/**
 * A `fetch` for the MCP SDK client's transport that records every HTTP exchange it makes and
 * tees each response body: the SDK reads one branch, the test the other.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** One exchange the client made. */
export interface SeenExchange {
  /** The request's method (`GET` when none was given). */
  method: string;
  /** The request's `Last-Event-ID` header, or null. */
  lastEventId: string | null;
  /** The request body when it was a string (the SDK's JSON-RPC POSTs), else undefined. */
  body: string | undefined;
  /** The response's status; `failed` when fetch threw (a refused connection), recorded only with `recordFailures`. */
  status: number | 'failed';
  /** Date.now() when the response's head came (or fetch threw). */
  at: number;
  /** The whole response body as the client read it; '' for none. A body the client's close aborts resolves ''. */
  text: Promise<string>;
}

/**
 * A fetch that pushes each exchange onto `seen` as it starts answering; with `recordFailures`,
 * also each attempt whose fetch threw (status `failed`), then rethrows.
 */
export function recordingFetch(seen: SeenExchange[], opts: { recordFailures?: boolean } = {}): FetchLike {
  return async (url, init) => {
    const method = init?.method ?? 'GET';
    const lastEventId = new Headers(init?.headers).get('last-event-id');
    const sent = typeof init?.body === 'string' ? init.body : undefined;
    let res: Response;
    try {
      res = await fetch(url, init);
    } catch (err) {
      if (opts.recordFailures === true) seen.push({ method, lastEventId, body: sent, status: 'failed', at: Date.now(), text: Promise.resolve('') });
      throw err;
    }
    let body = res.body;
    let text: Promise<string> = Promise.resolve('');
    if (body) {
      const [a, b] = body.tee();
      body = a;
      // A body the client's close aborts (the standalone GET's, a resumed stream's) would reject unread.
      text = new Response(b).text().catch(() => '');
    }
    seen.push({ method, lastEventId, body: sent, status: res.status, at: Date.now(), text });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
