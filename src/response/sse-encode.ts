import { dataLineCount, encodedEventBytes } from './sse-encoded-size.js';

/**
 * Serializes one SSE event (WHATWG HTML "Server-sent events" §9.2.6 field syntax).
 * `data` is split on LF into one `data:` line each, so a multi-line payload round-trips.
 * (A parsed event's data cannot contain CR: the parser split lines on it. Nor can the data the
 * gateway writes: its errors are `JSON.stringify` output, and a rewrite adds no CR or LF to the
 * seller's data, a lifted text's line breaks going out as spaces: lift-line-breaks.ts, checked
 * on both rewrite paths by test/unit/rewrite-paths-differential-fuzz.test.ts. A CR written
 * here would stay inside a `data:` line, where the host's parser ends the line: a read-only
 * review, H1, test/regressions/sse-lift-with-cr-loses-answer.test.ts.)
 */
export interface SseEventOut {
  /** Event id; an empty string is written as an empty `id:` field (it resets the client's last id). */
  id?: string | undefined;
  /** Event type; omitted means `message`. */
  event?: string | undefined;
  data: string;
}

/** `lines`: the number of LF-separated lines of `data` when the caller counted them (1: not searched again). */
export function encodeSseEvent(ev: SseEventOut, lines?: number): string {
  let out = eventHead(ev);
  if (lines === 1 || (lines === undefined && ev.data.indexOf('\n') === -1)) {
    out += `data: ${ev.data}\n`;
  } else {
    for (const line of ev.data.split('\n')) out += `data: ${line}\n`;
  }
  return out + '\n';
}

/** The `id:` and `event:` lines of an event. */
function eventHead(ev: Omit<SseEventOut, 'data'>): string {
  let out = '';
  if (ev.id !== undefined) out += ev.id === '' ? 'id\n' : `id: ${ev.id}\n`;
  if (ev.event !== undefined) out += `event: ${ev.event}\n`;
  return out;
}

/**
 * An `id` field on its own, then the blank line: sets the client's last event ID and
 * dispatches no event (WHATWG HTML §9.2.6, "dispatch the event": the id is set before an
 * empty data buffer returns). An empty string is written as an empty `id` field.
 */
export function encodeSseIdOnly(id: string): string {
  return eventHead({ id }) + '\n';
}

/**
 * A `retry:` field on its own (sets the client's reconnection time; dispatches no event), then
 * the blank line. `ms` is written as given: the SSE stage passes a seller's value through
 * {@link clampSseRetryMs} first.
 */
export function encodeSseRetry(ms: number): string {
  return `retry: ${ms}\n\n`;
}

/**
 * Least reconnection time, in milliseconds, the gateway forwards in a `retry:` field; a
 * seller's lower value (`retry: 0`, `retry: 1`) goes out as this ({@link clampSseRetryMs}).
 *
 * Why: `retry:` sets how long the host's EventSource or MCP SDK client waits before it
 * reconnects (WHATWG HTML §9.2.6; the MCP SDK client uses the server's value as is), so a
 * seller's `retry: 1` made the host reconnect every millisecond, hammering the gateway and
 * the seller (source: a reviewer: a seller's retry: 1 made the host reconnect every
 * millisecond; test/regressions/sse-retry-field-passes-through.test.ts). At this bound a
 * stream reconnects at most twice a second. Why not 1000 ms: the MCP conformance suite's
 * `sse-retry` scenario (SEP-1699, run through the gateway in CI: `npm run conformance`) sends
 * `retry: 500` and grades a reconnect after more than twice that as a failure; a seller's
 * value of 500 ms or more is forwarded unchanged.
 */
export const SSE_RETRY_MIN_MS = 500;

/**
 * Greatest reconnection time, in milliseconds (5 minutes), the gateway forwards in a `retry:`
 * field; a seller's higher value (`retry: 86400000`, or more digits than a double holds,
 * which was written `retry: 1e+23`, a value no client reads) goes out as this
 * ({@link clampSseRetryMs}).
 *
 * Why: a seller must not make a host wait for good before it resumes a stream that carries
 * its pending answer (same source as {@link SSE_RETRY_MIN_MS}). Five minutes is the default
 * `sse_idle_timeout_ms`, the longest a seller may leave a stream silent. A shorter resume
 * token lifetime lowers the ceiling further ({@link sseRetryCeilingMs}).
 */
export const SSE_RETRY_MAX_MS = 5 * 60 * 1000;

