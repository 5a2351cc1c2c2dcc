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
 * Iterative (explicit stack), so deep input cannot overflow the call stack; O(size of the
 * smaller value) time. Never throws.
 */
export function jsonDeepEqual(a: unknown, b: unknown): boolean {
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
    const xIsArray = Array.isArray(x);
    if (xIsArray !== Array.isArray(y)) return false;
    if (xIsArray) {
      const xa = x as unknown[];
      const ya = y as unknown[];
      if (xa.length !== ya.length) return false;
      for (let i = 0; i < xa.length; i++) stack.push(xa[i], ya[i]);
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const keys = Object.keys(xo);
    if (keys.length !== Object.keys(yo).length) return false;
    for (const key of keys) {
      if (!Object.prototype.propertyIsEnumerable.call(yo, key)) return false;
      stack.push(xo[key], yo[key]);
    }
  }
  return true;
}
