/**
 * The host's side of an answer read as it arrives (fetch, on 127.0.0.1): its status once the
 * head is in, `text` so far, `done` with the whole text at its end, `cancel()` to leave.
 */
import { toolCall } from './raw.js';
import { withTimeout } from './timeout.js';

export interface OpenAnswer {
  status: number;
  text: string;
  readonly done: Promise<string>;
  cancel(): void;
}

/**
 * Sends `init` to `url` and resolves once the head is in (within STEP_TIMEOUT_MS, a timeout
 * naming `label`). `done` resolves with the text read when the answer ends or the test cancels
 * it (a read error after `cancel()` ends it quietly; any other rejects `done`).
 */
export async function openAnswer(url: string, init: RequestInit, label = 'the head'): Promise<OpenAnswer> {
  const ac = new AbortController();
  const res = await withTimeout(fetch(url, { ...init, signal: ac.signal }), undefined, label);
  const got = { status: res.status, text: '', cancel: () => ac.abort() };
  const done = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) got.text += decoder.decode(chunk as Uint8Array, { stream: true });
    } catch (err) {
      if (!ac.signal.aborted) throw err; // else: cancelled by the test
    }
    return got.text;
  })();
  return Object.assign(got, { done });
}

/** A host's POST of tools/call `tool` (id `id`, arguments `args`) accepting JSON or SSE, with `headers`. */
export function toolCallPost(id: number, tool: string, headers: Record<string, string>, args: Record<string, unknown> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(toolCall(id, tool, args)),
  };
}
