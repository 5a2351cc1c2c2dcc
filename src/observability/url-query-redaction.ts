/**
 * Agent URL query strings in log lines. An agent URL's query often holds a credential
 * (`https://seller.example/mcp?api_key=...`), and the seller gets it on every request. Two
 * rules keep it out of the log (observability/log-scrub.ts applies them to every string value
 * of every line a logger made by `createLogger` writes, decoded):
 *
 * 1. In a URL: wherever the agent's URL up to its query (`<origin><path>?`, as `href`
 *    writes it) appears, everything after the `?` up to the URL's end becomes `[redacted]`,
 *    whatever the parameters, their order, their values' lengths, the host's parameters
 *    merged in (routing/query.ts), or an earlier query of that URL (a reload changed it). The
 *    URL ends at a character a serialized http(s) query never holds unescaped (whitespace,
 *    `"`, `'`, `#`, `<`, `>`): `--check-config`'s `?[redacted]`. A `\` does not end it (a
 *    query may hold one as it is; in a decoded value it is no JSON escape).
 * 2. Anywhere: each `name=value` pair of the query as configured, and each value (as
 *    written, decoded, and re-encoded), like a header value: only those of
 *    `MIN_SCRUBBED_LENGTH` (8) characters or more, shorter ones being too likely to be
 *    ordinary text (`x=1`).
 *
 * Before, the whole query string as configured was the one value scrubbed: the same URL with
 * its parameters in another order, or one pair of it, went out as is (a new user's trial:
 * test/regressions/agent-url-query-secret-in-log.test.ts).
 */

/** Characters that end a URL in a log line's string value: none is in a serialized http(s) query unescaped (WHATWG special-query percent-encode set). */
const URL_END = /[\s"'#<>]/;

/**
 * The prefix that introduces `url`'s query in a serialized URL (`<origin><path>?`), or
 * undefined when it has no query.
 */
export function queryPrefixOf(url: URL): string | undefined {
  if (url.search === '') return undefined;
  return `${url.origin}${url.pathname}?`;
}

/**
 * The query's secret texts for rule 2 (before the length filter): each `name=value` pair as
 * written, each value as written, decoded (`+` as a space) and re-encoded
 * (`encodeURIComponent`). Empty when the URL has no query.
 */
export function querySecretTexts(url: URL): string[] {
  const out: string[] = [];
  for (const pair of url.search.slice(1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue; // a bare name is not a value
    const raw = pair.slice(eq + 1);
    out.push(pair, raw);
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw.replaceAll('+', ' '));
    } catch {
      continue; // a malformed escape: the raw text is all there is
    }
    out.push(decoded, encodeURIComponent(decoded));
  }
  return out;
}

/**
 * `line` with the query after each occurrence of `prefix` replaced by `replacement` (rule
 * 1). A prefix followed by nothing of a query (the URL ends at once) is left as it is.
 */
export function redactQueriesAfter(line: string, prefix: string, replacement: string): string {
  let out = '';
  let from = 0;
  for (let at = line.indexOf(prefix); at >= 0; at = line.indexOf(prefix, from)) {
    const start = at + prefix.length;
    const rest = line.slice(start);
    const end = rest.search(URL_END);
    const length = end < 0 ? rest.length : end;
    out += line.slice(from, start) + (length > 0 ? replacement : '');
    from = start + length;
  }
  return from === 0 ? line : out + line.slice(from);
}
