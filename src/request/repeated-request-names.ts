/**
 * Whether a host's JSON-RPC request (or a batch element) writes a member the gateway acts on
 * more than once, or under another case: such a request is refused `invalid_request` before it
 * is forwarded (request/peek.ts; docs/errors.md "Names are unique").
 *
 * Why (a hostile new-user trial 11, F1): the gateway reads a request as `JSON.parse` does, the
 * last of repeated members winning, and forwarded it as written. A seller whose parser keeps
 * the first (gjson, simdjson's `find_field`, fastjson), or matches names case-insensitively (Go's
 * encoding/json, the MCP Go SDK's decoder: bytes.EqualFold, the last match winning,
 * golang/go#43664), ran another tool than the one whose limits, normalization and log line the
 * gateway applied: `"params":{"name":"get_report","name":"ping_tool"}`,
 * `"method":"tools/call","method":"ping"` and `{"name":"ping_tool","Name":"get_report"}` each got
 * 5,073 bytes of `get_report` past its 1000-byte `max_response_bytes`
 * (test/regressions/host-repeated-member-names-bypass-tool-limit.test.ts). RFC 8259 §4: "The
 * names within an object SHOULD be unique"; with repeats "the behavior of software that receives
 * such an object is unpredictable". The seller's direction has the same rule
 * (mcp/repeated-names.ts).
 *
 * What counts ({@link TOP_NAMES}, {@link paramsNamesOf}): in the message object, `jsonrpc`, `id`,
 * `method`, `params`, `result`, `error`; in the `params` object of a `tools/call`, `name`; in the
 * `params` of a `notifications/cancelled`, `requestId` (the members the gateway reads; it never
 * reads `arguments`, which belong to the tool, nor any other name, so their repeats pass). The
 * cancellation's `requestId` since the gateway acts on it (routing/in-flight-requests.ts: it
 * marks the request it names): `{"requestId":0,"requestId":5}` marked request 5 (JSON.parse
 * keeps the last) where a seller keeping the first cancelled request 0, and `{"RequestId":0}`
 * marked nothing where a Go seller cancelled request 0; the gateway then minted `sse_idle` for a
 * request the seller had dropped (hostile trial 55, F5:
 * test/regressions/cancel-repeated-requestid-not-refused.test.ts). A key counts as a writing of a name when it decodes to it
 * (`"\u006eame"` is `name`, as `JSON.parse` reads it) or equals it only under Go's case folding
 * (`"Name"`, `"ID"`, `"paramſ"`: mcp/repeated-names.ts foldsTo). Refused: a name with two or more
 * writings, and a lone writing that is a case variant (the gateway reads no `name`, a Go seller
 * reads one). A lone escaped writing is the name to every parser and passes.
 *
 * Cost: the scan reading judges the member table it has ({@link judgeKeys}: the key bytes of
 * each top-level member and of a `tools/call`'s params, a loop over a few bytes each). The parse
 * reading has no member table: {@link mayRepeatNames} proves most requests clean with one
 * native search for `\u`, a look at the parsed keys, and two native searches per name present
 * (`method"` found once); only a body it cannot prove clean (a `name` inside `arguments`, a
 * `\u` escape) has its keys read from the bytes ({@link namesProblemOfText}). Measured on the
 * bench's 187-byte request (peekJsonRpc before and after in one interleaved loop, best of 10
 * rounds, 4 runs, a loaded 2-core machine): ~1.93 -> ~2.48 µs, +470-560 ns, of which
 * mayRepeatNames ~450 ns (ten `indexOf` calls at ~40-110 ns each here, a `name"` search the
 * dearest: `n` is frequent in text). Native searches whose pattern starts with `"` cost 3-5x
 * more (V8 stops at every quote), a byte walk of the body or a regular expression no less.
 */
import type { ByteRange } from '../mcp/json-scan.js';
import { BACKSLASH, closingQuote, firstJsonMember, jsonMemberValue, jsonValueEnd, LBRACE, nextJsonMember, skipJsonSpace } from '../mcp/json-bytes.js';
import { foldsTo } from '../mcp/repeated-names.js';
import { jsonString, jsonStringIs } from '../mcp/text-members.js';

/** The members of a message object the gateway acts on (request/peek.ts ObjectFacts). */
export const TOP_NAMES: readonly string[] = ['jsonrpc', 'id', 'method', 'params', 'result', 'error'];
/** The members of a `tools/call`'s `params` the gateway acts on (the tool name). */
export const PARAMS_NAMES: readonly string[] = ['name'];
/** The members of a `notifications/cancelled`'s `params` the gateway acts on (the request it cancels: mcp/cancelled-id.ts). */
export const CANCELLED_PARAMS_NAMES: readonly string[] = ['requestId'];

/** The method whose `params.requestId` the gateway acts on. */
const CANCELLED = 'notifications/cancelled';

