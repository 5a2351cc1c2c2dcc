/**
 * A minimal MCP Streamable HTTP client for the probe: raw JSON-RPC over undici, no MCP SDK
 * (the probe ships in the bin; the SDK is a devDependency). It speaks exactly what the
 * probe needs: POST a request and read its response from an `application/json` body or
 * from a `text/event-stream` (the event whose data is the JSON-RPC response for the
 * request's id), POST a notification, DELETE the session. Every event is judged by its data,
 * whatever its `event:` name, as the gateway judges it: the response in an event named other
 * than `message` is no answer (MCP clients differ on it; the TypeScript SDK client never reads
 * it) and is reported at once, by its name, where the probe skipped it and waited until its
 * timeout (a hostile new user's trial;
 * test/regressions/probe-named-event-answer-ignored.test.ts).
 *
 * What it measures is what a host receives: every byte of the answer's body as the gateway
 * sent it, through the response (`answerBytes`: the JSON body; or, on SSE, each event, comment
 * and blank line before the response's event, and that event whole, its `id:`, `event:` and
 * `data:` lines and the blank line ending it), beside the response message's own bytes
 * (`bytes`). Reported failure (a hostile new user's trial 15, L1): it counted only the data of
 * the event that carried the response, and a seller answering a `tools/list` page with 3,000
 * `notifications/progress` events before it was reported at 195 bytes, `all within target`,
 * while the gateway delivered 311,093 bytes to a host
 * (test/regressions/probe-ignores-events-before-response.test.ts).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'undici';
import { shownInMessage } from '../errors/local-reply.js';
import { mediaTypeEssence } from '../response/content-type.js';
import { namedEventAnswer } from './answer-events.js';
import type { BeforeResponse } from '../mcp/discovery-size.js';
import { MAX_RESUME_TOKEN_LENGTH, resumeTokenSellerId } from '../resume/token.js';

/** The MCP revision the probe offers in `initialize` (the server may answer with an older one). */
export const PROBE_PROTOCOL_VERSION = '2025-11-25';

/** One JSON-RPC response as the probe received it. */
export interface RpcReply {
  /** HTTP status of the POST. */
  readonly status: number;
  /** `json` or `sse`: how the response arrived. `none` when there was no response message. */
  readonly transport: 'json' | 'sse' | 'none';
  /** The parsed JSON-RPC response, or undefined (HTTP error without a JSON body, stream without a response, ...). */
  readonly message: unknown;
  /** UTF-8 bytes of the response message (JSON body, or the SSE event's data); 0 without one. */
  readonly bytes: number;
  /**
   * Every byte of the body the host received through the response message (0 without one):
   * the JSON body (`bytes`), or, on SSE, all the stream carried before the response's event
   * and that event whole, its framing included.
   */
  readonly answerBytes: number;
  /**
   * On SSE, with a response message: the events dispatched before the response's (as a host's
   * SSE reader dispatches them: each with at least one `data:` line, whatever its name), and
   * the bytes before the response's event (those events, comments, id-only blocks, blank
   * lines): `answerBytes` less the response's event.
   */
  readonly before?: BeforeResponse;
  /**
   * On SSE, with a response message, when there were any: the bytes of the `id:` lines that
   * carry the gateway's resume tokens (each whole line, its line break included; a token is
   * what resume/token.ts `resumeTokenSellerId` reads one from), through the response's event
   * (`through`, in `answerBytes`) and before it (`before`, in `before.bytes`). The probe
   * measures without them, as the live check does (mcp/discovery-size.ts DiscoveryInput.bytes):
   * the target is about the seller's answer (review of hostile trial 57 F2's fix:
   * test/regressions/discovery-size-counts-gateway-resume-tokens.test.ts), and which events get
   * a token depends on the tokens' lengths (hostile trial 58, 1:
   * test/regressions/probe-and-live-discovery-size-disagree.test.ts).
   */
  readonly tokenBytes?: { readonly through: number; readonly before: number };
  /** Response headers (lower-cased names). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Why no response message could be read, when `message` is undefined. */
  readonly problem?: string;
}

export interface RpcClientOptions {
  /** `http://127.0.0.1:<port>/agents/<agent>/mcp` */
  readonly url: string;
  /** Abort one HTTP exchange after this long (ms). */
  readonly timeoutMs: number;
  /** Stop reading a body after this many bytes (the gateway bounds what it sends; this guards the probe itself). */
  readonly maxBodyBytes: number;
}

export interface RpcClient {
  /** Sends a JSON-RPC request and waits for its response. */
  call(method: string, params: Record<string, unknown>): Promise<RpcReply>;
  /** Sends a JSON-RPC notification; resolves with the HTTP status. */
  notify(method: string, params?: Record<string, unknown>): Promise<number>;
  /** Session and revision for the following requests (from `initialize`). */
  setSession(sessionId: string | undefined, protocolVersion: string | undefined): void;
  /** DELETE the session, if any (errors ignored). */
  close(): Promise<void>;
}

