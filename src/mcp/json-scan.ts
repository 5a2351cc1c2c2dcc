/**
 * Incremental, validating JSON scan of a seller's body, fed chunk by chunk as the bytes
 * arrive: one pass that enforces the structure bounds, validates the JSON grammar, and
 * collects what the JSON stage needs to decide, without `JSON.parse`, that a body can go out
 * as the seller's bytes.
 *
 * Why (issue 5, "the gateway must not parse and re-serialize a body it leaves unchanged";
 * fairness under attack): `checkJsonBounds` + `JSON.parse` of a whole 4 MiB body cost ~25 ms
 * of one blocked event loop per response, and a 4 MiB `[[[...` or node bomb was buffered in
 * full before its first byte was looked at. Fed per chunk, the scan spreads its work over the
 * arrival of the body (a 64 KiB chunk is well under a millisecond), stops a bomb at the
 * first byte over a bound (AdCP security, summarized in mcp-response-extraction.md §Size
 * Limits: "bound JSON depth and node count"), and leaves nothing to scan when the body ends.
 *
 * Grammar: RFC 8259 as `JSON.parse(buf.toString('utf8'))` accepts it: whitespace is space,
 * tab, LF, CR; no BOM; strings reject bad escapes (`\u` needs 4 hex digits) but not raw
 * control characters (< 0x20; see `scanString`: callers that rely on a value parse it);
 * numbers follow the RFC grammar (no leading zeros, no `+`, no bare `.`); literals `true`,
 * `false`, `null`. Bytes >= 0x80 are accepted inside strings without UTF-8 validation
 * (`toString('utf8')` maps invalid sequences to U+FFFD, which `JSON.parse` accepts) and
 * rejected outside them (as `JSON.parse` rejects any non-ASCII character there).
 *
 * Counting (same as {@link checkJsonBounds}): every value is one node (object, array, string,
 * number, `true`, `false`, `null`; object keys are not); depth is the nesting of
 * arrays/objects. At an opening bracket the depth bound is checked before the node bound.
 *
 * Cost: O(n) time, O(depth) memory; string contents (most of an MCP message) are skipped
 * with the native `indexOf`; no allocation per token.
 */
import { assertBoundLimit, TAB, LF, CR, SPACE, QUOTE, PLUS, COMMA, MINUS, DOT, SLASH, DIGIT_0, DIGIT_9, COLON, UPPER_E, LBRACKET, BACKSLASH, RBRACKET, LOWER_E, LBRACE, RBRACE } from './json-bytes.js';

/** The bounds; `Infinity` disables one. */
export interface JsonScanLimits {
  /** Maximum nesting of arrays/objects (`{}` alone is depth 1). */
  readonly maxDepth: number;
  /** Maximum number of JSON values (object keys do not count). */
  readonly maxNodes: number;
}

/** Why a scan failed; `offset` is the 0-based byte position of the byte that failed it. */
export type JsonScanFailure =
  | {
      readonly ok: false;
      /** Same strings as the `details.reason` values of src/errors/codes.ts. */
      readonly reason: 'json_depth' | 'json_nodes';
      readonly limit: number;
      /** Always `limit + 1`: the scan stops at the first breach. */
      readonly observed: number;
      readonly offset: number;
    }
  | {
      readonly ok: false;
      /** Not JSON (`offset` = the body length when it ended early). */
      readonly reason: 'syntax';
      readonly offset: number;
    };

/** Byte range `[start, end)` of a value in the scanned body. */
export type ByteRange = readonly [start: number, end: number];

/**
 * Facts about the members of a top-level object (a JSON-RPC message), by key as written.
 * Duplicate keys: the last one wins, as in `JSON.parse`.
 */
export interface TopMembers {
  /** Range of the last `jsonrpc` value. */
  readonly jsonrpc: ByteRange | undefined;
  /** Range of the last `id` value. */
  readonly id: ByteRange | undefined;
  readonly hasResult: boolean;
  readonly hasError: boolean;
  /** False when a top-level key is written with an escape (`"\u0069d"`): the facts above may then miss a member. */
  readonly plainKeys: boolean;
  /**
   * Range of `result.structuredContent` (the last `result`'s, when `result` is an object),
   * or undefined: absent, or a key of that `result` is written with an escape (it might
   * be a later `structuredContent`).
   */
  readonly structuredContent: ByteRange | undefined;
}

