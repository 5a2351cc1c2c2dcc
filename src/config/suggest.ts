/**
 * "Did you mean": the message of an unknown key, with the known key it most likely meant.
 *
 * Bounded work per key: a key is compared with the known keys of its place (a few dozen at
 * most) by an edit distance capped at the largest distance still suggested, with early exit
 * (a candidate whose length alone is too far is skipped; rows of the table past the cap end
 * the comparison), in three reused rows instead of a fresh 2-D table. The loader asks for a
 * message only for the problems it shows (problem-list.ts: at most `MAX_SHOWN_PROBLEMS`).
 * Before, every unknown key of the file was compared with every known key by a full table:
 * a 1 MiB file of 75,616 unknown keys took 18 s to check (a live reload of it blocked the event
 * loop for 17 s), and one typo in a `&limits` anchor shared by 20,000 tools 6.4 s (a new user's
 * trial, 2026-12-03, F4; test/regressions/config-reload-many-problems-freezes.test.ts).
 */
import { agentSchema, knownKeysAt, LIMIT_KEYS } from './schema.js';

/** Keys longer than this get no suggestion (no known key is that long): 100 characters. */
const MAX_SUGGESTED_KEY_LENGTH = 100;

/** Case and `-`/`_` do not count as differences. */
function normalize(s: string): string {
  return s.toLowerCase().replace(/-/g, '_');
}

/**
 * The known keys of one place (a mapping of the schema), normalized once, and the closest of
 * them to a mistyped key. `closest` is the one suggestion function of the loader (the
 * regression test counts its calls).
 */
export class KeySuggester {
  private readonly normalized: readonly string[];

  constructor(readonly known: readonly string[]) {
    this.normalized = known.map(normalize);
  }

  /**
   * The known key `key` most likely meant, or undefined: the first known key at the smallest
   * optimal string alignment distance (Levenshtein with adjacent transpositions) after
   * normalizing, if that distance is at most max(2, a quarter of `key`'s length).
   *
   * Cost: at most (known keys) x (key length) x (known key length) steps, the key at most 100
   * characters (a longer one gets no suggestion, at no cost); usually far fewer (a candidate
   * too long or too short is skipped, a comparison past the cap stops early).
   */
  closest(key: string): string | undefined {
    if (key.length > MAX_SUGGESTED_KEY_LENGTH) return undefined;
    const k = normalize(key);
    // Only a strictly closer candidate replaces the best one, so ties keep the first.
    let bound = Math.max(2, Math.floor(key.length / 4));
    let best: string | undefined;
    for (let i = 0; i < this.normalized.length; i++) {
      const distance = boundedDistance(k, this.normalized[i] as string, bound);
      if (distance <= bound) {
        best = this.known[i];
        if (distance === 0) break;
        bound = distance - 1;
      }
    }
    return best;
  }
}

/**
 * The optimal string alignment distance of `a` and `b` if it is at most `bound`, else some
 * number above `bound`. Rows of the dynamic-programming table are kept three at a time
 * (a transposition looks two rows back).
 *
 * Early exit: a row's smallest value never falls below the smallest of the two rows before it
 * (a cell comes from the row above, from the cell to its left, or by a transposition from two
 * rows above, at +1), so once two consecutive rows are both above `bound`, the distance is.
 */
function boundedDistance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  const cols = b.length + 1;
  let before = new Array<number>(cols).fill(0);
  let prev = new Array<number>(cols);
  let row = new Array<number>(cols);
  for (let j = 0; j < cols; j++) prev[j] = j;
  let prevMin = 0;
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let rowMin = i;
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] as number) + 1);
      row[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > bound && prevMin > bound) return bound + 1;
    prevMin = rowMin;
    [before, prev, row] = [prev, row, before];
  }
  return prev[cols - 1] as number;
}

const AGENT_ONLY_KEYS = new Set(Object.keys(agentSchema.shape).filter((k) => !(LIMIT_KEYS as readonly string[]).includes(k)));

/**
 * The problem message of the unknown key `key` in the mapping at `path` (YAML path segments):
 * `unknown key `max_respons_bytes` (did you mean `max_response_bytes`?)`, or the place's
 * known keys when none is close, or, for an agent-only key in a per-tool block, where it can
 * be set. The key is shown JSON-escaped, at most 80 characters.
 */
export function unknownKeyMessage(key: string, path: readonly PropertyKey[]): string {
  const known = knownKeysAt(path) ?? [];
  const shown = JSON.stringify(key.slice(0, 80)).slice(1, -1);
  // Per-tool blocks take only limit keys: say so when an agent key lands there.
  const isTool = path.length === 4 && path[0] === 'agents' && path[2] === 'tools';
  if (isTool && AGENT_ONLY_KEYS.has(key)) return `unknown key \`${shown}\`: \`${key}\` can be set on the agent, not per tool`;
  const suggestion = new KeySuggester(known).closest(key);
  if (suggestion !== undefined) return `unknown key \`${shown}\` (did you mean \`${suggestion}\`?)`;
  return `unknown key \`${shown}\` (known keys: ${known.join(', ')})`;
}