/**
 * The greatest `retry:` value, in milliseconds, the gateway forwards when its resume tokens
 * live `resumeTtlMs` (`resume.ttl_ms`, the lifetime the running resume codec verifies with:
 * resume/token.ts `ttlMs`): half that lifetime, rounded down, within
 * [{@link SSE_RETRY_MIN_MS}, {@link SSE_RETRY_MAX_MS}]. The default lifetime (1 h) gives
 * {@link SSE_RETRY_MAX_MS}; `ttl_ms: 60000` gives 30000; a lifetime under 1000 ms gives the
 * floor, 500 (the floor wins: see {@link SSE_RETRY_MIN_MS}; such a lifetime is shorter than
 * a reconnect the floor allows, so keep `resume.ttl_ms` at 1000 or more).
 *
 * Why: a host that follows `retry:` resumes with `Last-Event-ID` holding the token of the
 * last event it got, and a token older than `resume.ttl_ms` is refused
 * (`resume_token_expired`). With `ttl_ms` under 5 minutes, a seller's `retry: 300000` made
 * the host come back with an expired token, its resume refused (reported failure:
 * test/regressions/sse-retry-outlives-resume-token.test.ts). Why half: the token's age at the
 * resume is the time from its event to the break (the stream may stay silent up to
 * `sse_idle_timeout_ms` before it breaks), plus the `retry:` wait, plus the reconnect; the
 * wait is the part the seller dictates, and it gets at most half of the lifetime, the other
 * half left for the rest.
 *
 * Computed once per resume codec (routing/handler.ts createMcpHandler), not per event:
 * `resume` takes effect at start-up only (a reload that changes it is logged and the running
 * codec, its `ttlMs` with it, stays: reload.ts), so the ceiling follows the lifetime that
 * actually refuses a token. Errors: none (`resumeTtlMs` is a finite number >= 0, as the codec
 * requires).
 */
export function sseRetryCeilingMs(resumeTtlMs: number): number {
  const half = Math.floor(resumeTtlMs / 2);
  return half < SSE_RETRY_MIN_MS ? SSE_RETRY_MIN_MS : half > SSE_RETRY_MAX_MS ? SSE_RETRY_MAX_MS : half;
}

/**
 * A seller's `retry:` value (`ms`: a non-negative integer as eventsource-parser's `onRetry`
 * gives it, which may be `Infinity` or past 2^53 for a value of many digits) as the gateway
 * forwards it, in milliseconds: clamped to [{@link SSE_RETRY_MIN_MS}, `maxMs`], an integer the
 * encoder writes in plain digits. `maxMs`: the exchange's ceiling ({@link sseRetryCeilingMs}
 * of the resume token lifetime; default {@link SSE_RETRY_MAX_MS}), at least
 * {@link SSE_RETRY_MIN_MS}. Errors: none.
 */
export function clampSseRetryMs(ms: number, maxMs: number = SSE_RETRY_MAX_MS): number {
  return ms < SSE_RETRY_MIN_MS ? SSE_RETRY_MIN_MS : ms > maxMs ? maxMs : ms;
}

/** A comment line (keep-alive). Comments carry no data and dispatch nothing. */
export function encodeSseComment(text: string): string {
  return text === '' ? ':\n' : `: ${text}\n`;
}

/** What {@link SseFrameBatch.flush} writes to: the host's response (`ServerResponse`). */
export interface SseSink {
  write(chunk: string | Uint8Array, encoding?: BufferEncoding): boolean;
  /** The connection (`ServerResponse.socket`; null once detached): see {@link corkSocketForThisTick}. */
  readonly socket?: SseSinkSocket | null;
}

/** The part of `net.Socket` a flush uses: writes made while it is corked leave in one `writev`. */
export interface SseSinkSocket {
  readonly writableCorked: number;
  cork(): void;
  uncork(): void;
}

const LF = 0x0a;

/**
 * Most LF-separated lines of an event's data that {@link SseFrameBatch.eventBytes} writes as
 * views of the data (two write parts per line); data of more lines is framed in one Buffer.
 *
 * Why (a hostile seller, trial 13 H1: test/regressions/sse-many-data-lines-freezes-gateway.test.ts):
 * one event of 1,000,000 `data: x` lines (8 MB, under every default bound) went out as
 * 2,000,000 corked writes, each an HTTP chunk of the host's response: the gateway's event
 * loop stopped for 8-19 s, other agents with it, and its RSS reached 1.4 GB (two such events
 * killed a gateway with a 1 GB heap). Framed in one Buffer, the event costs one copy of its data.
 */
