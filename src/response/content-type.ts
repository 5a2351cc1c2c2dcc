/**
 * Media types compared by their parsed essence, never by substring (ARCHITECTURE §5: a seller
 * may say `Text/Event-Stream; charset=utf-8`). Parsing by fast-content-type-parse, with RFC 9110
 * §5.6.6's empty parameters and §5.6.3's tabs around `;` allowed (parseMediaType).
 */
import { safeParse } from 'fast-content-type-parse';

export type BodyKind = 'json' | 'sse' | 'other' | 'none';

/**
 * The one value of a seller's `Content-Type` sent as several field lines (undici gives a
 * repeated field as an array): the first value, as sent, when every line names the same media
 * type (RFC 9110 §5.3: a recipient may combine repeated field lines, so lines that agree say
 * no more than one), or undefined when they differ: `Content-Type` is a singleton field
 * (RFC 9110 §8.3), so such an answer is an invalid message, answered `upstream_not_mcp`
 * (response/pipeline.ts). An empty array is undefined.
 *
 * "The same" is equivalence under RFC 9110 §8.3.1 ({@link sameMediaType}): type, subtype and
 * parameter names compare case-insensitively, a `charset` value too (§8.3.2), any other
 * parameter value exactly once unquoted (a token or a quoted-string), and whitespace around
 * `;` does not count; so `application/json` and `Application/JSON` agree, and so do
 * `text/event-stream;charset=utf-8` and `text/event-stream; charset="UTF-8"`, and so do
 * `application/json;` and `application/json` (an empty parameter is none: {@link parseMediaType}).
 * Differing parameters differ: `application/json` and `application/json; charset=utf-8` are
 * refused. A value {@link parseMediaType} cannot parse (`a=` with no value) agrees only with
 * the same string.
 *
 * Cost: lines that are the same string (the usual repetition) compare as strings; only a line
 * spelled differently from the first parses both (once for the first). A single Content-Type
 * never comes here.
 *
 * Why (a new user's trial, 2026-12-03): two identical `Content-Type: application/json`
 * lines reached the host as the array, which Fastify cannot read and replaced with
 * `application/octet-stream`; the SDK client failed "Unexpected content type"
 * (test/regressions/seller-duplicate-content-type-octet-stream.test.ts). Then equivalent
 * spellings (`application/json`, `Application/JSON`) were refused as differing values
 * (test/regressions/equivalent-repeated-content-type-refused.test.ts), and so was
 * `application/json;` beside `application/json` (test/regressions/content-type-empty-parameter-refused.test.ts).
 */
export function repeatedContentType(values: readonly string[]): string | undefined {
  const first = values[0];
  if (first === undefined) return undefined;
  let parsedFirst: ContentType | undefined;
  for (let i = 1; i < values.length; i++) {
    const value = values[i]!;
    if (value === first) continue;
    parsedFirst ??= parseMediaType(first);
    if (!sameMediaType(parsedFirst, parseMediaType(value))) return undefined;
  }
  return first;
}

/** A media type as fast-content-type-parse gives it: `type` lower-cased (`''` when unparsable), parameter names lower-cased, values unquoted. */
type ContentType = ReturnType<typeof safeParse>;

/**
 * Parses one Content-Type field value ({@link ContentType}; `type` `''` when unparsable) with
 * fast-content-type-parse, which follows the RFC 7231 §3.1.1.1 grammar,
 * `*( OWS ";" OWS parameter )`, but takes only SP as the OWS after a `;` or a parameter (RFC
 * 9110 §5.6.3: OWS is `*( SP / HTAB )`). RFC 9110 §5.6.6 also made the parameter optional,
 * `*( OWS ";" OWS [ parameter ] )`, so `application/json;`, `application/json; ` and
 * `application/json;;charset=utf-8` are valid and name the same media type without their empty
 * parameters, and so is `application/json\t;\tcharset=utf-8` with the media type and parameter
 * of `application/json;charset=utf-8`. Only when the library's parse fails is the value parsed
 * once more, without the OWS around each `;` and then without each empty parameter (a `;`
 * followed by `;` or the end), both outside a quoted-string: a value the library parses costs
 * nothing more. Anything else the library refuses stays unparsable (`a=` with no value, OWS
 * around `=`, an unterminated quoted-string).
 *
 * Why (a new user's trial 6, Finding 4): `Content-Type: application/json;` was refused
 * `upstream_not_mcp`, as a single line and repeated beside `application/json`
 * (test/regressions/content-type-empty-parameter-refused.test.ts). Then (a hostile trial)
 * `application/json\t;\tcharset=utf-8` was
 * (test/regressions/content-type-tab-around-semicolon-refused.test.ts).
 */
function parseMediaType(value: string): ContentType {
  const parsed = safeParse(value);
  if (parsed.type !== '' || !value.includes(';')) return parsed;
  const normalized = value.replace(OWS_OR_QUOTED, dropOwsAroundSemicolon).replace(EMPTY_PARAMETER, keepQuotedString);
  return normalized === value ? parsed : safeParse(normalized);
}

