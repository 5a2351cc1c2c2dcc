/**
 * Whether a `content[].text`'s JSON object holds a member named `__proto__`, at any depth: such
 * a text is never lifted into `structuredContent`, and a copy of a `structuredContent` holding
 * one is never replaced by a summary (normalize.ts; the scan-based lift and dedupe leave such
 * a text to it: json-scan.ts ObjectTextFacts.mayHoldProtoKey, lift-text.ts judgeStringText;
 * the scan of the whole message tells when `structuredContent` need not be walked:
 * JsonScanSummary.mayHoldProtoKey).
 *
 * Why (a hostile trial 24, L1): a legacy text `{"__proto__":{"polluted":1},"a":1,…}` was
 * lifted and replaced by its summary. `JSON.parse` keeps `__proto__` as an own member, so a
 * host reading the text has it; but the MCP TypeScript SDK client (1.32.2) reads
 * `structuredContent` through zod's `z.record(z.string(), z.unknown())`, which builds a new
 * object by assignment, where a `__proto__` member sets a prototype instead of a member: the
 * SDK host read `{"a":1,…}`, the member lost, the only copy it could read summarized away.
 * Deeper members pass the SDK's own schema (`z.unknown()` values) but not a host that validates
 * `structuredContent` with such a schema of its own at that depth (a typed AdCP response); the
 * text reaches every host as `JSON.parse` reads it. The MCP Python SDK (mcp 2.3.0, pydantic 2)
 * keeps `__proto__` as a plain key at every depth, so a Python host loses nothing either way.
 */

/**
 * Whether `text` may hold a member `__proto__`: it holds `__proto__`, or a `\u` escape of one
 * of its characters `_` `p` `r` `o` `t` (`\u005f`, `\u0070`: a key may spell `__proto__` with
 * one; a `\u00e9`, as Python's `json.dumps` writes non-ASCII text, is not), as the scan judges a
 * key (assembly/json-scan.ts escapesProtoChar). False proves it holds none. One regular
 * expression search (~65 µs per MiB of a get_products text, where `includes('__proto__')`
 * took ~240: `_` is frequent in AdCP keys); only a text that passes is walked ({@link holdsProtoKey}).
 */
export function mayHoldProtoKey(text: string): boolean {
  return PROTO_KEY_TEXT.test(text);
}

/** `__proto__`, or the `\u` escape of one of its characters. */
const PROTO_KEY_TEXT = /__proto__|\\u00(?:5[fF]|6[fF]|7[024])/;

/**
 * Whether `value` (what `JSON.parse` made) holds an own member `__proto__` in an object at any
 * depth. Iterative (deep input cannot overflow the call stack); the value is within the text
 * bounds its caller checked.
 */
export function holdsProtoKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const e of v) if (typeof e === 'object' && e !== null) stack.push(e);
      continue;
    }
    if (Object.hasOwn(v, '__proto__')) return true;
    for (const e of Object.values(v)) if (typeof e === 'object' && e !== null) stack.push(e);
  }
  return false;
}
