/**
 * Equality of JSON values, used to decide that a `content[].text` item is a duplicate of
 * `structuredContent` (ARCHITECTURE §5: "only strip text that parses to something deep-equal
 * to structuredContent").
 */

/**
 * Whether two JSON values are equal: primitives by `===` (so `0` equals `-0`); arrays by
 * length and element order; objects by their own enumerable string keys, in any order, with
 * equal values. An array never equals an object. Prototypes are never walked or compared,
 * so an own `"__proto__"` key (as `JSON.parse` makes it) is compared like any other key.
 *
 * Meant for JSON data (what `JSON.parse` returns): `undefined`-valued keys count as keys,
 * and other objects (Date, Map) compare by their own enumerable keys only.
 *
 * Iterative (explicit stack), so deep input cannot overflow the call stack; O(size of `a`
 * plus the key counts of `b`'s objects it reaches) time. Never throws.
 */
export function jsonDeepEqual(a: unknown, b: unknown): boolean {
  return jsonDeepEqualCount(a, b) >= 0;
}

/**
 * {@link jsonDeepEqual} that also counts: -1 when `a` and `b` differ, else the number of JSON
 * values in `a` (itself included; every object, array, string, number, boolean and null is
 * one, keys are not: {@link valueCount}'s count), which is `b`'s too.
 *
 * Why (a new user's hostile trial 12, M3): the dedupe's parse path walked an equal text and
 * `structuredContent` once to compare them and then twice more to count their values (the
 * repeated-key check, duplicate-keys.ts): a 3.84 MB answer whose text held `structuredContent`'s
 * 80,000 keys reversed cost ~350 ms of CPU per call, ~70 ms of it the counting walks, while
 * other agents' calls waited (test/regressions/dedupe-reordered-copy-stalls-other-agents.test.ts).
 * Leaves are compared where their container is read, not pushed on the stack.
 *
 * `bKeyCounts`: the own key counts of `b`'s objects, filled as they are read, for a caller that
 * compares many values with one `b` (normalize.ts summarizeCopies: every text item against one
 * `structuredContent`). Without it each comparison counted the keys of `b`'s objects again,
 * however small `a` was: a seller's `structuredContent` of 30,000 keys beside 500 one-key JSON
 * texts cost ~5 s of CPU (0.3 µs x keys x texts), every agent's calls waiting (a hostile
 * new-user trial 16, H1: test/regressions/dedupe-texts-recount-structured-content-keys.test.ts).
 * With it a comparison costs O(size of `a`) once `b`'s counts are known.
 */
export function jsonDeepEqualCount(a: unknown, b: unknown, bKeyCounts?: KeyCounts): number {
  let count = 0;
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    count++;
    if (x === y) {
      // The same object on both sides (never so for two parses): its values are counted too.
      if (x !== null && typeof x === 'object') count += valueCount(x) - 1;
      continue;
    }
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return -1;
    const xIsArray = Array.isArray(x);
    if (xIsArray !== Array.isArray(y)) return -1;
    if (xIsArray) {
      const xa = x as unknown[];
      const ya = y as unknown[];
      if (xa.length !== ya.length) return -1;
      for (let i = 0; i < xa.length; i++) {
        const xv = xa[i];
        const yv = ya[i];
        if (isLeaf(xv) && xv === yv) count++;
        else stack.push(xv, yv);
      }
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const keys = Object.keys(xo);
    if (keys.length !== keyCountOf(yo, bKeyCounts)) return -1;
    for (const key of keys) {
      if (!Object.prototype.propertyIsEnumerable.call(yo, key)) return -1;
      const xv = xo[key];
      const yv = yo[key];
      if (isLeaf(xv) && xv === yv) count++;
      else stack.push(xv, yv);
    }
  }
  return count;
}

/** Own enumerable key counts of objects, by object (see {@link jsonDeepEqualCount}). */
export type KeyCounts = Map<object, number>;

function keyCountOf(o: Record<string, unknown>, memo: KeyCounts | undefined): number {
  if (memo === undefined) return Object.keys(o).length;
  let n = memo.get(o);
  if (n === undefined) {
    n = Object.keys(o).length;
    memo.set(o, n);
  }
  return n;
}

/** A value with nothing below it: not an object or array. */
function isLeaf(v: unknown): boolean {
  return v === null || typeof v !== 'object';
}

/**
 * The number of JSON values in `value` (itself included; keys are not values), walked without
 * recursion. `facts`, when given, also learns whether a number in it is -0 (`negativeZero`
 * set true; never reset): reserialized-lift.ts, which needs both from one walk.
 */
export function valueCount(value: unknown, facts?: { negativeZero: boolean }): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    count++;
    if (facts !== undefined && v === 0 && Object.is(v, -0)) facts.negativeZero = true;
    else if (v !== null && typeof v === 'object') {
      if (Array.isArray(v)) for (const e of v) stack.push(e);
      else for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return count;
}
