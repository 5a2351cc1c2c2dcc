/**
 * Serializes one SSE event (WHATWG HTML "Server-sent events" §9.2.6 field syntax).
 * `data` is split on LF into one `data:` line each, so a multi-line payload round-trips.
 * (A parsed event's data cannot contain CR: the parser split lines on it.)
 */
export interface SseEventOut {
  /** Event id; an empty string is written as an empty `id:` field (it resets the client's last id). */
  id?: string | undefined;
  /** Event type; omitted means `message`. */
  event?: string | undefined;
  data: string;
}

export function encodeSseEvent(ev: SseEventOut): string {
  let out = '';
  if (ev.id !== undefined) out += ev.id === '' ? 'id\n' : `id: ${ev.id}\n`;
  if (ev.event !== undefined) out += `event: ${ev.event}\n`;
  if (ev.data.indexOf('\n') === -1) {
    out += `data: ${ev.data}\n`;
  } else {
    for (const line of ev.data.split('\n')) out += `data: ${line}\n`;
  }
  return out + '\n';
}

/** A `retry:` field on its own (sets the client's reconnection time; dispatches no event). */
export function encodeSseRetry(ms: number): string {
  return `retry: ${ms}\n\n`;
}

/** A comment line (keep-alive). Comments carry no data and dispatch nothing. */
export function encodeSseComment(text: string): string {
  return text === '' ? ':\n' : `: ${text}\n`;
}

/** What {@link SseFrameBatch.flush} writes to: the host's response (`ServerResponse`). */
export interface SseSink {
  write(chunk: string, encoding?: BufferEncoding): boolean;
}

/**
 * The frames of one input chunk, written to the host in one write (ARCHITECTURE §5: SSE is
 * never buffered: the SSE stage flushes after each input chunk, before it awaits the next
 * one, so batching adds no delay; it saves a socket write per event: one write per event was
 * most of the gateway's cost on a stream of small events, bench/README.md "SSE events/s").
 */
export class SseFrameBatch {
  private text = '';

  /** Adds one event, as {@link encodeSseEvent} writes it. */
  event(ev: SseEventOut): void {
    this.text += encodeSseEvent(ev);
  }

  /** Adds a frame already encoded (a comment, a `retry:`). */
  frame(frame: string): void {
    this.text += frame;
  }

  /**
   * Writes what was added since the last flush in one `write`, if anything. Returns the bytes
   * written and whether `sink` wants a drain (`write` returned false). Text that is all ASCII
   * (as many UTF-8 bytes as characters) is written as Latin-1: the same bytes, copied without
   * a UTF-8 encoding pass.
   */
  flush(sink: SseSink): { bytes: number; full: boolean } {
    const text = this.text;
    if (text === '') return { bytes: 0, full: false };
    this.text = '';
    const bytes = Buffer.byteLength(text);
    return { bytes, full: !sink.write(text, bytes === text.length ? 'latin1' : 'utf8') };
  }
}
