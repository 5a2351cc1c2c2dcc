/**
 * Where a response's tool result is written in the seller's bytes, for the rewrites the JSON
 * scan cannot place (json-scan.ts records the ranges of `result.content[k].text` for the first
 * {@link SCAN_CONTENT_ITEMS} items only, and nothing inside a 2026-07-28 `tasks/get` result's
 * `result.result`): the `}` that closes the tool result object and the range of every
 * `content` item's `text` and `type` string, found by one walk of the bytes, so that the
 * rewrite can still be written as the seller's bytes with only the changed texts replaced
 * (response/splice.ts) instead of re-serialized.
 *
 * Why (review 38): a re-serialized answer re-spelled the seller's own `structuredContent` and
 * `_meta` (`1.0` -> `1`, `2.50` -> `2.5`, `1E3` -> `1000`, integer-like keys reordered:
 * `{"2026":..,"2025":..}` -> `{"2025":..,"2026":..}`), which ARCHITECTURE §5 forbids ("never drop
 * or change `structuredContent` a seller sent"); it happened whenever the text to replace was
 * `content` item 16 or later, and for every `tasks/get` result
 * (test/regressions/dedupe-past-sixteen-items-respells-structured-content.test.ts).
 *
 * Cost: only on the parse path (the message was already parsed): for a `tools/call` once a
 * rewrite was made; for a 2026-07-28 `tasks/get`, once its rewrite needs the ranges (a dedupe's
 * copy check, or a rewrite made), never for an answer left before that (scanned-message.ts):
 * one pass over the bytes by the shared walk (json-bytes.ts firstJsonMember, jsonValueEnd), no
 * recursion (nesting is an explicit counter), strings skipped with the native search of
 * json-bytes.ts closingQuote; the value at `skip` (the seller's
 * `structuredContent`, whose range the scan knows for a `result`) is jumped over. Measured
 * in process on the bench's get_products result (bench/cases.ts, variant b, a loaded 2-core
 * machine): 1 MiB ~0.6-1.5 ms with `structuredContent` jumped, ~0.7-2.5 ms walked whole (a
 * `tasks/get`); 4 MiB ~1.4-2.3 ms and ~2.4-4.6 ms; `JSON.parse` of the same message, which
 * this path has already paid, 3-10 ms and 10-29 ms.
 */
import { BACKSLASH, closingQuote, COMMA, firstJsonMember, jsonMemberValue, jsonValueEnd, LBRACE, LBRACKET, nextJsonMember, QUOTE, RBRACKET, skipJsonSpace } from './json-bytes.js';
import { jsonStringWrittenAs } from './text-members.js';
import type { ByteRange, ContentItems } from './json-scan.js';

/** The tool result located by {@link locateToolResult}. */
export interface LocatedToolResult {
  /**
   * Every key on the way (the message's, for `result.result` the outer `result`'s) and every
   * key of the tool result and of its `content` items is written without an escape. False: an
   * escaped key may be another `result`, `content`, `text` or `type` than the ones located, so
   * the ranges must not be used.
   */
  readonly plainKeys: boolean;
  /** Offset of the `}` closing the tool result object. */
  readonly end: number;
  /** The tool result's last `content` member, when it is an array: every item's ranges (not only the first 16). */
  readonly content: ContentItems | undefined;
  /** Range of the tool result's last `structuredContent` value (any JSON value), or undefined. */
  readonly structuredContent: ByteRange | undefined;
}

/** Where the `CallToolResult` sits in a response (response/rewrite.ts toolResultLocation). */
export type ToolResultLocation = 'result' | 'result.result';

/**
 * The tool result of the JSON-RPC response `bytes` at `location`: the message's last `result`
 * member, or for `result.result` that object's last `result` member (`JSON.parse` keeps the
 * last of a repeated key); undefined when a member on the way is missing or not an object.
 *
 * `bytes` must be a valid JSON text (the JSON stage scanned it): the walk does not validate
 * it and, on invalid JSON, returns an unspecified answer (it never throws nor loops). `skip`:
 * the range of a value the walk may jump over (the scan's `result.structuredContent`), used
 * only when a value starts exactly there.
 */
export function locateToolResult(bytes: Uint8Array, location: ToolResultLocation, skip?: ByteRange): LocatedToolResult | undefined {
  const walk = new Walk(bytes, skip);
  const start = walk.space(0);
  if (bytes[start] !== LBRACE) return undefined;
  let found: LocatedToolResult | undefined;
  walk.members(start, (key, value) => {
    if (!walk.keyIs(key, RESULT)) return undefined;
    // A later `result` replaces an earlier one, whatever its value (JSON.parse).
    found = undefined;
    if (bytes[value] !== LBRACE) return undefined;
    if (location === 'result') {
      found = walk.toolResult(value);
      return found.end + 1;
    }
    // A 2026-07-28 `tasks/get`: the tool result is the outer result's last `result` member.
    return 1 + walk.members(value, (inner, innerValue) => {
      if (!walk.keyIs(inner, RESULT)) return undefined;
      found = undefined;
      if (bytes[innerValue] !== LBRACE) return undefined;
      found = walk.toolResult(innerValue);
      return found.end + 1;
    });
  });
  if (found === undefined) return undefined;
  return { ...found, plainKeys: found.plainKeys && walk.plainKeys };
}