export const VIEW_EVENT_MAX_LINES = 8;

/**
 * `before` (text: an event's `id:` / `event:` lines and anything pending before them), then
 * `data` written as `lines` `data:` lines (each LF-separated line of it after `data: `, ended
 * by LF), then the blank line, as one Buffer: the bytes {@link encodeSseEvent} writes for the
 * same event. `lines` must be sse-encoded-size.ts dataLineCount of `data`. One line (the usual event): one
 * string write and one copy, no search.
 */
function framedDataLines(before: string, data: Buffer, lines: number): Buffer {
  const head = before + 'data: ';
  const headBytes = Buffer.byteLength(head);
  // Each LF of the data is followed by `data: ` (6 bytes); the event ends with LF LF.
  const out = Buffer.allocUnsafe(headBytes + data.length + 6 * (lines - 1) + 2);
  let o = out.write(head, 0, headBytes, 'utf8');
  if (lines === 1) {
    o += data.copy(out, o);
  } else {
    let at = 0;
    for (let lf = data.indexOf(LF); lf !== -1; lf = data.indexOf(LF, at)) {
      o += data.copy(out, o, at, lf + 1);
      out[o++] = 0x64; // d
      out[o++] = 0x61; // a
      out[o++] = 0x74; // t
      out[o++] = 0x61; // a
      out[o++] = 0x3a; // :
      out[o++] = 0x20; // space
      at = lf + 1;
    }
    o += data.copy(out, o, at);
  }
  out[o++] = LF;
  out[o] = LF;
  return out;
}

/**
 * Corks the host's socket until the end of this tick (uncorked on `process.nextTick`) unless
 * it is corked already: the parts of a flush, and any later flush made in the same tick (the
 * next input chunk when it was already read), leave in one `writev`. Node's HTTP response does
 * the same for a write made while its socket is not corked (`_http_outgoing.js` `write_`).
 *
 * The *socket* is corked, never the response (issue 5, SSE events/s): a response corked and
 * uncorked around each flush sent every multi-part flush at once and the next flush of the
 * tick in a second `writev` (bench sse-flood: 13,098 `writev` calls where the pass-through
 * made 9,840 for the same events); and a response corked past the flush is unsafe on Node 22
 * and 24, where it holds its chunked writes itself: `end()` then sends the terminating chunk
 * before them (nodejs/node#50167), and a drain wait could hang. `end()` uncorks the socket
 * fully; the later `uncork` then does nothing.
 */
function corkSocketForThisTick(sink: SseSink): void {
  const socket = sink.socket;
  if (socket == null || socket.writableCorked > 0) return;
  socket.cork();
  process.nextTick(uncorkSocket, socket);
}

function uncorkSocket(socket: SseSinkSocket): void {
  socket.uncork();
}

/**
 * Largest data, in bytes, that {@link SseFrameBatch.eventBytes} copies to frame its event in
 * one Buffer (a 16 KiB copy costs about what a write part does); larger data goes out as
 * its own part, uncopied.
 */
export const SMALL_EVENT_DATA_BYTES = 16 * 1024;

/**
 * The frames of one input chunk, written to the host in one write (ARCHITECTURE §5: SSE is
 * never buffered: the SSE stage flushes after each input chunk, before it awaits the next
 * one, so batching adds no delay; it saves a socket write per event: one write per event was
 * most of the gateway's cost on a stream of small events, bench/README.md "SSE events/s").
 *
 * Frames are text, or bytes: an event whose data is held as UTF-8 bytes ({@link eventBytes}),
 * or an event block forwarded as the seller's bytes ({@link raw}). Raw blocks and large data
 * are never copied: a flush of several parts writes them with the socket corked to the end of
 * the tick (one `writev`, with any later flush of that tick: corkSocketForThisTick);
 * the data of a small one-line event is copied once, to frame it in one Buffer (each write
 * to an HTTP response costs an HTTP chunk's framing and a pass through the socket's write
 * path: issue 5, one-event answers).
 */
export class SseFrameBatch {
  private text = '';
  /** Parts before `text`, in order, when the batch holds bytes. */
  private parts: Array<string | Buffer> = [];
  /** The chunk of the raw range being extended (its first block is the last part), and the range's end. */
  private rawChunk: Buffer | undefined;
  private rawEnd = 0;
  /** What the stream gave the host so far, kept from {@link countAnswer} on (a discovery answer's stream only). */
  private answer: AnswerCount | undefined;