/** A complete, valid JSON text within the bounds. */
export interface JsonScanSummary {
  readonly ok: true;
  readonly depth: number;
  readonly nodes: number;
  /** Kind of the top-level value. */
  readonly top: 'object' | 'array' | 'scalar';
  /** Set when `top` is `object`. */
  readonly members: TopMembers | undefined;
  /**
   * True when some string value of a member whose key is `text` (or is written with an
   * escape, so may be `text`) starts with `{`, a space or an escape, i.e. may hold JSON
   * object text (the only text the normalization parses: extract.ts parseTextObject). False
   * proves that no `text` member anywhere holds JSON object text.
   */
  readonly textMayHoldObject: boolean;
  /**
   * True when a number token (outside strings) is longer than 15 characters or has an
   * exponent. False proves every number survives `JSON.parse` + `JSON.stringify` with its
   * value (at most 14 digits, no exponent: DBL_DIG; see json-numbers.ts), so the exact
   * `hasLossyNumber` check can be skipped.
   */
  readonly numberMayBeLossy: boolean;
}

export type JsonScanResult = JsonScanSummary | JsonScanFailure;


// Where the scan is. Structural states expect the next significant byte.
const S_VALUE = 0; // a value (start, after `:`, after `,` in an array)
const S_VALUE_OR_CLOSE = 1; // after `[`
const S_KEY_OR_CLOSE = 2; // after `{`
const S_KEY = 3; // after `,` in an object
const S_COLON = 4; // after a key
const S_AFTER_VALUE = 5; // `,` or the container's closing bracket
const S_DONE = 6; // the top-level value is complete: whitespace only
// Inside a token.
const S_STRING = 7;
const S_ESCAPE = 8;
const S_UNICODE = 9;
const S_NUMBER = 10;
const S_LITERAL = 11;

// Number sub-states (RFC 8259 §6).
const N_MINUS = 0; // after `-`: a digit must follow
const N_ZERO = 1; // a leading 0: no more integer digits
const N_INT = 2;
const N_DOT = 3; // after `.`: a digit must follow
const N_FRAC = 4;
const N_EXP_MARK = 5; // after `e`/`E`: sign or digit
const N_EXP_SIGN = 6; // after the exponent sign: a digit must follow
const N_EXP = 7;

/** Number tokens longer than this may not round-trip (see `numberMayBeLossy`). */
const SAFE_NUMBER_CHARS = 15;

/** 1 for the byte after `\\` in a one-character escape: `"` `\\` `/` b f n r t. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const b of [QUOTE, BACKSLASH, SLASH, 0x62, 0x66, 0x6e, 0x72, 0x74]) SIMPLE_ESCAPE[b] = 1;

const LITERALS: readonly Uint8Array[] = [Buffer.from('true'), Buffer.from('false'), Buffer.from('null')];
const TEXT_KEY = Buffer.from('text');
/** Keys the scan reports on (`structuredContent` is the longest); longer keys are not collected. */
const MEMBER_KEY_MAX = 17;

const IN_ARRAY = 0;
const IN_OBJECT = 1;


/**
 * Feed the body with {@link feed} as chunks arrive, then call {@link end}.
 *
 * - `feed(chunk)`: scans the chunk; returns the failure once the body is known to be
 *   invalid or over a bound (later calls return the same failure and scan nothing).
 * - `end()`: the summary of a complete valid body, or the failure (a body that ends inside
 *   a value is a `syntax` failure at offset = its length).
 * - Errors: the constructor throws `RangeError` for a negative, fractional or NaN limit.
 */
