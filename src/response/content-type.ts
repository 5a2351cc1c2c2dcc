/**
 * Media types compared by their parsed essence, never by substring (ARCHITECTURE §5: a seller
 * may say `Text/Event-Stream; charset=utf-8`). Parsing by fast-content-type-parse (RFC 9110).
 */
import { safeParse } from 'fast-content-type-parse';

export type BodyKind = 'json' | 'sse' | 'other' | 'none';

/**
 * The one value of a seller's `Content-Type` sent as several field lines (undici gives a
 * repeated field as an array): the value when every line says the same (RFC 9110 §5.3: a
 * recipient may combine repeated field lines, so identical ones say no more than one), or
 * undefined when they differ: `Content-Type` is a singleton field (RFC 9110 §8.3), so such
 * an answer is an invalid message, answered `upstream_not_mcp` (response/pipeline.ts).
 * Values compare as strings, exactly (`application/json` and `application/json;
 * charset=utf-8` differ). An empty array is undefined.
 *
 * Why (a new user's trial, 2026-12-03): two identical `Content-Type: application/json`
 * lines reached the host as the array, which Fastify cannot read and replaced with
 * `application/octet-stream`; the SDK client failed "Unexpected content type"
 * (test/regressions/seller-duplicate-content-type-octet-stream.test.ts).
 */
export function repeatedContentType(values: readonly string[]): string | undefined {
  const first = values[0];
  for (let i = 1; i < values.length; i++) if (values[i] !== first) return undefined;
  return first;
}

/** Lower-cased media type essence (`type/subtype`), or '' when absent or unparsable. */
export function mediaTypeEssence(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return '';
  return safeParse(value).type.toLowerCase();
}

/**
 * Classifies a seller body by its Content-Type essence. The last single header value and
 * its kind are remembered: a seller sends the same value on every answer, and parsing it
 * was a measurable part of a 1 KiB answer's fixed cost (issue 5).
 */
export function bodyKind(header: string | string[] | undefined): BodyKind {
  if (typeof header === 'string' && header === lastHeader) return lastKind;
  const kind = kindOfEssence(mediaTypeEssence(header));
  if (typeof header === 'string') {
    lastHeader = header;
    lastKind = kind;
  }
  return kind;
}

let lastHeader: string | undefined;
let lastKind: BodyKind = 'none';

function kindOfEssence(essence: string): BodyKind {
  if (essence === '') return 'none';
  if (essence === 'application/json' || (essence.startsWith('application/') && essence.endsWith('+json'))) return 'json';
  if (essence === 'text/event-stream') return 'sse';
  return 'other';
}
