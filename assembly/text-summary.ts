// AssemblyScript: the summary sentence of a text's object, written from the text scan's
// member table (assembly/json-scan.ts `textSummary`), compiled into the JSON scan core.
//
// It writes, byte for byte, what src/mcp/summary.ts `summaryJsonString` gives for the same
// object (that module is the reference; test/unit/text-summary-wasm.test.ts compares the two
// over generated objects), for the objects whose every key is plain ASCII:
// no backslash, no byte over 0x7f, no key starting with a digit (`Object.keys` would move an
// integer-like key first), no key written twice (the parse keeps the first place and the
// last value), and a `status` string without a backslash. Any other object is left to the
// JavaScript writer (SUMMARY_UNDECIDED), as is a sentence that would not fit the output area.
//
// Why (issue 5, 1 KiB (b) and (c) results): the JavaScript writer decoded every key into a
// string, built a Map of them, the shape's closures and the sentence's strings per response;
// `npm run bench:ab` with the summary cached per body (a measurement only) cut the gateway's
// CPU per 1 KiB (b) response by ~3%.

/** Int32 fields of a member table entry (assembly/json-scan.ts TABLE). */
export const MEMBER_FIELDS: i32 = 6;
export const M_KEY_START: i32 = 0;
export const M_KEY_END: i32 = 1;
export const M_VALUE_START: i32 = 2;
export const M_VALUE_END: i32 = 3;
export const M_FIRST: i32 = 4;
export const M_ELEMENTS: i32 = 5;

/** The object is one the JavaScript writer must summarize (see the module comment). */
export const SUMMARY_UNDECIDED: i32 = -1;
/** The object's only key is `adcp_error`: no summary (src/mcp/lift-text.ts skips it). */
export const SUMMARY_ADCP_ERROR_ONLY: i32 = -2;

/** src/mcp/summary.ts SUMMARY_MAX_BYTES: the sentence's bound, in bytes. */
const SUMMARY_MAX_BYTES: i32 = 200;
/** src/mcp/summary.ts STATUS_MAX_CHARS and KEY_MAX_CHARS. */
const STATUS_MAX_CHARS: i32 = 32;
const KEY_MAX_CHARS: i32 = 64;
/** src/mcp/lift-text.ts STATUS_MAX_WRITTEN: a longer `status` string (as written) is not read. */
const STATUS_MAX_WRITTEN: i32 = 6 * 32 + 2;
/** Bytes of the output area the caller gives (the sentence, its quotes and slack). */
export const SUMMARY_OUT_BYTES: i32 = 512;

const HEAD = 'Result in structuredContent (';
const HEAD_BYTES = ' bytes): ';
const STATUS_IS = 'status=';
const MORE = ' more';
const NO_FIELDS = 'no fields';

function field(table: usize, m: i32, f: i32): i32 {
  return load<i32>(table + (<usize>(m * MEMBER_FIELDS + f) << 2));
}

/** `[A-Za-z0-9_-]`: a character of a status token and of a key (summary.ts isTokenChar). */
function isTokenChar(c: i32): bool {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c == 0x5f || c == 0x2d;
}

function digits(n: i32): i32 {
  let d = 1;
  while (n >= 10) {
    n /= 10;
    d++;
  }
  return d;
}

function putAscii(w: usize, s: string): usize {
  for (let i = 0; i < s.length; i++) store<u8>(w + <usize>i, <u8>s.charCodeAt(i));
  return w + <usize>s.length;
}

function putBytes(w: usize, from: usize, n: i32): usize {
  memory.copy(w, from, <usize>n);
  return w + <usize>n;
}

function putInt(w: usize, n: i32): usize {
  const d = digits(n);
  let p = w + <usize>d;
  do {
    p--;
    store<u8>(p, <u8>(0x30 + (n % 10)));
    n /= 10;
  } while (n > 0);
  return w + <usize>d;
}

function putSeparator(w: usize, semicolon: bool): usize {
  store<u8>(w, semicolon ? 0x3b : 0x2c);
  store<u8>(w + 1, 0x20);
  return w + 2;
}

/** Key `m`'s bytes equal key `j`'s (contents, quotes excluded). */
function sameKey(table: usize, text: usize, m: i32, j: i32): bool {
  const a = field(table, m, M_KEY_START) + 1;
  const n = field(table, m, M_KEY_END) - 1 - a;
  const b = field(table, j, M_KEY_START) + 1;
  if (field(table, j, M_KEY_END) - 1 - b != n) return false;
  return memory.compare(text + <usize>a, text + <usize>b, <usize>n) == 0;
}

/** Key `m` is `name` (ASCII). */
function keyIs(table: usize, text: usize, m: i32, name: string): bool {
  const a = field(table, m, M_KEY_START) + 1;
  if (field(table, m, M_KEY_END) - 1 - a != name.length) return false;
  for (let i = 0; i < name.length; i++) if (<i32>load<u8>(text + <usize>(a + i)) != name.charCodeAt(i)) return false;
  return true;
}

