/**
 * The SSE path: event decode -> per-event + cumulative budget -> structure bounds -> rewrite
 * -> encode (ARCHITECTURE §2). Each event is forwarded and flushed as soon as it is complete;
 * nothing is buffered beyond the event being parsed.
 *
 * Bounds (spec: mcp-response-extraction.md, Size Limits; ARCHITECTURE §5):
 * - cumulative: every byte of a request's stream (comments included) counts against
 *   `max_response_bytes` -> `sse_cumulative`. Events completed before the limit point are
 *   delivered; the bytes past it are never parsed. The standalone GET stream has no
 *   cumulative bound (keep-alives there are normal).
 * - per event: an event's data bytes against `max_sse_event_bytes` -> `sse_event`; the
 *   parser's pending buffer is capped near that bound, so one endless `data:` line can't grow
 *   memory past it.
 * - structure: a `message` event's data is checked for depth/node bounds before JSON.parse.
 * - time: `sse_idle_timeout_ms` (no byte at all) -> `sse_idle`, `sse_deadline_ms` (whole stream) -> `sse_deadline`.
 *
 * Ending: once the response to the request's id has passed, the host's stream ends and the
 * upstream request is aborted (SDK servers may keep a resumed stream open: ARCHITECTURE §5).
 * If the seller's stream ends or breaks after an event id was forwarded but before that
 * response, the host's stream ends plainly so the client resumes with `Last-Event-ID`
 * (ARCHITECTURE §3 exception); before any event id it is `upstream_reset`.
 *
 * A breach on the standalone GET stream (no request to answer) drops that one event, logs a
 * warning ("standalone SSE stream: event dropped", with the reason and observed_bytes; the
 * exchange line carries the reason) and keeps the stream open: ending it would only make the
 * client reconnect into the same event. That holds for an endless `data:` line too: the
 * rest of that event is skipped up to the next blank line, then parsing resumes.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { isRequestStream, type Exchange } from '../exchange.js';
import { answerWithLocalError, type LocalErrorInput } from '../errors/local-reply.js';
import { GatewayAbortError } from '../errors/abort.js';
import { checkJsonBounds } from '../mcp/json-bounds.js';
import { ByteBudget } from './byte-budget.js';
import { SseBoundaryScanner } from './sse-boundaries.js';
import { encodeSseComment, encodeSseEvent, encodeSseRetry } from './sse-encode.js';
import { isResponseToExchange, rewriteResponse } from './rewrite.js';
import type { UpstreamResponse } from './json-stage.js';
import { bodyErrorToLocal, recordCounts } from './body-source.js';
import { drainOrClose } from './drain.js';
import { SSE_RESPONSE_HEADERS } from './sse-headers.js';
import type { PipelineHooks } from './pipeline.js';

/** Slack over `max_sse_event_bytes` for the parser's pending line buffer (field names, line breaks). */
export const SSE_PENDING_SLACK_BYTES = 64 * 1024;


