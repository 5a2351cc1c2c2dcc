/**
 * Seeded tool-result answers of many shapes for the differential fuzz of the JSON stage's two
 * rewrite paths (test/unit/rewrite-paths-differential-fuzz.test.ts): JSON values built as
 * trees and written out with the seller's choices (whitespace between any tokens, escapes,
 * `\/`, upper/lower hex, key order, number spellings such as `1.0`, `1e2`, `-0`), so that a
 * text can hold `structuredContent`'s exact bytes, or a deep-equal copy written otherwise.
 */
import { rng } from './json-fuzz.js';

/** A JSON value as written: an object keeps its members in order, repeats included; a number its spelling. */
export type Json =
  | { readonly t: 'o'; readonly m: readonly (readonly [string, Json])[] }
  | { readonly t: 'a'; readonly e: readonly Json[] }
  | { readonly t: 'n'; readonly v: string }
  | { readonly t: 's'; readonly v: string }
  | { readonly t: 'l'; readonly v: 'true' | 'false' | 'null' };

/** How a seller writes JSON text. */
export interface Style {
  /** Chance of whitespace at each place JSON allows it. */
  readonly ws: number;
  /** Chance of a `\u` escape for a character that needs none. */
  readonly escape: number;
  /** Chance of `\/` for `/`. */
  readonly slash: number;
  /** Members written in another order (only where no key repeats: the value stays the same). */
  readonly reorder: boolean;
  /** Numbers written with another spelling of the same double. */
  readonly respell: boolean;
}

export const PLAIN: Style = { ws: 0, escape: 0, slash: 0, reorder: false, respell: false };

/** A private-use character the body writer turns into a 0xFF byte (invalid UTF-8). */
export const INVALID_BYTE_MARK = '\ue000';

const KEYS = [
  'status', 'status', 'products', 'message', 'media_buy_id', 'adcp_error', 'content', 'text', 'type', 'structuredContent', 'isError',
  '__proto__', 'constructor', '0', '7', '10', 'caf\u00e9', 'k\ud83d\ude00', 'a/b', 'x"y', 'b\\s', 'tab\t', '', 'next_cursor', 'x'.repeat(40),
  'a.b', '$ref', 'k-1', '\u65e5\u672c', '\u017f', 'x'.repeat(64), 'y'.repeat(65), '01', '-1', '4294967295', '4294967294', 'Status', 'status ',
];
const NUMBERS = ['0', '-0', '1', '1.0', '1e2', '1E+2', '-17', '12.5', '0.1', '100', '-0.0', '1e-7', '9007199254740992', '9007199254740993', '12345678901234567890', '1.5e300', '123456789012345', '0.30000000000000004'];
const STATUS_CHARS = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-'];
const LITERALS = ['true', 'false', 'null'] as const;
const SAFE_NUMBERS = NUMBERS.filter((n) => n.length <= 15 && !/[eE]/.test(n));
const STRINGS = [
  '', 'completed', 'working', 'input-required', 'caf\u00e9', '\ud83d\ude00', 'a"b\\c\n', '</script>', 'a/b', '\u2028\u2029', '\u0000\u001f', '\u007f',
  'x'.repeat(40), '{"a":1}', ' {', '\ud800', '\udc00x', 'Found 3 products.',
];

export type Gen = ReturnType<typeof shapes>;