export class JsonScanner {
  private readonly maxDepth: number;
  private readonly maxNodes: number;
  private failure: JsonScanFailure | undefined;
  /** Bytes scanned before the current chunk. */
  private consumed = 0;
  private state = S_VALUE;
  /** Container kinds, innermost last (IN_ARRAY / IN_OBJECT). */
  private readonly stack: number[] = [];
  private maxSeenDepth = 0;
  private nodes = 0;
  private top: 'object' | 'array' | 'scalar' | undefined;

  // The string being scanned.
  private stringIsKey = false;
  private unicodeDigits = 0;
  /** Position in the current chunk of the next backslash at or after the scan (chunk length: none); -1 before the first look. */
  private nextBackslash = -1;
  // The key being scanned.
  private keyLength = 0;
  private keyMatchesText = true;
  private keyEscaped = false;
  /** The top-level key's text, while it is at most MEMBER_KEY_MAX plain bytes. */
  private memberKey = '';
  /**
   * The member whose value comes next has key `text` (or an escaped key); kept for a string
   * value until its first content byte is seen (for `textMayHoldObject`), cleared otherwise.
   */
  private valueOfTextKey = false;
  /** 1 `jsonrpc`, 2 `id`, 3 `result.structuredContent`, 0 none: the member whose value range is wanted (next, or being captured). */
  private captureKey = 0;
  /** Absolute start of the value being captured; -1 while none is. */
  private captureStart = -1;
  private captureDepth = 0;
  /** The top-level `result` key was read; its value is next. */
  private resultPending = false;
  /** Inside the top-level `result` object (stack depth 2 is that object). */
  private inResult = false;
  private structuredContent: ByteRange | undefined;
  private structuredContentEscapedKey = false;
  // The number or literal being scanned.
  private numberState = N_INT;
  private numberChars = 0;
  private literal: Uint8Array = LITERALS[0]!;
  private literalPos = 0;

  private jsonrpc: ByteRange | undefined;
  private id: ByteRange | undefined;
  private hasResult = false;
  private hasError = false;
  private plainKeys = true;
  private textMayHoldObject = false;
  private numberMayBeLossy = false;

  constructor(limits: JsonScanLimits) {
    assertBoundLimit('JsonScanner', 'maxDepth', limits.maxDepth);
    assertBoundLimit('JsonScanner', 'maxNodes', limits.maxNodes);
    this.maxDepth = limits.maxDepth;
    this.maxNodes = limits.maxNodes;
  }

  feed(chunk: Uint8Array): JsonScanFailure | undefined {
    if (this.failure !== undefined) return this.failure;
    const n = chunk.length;
    let i = 0;
    this.nextBackslash = -1;
    while (i < n) {
      const state = this.state;
      if (state === S_STRING) {
        i = this.scanString(chunk, i);
        if (i < 0) return this.failure;
        continue;
      }
      const b = chunk[i]!;
      switch (state) {
        case S_ESCAPE:
          if (b === 0x75 /* u */) {
            this.state = S_UNICODE;
            this.unicodeDigits = 0;
          } else if (SIMPLE_ESCAPE[b] === 1) {
            this.state = S_STRING;
          } else return this.fail(i);
          i++;
          continue;
        case S_UNICODE:
          if (!isHexDigit(b)) return this.fail(i);
          if (++this.unicodeDigits === 4) this.state = S_STRING;
          i++;
          continue;
        case S_NUMBER: {
          const ns = this.numberState;
          if (ns === N_INT || ns === N_FRAC || ns === N_EXP) {
            // A run of digits at once.
            let k = i;
            while (k < n && chunk[k]! >= DIGIT_0 && chunk[k]! <= DIGIT_9) k++;
            if (k > i) {
              this.numberChars += k - i;
              if (this.numberChars > SAFE_NUMBER_CHARS) this.numberMayBeLossy = true;
              i = k;
              continue;
            }
          }
          if (this.numberContinues(b)) {
            i++;
            continue;
          }
          if (!numberAccepts(this.numberState)) return this.fail(i);
          this.valueDone(i);
          continue; // the byte that ended the number is structural: scan it again
        }
        case S_LITERAL:
          if (b !== this.literal[this.literalPos]) return this.fail(i);
          if (++this.literalPos === this.literal.length) this.valueDone(i + 1);
          i++;
          continue;
      }
      if (b === SPACE || b === LF || b === CR || b === TAB) {
        i++;
        continue;
      }
      const failed = this.structural(b, i);
      if (failed !== undefined) return failed;
      i++;
    }
    this.consumed += n;
    return undefined;
  }

