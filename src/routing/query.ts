/**
 * The query string the seller gets when the agent's configured URL has one.
 *
 * @fastify/reply-from forwards the host's query string only when the target URL has none:
 * an agent URL with a query (`https://seller.example/mcp?key=...`, often a credential)
 * silently dropped every parameter of the host's (found by a new user's trial). Here both go:
 * the agent's parameters first, as configured, then each of the host's whose name a seller
 * may read as one the agent's URL sets (`sellerReadName`) is dropped (the config wins, as an
 * agent header replaces the host's header of the same name: ARCHITECTURE §5), the others
 * follow in the host's order.
 *
 * Cost: only an agent URL with a query calls `mergeQuery` (routing/handler.ts), and a host
 * request without a query returns at once; the agent URL's read names are kept per query
 * string (AGENT_NAMES).
 */

/**
 * The name a common server reads for a query parameter named `name` (decoded), for comparing
 * names as sellers do, not as written. Reported failure (a hostile new user's trial 11, F3):
 * only the exact spelling of a configured name was dropped, so `API_KEY` and `api.key` from
 * the host reached the seller beside the agent URL's `api_key`
 * (test/regressions/query-credential-case-variant-reaches-seller.test.ts). The rules:
 *
 * - PHP (php-src main/php_variables.c, php_register_variable_ex, the reading of `$_GET`):
 *   leading spaces are dropped; a space or `.` reads as `_`; a name with `[` followed later by
 *   `]` is an array under the part before the first `[` (`api_key[]`, `api_key[x]` set
 *   `$_GET['api_key']`), so that part is the name; a `[` with no `]` after it reads as `_`,
 *   as do each space, `.` and `[` after it (`api[key` is `api_key`).
 * - ASP.NET (`Request.QueryString`, names compared case-insensitively, the values of equal
 *   names joined with a comma): ASCII letters are lower-cased. Non-ASCII letters are left as
 *   written.
 *
 * Both apply to every name at once, so `API.KEY` reads as `api_key` though no one server
 * reads it so: a host has no reason to send a name a seller may confuse with the agent's
 * credential.
 *
 * @param name a decoded query parameter name (`URLSearchParams` key)
 * @returns the name lower-cased (ASCII) after PHP's reading, e.g. `"API.KEY[0]"` -> `"api_key"`
 */
export function sellerReadName(name: string): string {
  let read = name;
  let start = 0;
  while (read.charCodeAt(start) === 0x20) start++;
  if (start > 0) read = read.slice(start);
  const bracket = read.indexOf('[');
  if (bracket >= 0 && read.indexOf(']', bracket + 1) !== -1) read = read.slice(0, bracket);
  return read.replace(PHP_UNDERSCORED, '_').replace(ASCII_UPPER, lowerCase);
}

/** The characters PHP reads as `_` in a name (once any array part is cut off). */
const PHP_UNDERSCORED = /[ .[]/g;
const ASCII_UPPER = /[A-Z]+/g;
const lowerCase = (s: string): string => s.toLowerCase();

/**
 * The read names (`sellerReadName`) of an agent URL query's parameters, by the query string;
 * cleared when it holds AGENT_NAMES_MAX (configs, reloads included, hold few agent URLs).
 */
const AGENT_NAMES = new Map<string, ReadonlySet<string>>();
const AGENT_NAMES_MAX = 256;

function agentReadNames(agentQuery: string): ReadonlySet<string> {
  let names = AGENT_NAMES.get(agentQuery);
  if (names === undefined) {
    names = new Set(Array.from(new URLSearchParams(agentQuery).keys(), sellerReadName));
    if (AGENT_NAMES.size >= AGENT_NAMES_MAX) AGENT_NAMES.clear();
    AGENT_NAMES.set(agentQuery, names);
  }
  return names;
}

/**
 * @param agentSearch the agent URL's `search` (`?a=1`; reply-from passes the target URL's)
 * @param hostUrl the host's request URL (`/agents/acme/mcp?b=2`)
 * @returns the query without its `?` (as reply-from's `queryString` function returns it): the
 *   agent's as configured, then the host's parameters whose read name is none of the agent's,
 *   re-encoded (`application/x-www-form-urlencoded`, as `URLSearchParams` writes them)
 */
export function mergeQuery(agentSearch: string | undefined, hostUrl: string): string {
  const agentQuery = agentSearch?.startsWith('?') === true ? agentSearch.slice(1) : (agentSearch ?? '');
  const q = hostUrl.indexOf('?');
  if (q < 0 || q === hostUrl.length - 1) return agentQuery;
  const agentNames = agentReadNames(agentQuery);
  const extra = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(hostUrl.slice(q + 1))) {
    if (!agentNames.has(sellerReadName(name))) extra.append(name, value);
  }
  const hostQuery = extra.toString();
  if (hostQuery === '') return agentQuery;
  return agentQuery === '' ? hostQuery : `${agentQuery}&${hostQuery}`;
}
