/**
 * The query string the seller gets when the agent's configured URL has one.
 *
 * @fastify/reply-from forwards the host's query string only when the target URL has none:
 * an agent URL with a query (`https://seller.example/mcp?key=...`, often a credential)
 * silently dropped every parameter of the host's (found by a new user's trial). Here both go:
 * the agent's parameters first, as configured, then each of the host's whose name the agent's
 * URL does not set (the config wins, as an agent header replaces the host's header of the
 * same name: ARCHITECTURE §5).
 *
 * @param agentSearch the agent URL's `search` (`?a=1`; reply-from passes the target URL's)
 * @param hostUrl the host's request URL (`/agents/acme/mcp?b=2`)
 * @returns the query without its `?` (as reply-from's `queryString` function returns it)
 */
export function mergeQuery(agentSearch: string | undefined, hostUrl: string): string {
  const agentQuery = agentSearch?.startsWith('?') === true ? agentSearch.slice(1) : (agentSearch ?? '');
  const q = hostUrl.indexOf('?');
  if (q < 0 || q === hostUrl.length - 1) return agentQuery;
  const agentNames = new Set(new URLSearchParams(agentQuery).keys());
  const extra = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(hostUrl.slice(q + 1))) {
    if (!agentNames.has(name)) extra.append(name, value);
  }
  const hostQuery = extra.toString();
  if (hostQuery === '') return agentQuery;
  return agentQuery === '' ? hostQuery : `${agentQuery}&${hostQuery}`;
}