  /**
   * Counts from now on what this stream gives the host, for {@link answerSoFar}: the bytes
   * queued (written or not), the events, the comment lines since the last blank line, each
   * added as its frame is queued. Called by the SSE stage on a discovery request's stream only
   * (PipelineHooks.wantsResponseMessage): elsewhere nothing is counted. Per frame: the UTF-8
   * length of the text it adds (an {@link event}'s whole frame, an {@link eventBytes}'s head
   * alone: its data is bytes already), and for a raw range one native search per event block
   * in it, within the range (its `LF LF`, to count its events: the raw plan merges a run's
   * blocks into one segment, sse-raw-plan.ts, so the taker has no count to pass).
   */
  countAnswer(): void {
    this.answer = { bytes: 0, events: 0 };
  }

  /**
   * What the host got and is being given on this stream since {@link countAnswer}, the frames
   * queued and not yet written included: `bytes`, every byte; `events`, the events (frames
   * with `data:` lines: {@link event}, {@link eventBytes}, each block of a {@link raw} range).
   * A comment line queued before an event is in `bytes` before it, though a host's SSE reader
   * reads it in that event's block (the stage writes comments without a blank line): the
   * discovery size counts it as before the response (hostile trial 58, 2:
   * test/regressions/discovery-size-comments-before-response-unexplained.test.ts). Undefined when not
   * counting. O(1): the counts are kept as frames are queued. Before, it measured all the text
   * queued (one input chunk's frames) at each call, twice per response event (review of hostile
   * trial 57 F2's fix).
   */
  answerSoFar(): { readonly bytes: number; readonly events: number } | undefined {
    const answer = this.answer;
    return answer === undefined ? undefined : { bytes: answer.bytes, events: answer.events };
  }

  /** Adds one event, as {@link encodeSseEvent} writes it (`lines`: as there). */
  event(ev: SseEventOut, lines?: number): void {
    const frame = encodeSseEvent(ev, lines);
    this.text += frame;
    const answer = this.answer;
    if (answer === undefined) return;
    answer.bytes += Buffer.byteLength(frame);
    countEvents(answer, 1);
  }

  /**
   * Adds one event whose data is the UTF-8 bytes `data`: the same bytes as
   * {@link encodeSseEvent} writes for `data.toString('utf8')` when `data` is valid UTF-8
   * (each LF-separated line of it in its own `data:` line), without decoding it. Data of at
   * most {@link SMALL_EVENT_DATA_BYTES}, or of more than {@link VIEW_EVENT_MAX_LINES} lines, is
   * copied into one Buffer with the text added before it (the usual response event: a batch
   * ending with it is one write); other data (large, in a few lines) is added as views of
   * `data`, between text parts. `lines`: the number of LF-separated lines of `data` when the
   * caller counted them (else they are counted here).
   */
  eventBytes(ev: Omit<SseEventOut, 'data'>, data: Buffer, lines?: number): void {
    const head = eventHead(ev);
    this.text += head;
    const count = lines ?? dataLineCount(data);
    const answer = this.answer;
    if (answer !== undefined) {
      // The frame as sse-encoded-size.ts measures it (its head, `data: ` before each line,
      // the data, then LF LF).
      answer.bytes += encodedEventBytes(
        ev.id === undefined ? -1 : Buffer.byteLength(ev.id),
        ev.event === undefined ? -1 : Buffer.byteLength(ev.event),
        count,
        data.length,
      );
      countEvents(answer, 1);
    }
    if (data.length <= SMALL_EVENT_DATA_BYTES || count > VIEW_EVENT_MAX_LINES) {
      // Small data: the text before it, its `data:` lines and the blank line as one Buffer
      // (one copy of the data), so that a batch ending with it (a one-event answer) is one
      // `write`, not three corked ones each framed as an HTTP chunk. Data of many lines: the
      // same, so that its writes do not grow with its lines (VIEW_EVENT_MAX_LINES).
      const before = this.text;
      this.text = '';
      this.bytes(framedDataLines(before, data, count));
      return;
    }
    // Large data in a few lines: each line a view of `data`, uncopied, between text parts.
    let at = 0;
    for (let lf = data.indexOf(LF); lf !== -1; lf = data.indexOf(LF, at)) {
      this.text += 'data: ';
      this.bytes(data.subarray(at, lf));
      this.text += '\n';
      at = lf + 1;
    }
    this.text += 'data: ';
    this.bytes(data.subarray(at));
    this.text += '\n\n';
  }

