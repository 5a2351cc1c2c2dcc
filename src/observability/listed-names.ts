/**
 * Lists of names in a log line, bounded: the `gateway started` and `config reloaded` lines
 * listed every agent, ~97 KB with 12,000 agents, which Docker's json-file log driver splits
 * into 16 KB pieces, so a log shipper no longer reads one JSON line (a hostile new operator's
 * trial 45, Info: test/regressions/startup-log-lists-every-agent.test.ts).
 */

/** Names a log line lists in one field: the first ones, in order. */
export const MAX_LISTED_NAMES = 50;

/**
 * `{ [field]: the first MAX_LISTED_NAMES names }`, and `{ [field]_more: how many more }` when
 * there are more (absent otherwise).
 */
export function listedNames(field: string, names: readonly string[]): Record<string, string[] | number> {
  const out: Record<string, string[] | number> = { [field]: names.slice(0, MAX_LISTED_NAMES) };
  if (names.length > MAX_LISTED_NAMES) out[`${field}_more`] = names.length - MAX_LISTED_NAMES;
  return out;
}
