/** The content codings of routing/handler.ts: a host's request `Content-Encoding`, and the `Accept-Encoding` sent to a seller. */
import { parseContentEncoding } from '../response/decode.js';

/**
 * Whether a host's `Content-Encoding` value names a coding: any element that is neither empty
 * nor `identity` (case-insensitive, trimmed), known to the gateway or not (parseContentEncoding,
 * the seller side's reader: an unknown one fails it, a known one is listed). `""`, `","`,
 * `"identity, "` name none.
 */
export function namesCoding(value: string): boolean {
  const parsed = parseContentEncoding(value);
  return !parsed.ok || parsed.codings.length > 0;
}

/** `acceptEncoding` per agent codings list (config objects are frozen, so the header value never changes). */
const acceptEncodingCache = new WeakMap<readonly string[], string>();

/** The Accept-Encoding the gateway sends: the agent's codings, `identity` alone when none. */
export function acceptEncoding(codings: readonly string[]): string {
  let value = acceptEncodingCache.get(codings);
  if (value === undefined) {
    const list = codings.filter((c) => c !== 'identity');
    value = list.length === 0 ? 'identity' : list.join(', ');
    acceptEncodingCache.set(codings, value);
  }
  return value;
}
