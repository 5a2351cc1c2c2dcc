/**
 * Scrubbing the config's secrets out of a finished log line (one JSON object, as pino writes
 * it, and its LF), inside its string values only.
 *
 * Why on the finished line: a secret can reach a line in any field and any form (an error's
 * message quoting a header, a seller's text or SSE event name, a host's tool name, a value
 * JSON-encoded inside another), and the line is the one place where every field, binding and
 * message has been serialized. Why inside string values: before, each secret was replaced as
 * text across the serialized line, so a configured value that also occurs in ordinary log text
 * rewrote it: `user-agent: "adcp-buyer-gateway"` blanked `service` in every line, and a value
 * holding JSON syntax (`'"outcome":"ok"'`) took a field out of the exchange line, which then did
 * not parse (a hostile new user's trial, F6: test/regressions/log-redaction-corrupts-lines.test.ts).
 *
 * The rules, for a line that holds a secret (or a URL prefix) at all:
 * - Only string values change: a member name, a number and JSON's syntax never do, so the line
 *   stays valid JSON whatever the configured values. A changed value is written back with
 *   `JSON.stringify` (the line's other bytes are kept as they were).
 * - A value is compared decoded (JSON escapes read), so a secret holding `"` or `\` is found as
 *   the line writes it, and a value holding a secret JSON-encoded (`{\"auth\":\"Bearer ...\"}`)
 *   is found by the secret's escaped form (`configSecrets` lists both).
 * - A value that is wholly public (`isPublic`: one of the gateway's own fixed texts,
 *   log-vocabulary.ts, or an agent name of the config) is left as it is, and so is pino's own
 *   `time` (the first members of a line are `"level":<n>,"time":"..."`).
 * - Inside any other value: the query after each URL prefix (`<origin><path>?`), to the URL's
 *   end, then each secret, longest first, is replaced (url-query-redaction.ts).
 * A line that is not JSON (never one pino writes) has each secret replaced as text instead.
 *
 * Cost: a line holding no secret's escaped form and no URL prefix (the common line) costs one
 * `indexOf` per secret and prefix, as before; one that does is walked from string to string
 * (`indexOf('"')`), and only the values holding a match are decoded and checked.
 */
import { redactQueriesAfter } from './url-query-redaction.js';

/** What a logger scrubs, in the form `scrubLogLine` reads (`compileScrubRules`). */
export interface ScrubRules {
  /** Texts replaced inside string values, longest first. */
  readonly secrets: readonly string[];
  /** URL prefixes (`<origin><path>?`) whose following query is replaced. */
  readonly queryPrefixes: readonly string[];
  /** Whether a whole string value is public, and so left as it is. */
  readonly isPublic: (value: string) => boolean;
  /** Each secret and prefix as a line writes it (JSON-escaped), once each: what a line is searched for. */
  readonly probes: readonly string[];
}

/** The texts of `secrets` and `queryPrefixes` as a JSON string writes them, for `scrubLogLine`. */
export function compileScrubRules(secrets: readonly string[], queryPrefixes: readonly string[], isPublic: (value: string) => boolean): ScrubRules {
  const probes = new Set<string>();
  for (const text of [...secrets, ...queryPrefixes]) if (text !== '') probes.add(JSON.stringify(text).slice(1, -1));
  return { secrets, queryPrefixes, isPublic, probes: [...probes] };
}

/** The start of a pino line up to its `time` value's opening quote. */
const PINO_TIME = /^\{"level":\d+,"time":"/;

/**
 * `line` with every secret of `rules` replaced by `replacement` inside its string values (the
 * module's rules), or `line` itself when none occurs.
 */
export function scrubLogLine(line: string, rules: ScrubRules, replacement: string): string {
  const hits = probeHits(line, rules.probes);
  if (hits === undefined) return line;
  const time = PINO_TIME.exec(line);
  const timeAt = time === null ? -1 : time[0].length - 1;
  let out = '';
  let copied = 0;
  let h = 0;
  for (let start = line.indexOf('"'); start >= 0 && h < hits.length; ) {
    const end = stringEnd(line, start);
    if (end < 0) return scrubText(line, rules, replacement);
    while (h < hits.length && (hits[h] as number) <= start) h++;
    // A value (not a member name: those are followed by `:`) holding a match.
    if (h < hits.length && (hits[h] as number) < end && line.charCodeAt(end + 1) !== 0x3a && start !== timeAt) {
      const raw = line.slice(start + 1, end);
      let value: string;
      try {
        value = raw.includes('\\') ? (JSON.parse(line.slice(start, end + 1)) as string) : raw;
      } catch {
        return scrubText(line, rules, replacement);
      }
      if (!rules.isPublic(value)) {
        const scrubbed = scrubText(value, rules, replacement);
        if (scrubbed !== value) {
          out += line.slice(copied, start) + JSON.stringify(scrubbed);
          copied = end + 1;
        }
      }
    }
    start = line.indexOf('"', end + 1);
  }
  return copied === 0 ? line : out + line.slice(copied);
}

/** The offsets where a probe starts in `line`, in order; undefined when none does. */
function probeHits(line: string, probes: readonly string[]): number[] | undefined {
  let hits: number[] | undefined;
  for (const probe of probes) {
    for (let at = line.indexOf(probe); at >= 0; at = line.indexOf(probe, at + 1)) (hits ??= []).push(at);
  }
  if (hits !== undefined && hits.length > 1) hits.sort((a, b) => a - b);
  return hits;
}

/** The offset of the quote closing the JSON string opened at `start`, or -1 when it is not closed. */
function stringEnd(line: string, start: number): number {
  for (let from = start + 1; ; ) {
    const quote = line.indexOf('"', from);
    if (quote < 0) return -1;
    let before = quote - 1;
    while (line.charCodeAt(before) === 0x5c) before--;
    if ((quote - 1 - before) % 2 === 0) return quote; // not escaped: an even run of backslashes
    from = quote + 1;
  }
}

/** `text` with each URL prefix's query, then each secret, replaced by `replacement`. */
function scrubText(text: string, rules: ScrubRules, replacement: string): string {
  let out = text;
  for (const prefix of rules.queryPrefixes) if (out.includes(prefix)) out = redactQueriesAfter(out, prefix, replacement);
  for (const secret of rules.secrets) if (out.includes(secret)) out = out.replaceAll(secret, replacement);
  return out;
}
