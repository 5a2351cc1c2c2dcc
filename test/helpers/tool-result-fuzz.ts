/**
 * The parse path's output, and generated JSON texts, for the tests of the scan-based rewrites
 * (test/unit/lift-splice.test.ts, test/unit/dedupe-splice.test.ts): objects with duplicate,
 * integer-like, escaped, `__proto__` and non-ASCII keys, JSON whitespace, and string literals
 * with some characters written as escapes (lone surrogates among them), from a seeded PRNG so every run sees the same cases.
 */
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { scanJson } from '../../src/mcp/json-scan.js';
import { rewriteScanned } from '../../src/response/scanned-message.js';
import { rng } from './json-fuzz.js';

export interface Limits {
  max_response_bytes: number;
  max_json_depth: number;
  max_json_nodes: number;
}
export const LIMITS: Limits = { max_response_bytes: 1 << 22, max_json_depth: 64, max_json_nodes: 100_000 };

export function exchange(limits: Limits = LIMITS, method = 'tools/call', id: unknown = 7): Exchange {
  return { rpc: { kind: 'request', id, method, toolName: undefined }, protocolVersion: '2025-06-18', normalize: true, limits } as unknown as Exchange;
}

/** What the JSON stage's parse path sends (json-stage.ts: scanned-message.ts rewriteScanned): the rewritten bytes, or undefined for the seller's own. */
export function parsePath(ex: Exchange, body: Buffer): Buffer | undefined {
  const scan = scanJson(body, { maxDepth: ex.limits.max_json_depth, maxNodes: ex.limits.max_json_nodes });
  assert.ok(scan.ok);
  const message: unknown = JSON.parse(body.toString('utf8'));
  const { rewritten, out } = rewriteScanned(ex, message, body, scan);
  return rewritten.changed ? out : undefined;
}

/**
 * Counts of a randomized comparison of a scan-based rewrite with the parse path: `check`
 * skips a body the scan refuses, and asserts the fast path's bytes are the parse path's
 * whenever the fast path answers.
 */
export class ParsePathComparison {
  total = 0;
  answered = 0;
  /** Bodies the parse path rewrites. */
  rewritten = 0;

  check(ex: Exchange, body: Buffer, fastPath: (ex: Exchange, body: Buffer) => Buffer | undefined, label: string): void {
    if (!scanJson(body, { maxDepth: ex.limits.max_json_depth, maxNodes: ex.limits.max_json_nodes }).ok) return;
    this.total++;
    const parsed = parsePath(ex, body);
    if (parsed !== undefined) this.rewritten++;
    const answer = fastPath(ex, body);
    if (answer === undefined) return;
    // The body itself: the fast path leaves it unchanged (every copy no longer than its summary).
    const fast = answer === body ? undefined : answer;
    this.answered++;
    assert.deepEqual(fast?.toString('utf8'), parsed?.toString('utf8'), `${label}: ${body.toString()}`);
  }
}

/**
 * `result` members beside `content` that the shared checks read from the scan
 * (src/response/scanned-result.ts): `isError` and `resultType` in many JSON spellings, the
 * last of duplicates winning, as `JSON.parse` keeps.
 */
export const RESULT_EXTRAS: readonly string[] = [
  '',
  ',"isError":false',
  ',"isError":true',
  ',"isError":0',
  ',"isError":-0.0',
  ',"isError":1e-400',
  ',"isError":2',
  ',"isError":""',
  ',"isError":"no"',
  ',"isError":"\\u0000"',
  ',"isError":null',
  ',"isError":{}',
  ',"isError":[]',
  ',"isError":true,"isError":false',
  ',"isError":false,"isError":1',
  ',"resultType":"complete"',
  ',"resultType":"compl\\u0065te"',
  ',"resultType":"task"',
  ',"resultType":null',
  ',"resultType":"task","resultType":"complete"',
  ',"_meta":{"k":1}',
];