const RESULT = Buffer.from('result');
const CONTENT = Buffer.from('content');
const TEXT = Buffer.from('text');
const TYPE = Buffer.from('type');
const STRUCTURED_CONTENT = Buffer.from('structuredContent');

/**
 * One walk of a valid JSON text: the shared walk (json-bytes.ts skipJsonSpace, jsonValueEnd,
 * firstJsonMember) with the value at `skip` jumped over and whether every key read was written
 * plain.
 */
class Walk {
  /** False once a key read by {@link members} was written with an escape. */
  plainKeys = true;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly skip: ByteRange | undefined,
  ) {}

  /** The first non-whitespace offset from `at` (skipJsonSpace). */
  space(at: number): number {
    return skipJsonSpace(this.bytes, at);
  }

  /** Whether the key string `key` (quotes included) is `name` written plain (text-members.ts jsonStringWrittenAs). */
  keyIs(key: ByteRange, name: Uint8Array): boolean {
    return jsonStringWrittenAs(this.bytes, key, name);
  }

  /**
   * Reads the members of the object opening at `open` (a `{`): for each, `visit(key, value)`
   * (`key` the key's range, quotes included; `value` the value's first offset) returns the
   * offset past the value when it read it, or undefined to have it skipped ({@link value}).
   * Returns the offset of the closing `}` (json-bytes.ts nextJsonMember). A key holding a backslash
   * clears {@link plainKeys}.
   */
  members(open: number, visit: (key: ByteRange, value: number) => number | undefined): number {
    const b = this.bytes;
    let key = firstJsonMember(b, open);
    while (key >= 0) {
      const close = closingQuote(b, key);
      if (close < 0) return b.length;
      for (let k = key + 1; this.plainKeys && k < close; k++) if (b[k] === BACKSLASH) this.plainKeys = false;
      const value = jsonMemberValue(b, close + 1);
      key = nextJsonMember(b, visit([key, close + 1], value) ?? this.value(value));
    }
    return ~key;
  }

  /** The offset past the value starting at `at`: the end of {@link skip} when it starts there, else jsonValueEnd. */
  value(at: number): number {
    const skip = this.skip;
    if (skip !== undefined && at === skip[0]) return skip[1];
    return jsonValueEnd(this.bytes, at);
  }

  /** The tool result object opening at `open`: its closing `}`, its last `content` array's items, its last `structuredContent`'s range. */
  toolResult(open: number): LocatedToolResult {
    const plainBefore = this.plainKeys;
    this.plainKeys = true;
    let content: ContentItems | undefined;
    let structuredContent: ByteRange | undefined;
    const end = this.members(open, (key, value) => {
      if (this.keyIs(key, STRUCTURED_CONTENT)) {
        structuredContent = [value, this.value(value)];
        return structuredContent[1];
      }
      if (!this.keyIs(key, CONTENT)) return undefined;
      content = undefined;
      if (this.bytes[value] !== LBRACKET) return undefined;
      const read = this.items(value);
      content = read.items;
      return read.end;
    });
    const plainKeys = this.plainKeys;
    this.plainKeys = plainBefore;
    return { plainKeys, end, content, structuredContent };
  }

  /** The items of the array opening at `open`, and the offset past its `]`. */
  private items(open: number): { items: ContentItems; end: number } {
    const b = this.bytes;
    const texts: (ByteRange | undefined)[] = [];
    const types: (ByteRange | undefined)[] = [];
    let at = this.space(open + 1);
    if (b[at] !== RBRACKET) {
      for (;;) {
        let text: ByteRange | undefined;
        let type: ByteRange | undefined;
        let end: number;
        if (b[at] === LBRACE) {
          end = this.members(at, (key, value) => {
            const isText = this.keyIs(key, TEXT);
            if (!isText && !this.keyIs(key, TYPE)) return undefined;
            // The last `text` / `type` wins whatever its value (JSON.parse), a range only for a string.
            const valueEnd = this.value(value);
            const range: ByteRange | undefined = b[value] === QUOTE ? [value, valueEnd] : undefined;
            if (isText) text = range;
            else type = range;
            return valueEnd;
          }) + 1;
        } else end = this.value(at);
        texts.push(text);
        types.push(type);
        at = this.space(end);
        if (b[at] !== COMMA) break;
        at = this.space(at + 1);
      }
    }
    // `plainKeys` of the items is the walk's (toolResult reads it for the whole result).
    return { items: { count: texts.length, plainKeys: this.plainKeys, texts, types }, end: Math.min(at + 1, b.length) };
  }
}