/** Key `m` shown verbatim (summary.ts keyKind 'ascii'): 1-64 of `[A-Za-z0-9_.$-]`. */
function keyShown(table: usize, text: usize, m: i32): bool {
  const a = field(table, m, M_KEY_START) + 1;
  const n = field(table, m, M_KEY_END) - 1 - a;
  if (n == 0 || n > KEY_MAX_CHARS) return false;
  for (let i = 0; i < n; i++) {
    const c = <i32>load<u8>(text + <usize>(a + i));
    if (!isTokenChar(c) && c != 0x2e && c != 0x24) return false;
  }
  return true;
}

/**
 * Writes the summary's JSON string (quotes included) for the `count` members of `table`,
 * whose offsets are in the text at `text`, at `out` (SUMMARY_OUT_BYTES bytes); returns its
 * length, SUMMARY_UNDECIDED or SUMMARY_ADCP_ERROR_ONLY. `serializedBytes`: the text's UTF-8
 * length, which the sentence states.
 */
export function writeSummary(table: usize, count: i32, text: usize, serializedBytes: i32, out: usize): i32 {
  let statusAt = -1;
  for (let m = 0; m < count; m++) {
    const a = field(table, m, M_KEY_START) + 1;
    const e = field(table, m, M_KEY_END) - 1;
    for (let p = a; p < e; p++) {
      const b = load<u8>(text + <usize>p);
      if (b == 0x5c || b >= 0x80) return SUMMARY_UNDECIDED;
    }
    if (e > a) {
      const first = load<u8>(text + <usize>a);
      if (first >= 0x30 && first <= 0x39) return SUMMARY_UNDECIDED;
    }
    for (let j = 0; j < m; j++) if (sameKey(table, text, m, j)) return SUMMARY_UNDECIDED;
    if (keyIs(table, text, m, 'status')) statusAt = m;
  }
  if (count == 1 && keyIs(table, text, 0, 'adcp_error')) return SUMMARY_ADCP_ERROR_ONLY;

  // The status shown: a string of 1-32 token characters (summary.ts isSafeStatus).
  let statusShown = false;
  let statusStart = 0;
  let statusChars = 0;
  if (statusAt >= 0 && field(table, statusAt, M_FIRST) == 0x22) {
    const vs = field(table, statusAt, M_VALUE_START);
    const ve = field(table, statusAt, M_VALUE_END);
    if (ve - vs <= STATUS_MAX_WRITTEN) {
      statusStart = vs + 1;
      statusChars = ve - 1 - statusStart;
      statusShown = statusChars >= 1 && statusChars <= STATUS_MAX_CHARS;
      for (let p = statusStart; p < ve - 1; p++) {
        const c = <i32>load<u8>(text + <usize>p);
        if (c == 0x5c) return SUMMARY_UNDECIDED; // decoded, it may still be a token
        if (!isTokenChar(c)) statusShown = false;
      }
    }
  }

  let w = out;
  store<u8>(w++, 0x22);
  w = putAscii(w, HEAD);
  w = putInt(w, serializedBytes);
  w = putAscii(w, HEAD_BYTES);
  const bodyStart = w;
  if (statusShown) {
    w = putAscii(w, STATUS_IS);
    w = putBytes(w, text + <usize>statusStart, statusChars);
  }
  // summary.ts summarizeShape's budget: the head, the status segment and the final "." first.
  let used = <i32>(w - out - 1) + 1;
  const moreReserve = 8 + digits(count); // `, +${count} more`
  let listed = 0;
  let more = 0;
  for (let k = 0; k < count; k++) {
    if (statusShown && k == statusAt) continue;
    if (!keyShown(table, text, k)) {
      more++;
      continue;
    }
    const a = field(table, k, M_KEY_START) + 1;
    const n = field(table, k, M_KEY_END) - 1 - a;
    const isArray = field(table, k, M_FIRST) == 0x5b;
    const elements = field(table, k, M_ELEMENTS);
    const separated = listed > 0 || statusShown;
    const segmentBytes = n + (isArray ? 2 + digits(elements) : 0) + (separated ? 2 : 0);
    const reserve = k == count - 1 && more == 0 ? 0 : moreReserve;
    if (used + segmentBytes + reserve > SUMMARY_MAX_BYTES) {
      more += count - k - (statusShown && statusAt > k ? 1 : 0);
      break;
    }
    if (separated) w = putSeparator(w, listed == 0);
    w = putBytes(w, text + <usize>a, n);
    if (isArray) {
      store<u8>(w++, 0x5b);
      w = putInt(w, elements);
      store<u8>(w++, 0x5d);
    }
    listed++;
    used += segmentBytes;
  }
  if (more > 0) {
    if (listed > 0 || statusShown) w = putSeparator(w, listed == 0);
    store<u8>(w++, 0x2b);
    w = putInt(w, more);
    w = putAscii(w, MORE);
  }
  if (w == bodyStart) w = putAscii(w, NO_FIELDS);
  store<u8>(w++, 0x2e);
  store<u8>(w++, 0x22);
  return <i32>(w - out);
}