/**
 * The members of the `params` object the gateway acts on in a message whose `method` is
 * `method` (as `JSON.parse` read it): {@link PARAMS_NAMES} for a `tools/call`,
 * {@link CANCELLED_PARAMS_NAMES} for a `notifications/cancelled`, undefined for any other.
 */
export function paramsNamesOf(method: unknown): readonly string[] | undefined {
  return method === 'tools/call' ? PARAMS_NAMES : method === CANCELLED ? CANCELLED_PARAMS_NAMES : undefined;
}

/** Why a message is refused: the text after `Invalid Request: `, and whether its `id` is one of the names concerned. */
export interface NamesProblem {
  /** E.g. `the member "name" of "params" is written twice ("name", "Name"); send it once`. */
  readonly problem: string;
  /** `id` has two writings or a case variant: the refusal then carries id null (JSON-RPC 2.0 §5). */
  readonly idAmbiguous: boolean;
}

/** A member of an object text: its key's JSON string (quotes included) and its value's range and first byte. */
interface KeyedMember {
  readonly key: ByteRange;
  readonly value: ByteRange;
  readonly first: number;
}

/**
 * The first name of `names` (in that order) written more than once, or only as a case
 * variant, among the keys of `members` (ranges in `view`, quotes included, in text order), as
 * a problem; undefined when none is. `of` names the object for the message (`"params"`), none
 * for the message object. Keys holding an escape or a non-ASCII byte are decoded; others are
 * compared as bytes.
 */
export function judgeKeys(view: Buffer, members: readonly { readonly key: ByteRange }[], names: readonly string[], of: string | undefined): NamesProblem | undefined {
  let writings: { key: ByteRange; exact: boolean }[][] | undefined;
  for (let m = 0; m < members.length; m++) {
    const key = members[m]!.key;
    const k = nameOfKey(view, key, names);
    if (k === undefined) continue;
    writings ??= names.map(() => []);
    writings[k.index]!.push({ key, exact: k.exact });
  }
  if (writings === undefined) return undefined;
  let problem: string | undefined;
  let idAmbiguous = false;
  for (let n = 0; n < names.length; n++) {
    const w = writings[n]!;
    if (w.length === 0 || (w.length === 1 && w[0]!.exact)) continue;
    if (names[n] === 'id') idAmbiguous = true;
    if (problem !== undefined) continue;
    const name = names[n]!;
    const member = of === undefined ? `the member "${name}"` : `the member "${name}" of "${of}"`;
    const written = w.slice(0, SHOWN_WRITINGS).map((x) => `"${view.toString('utf8', x.key[0] + 1, x.key[1] - 1)}"`);
    const more = w.length > SHOWN_WRITINGS ? `, and ${w.length - SHOWN_WRITINGS} more` : '';
    problem =
      w.length === 1
        ? `${member} is written ${written[0]!} (a case-insensitive reader takes it for "${name}"); send it as "${name}"`
        : `${member} is written ${w.length === 2 ? 'twice' : `${w.length} times`} (${written.join(', ')}${more}); send it once`;
  }
  return problem === undefined ? undefined : { problem, idAmbiguous };
}

/**
 * At most this many writings of a name are quoted in a refusal's message (then `, and N more`):
 * a request writing `"params"` 40,000 times got a 480 KB message listing every one (the
 * complexity audit after trial 16).
 */
export const SHOWN_WRITINGS = 8;

/**
 * Which of `names` the JSON string `view[key]` is a writing of (its index), and whether it is
 * the name itself once decoded; undefined for none. A key written with an escape or a
 * multi-byte character takes more bytes than the characters it decodes to, so one of a name's
 * length in bytes is compared as ASCII bytes (`| 0x20` on both sides: a name is ASCII letters,
 * and among letters it folds exactly `A`-`Z` onto `a`-`z`; `requestId` has an upper-case one),
 * and only a longer one holding a backslash or a byte >= 0x80 is decoded.
 */
function nameOfKey(view: Buffer, [start, end]: ByteRange, names: readonly string[]): { index: number; exact: boolean } | undefined {
  const length = end - start - 2;
  let plain = true;
  for (let i = start + 1; i < end - 1 && plain; i++) plain = view[i]! !== BACKSLASH && view[i]! < 0x80;
  if (plain) {
    for (let n = 0; n < names.length; n++) {
      const name = names[n]!;
      if (name.length !== length) continue;
      let folded = true;
      let exact = true;
      for (let i = 0; i < length && folded; i++) {
        const b = view[start + 1 + i]!;
        const c = name.charCodeAt(i);
        exact &&= b === c;
        folded = (b | 0x20) === (c | 0x20);
      }
      if (folded) return { index: n, exact };
    }
    return undefined;
  }
  const decoded = jsonString(view, [start, end]);
  for (let n = 0; n < names.length; n++) {
    const name = names[n]!;
    if (decoded === name) return { index: n, exact: true };
    if (foldsTo(decoded, name)) return { index: n, exact: false };
  }
  return undefined;
}

