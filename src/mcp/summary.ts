/**
 * The terse sentence that replaces a `content[].text` copy of `structuredContent`
 * (ARCHITECTURE §1.3; mcp-response-extraction §structuredContent: when structuredContent
 * carries the payload, content "MAY contain a terse human-readable summary"), where that
 * makes the item shorter: a copy whose JSON string is no longer than the sentence's stays as
 * the seller wrote it (normalize.ts summaryShortens, response/dedupe-splice.ts).
 */

/** Upper bound of a summary, in UTF-8 bytes. */
export const SUMMARY_MAX_BYTES = 200;
/** Upper bound of a summary's JSON string (quotes included: it holds no character JSON escapes, {@link summaryJsonString}), in UTF-8 bytes. */
export const SUMMARY_JSON_MAX_BYTES = SUMMARY_MAX_BYTES + 2;

/** A `status` value shown verbatim: AdCP task statuses are short ASCII tokens (`completed`, `input-required`): 1-32 of `[A-Za-z0-9_-]`. */
const STATUS_MAX_CHARS = 32;
/** A key shown verbatim: letters, digits, `_`, `-`, `.`, `$`; no spaces or punctuation that could carry a sentence. */
const SAFE_KEY = /^[\p{L}\p{N}_.$-]{1,64}$/u;
const KEY_MAX_CHARS = 64;

/**
 * How `key` is shown: `'ascii'` (1-64 of `[A-Za-z0-9_.$-]`: its UTF-8 length is its length),
 * `'unicode'` (SAFE_KEY with a non-ASCII letter or digit: shown, measured), or not at all.
 * The ASCII keys are told by a character loop, no regular expression (issue 5: the summary
 * of the bench's 1 KiB (b) result was ~3 µs of gateway CPU per response in the bench, most of
 * it the regular expressions' calls).
 */
function keyKind(key: string): 'ascii' | 'unicode' | undefined {
  const n = key.length;
  if (n === 0 || n > 2 * KEY_MAX_CHARS) return undefined;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (isTokenChar(c) || c === 0x2e /* . */ || c === 0x24 /* $ */) continue;
    // Outside ASCII: a letter or digit of another script may be shown (a surrogate pair counts as one).
    return c >= 0x80 && SAFE_KEY.test(key) ? 'unicode' : undefined;
  }
  return n <= KEY_MAX_CHARS ? 'ascii' : undefined;
}

/** `[A-Za-z0-9_-]`: a character of a status token, and of a key. */
function isTokenChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d;
}