export function shapes(seed: number) {
  const r = rng(seed);
  let safeNumbers = false;
  /**
   * `make()` with numbers the message scan proves round-trip (at most 15 characters, no
   * exponent: json-scan.ts numberMayBeLossy), so that a value written in the message itself
   * leaves the scan path open.
   */
  const withSafeNumbers = <T>(make: () => T): T => {
    safeNumbers = true;
    try {
      return make();
    } finally {
      safeNumbers = false;
    }
  };
  const chance = (p: number): boolean => r() < p;
  const int = (n: number): number => Math.floor(r() * n);
  const pick = <T>(a: readonly T[]): T => a[int(a.length)]!;

  /** A random value, `depth` levels down. */
  const value = (depth: number, maxDepth = 4): Json => {
    if (depth >= maxDepth || chance(0.45)) return scalar();
    if (chance(0.4)) return { t: 'a', e: Array.from({ length: int(4) }, () => value(depth + 1, maxDepth)) };
    return object(depth, maxDepth);
  };
  const object = (depth = 0, maxDepth = 4, members = int(5)): Json => ({ t: 'o', m: Array.from({ length: members }, () => [pick(KEYS), value(depth + 1, maxDepth)] as const) });

  /** A status token of 0-40 characters (a summary shows one of 1-32 of `[A-Za-z0-9_-]`), sometimes with another character. */
  const status = (): Json => {
    const n = int(41);
    let v = '';
    for (let k = 0; k < n; k++) v += pick(STATUS_CHARS);
    if (chance(0.2)) v = v.slice(0, int(v.length + 1)) + pick([' ', '.', '\u00e9', '"', '\\', '\u0000']) + v;
    return { t: 's', v };
  };

  /**
   * An object of `members` members (about the text scan's member table of 64, the summary's
   * 200 bytes): keys of generated lengths and kinds, arrays of many lengths, a `status`.
   */
  const wide = (members: number): Json => {
    const m: (readonly [string, Json])[] = [];
    for (let k = 0; k < members; k++) {
      const key = pick<() => string>([
        () => `k${k}_${'x'.repeat(int(70))}`,
        () => `k${k}`,
        () => pick(KEYS),
        () => String(int(20)),
        () => `\u00e9${k}`,
      ])();
      m.push([key, chance(0.4) ? { t: 'a', e: Array.from({ length: int(12) }, () => scalar()) } : value(1, 3)]);
    }
    if (chance(0.6)) m.splice(int(m.length + 1), 0, ['status', chance(0.8) ? status() : scalar()]);
    return { t: 'o', m };
  };
  const scalar = (): Json => {
    switch (int(5)) {
      case 0:
        return { t: 'n', v: pick(safeNumbers ? SAFE_NUMBERS : NUMBERS) };
      case 1:
        return { t: 'n', v: String(int(1000)) };
      case 2:
        return { t: 'l', v: pick(LITERALS) };
      default:
        return { t: 's', v: pick(STRINGS) };
    }
  };

  const ws = (s: Style): string => (s.ws > 0 && chance(s.ws) ? pick([' ', '\n', '\t', '\r\n  ', '  ']) : '');

  const hex = (u: number): string => {
    const h = u.toString(16).padStart(4, '0');
    return `\\u${chance(0.5) ? h : h.toUpperCase()}`;
  };

  /** `s` as a JSON string literal in style `s`. */
  const string = (text: string, s: Style): string => {
    // No choice to make: JSON.stringify's spelling, lone surrogates as escapes (as it writes them).
    if (s.escape === 0 && (s.slash === 0 || !text.includes('/'))) return JSON.stringify(text);
    let out = '"';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (ch === '"' || ch === '\\' || cp < 0x20) out += chance(s.escape) || !'"\\\b\f\n\r\t'.includes(ch) ? hex(cp) : JSON.stringify(ch).slice(1, -1);
      else if (cp >= 0xd800 && cp <= 0xdfff) out += hex(cp); // a lone surrogate: only an escape carries it
      else if (chance(s.escape)) out += ch.length === 2 ? hex(ch.charCodeAt(0)) + hex(ch.charCodeAt(1)) : hex(cp);
      else if (ch === '/' && chance(s.slash)) out += '\\/';
      else out += ch;
    }
    return `${out}"`;
  };

  /** Another spelling of the number `v` (the same double). */
  const respell = (v: string): string => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || Object.is(n, -0) || /[.eE]/.test(v) || v.length > 15) return v;
    return pick([`${v}.0`, `${v}e0`, `${v}E+0`, `${v}0e-1`, `${v}.00`]);
  };

  /** `j` written in style `s`. */
  const write = (j: Json, s: Style): string => {
    switch (j.t) {
      case 'n':
        return s.respell && chance(0.5) ? respell(j.v) : j.v;
      case 's':
        return string(j.v, s);
      case 'l':
        return j.v;
      case 'a':
        return `[${ws(s)}${j.e.map((e) => `${write(e, s)}${ws(s)}`).join(`,${ws(s)}`)}]`;
      case 'o': {
        const unique = new Set(j.m.map(([k]) => k)).size === j.m.length;
        const members = s.reorder && unique && chance(0.7) ? shuffle(j.m) : j.m;
        return `{${ws(s)}${members.map(([k, v]) => `${string(k, s)}${ws(s)}:${ws(s)}${write(v, s)}${ws(s)}`).join(`,${ws(s)}`)}}`;
      }
    }
  };

  const shuffle = <T>(a: readonly T[]): T[] => {
    const out = a.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const k = int(i + 1);
      [out[i], out[k]] = [out[k]!, out[i]!];
    }
    return out;
  };

  const style = (): Style =>
    pick([
      PLAIN,
      PLAIN,
      { ws: 0.3, escape: 0, slash: 0, reorder: false, respell: false },
      { ws: 0, escape: 0.1, slash: 0.5, reorder: false, respell: false },
      { ws: 0, escape: 0, slash: 0, reorder: true, respell: false },
      { ws: 0, escape: 0, slash: 0, reorder: false, respell: true },
      { ws: 0.2, escape: 0.05, slash: 0.3, reorder: true, respell: true },
    ]);

  return { r, withSafeNumbers, chance, int, pick, value, object, wide, status, scalar, string, write, shuffle, style, ws };
}

/** A JS value (JSON.parse's) as a {@link Json} tree: own keys in order, numbers as JSON.stringify writes them. */
export function fromValue(v: unknown): Json {
  if (v === null) return { t: 'l', v: 'null' };
  if (typeof v === 'boolean') return { t: 'l', v: v ? 'true' : 'false' };
  if (typeof v === 'number') return { t: 'n', v: JSON.stringify(v) };
  if (typeof v === 'string') return { t: 's', v };
  if (Array.isArray(v)) return { t: 'a', e: v.map(fromValue) };
  return { t: 'o', m: Object.entries(v as object).map(([k, x]) => [k, fromValue(x)] as const) };
}
