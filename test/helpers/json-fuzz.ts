/**
 * Shared pieces of the JSON scan's randomized tests (test/unit/json-scan*.test.ts): a seeded
 * PRNG, the JSON.parse reference, and the `textMayHoldObject` reference.
 */

/** Mulberry32: a small seeded PRNG so every run sees the same cases. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `JSON.parse(bytes.toString('utf8'))`, as a result instead of a throw. */
export function parses(bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(bytes.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** Whether some `text` member anywhere holds a string that starts, after JSON whitespace, with `{` (what extract.ts parseTextObject would try). */
export function textMembersHoldObject(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(textMembersHoldObject);
  if (v === null || typeof v !== 'object') return false;
  for (const [k, child] of Object.entries(v)) {
    if (k === 'text' && typeof child === 'string' && /^[ \t\n\r]*\{/.test(child)) return true;
    if (textMembersHoldObject(child)) return true;
  }
  return false;
}