/** An item holding `text` (a JSON string literal) whose `type` is spelled otherwise, repeated, not a string, or absent. */
export function typeVariantItem(g: ReturnType<typeof generator>, text: string): string {
  return g.pick([
    `{"type":"t\\u0065xt","text":${text}}`,
    `{"type":"text","type":"image","text":${text}}`,
    `{"type":"image","text":${text},"type":"text"}`,
    `{"type":1,"text":${text}}`,
    `{"type":["text"],"text":${text}}`,
    `{"text":${text}}`,
    `{"type":"text","text":${text},"type":null}`,
  ]);
}

const KEYS = ['status', 'products', 'message', 'adcp_error', '__proto__', '0', '7', '4294967295', 'caf\u00e9', 'a b', 'x'.repeat(70), 'next_cursor', 'errors', 'k\ud83d\ude00', '\udfff'];

export function generator(seed: number): { text: () => string; string: (s: string) => string; pick: <T>(a: readonly T[]) => T; chance: (p: number) => boolean; int: (n: number) => number } {
  const r = rng(seed);
  const chance = (p: number): boolean => r() < p;
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const ws = (): string => (chance(0.3) ? pick([' ', '\n', '\t', '\r\n  ']) : '');
  /**
   * A JSON string literal of `s`, some characters written as escapes. A lone surrogate (the
   * lift's `lone_surrogate`) mostly as an escape, in either case, else as it is: in a text that
   * then goes into a message's string (a lone one there), or into the message's UTF-8 (U+FFFD).
   */
  const string = (s: string): string => {
    let out = '"';
    for (const ch of s) {
      const cp = ch.codePointAt(0)!;
      if (ch === '"' || ch === '\\' || cp < 0x20) out += JSON.stringify(ch).slice(1, -1);
      else if (cp >= 0xd800 && cp <= 0xdfff) out += chance(0.8) ? `\\u${chance(0.5) ? cp.toString(16) : cp.toString(16).toUpperCase()}` : ch;
      else if (chance(0.05)) out += ch.length === 2 ? `\\u${ch.charCodeAt(0).toString(16)}\\u${ch.charCodeAt(1).toString(16).toUpperCase()}` : `\\u${cp.toString(16).padStart(4, '0')}`;
      else if (ch === '/' && chance(0.5)) out += '\\/';
      else out += ch;
    }
    return `${out}"`;
  };
  const scalar = (): string =>
    pick([
      () => String(Math.floor(r() * 1000)),
      () => '-0',
      () => (chance(0.1) ? '1.25e3' : '1.25'),
      () => (chance(0.1) ? '12345678901234567890' : '-17'),
      () => 'true',
      () => 'null',
      () => string(pick(['completed', 'input-required', 'caf\u00e9', 'a"b\\c\n', '\ud83d\ude00', 'x'.repeat(40), '', '</script>', '\ud800x', '\udc00', '\ud800\ud83d\ude00', '\\ud800'])),
    ])();
  const value = (depth: number): string => {
    if (depth > 3 || chance(0.5)) return scalar();
    if (chance(0.5)) {
      const n = Math.floor(r() * 4);
      return `[${ws()}${Array.from({ length: n }, () => value(depth + 1)).join(`,${ws()}`)}${ws()}]`;
    }
    const n = Math.floor(r() * 3);
    return `{${Array.from({ length: n }, () => `${string(pick(KEYS))}:${ws()}${value(depth + 1)}`).join(',')}}`;
  };
  const text = (): string => {
    const n = Math.floor(r() * 5);
    const members = Array.from({ length: n }, () => `${ws()}${string(pick(KEYS))}${ws()}:${ws()}${value(1)}`);
    if (chance(0.7)) members.splice(Math.floor(r() * (n + 1)), 0, `"pad":${string('x'.repeat(Math.floor(r() * 100)))}`);
    return `${ws()}{${members.join(',')}${ws()}}${ws()}`;
  };
  return { text, string, pick, chance, int: (n) => Math.floor(r() * n) };
}