  /** Adds `chunk[start, end)` as it is (event blocks the stage forwards as the seller's bytes). */
  raw(chunk: Buffer, start: number, end: number): void {
    if (start >= end) return;
    const answer = this.answer;
    if (answer !== undefined) {
      answer.bytes += end - start;
      // Canonical blocks (sse-raw-events.ts): each holds one `LF LF`, its end, and one event.
      countEvents(answer, blockEndsIn(chunk, start, end));
    }
    // The next block of the same chunk extends the pending range (one view at the end).
    if (this.rawChunk === chunk && this.rawEnd === start && this.text === '') {
      this.rawEnd = end;
      return;
    }
    this.bytes(chunk.subarray(start, end));
    this.rawChunk = chunk;
    this.rawEnd = end;
  }

  /** Adds a frame already encoded (a comment, a `retry:`, an id-only block). */
  frame(frame: string): void {
    this.text += frame;
    const answer = this.answer;
    if (answer === undefined) return;
    answer.bytes += Buffer.byteLength(frame);
  }

  /**
   * Writes what was added since the last flush, if anything, in one `write` (text alone,
   * or one byte part alone) or several on a corked socket. Returns the bytes written and
   * whether `sink` wants a drain (a `write` returned false). Text that is all ASCII (as many
   * UTF-8 bytes as characters) is written as Latin-1: the same bytes, copied without a UTF-8
   * encoding pass.
   */
  flush(sink: SseSink): { bytes: number; full: boolean } {
    this.closeRaw();
    return this.write(sink);
  }

  private write(sink: SseSink): { bytes: number; full: boolean } {
    if (this.parts.length === 0) {
      const text = this.text;
      if (text === '') return { bytes: 0, full: false };
      this.text = '';
      return writeText(sink, text);
    }
    if (this.text !== '') this.parts.push(this.text);
    const parts = this.parts;
    this.parts = [];
    this.text = '';
    if (parts.length === 1) return writePart(sink, parts[0]!);
    let bytes = 0;
    let full = false;
    corkSocketForThisTick(sink);
    for (const part of parts) {
      const w = writePart(sink, part);
      bytes += w.bytes;
      full ||= w.full;
    }
    return { bytes, full };
  }

  private bytes(b: Buffer): void {
    this.closeRaw();
    if (b.length === 0) return;
    if (this.text !== '') {
      this.parts.push(this.text);
      this.text = '';
    }
    this.parts.push(b);
  }

  /** Ends the pending raw range: its view replaces the last part (the range's first block). */
  private closeRaw(): void {
    const chunk = this.rawChunk;
    if (chunk === undefined) return;
    this.rawChunk = undefined;
    const last = this.parts.length - 1;
    const first = this.parts[last] as Buffer;
    const start = first.byteOffset - chunk.byteOffset;
    if (start + first.length !== this.rawEnd) this.parts[last] = chunk.subarray(start, this.rawEnd);
  }
}

/** What {@link SseFrameBatch.countAnswer} keeps: bytes queued (written or not), events queued. */
interface AnswerCount {
  bytes: number;
  events: number;
}

const LF_LF = Buffer.from('\n\n', 'latin1');

/** `n` more events queued, each ending with its blank line. */
function countEvents(answer: AnswerCount, n: number): void {
  answer.events += n;
}

/**
 * How many `LF LF` pairs `chunk[start, end)` holds, each counted past its end (a raw range's
 * event blocks). Searched within the range: searched in the whole chunk, the search after its
 * last block ran on through the next block (the response's, up to `max_sse_event_bytes`).
 */
function blockEndsIn(chunk: Buffer, start: number, end: number): number {
  const range = chunk.subarray(start, end);
  let n = 0;
  for (let at = range.indexOf(LF_LF); at !== -1; at = range.indexOf(LF_LF, at + 2)) n++;
  return n;
}

function writePart(sink: SseSink, part: string | Buffer): { bytes: number; full: boolean } {
  return typeof part === 'string' ? writeText(sink, part) : { bytes: part.length, full: !sink.write(part) };
}

function writeText(sink: SseSink, text: string): { bytes: number; full: boolean } {
  const bytes = Buffer.byteLength(text);
  return { bytes, full: !sink.write(text, bytes === text.length ? 'latin1' : 'utf8') };
}
