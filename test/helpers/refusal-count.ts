/**
 * The gateway's refusal count for one reason (`adcp_gateway_refusals_total{reason}`), read
 * from its Prometheus text exposition: what the regression tests of refusals check moved by
 * exactly one per refused request.
 */

/** The counter's value for `reason` in a `/metrics` text; 0 when the series is absent (never incremented). */
export function refusalCountIn(metricsText: string, reason: string): number {
  const line = metricsText.split('\n').find((l) => l.startsWith(`adcp_gateway_refusals_total{reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** The counter's value for `reason` as the gateway at `baseUrl` serves it on `/metrics`. */
export async function refusalCount(baseUrl: string, reason: string): Promise<number> {
  return refusalCountIn(await (await fetch(`${baseUrl}/metrics`)).text(), reason);
}
