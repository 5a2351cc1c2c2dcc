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
  status: number;
  /** The whole response body as the client read it; '' for none. A body the client's close aborts resolves ''. */
  text: Promise<string>;
}

/** A fetch that pushes each exchange onto `seen` as it starts answering. */
export function recordingFetch(seen: SeenExchange[]): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, init);
    let body = res.body;
    let text: Promise<string> = Promise.resolve('');
    if (body) {
      const [a, b] = body.tee();
      body = a;
      // A body the client's close aborts (the standalone GET's, a resumed stream's) would reject unread.
      text = new Response(b).text().catch(() => '');
    }
    seen.push({ method: init?.method ?? 'GET', lastEventId: new Headers(init?.headers).get('last-event-id'), body: typeof init?.body === 'string' ? init.body : undefined, status: res.status, text });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