/**
 * A quoted-string (as in {@link EMPTY_PARAMETER}), or a run of OWS (SP / HTAB), matched whole:
 * each character is scanned once, however long the run (a run matched from each of its
 * characters in turn, as `[\t ]*;` would, takes time in its length squared).
 */
const OWS_OR_QUOTED = /"(?:[^"\\]|\\[\s\S]?)*"?|[\t ]+/g;

/** A quoted-string as it is; a run of OWS removed when a `;` is next to it, else kept. */
function dropOwsAroundSemicolon(match: string, offset: number, whole: string): string {
  if (match.charCodeAt(0) === 0x22) return match;
  return whole.charCodeAt(offset - 1) === 0x3b || whole.charCodeAt(offset + match.length) === 0x3b ? '' : match;
}

/**
 * A quoted-string (kept as it is: a `;` in it is no delimiter; an unterminated one runs to the
 * end, so each character is scanned once, whatever the quotes), or an empty parameter's `;`
 * and OWS (removed).
 */
const EMPTY_PARAMETER = /"(?:[^"\\]|\\[\s\S]?)*"?|;[\t ]*(?=;|$)/g;

function keepQuotedString(match: string): string {
  return match.charCodeAt(0) === 0x22 ? match : '';
}

/**
 * Whether two parsed media types are equivalent (RFC 9110 §8.3.1): the same `type/subtype`
 * and the same parameter names (both lower-cased by the parser), each with the same value,
 * `charset` compared case-insensitively (§8.3.2), the others exactly. An unparsable value
 * (`type` `''`) is equivalent to none.
 */
function sameMediaType(a: ContentType, b: ContentType): boolean {
  if (a.type === '' || a.type !== b.type) return false;
  const names = Object.keys(a.parameters);
  if (names.length !== Object.keys(b.parameters).length) return false;
  for (const name of names) {
    const x = a.parameters[name]!;
    const y = b.parameters[name];
    if (y === undefined) return false;
    if (x !== y && (name !== 'charset' || x.toLowerCase() !== y.toLowerCase())) return false;
  }
  return true;
}

/**
 * Whether a 2xx JSON answer sent as the seller's bytes may keep the seller's `Content-Type`
 * (`header`; of several lines, the first, which the host gets: headers.ts): true when it names
 * no charset, or names `charset=utf-8` once (any case, quoted or not: `charset="UTF-8"`); false
 * when it names another charset (`iso-8859-1`, `utf-16`, `utf8`) or `charset` more than once
 * (`charset=utf-8;charset=latin1`: the parser keeps the last, a host may keep the first), and,
 * to stay simple, when `charset` appears anywhere else in it (then `application/json` is sent,
 * which is never wrong: the body is JSON read as UTF-8).
 *
 * Why: the gateway reads every JSON answer as UTF-8 (RFC 8259 §8.1; the `application/json`
 * registration defines no charset), so a host that honours another label reads other text than
 * the gateway judged (json-stage.ts sendJsonAnswer). Cost: the last value and its verdict are
 * remembered, as {@link bodyKind} does: one string comparison for a seller's usual label; a
 * value without `charset` is not parsed.
 */
export function keepsJsonLabel(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined || labelKept(value);
}

/**
 * `judge` with its last value and verdict remembered: a seller sends the same Content-Type on
 * every answer, so a usual call costs one string comparison (issue 5: parsing the value was a
 * measurable part of a 1 KiB answer's fixed cost).
 */
function rememberLast<T>(judge: (value: string) => T): (value: string) => T {
  let last: string | undefined;
  let verdict!: T;
  return (value) => {
    if (value !== last) {
      verdict = judge(value);
      last = value;
    }
    return verdict;
  };
}

const CHARSET = /charset/gi;

const labelKept = rememberLast((value: string): boolean => {
  const named = value.match(CHARSET)?.length ?? 0;
  if (named === 0) return true;
  if (named > 1) return false;
  return parseMediaType(value).parameters.charset?.toLowerCase() === 'utf-8';
});

/** Lower-cased media type essence (`type/subtype`), or '' when absent or unparsable ({@link parseMediaType}: an empty parameter is none). */
export function mediaTypeEssence(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return '';
  return parseMediaType(value).type;
}

/**
 * Classifies a seller body by its Content-Type essence. The last single header value and
 * its kind are remembered ({@link rememberLast}).
 */
export function bodyKind(header: string | string[] | undefined): BodyKind {
  return typeof header === 'string' ? singleBodyKind(header) : kindOfEssence(mediaTypeEssence(header));
}

const singleBodyKind = rememberLast((value: string): BodyKind => kindOfEssence(mediaTypeEssence(value)));

function kindOfEssence(essence: string): BodyKind {
  if (essence === '') return 'none';
  if (essence === 'application/json' || (essence.startsWith('application/') && essence.endsWith('+json'))) return 'json';
  if (essence === 'text/event-stream') return 'sse';
  return 'other';
}