  end(): JsonScanResult {
    if (this.failure !== undefined) return this.failure;
    if (this.state === S_NUMBER && numberAccepts(this.numberState)) {
      this.valueDoneAt(this.consumed); // a top-level number ends with the body
    }
    if (this.state !== S_DONE) return this.failAt(this.consumed);
    return {
      ok: true,
      depth: this.maxSeenDepth,
      nodes: this.nodes,
      top: this.top ?? 'scalar',
      members:
        this.top === 'object'
          ? {
              jsonrpc: this.jsonrpc,
              id: this.id,
              hasResult: this.hasResult,
              hasError: this.hasError,
              plainKeys: this.plainKeys,
              structuredContent: this.structuredContentEscapedKey ? undefined : this.structuredContent,
            }
          : undefined,
      textMayHoldObject: this.textMayHoldObject,
      numberMayBeLossy: this.numberMayBeLossy,
    };
  }

  /**
   * Scans string content from `i`; returns where to continue, or -1 on a failure. Strings
   * are skipped with the native `indexOf` (memchr): the closing quote, and escapes found
   * with a per-chunk cached `indexOf` of the next backslash (each escape validated here
   * when it lies whole in the chunk, else by the byte states of `feed`). Raw control
   * characters inside strings are not looked for (a per-byte loop costs ~4x the whole
   * scan): the one grammar rule this scan does not check.
   */
  private scanString(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const key = this.stringIsKey;
    if (this.valueOfTextKey) {
      // `i` is the value's first content byte (set only for string values; `feed` calls with i < n).
      const b = chunk[i]!;
      if (b === LBRACE || b === SPACE || b === BACKSLASH) this.textMayHoldObject = true;
      this.valueOfTextKey = false;
    }
    let j = i;
    for (;;) {
      let q = chunk.indexOf(QUOTE, j);
      if (q === -1) q = n;
      if (this.nextBackslash < j) {
        const found = chunk.indexOf(BACKSLASH, j);
        this.nextBackslash = found === -1 ? n : found;
      }
      const bs = this.nextBackslash;
      if (bs >= q) {
        if (key) this.keyBytes(chunk, j, q);
        if (q === n) return n;
        if (key) this.keyDone();
        else this.valueDone(q + 1);
        return q + 1;
      }
      if (key) {
        this.keyEscaped = true;
        this.keyMatchesText = false;
      }
      const e = bs + 1 < n ? chunk[bs + 1]! : -1;
      if (e !== -1 && SIMPLE_ESCAPE[e] === 1) {
        j = bs + 2;
        continue;
      }
      if (e === 0x75 && bs + 5 < n && isHexDigit(chunk[bs + 2]!) && isHexDigit(chunk[bs + 3]!) && isHexDigit(chunk[bs + 4]!) && isHexDigit(chunk[bs + 5]!)) {
        j = bs + 6;
        continue;
      }
      // The escape runs past the chunk, or is invalid: the byte states decide.
      this.state = S_ESCAPE;
      return bs + 1;
    }
  }

  /** Accounts the plain key bytes `chunk[from, to)` (text match, top-level member name). */
  private keyBytes(chunk: Uint8Array, from: number, to: number): void {
    const before = this.keyLength;
    this.keyLength += to - from;
    if (this.keyMatchesText) {
      if (this.keyLength > TEXT_KEY.length) this.keyMatchesText = false;
      else for (let k = from; k < to; k++) if (chunk[k] !== TEXT_KEY[before + k - from]) this.keyMatchesText = false;
    }
    if ((this.stack.length === 1 || (this.stack.length === 2 && this.inResult)) && before < MEMBER_KEY_MAX) {
      for (let k = from; k < to && before + k - from < MEMBER_KEY_MAX; k++) this.memberKey += String.fromCharCode(chunk[k]!);
    }
  }