export function createRpcClient(opts: RpcClientOptions): RpcClient {
  let nextId = 1;
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;

  const baseHeaders = (): Record<string, string> => ({
    accept: 'application/json, text/event-stream',
    ...(sessionId !== undefined ? { 'mcp-session-id': sessionId } : {}),
    ...(protocolVersion !== undefined ? { 'mcp-protocol-version': protocolVersion } : {}),
  });

  async function post(message: Record<string, unknown>, id: number | undefined): Promise<RpcReply> {
    const signal = AbortSignal.timeout(opts.timeoutMs);
    const controller = new AbortController();
    const onTimeout = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onTimeout, { once: true });
    try {
      const res = await request(opts.url, {
        method: 'POST',
        headers: { ...baseHeaders(), 'content-type': 'application/json' },
        body: JSON.stringify(message),
        signal: controller.signal,
      });
      const headers = res.headers as Record<string, string | string[] | undefined>;
      const type = mediaType(headers['content-type']);
      if (type === 'text/event-stream') {
        const found = await readSseResponse(res.body, id, opts.maxBodyBytes, () => controller.abort());
        return { status: res.statusCode, headers, ...found };
      }
      const body = await readBody(res.body, opts.maxBodyBytes, () => controller.abort());
      if (body === undefined) return { status: res.statusCode, headers, transport: 'none', message: undefined, bytes: 0, answerBytes: 0, problem: `body over ${opts.maxBodyBytes} bytes` };
      if (body.length === 0) return { status: res.statusCode, headers, transport: 'none', message: undefined, bytes: 0, answerBytes: 0 };
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return { status: res.statusCode, headers, transport: 'json', message: undefined, bytes: body.length, answerBytes: body.length, problem: `not JSON (${type ?? 'no content-type'})` };
      }
      return { status: res.statusCode, headers, transport: 'json', message: parsed, bytes: body.length, answerBytes: body.length };
    } catch (err) {
      const reason = signal.aborted ? `no answer within ${opts.timeoutMs} ms` : `request failed: ${(err as Error).message}`;
      return { status: 0, headers: {}, transport: 'none', message: undefined, bytes: 0, answerBytes: 0, problem: reason };
    } finally {
      signal.removeEventListener('abort', onTimeout);
    }
  }

  return {
    call(method, params) {
      const id = nextId++;
      return post({ jsonrpc: '2.0', id, method, params }, id);
    },
    async notify(method, params) {
      const reply = await post({ jsonrpc: '2.0', method, ...(params ? { params } : {}) }, undefined);
      return reply.status;
    },
    setSession(id, version) {
      sessionId = id;
      protocolVersion = version;
    },
    async close() {
      if (sessionId === undefined) return;
      try {
        const res = await request(opts.url, { method: 'DELETE', headers: baseHeaders(), signal: AbortSignal.timeout(opts.timeoutMs) });
        await res.body.dump();
      } catch {
        // The session ends with the seller's own timeout.
      }
    },
  };
}

/** The media type essence as the gateway reads it (response/content-type.ts: an empty parameter is none), or undefined when absent or unparsable. */
function mediaType(value: string | string[] | undefined): string | undefined {
  return mediaTypeEssence(value) || undefined;
}

