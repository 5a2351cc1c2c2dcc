/**
 * Media types compared by their parsed essence, never by substring (ARCHITECTURE §5: a seller
 * may say `Text/Event-Stream; charset=utf-8`). Parsing by fast-content-type-parse (RFC 9110).
 */
import { safeParse } from 'fast-content-type-parse';

export type BodyKind = 'json' | 'sse' | 'other' | 'none';

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