/** A status shown verbatim: 1-32 of `[A-Za-z0-9_-]`. */
function isSafeStatus(status: string): boolean {
  const n = status.length;
  if (n === 0 || n > STATUS_MAX_CHARS) return false;
  for (let i = 0; i < n; i++) if (!isTokenChar(status.charCodeAt(i))) return false;
  return true;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Summarizes a `structuredContent` object in one sentence of at most 200 UTF-8 bytes.
 *
 * Format (deterministic):
 * `Result in structuredContent (<serializedBytes> bytes): [status=<status>; ]<key>[<n>], <key>, ….`
 * - `status=<status>` when `value.status` is a string of 1–32 of `[A-Za-z0-9_-]`; the
 *   `status` key is then not listed again.
 * - Top-level own keys in their order; an array value adds `[<length>]`. No other value is
 *   ever shown: seller data is a prompt-injection surface.
 * - A key `repeated` says the text as sent writes more than once at the top level (a lifted
 *   text, or the seller's `structuredContent`, as written) shows no value: `status` is listed
 *   as a key, an array without `[<length>]`. Which of its values a host reads depends on its
 *   parser (`JSON.parse`, the MCP SDKs' and Go's keep the last, RFC 8259 §4 leaves it open),
 *   so the sentence states none (a hostile trial 24, L2).
 * - Keys that are not 1–64 letters/digits/`_`/`-`/`.`/`$` are not shown; they, and keys that
 *   do not fit in 200 bytes, are counted in a final `+<n> more`.
 * - An object with no keys: `no fields`.
 * - Items are dropped whole, so the sentence is always cut on a character boundary.
 *
 * Example: `Result in structuredContent (48213 bytes): status=completed; products[25], message, next_cursor.`
 *
 * `serializedBytes`: UTF-8 length of the text being replaced (the caller measures it).
 * `repeated`: {@link SummaryShape.repeated} (absent: no key repeats, as in a value sent re-serialized).
 */
export function summarizeStructuredContent(value: Record<string, unknown>, serializedBytes: number, repeated?: (key: string) => boolean): string {
  return summarizeShape(
    {
      keys: Object.keys(value),
      status: Object.hasOwn(value, 'status') ? value.status : undefined,
      arrayLength: (key) => {
        const item = value[key];
        return Array.isArray(item) ? item.length : undefined;
      },
      repeated,
    },
    serializedBytes,
  );
}

/** What a summary shows of an object: its own keys (`Object.keys` order), its `status` value, and which values are arrays. */
export interface SummaryShape {
  readonly keys: readonly string[];
  /** The own `status` value (undefined when absent; only a string can be shown). */
  readonly status: unknown;
  /** The length of the value of `key` (one of `keys`) when it is an array, else undefined. */
  arrayLength(key: string): number | undefined;
  /**
   * Whether `key` (one of `keys`) is written more than once at the object's top level as the
   * host gets it; absent: none is. Its value is then not shown (`status=`, `[<length>]`).
   * Asked only for a key whose value would be shown.
   */
  readonly repeated?: ((key: string) => boolean) | undefined;
}

/**
 * {@link summarizeStructuredContent} from the shape of the object instead of the object: the
 * same sentence (the lift of a legacy text and the dedupe of a byte copy read the shape from
 * the scan of the text's bytes, without parsing it: src/response/lift-splice.ts,
 * src/response/dedupe-splice.ts).
 */
export function summarizeShape(shape: SummaryShape, serializedBytes: number): string {
  const head = `Result in structuredContent (${serializedBytes} bytes): `;
  const { status, keys } = shape;
  const statusShown = typeof status === 'string' && isSafeStatus(status) && shape.repeated?.('status') !== true;
  const statusSegment = statusShown ? `status=${status}` : '';

  const listed: string[] = [];
  let more = 0;
  // The head, the status segment and the `more` segment are ASCII: their UTF-8 length is their length.
  let used = head.length + statusSegment.length + 1; // + final "."
  const moreReserve = `, +${keys.length} more`.length;

  for (let k = 0; k < keys.length; k++) {
    const key = keys[k] as string;
    if (statusShown && key === 'status') continue;
    const kind = keyKind(key);
    if (kind === undefined) {
      more++;
      continue;
    }
    let length = shape.arrayLength(key);
    if (length !== undefined && shape.repeated?.(key) === true) length = undefined;
    const segment = length !== undefined ? `${key}[${length}]` : key;
    const segmentBytes = (kind === 'ascii' ? segment.length : utf8Bytes(segment)) + (listed.length > 0 || statusShown ? 2 : 0);
    const reserve = k === keys.length - 1 && more === 0 ? 0 : moreReserve;
    if (used + segmentBytes + reserve > SUMMARY_MAX_BYTES) {
      const statusLater = statusShown && keys.indexOf('status', k) !== -1 ? 1 : 0;
      more += keys.length - k - statusLater;
      break;
    }
    listed.push(segment);
    used += segmentBytes;
  }

  let body = statusSegment;
  if (listed.length > 0) body += (statusShown ? '; ' : '') + listed.join(', ');
  if (more > 0) body += (listed.length > 0 ? ', ' : statusShown ? '; ' : '') + `+${more} more`;
  if (body === '') body = 'no fields';
  return `${head}${body}.`;
}

/**
 * The JSON string (quotes included) of {@link summarizeShape}'s sentence, as the scan-based
 * rewrites write it into the seller's bytes (response/dedupe-splice.ts, lift-splice.ts).
 * Equal to `JSON.stringify(summarizeShape(shape, serializedBytes))`: the sentence never holds
 * a character `JSON.stringify` escapes (`"`, `\`, a control character, a lone surrogate). Its
 * fixed words, digits and punctuation are ASCII letters, digits, spaces and `()[]:;,.+=`;
 * a status is `[A-Za-z0-9_-]` (isSafeStatus); a key is letters, digits (Unicode `L`, `N`:
 * no control character or surrogate is either) and `_.$-` (SAFE_KEY). test/unit/summary.test.ts
 * checks the equality on generated keys.
 *
 * Why (issue 5, 1 KiB (b) and (c)): `JSON.stringify` of the ~80-character sentence cost
 * ~0.4 µs a response, ~7% of the 1 KiB dedupe in a loop.
 */
export function summaryJsonString(shape: SummaryShape, serializedBytes: number): string {
  return `"${summarizeShape(shape, serializedBytes)}"`;
}