export async function handleSseBody(
  exchange: Exchange,
  reply: FastifyReply,
  res: UpstreamResponse,
  log: FastifyBaseLogger,
  hooks: PipelineHooks,
): Promise<void> {
  const { limits, rpc } = exchange;
  const raw = reply.raw;
  const requestStream = isRequestStream(rpc);
  const perEventLimit = limits.max_sse_event_bytes;
  // The request's count, seeded from its resume token on a Last-Event-ID reconnect.
  const cumulative = requestStream ? new ByteBudget(limits.max_response_bytes, 'sse_cumulative', exchange.stream.usedBytes) : undefined;

  // Headers go out now: the host sees its stream start before the first event.
  reply.hijack();
  const headers: Record<string, string | string[] | number> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value as string | string[] | number;
  Object.assign(headers, SSE_RESPONSE_HEADERS);
  raw.writeHead(res.statusCode, headers);
  raw.flushHeaders();
  exchange.sseStarted = true;

  let needDrain = false;
  const write = (frame: string): void => {
    if (exchange.finished || raw.writableEnded || raw.destroyed) return;
    exchange.bytesToHost += Buffer.byteLength(frame);
    if (!raw.write(frame)) needDrain = true;
  };
  const fail = (input: LocalErrorInput): void => {
    if (requestStream) {
      answerWithLocalError(exchange, reply, input);
    } else {
      log.warn({ agent: exchange.agent.name, reason: input.reason, observed_bytes: input.observedBytes }, 'standalone SSE stream: event dropped');
      exchange.reason = input.reason;
      hooks.onSseEventDropped(input.reason);
    }
  };
  const endPlainly = (outcome: 'ok' | 'rewritten' | 'resumable_end'): void => {
    if (exchange.finished) return;
    exchange.finished = true;
    exchange.outcome = outcome;
    exchange.abortUpstream(new GatewayAbortError({ reason: 'finished' }));
    if (!raw.writableEnded) raw.end();
  };

  const onEvent = (ev: EventSourceMessage): void => {
    if (exchange.finished) return;
    let data = ev.data;
    const dataBytes = Buffer.byteLength(data);
    if (dataBytes > perEventLimit) {
      fail({ reason: 'sse_event', limitBytes: perEventLimit, observedBytes: dataBytes });
      return;
    }
    let final = false;
    if ((ev.event === undefined || ev.event === 'message') && data !== '') {
      const bounds = checkJsonBounds(data, { maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes });
      if (!bounds.ok) {
        fail({ reason: bounds.reason, limitBytes: perEventLimit, observedBytes: dataBytes, limit: bounds.limit, observed: bounds.observed });
        return;
      }
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch {
        message = undefined; // not JSON: forwarded as it is, the host's client decides
      }
      if (message !== undefined && isResponseToExchange(exchange, message)) {
        final = true;
        const rewritten = rewriteResponse(exchange, message, data);
        let outBytes = dataBytes;
        if (rewritten.changed) {
          data = JSON.stringify(rewritten.message);
          outBytes = Buffer.byteLength(data);
          exchange.bytesSaved += dataBytes - outBytes;
          exchange.actions.push(rewritten.action);
        }
        hooks.onResponseMessage(rewritten.message, outBytes);
      }
    }
    // A non-empty seller id goes out as a resume token carrying the exact count through this
    // event (the parser is fed one event block at a time); an empty `id:` passes unchanged.
    let id = ev.id;
    if (id !== undefined && id !== '') {
      id = exchange.mintEventId(id, cumulative ? cumulative.used : 0);
      if (id === undefined) log.warn({ agent: exchange.agent.name }, 'SSE event id could not be turned into a resume token: forwarded without an id');
    }
    write(encodeSseEvent({ id, event: ev.event, data }));
    if (id !== undefined && id !== '') exchange.lastEventIdSent = id;
    if (final) endPlainly(exchange.actions.length > 0 ? 'rewritten' : 'ok');
  };

  /** True from a parser buffer-cap breach to the next event boundary (see `feed`). */
  let skippingToBoundary = false;
  const parser = createParser({
    onEvent,
    onComment: (c) => write(encodeSseComment(c)),
    onRetry: (ms) => write(encodeSseRetry(ms)),
    onError: (err: ParseError) => {
      if (err.type === 'max-buffer-size-exceeded') {
        // The parser is now terminated (it throws on the next feed). A request stream ends
        // here (fail answers the request); the standalone GET stream drops the rest of this
        // event and is reset at the next event boundary (see `feed`).
        skippingToBoundary = true;
        fail({ reason: 'sse_event', limitBytes: perEventLimit, observedBytes: perEventLimit + SSE_PENDING_SLACK_BYTES + 1 });
      } else {
        log.debug({ agent: exchange.agent.name, err: err.message }, 'ignored malformed SSE line');
      }
    },
    maxBufferSize: perEventLimit + SSE_PENDING_SLACK_BYTES,
  });
  const decoder = new TextDecoder('utf-8');

  let idleTimer: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    if (idleTimer) idleTimer.refresh();
    else idleTimer = setTimeout(() => onTimeout({ reason: 'sse_idle', limitMs: limits.sse_idle_timeout_ms }), limits.sse_idle_timeout_ms);
  };
  // sse_deadline_ms runs from the stream's first start, across resumes.
  const deadlineLeft = Math.max(0, exchange.stream.startedAt + limits.sse_deadline_ms - Date.now());
  // Only a request's stream has a deadline: the standalone GET stream and long-lived streams
  // have no natural end (ARCHITECTURE §5); the idle timeout bounds them.
  const deadlineTimer = requestStream
    ? setTimeout(() => onTimeout({ reason: 'sse_deadline', limitMs: limits.sse_deadline_ms }), deadlineLeft)
    : undefined;
  const onTimeout = (input: LocalErrorInput): void => {
    if (exchange.finished) return;
    if (requestStream) answerWithLocalError(exchange, reply, input);
    else {
      exchange.reason = input.reason;
      endPlainly('resumable_end');
    }
  };
  armIdle();
  // Shutdown: end plainly so the client resumes with its last token; a request stream that
  // sent no event id yet has nothing to resume from, so its request is answered instead.
  hooks.onSseStart(() => {
    if (requestStream && exchange.lastEventIdSent === undefined) answerWithLocalError(exchange, reply, { reason: 'gateway_shutdown' });
    else endPlainly('resumable_end');
  });

  /**
   * Counts and parses one slice; false once the cumulative bound broke. `atBoundary`: the
   * slice ends with an event's blank line (SseBoundaryScanner).
   *
   * After the parser's buffer cap broke (an endless `data:` line), the rest of that event is
   * dropped unparsed up to the next event boundary, where the parser and the UTF-8 decoder
   * are reset, so later events on the standalone GET stream still flow (before this, the
   * terminated parser threw on the next feed and ended the GET stream:
   * test/regressions/get-stream-oversized-event.test.ts). Line endings that are CR only are
   * not seen as boundaries (sse-boundaries.ts): on such a stream the rest is dropped.
   */
  const feed = (slice: Buffer, atBoundary: boolean): boolean => {
    if (cumulative) {
      const fit = cumulative.take(slice.length);
      if (fit < slice.length) {
        // Events complete before the limit point are still delivered; nothing past it is parsed.
        if (fit > 0 && !skippingToBoundary) parser.feed(decoder.decode(slice.subarray(0, fit), { stream: true }));
        answerWithLocalError(exchange, reply, { reason: 'sse_cumulative', limitBytes: cumulative.limit, observedBytes: cumulative.used });
        return false;
      }
    }
    if (skippingToBoundary) {
      if (atBoundary) {
        parser.reset();
        decoder.decode(); // drop a partial character held from before the skipped bytes
        skippingToBoundary = false;
      }
      return !exchange.finished;
    }
    parser.feed(decoder.decode(slice, { stream: true }));
    return !exchange.finished;
  };
  const boundaries = new SseBoundaryScanner();

  const source = res.body;
  try {
    for await (const chunk of source.chunks) {
      if (exchange.finished) break;
      recordCounts(exchange, source);
      armIdle();
      let start = 0;
      let open = true;
      for (const end of boundaries.ends(chunk)) {
        open = feed(chunk.subarray(start, end), true);
        start = end;
        if (!open) break;
      }
      if (open && start < chunk.length) open = feed(chunk.subarray(start), false);
      if (!open || exchange.finished) break;
      if (needDrain) {
        needDrain = false;
        await drainOrClose(raw);
      }
    }
    // A last event ended by a lone CR (valid SSE line ending) is still pending in the parser:
    // an LF completes that line ending; after a complete event it is a no-op blank line.
    if (!exchange.finished && !skippingToBoundary) parser.feed('\n');
    if (!exchange.finished) onUpstreamEnd();
  } catch (err) {
    const local = bodyErrorToLocal(exchange, err, limits.max_response_bytes, cumulative?.used ?? source.decoded.used);
    if (local && local.reason !== 'upstream_reset') fail(local);
    if (!exchange.finished) onUpstreamEnd();
  } finally {
    recordCounts(exchange, source);
    hooks.onSseEnd();
    if (deadlineTimer) clearTimeout(deadlineTimer);
    if (idleTimer) clearTimeout(idleTimer);
    if (!source.stream.destroyed) source.stream.destroy();
  }

  function onUpstreamEnd(): void {
    if (!requestStream) return endPlainly('ok');
    if (exchange.lastEventIdSent !== undefined) return endPlainly('resumable_end');
    answerWithLocalError(exchange, reply, {
      reason: 'upstream_reset',
      limitBytes: limits.max_response_bytes,
      observedBytes: cumulative?.used ?? exchange.bytesFromSeller,
    });
  }
}