/** Reads a whole body, or undefined past `max` bytes (the request is aborted then). */
async function readBody(body: AsyncIterable<Buffer>, max: number, abort: () => void): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      abort();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads SSE events until the JSON-RPC response for `id` (or, for a notification, until the
 * stream ends). Other events (progress, server requests) are skipped, and counted with their
 * bytes (`before`). Stops reading (and aborts) once the response is found; the response in
 * an event named other than `message` is no answer: its problem names the event
 * (`namedEventAnswer`, the name's first 64 characters).
 *
 * Bytes are counted to the end of the response's event exactly: each chunk is fed to the
 * parser a line at a time (split after each LF; UTF-8 never has 0x0A inside a character), so
 * the line that dispatches the response is known, and a blank line (LF or CR LF alone) marks
 * where each event block begins. A stream whose lines end with a lone CR (which the gateway
 * never writes: its encoder ends lines with LF) is counted to the end of its chunk.
 */
async function readSseResponse(
  body: AsyncIterable<Buffer> & { destroy?: () => void },
  id: number | undefined,
  max: number,
  abort: () => void,
): Promise<Pick<RpcReply, 'transport' | 'message' | 'bytes' | 'answerBytes' | 'before' | 'tokenBytes' | 'problem'>> {
  let found: { message: unknown; bytes: number } | { problem: string } | undefined;
  let lastEventId: string | undefined;
  /** Events dispatched so far, the response's included once it comes. */
  let events = 0;
  const onEvent = (ev: EventSourceMessage): void => {
    if (found) return;
    events++;
    if (ev.data === '') return;
    if (ev.id !== undefined && ev.id !== '') lastEventId = ev.id;
    let message: unknown;
    try {
      message = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (id === undefined || !isResponseTo(message, id)) return;
    // eventsource-parser: `event` is undefined for no `event:` field or an empty one.
    found = ev.event === undefined || ev.event === 'message' ? { message, bytes: Buffer.byteLength(ev.data, 'utf8') } : { problem: namedEventAnswer(shownInMessage(ev.event)) };
  };
  const parser = createParser({ onEvent, maxBufferSize: max });
  const decoder = new TextDecoder('utf-8');
  let size = 0;
  /** Bytes fed to the parser; where the event block being read began (after the last blank line); whether the next byte starts a line. */
  let fed = 0;
  let blockStart = 0;
  let lineStart = true;
  /** Whether the line being read is a comment (`:` first), and whether the block being read has had a line other than a comment. */
  let commentLine = false;
  let blockHasField = false;
  /** Once found: the bytes through the response's event, and those before that event. */
  let through = 0;
  let beforeBytes = 0;
  /** The bytes of the token-carrying `id:` lines so far (`tokenBytes`), and by the start of the block being read; once found, before the response's event. */
  let tokens = 0;
  let tokensAtBlockStart = 0;
  let tokensBefore = 0;
  /** The line being read, when it starts with `i` (it may be an `id:` line) and is not longer than a token's line may be. */
  let idLine: Buffer[] | undefined;
  let idLineBytes = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > max) {
        abort();
        return { transport: 'sse', message: undefined, bytes: 0, answerBytes: 0, problem: `SSE stream over ${max} bytes` };
      }
      for (let from = 0; from < chunk.length && !found; ) {
        const lf = chunk.indexOf(0x0a, from);
        const to = lf === -1 ? chunk.length : lf + 1;
        parser.feed(decoder.decode(chunk.subarray(from, to), { stream: true }));
        fed += to - from;
        const blank = lineStart && lf !== -1 && (to - from === 1 || (to - from === 2 && chunk[from] === 0x0d));
        if (lineStart && chunk[from] === 0x69) {
          idLine = [];
          idLineBytes = 0;
        }
        if (idLine !== undefined) {
          idLine.push(chunk.subarray(from, to));
          idLineBytes += to - from;
          if (idLineBytes > MAX_RESUME_TOKEN_LENGTH + 8) idLine = undefined;
          else if (lf !== -1) {
            tokens += tokenLineBytes(Buffer.concat(idLine, idLineBytes));
            idLine = undefined;
          }
        }
        if (lineStart && !blank) {
          commentLine = chunk[from] === 0x3a;
          if (!commentLine) blockHasField = true;
        }
        lineStart = lf !== -1;
        if (found) {
          through = fed;
          beforeBytes = blockStart;
          tokensBefore = tokensAtBlockStart;
        } else if (blank || (lf !== -1 && commentLine && !blockHasField)) {
          // A blank line ends a block; a comment line that opens one is before its event too
          // (the gateway writes comments without a blank line: hostile trial 58, 2).
          blockStart = fed;
          tokensAtBlockStart = tokens;
          if (blank) blockHasField = false;
        }
        from = to;
      }
      if (found) break;
    }
  } catch (err) {
    if (!found) return { transport: 'sse', message: undefined, bytes: 0, answerBytes: 0, problem: `SSE stream failed: ${(err as Error).message}` };
  }
  if (found) {
    abort();
    if ('problem' in found) return { transport: 'sse', message: undefined, bytes: 0, answerBytes: 0, problem: found.problem };
    const reply = { transport: 'sse' as const, ...found, answerBytes: through, before: { events: events - 1, bytes: beforeBytes } };
    return tokens === 0 ? reply : { ...reply, tokenBytes: { through: tokens, before: tokensBefore } };
  }
  if (id === undefined) return { transport: 'sse', message: undefined, bytes: 0, answerBytes: 0 };
  return {
    transport: 'sse',
    message: undefined,
    bytes: 0,
    answerBytes: 0,
    problem: lastEventId === undefined ? 'SSE stream ended without a response' : 'SSE stream ended without a response (resumable; the probe does not resume)',
  };
}

/**
 * The bytes of a whole line (its line break included) that carries a gateway resume token,
 * `id: <token>` (or `id:<token>`); 0 for any other line.
 */
function tokenLineBytes(line: Buffer): number {
  if (line.length < 4 || line[1] !== 0x64 || line[2] !== 0x3a) return 0;
  let end = line.length - 1;
  if (end > 3 && line[end - 1] === 0x0d) end--;
  const value = line.toString('latin1', line[3] === 0x20 ? 4 : 3, end);
  return resumeTokenSellerId(value) === undefined ? 0 : line.length;
}

function isResponseTo(message: unknown, id: number): boolean {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  return m.id === id && (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error'));
}