  /** A significant byte in a structural state. Returns the failure, if any. */
  private structural(b: number, i: number): JsonScanFailure | undefined {
    switch (this.state) {
      case S_VALUE:
        return this.beginValue(b, i);
      case S_VALUE_OR_CLOSE:
        if (b === RBRACKET) return this.close(IN_ARRAY, i);
        return this.beginValue(b, i);
      case S_KEY_OR_CLOSE:
        if (b === RBRACE) return this.close(IN_OBJECT, i);
        return this.beginKey(b, i);
      case S_KEY:
        return this.beginKey(b, i);
      case S_COLON:
        if (b !== COLON) return this.fail(i);
        this.state = S_VALUE;
        return undefined;
      case S_AFTER_VALUE: {
        const inside = this.stack[this.stack.length - 1];
        if (b === COMMA) {
          this.state = inside === IN_OBJECT ? S_KEY : S_VALUE;
          return undefined;
        }
        if (b === RBRACE || b === RBRACKET) return this.close(b === RBRACE ? IN_OBJECT : IN_ARRAY, i);
        return this.fail(i);
      }
      default: // S_DONE: something after the top-level value
        return this.fail(i);
    }
  }

  private beginKey(b: number, i: number): JsonScanFailure | undefined {
    if (b !== QUOTE) return this.fail(i);
    this.state = S_STRING;
    this.stringIsKey = true;
    this.keyLength = 0;
    this.keyMatchesText = true;
    this.keyEscaped = false;
    this.memberKey = '';
    return undefined;
  }

  private keyDone(): void {
    this.state = S_COLON;
    this.valueOfTextKey = this.keyEscaped || (this.keyMatchesText && this.keyLength === TEXT_KEY.length);
    if (this.stack.length === 2 && this.inResult) {
      if (this.keyEscaped) this.structuredContentEscapedKey = true;
      else if (this.keyLength === MEMBER_KEY_MAX && this.memberKey === 'structuredContent') this.captureKey = 3;
      return;
    }
    if (this.stack.length !== 1) return;
    this.captureKey = 0;
    if (this.keyEscaped) {
      this.plainKeys = false;
      return;
    }
    if (this.keyLength > MEMBER_KEY_MAX) return;
    const key = this.memberKey;
    if (key === 'jsonrpc') this.captureKey = 1;
    else if (key === 'id') this.captureKey = 2;
    else if (key === 'result') {
      this.hasResult = true;
      this.resultPending = true;
      // A later `result` replaces an earlier one (JSON.parse: the last key wins).
      this.structuredContent = undefined;
      this.structuredContentEscapedKey = false;
    }
    else if (key === 'error') this.hasError = true;
  }

  private beginValue(b: number, i: number): JsonScanFailure | undefined {
    const depth = this.stack.length;
    if (depth === 0) this.top = b === LBRACE ? 'object' : b === LBRACKET ? 'array' : 'scalar';
    if (this.captureKey !== 0 && this.captureStart < 0) {
      this.captureStart = this.consumed + i;
      this.captureDepth = depth;
    }
    if (depth === 1) {
      this.inResult = this.resultPending && b === LBRACE;
      this.resultPending = false;
    }
    if (b !== QUOTE) this.valueOfTextKey = false;

    if (b === LBRACE || b === LBRACKET) {
      if (depth + 1 > this.maxDepth) return this.failBound('json_depth', this.maxDepth, i);
      if (++this.nodes > this.maxNodes) return this.failBound('json_nodes', this.maxNodes, i);
      this.stack.push(b === LBRACE ? IN_OBJECT : IN_ARRAY);
      if (depth + 1 > this.maxSeenDepth) this.maxSeenDepth = depth + 1;
      this.state = b === LBRACE ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE;
      return undefined;
    }
    if (++this.nodes > this.maxNodes) return this.failBound('json_nodes', this.maxNodes, i);
    if (b === QUOTE) {
      this.state = S_STRING;
      this.stringIsKey = false;
      return undefined;
    }
    if (b === MINUS || (b >= DIGIT_0 && b <= DIGIT_9)) {
      this.state = S_NUMBER;
      this.numberState = b === MINUS ? N_MINUS : b === DIGIT_0 ? N_ZERO : N_INT;
      this.numberChars = 1;
      return undefined;
    }
    for (const lit of LITERALS) {
      if (b === lit[0]) {
        this.state = S_LITERAL;
        this.literal = lit;
        this.literalPos = 1;
        return undefined;
      }
    }
    return this.fail(i);
  }

