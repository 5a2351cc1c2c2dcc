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