/**
 * {@link judgeKeys} of an object text read from its bytes (no member table): `view` holds a
 * valid JSON object (JSON whitespace around it allowed). Its own members are judged against
 * {@link TOP_NAMES}; when they pass, the members of its `params` object against
 * {@link paramsNamesOf} its `method` (`method`: as `JSON.parse` read it). Cost: one pass over
 * the bytes, strings skipped by the native search (json-bytes.ts closingQuote).
 */
export function namesProblemOfText(view: Buffer, method: unknown): NamesProblem | undefined {
  const members = objectMembers(view, skipJsonSpace(view, 0));
  const top = judgeKeys(view, members, TOP_NAMES, undefined);
  const names = paramsNamesOf(method);
  if (top !== undefined || names === undefined) return top;
  const params = members.find((m) => jsonStringIs(view, m.key, 'params'));
  return params === undefined || params.first !== LBRACE ? undefined : judgeKeys(view, objectMembers(view, params.value[0]), names, 'params');
}

/**
 * Whether the JSON text `text` (which `JSON.parse` read) may write a name of {@link TOP_NAMES}
 * twice or as a case variant in one of the message objects `objects` (the parsed body, or a
 * batch's object elements), or one of {@link paramsNamesOf} its method in its `params`; false only
 * when proved not. The proof: no `\u` in the text, so a key that decodes to a name is written
 * as the name (no other escape makes a letter); no parsed key is a case variant of a name
 * (Go's folding: a variant is another key to `JSON.parse`, so it is kept); and for each name
 * the parsed objects have, its pattern (`method"`) occurs in the whole text exactly as often
 * as they have it, so each is written once and nowhere else. A pattern starting with a letter,
 * not `"`, keeps the native search fast (a `"` is every few bytes of JSON). Any other text (a
 * `name` inside `arguments`, a string value ending in `id`) answers true: the caller then
 * reads the keys ({@link namesProblemOfText}).
 */
export function mayRepeatNames(text: string, objects: readonly Record<string, unknown>[]): boolean {
  if (text.includes('\\u')) return true;
  const expected = PATTERNS.map(() => 0);
  for (const o of objects) {
    for (const key of Object.keys(o)) {
      const k = TOP_NAMES.indexOf(key);
      if (k >= 0) expected[k]!++;
      else if (isVariant(key, TOP_NAMES)) return true;
    }
    const names = paramsNamesOf(o.method);
    const params = names === undefined ? undefined : o.params;
    if (params === null || typeof params !== 'object' || Array.isArray(params)) continue;
    for (const key of Object.keys(params)) {
      if (names!.includes(key)) expected[PATTERN_NAMES.indexOf(key, NAME)]!++;
      else if (isVariant(key, names!)) return true;
    }
  }
  for (let k = 0; k < expected.length; k++) if (expected[k]! > 0 && occurrences(text, PATTERNS[k]!, expected[k]!) !== expected[k]) return true;
  return false;
}

/** The names searched for: TOP_NAMES, then from index {@link NAME} those of `params` (PARAMS_NAMES, CANCELLED_PARAMS_NAMES). */
const PATTERN_NAMES = [...TOP_NAMES, ...PARAMS_NAMES, ...CANCELLED_PARAMS_NAMES];
/** The search pattern of each of {@link PATTERN_NAMES}. */
const PATTERNS = PATTERN_NAMES.map((name) => `${name}"`);
const NAME = TOP_NAMES.length;

function isVariant(key: string, names: readonly string[]): boolean {
  for (const name of names) if (foldsTo(key, name)) return true;
  return false;
}

/** How often `pattern` occurs in `text`, counted up to `limit + 1`. */
function occurrences(text: string, pattern: string, limit: number): number {
  let n = 0;
  for (let at = text.indexOf(pattern); at !== -1 && n <= limit; at = text.indexOf(pattern, at + pattern.length)) n++;
  return n;
}

// ---------------------------------------------------------------------------------------
// Reading an object's members from valid JSON bytes

/** The members of the object whose `{` is at `open` in `view` (valid JSON), in text order (mcp/json-bytes.ts firstJsonMember). */
function objectMembers(view: Buffer, open: number): KeyedMember[] {
  const members: KeyedMember[] = [];
  for (let key = firstJsonMember(view, open); key >= 0; ) {
    const keyEnd = closingQuote(view, key) + 1;
    if (keyEnd === 0) break;
    const valueStart = jsonMemberValue(view, keyEnd);
    const valueEnd = jsonValueEnd(view, valueStart);
    members.push({ key: [key, keyEnd], value: [valueStart, valueEnd], first: view[valueStart]! });
    key = nextJsonMember(view, valueEnd);
  }
  return members;
}