  private close(kind: number, i: number): JsonScanFailure | undefined {
    if (this.stack.pop() !== kind) return this.fail(i);
    if (this.stack.length === 1) this.inResult = false;
    this.valueDone(i + 1);
    return undefined;
  }

  /** A value ended just before chunk position `end` (exclusive). */
  private valueDone(end: number): void {
    this.valueDoneAt(this.consumed + end);
  }

  private valueDoneAt(absoluteEnd: number): void {
    const depth = this.stack.length;
    this.state = depth === 0 ? S_DONE : S_AFTER_VALUE;
    if (this.captureStart < 0 || depth !== this.captureDepth) return;
    const range: ByteRange = [this.captureStart, absoluteEnd];
    if (this.captureKey === 1) this.jsonrpc = range;
    else if (this.captureKey === 2) this.id = range;
    else this.structuredContent = range;
    this.captureStart = -1;
    this.captureKey = 0;
  }

  /** Whether `b` continues the number; advances the number state when it does. */
  private numberContinues(b: number): boolean {
    const digit = b >= DIGIT_0 && b <= DIGIT_9;
    let next: number;
    switch (this.numberState) {
      case N_MINUS:
        if (!digit) return false;
        next = b === DIGIT_0 ? N_ZERO : N_INT;
        break;
      case N_ZERO:
      case N_INT:
        if (digit && this.numberState === N_INT) next = N_INT;
        else if (b === DOT) next = N_DOT;
        else if (b === LOWER_E || b === UPPER_E) next = N_EXP_MARK;
        else return false;
        break;
      case N_DOT:
      case N_FRAC:
        if (digit) next = N_FRAC;
        else if (b === LOWER_E || b === UPPER_E) {
          if (this.numberState === N_DOT) return false;
          next = N_EXP_MARK;
        } else return false;
        break;
      case N_EXP_MARK:
        if (b === PLUS || b === MINUS) next = N_EXP_SIGN;
        else if (digit) next = N_EXP;
        else return false;
        break;
      default: // N_EXP_SIGN, N_EXP
        if (!digit) return false;
        next = N_EXP;
    }
    this.numberState = next;
    if (next === N_EXP_MARK || ++this.numberChars > SAFE_NUMBER_CHARS) this.numberMayBeLossy = true;
    return true;
  }

  private fail(i: number): JsonScanFailure {
    return this.failAt(this.consumed + i);
  }

  private failAt(offset: number): JsonScanFailure {
    this.failure = { ok: false, reason: 'syntax', offset };
    return this.failure;
  }

  private failBound(reason: 'json_depth' | 'json_nodes', limit: number, i: number): JsonScanFailure {
    this.failure = { ok: false, reason, limit, observed: limit + 1, offset: this.consumed + i };
    return this.failure;
  }
}

/** A number may end in these sub-states (a digit was last). */
function numberAccepts(state: number): boolean {
  return state === N_ZERO || state === N_INT || state === N_FRAC || state === N_EXP;
}

function isHexDigit(b: number): boolean {
  return (b >= DIGIT_0 && b <= DIGIT_9) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

/** Scans a whole JSON text at once (tests, and callers that already hold the bytes). */
export function scanJson(bytes: Uint8Array, limits: JsonScanLimits): JsonScanResult {
  const scanner = new JsonScanner(limits);
  scanner.feed(bytes);
  return scanner.end();
}
