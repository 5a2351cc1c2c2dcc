/**
 * The `ops_listen` listener's browser and DNS-rebinding check: the MCP endpoint's own rule
 * (request/head-refusal.ts `headRefusal`), with the ops listener's address in place of
 * `listen.host`:
 * - `Host` (or an absolute-form target's authority) checked when `ops_listen.host` is a loopback
 *   address or `allowed_hosts` is not empty: served when it is `localhost`, `127.0.0.1` or
 *   `[::1]` (any port or none), listed in `allowed_hosts`, or the ops listener's own loopback
 *   address (`127.0.0.2`), or an IP address literal (`10.1.2.3:9464`, `[fd00::5]`: what a
 *   Kubernetes probe or a Prometheus scrape by pod IP sends; DNS rebinding always carries a
 *   host name, so serving literals weakens nothing); else 403 `host_not_allowed`. More than
 *   one `Host` field: 400 `malformed_http`, the connection closed.
 * - `Origin` not loopback nor in `allowed_origins`, any `Origin` not listed on a GET, and
 *   `Sec-Fetch-Site: cross-site | same-site`: 403 `origin_not_allowed`.
 * Every refusal id null, logged (`refused`, agent null) and counted under `agent="_none"`, as
 * any refusal on that listener. `allowed_hosts` and `allowed_origins` are read per request
 * (a reload applies at once); whether `Host` is checked follows `ops_listen.host` as at
 * start-up. The ops endpoints on the main listener (no `ops_listen`) are not checked: README,
 * "Browsers and DNS rebinding".
 *
 * Source: a hostile operator's trial 53, F4: `curl -H 'Host: rebind.evil.example:18788'
 * http://127.0.0.1:18788/metrics` answered 200 with the agents' names, the ops port checking
 * neither `Host` nor `Origin` (test/regressions/ops-listen-metrics-dns-rebinding.test.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { GatewayConfig } from '../config/types.js';
import { isIP } from 'node:net';
import { absoluteFormAuthority, hostNameEnd, isLoopbackListenHost, ownListenHosts } from '../request/browser-guard.js';
import { headRefusal, type HeadRefusal } from '../request/head-refusal.js';

/** A request head's refusal on the ops listener bound to `opsHost` (`ops_listen.host`), or undefined (served); `config` gives the config in force. */
export type OpsHeadCheck = (req: IncomingMessage) => HeadRefusal | undefined;

export function opsHeadCheck(opsHost: string, config: () => GatewayConfig): OpsHeadCheck {
  const loopbackListen = isLoopbackListenHost(opsHost);
  const ownHosts = ownListenHosts(opsHost);
  // `agentKnown` false: no agent on this listener, so an HTTP/1.1 head without Host is served as before.
  return (req) => {
    const refusal = headRefusal(req, config(), false, loopbackListen, ownHosts);
    if (refusal?.reason === 'host_not_allowed' && isIpLiteralAuthority(absoluteFormAuthority(req.url ?? '/') ?? req.headers.host)) return undefined;
    return refusal;
  };
}

/** Whether `authority` (`host[:port]`) names its host by an IPv4 or a bracketed IPv6 literal. */
export function isIpLiteralAuthority(authority: string | undefined): boolean {
  if (authority === undefined) return false;
  const end = hostNameEnd(authority, 0);
  if (end <= 0) return false;
  const bracketed = authority.charCodeAt(0) === 0x5b; /* [ */
  return bracketed ? isIP(authority.slice(1, end - 1)) === 6 : isIP(authority.slice(0, end)) === 4;
}
