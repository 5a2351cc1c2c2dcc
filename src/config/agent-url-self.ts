/**
 * Whether an agent `url` names the gateway itself: its host and port are one of the gateway's
 * own listeners (`listen`, `ops_listen`), in any spelling a connection takes to the same
 * socket (listen-overlap.ts `urlReachesListener`: `localhost` and `127.0.0.1`,
 * `[::ffff:127.0.0.1]`, `127.1`, `[::1]` where the listener takes it, a wildcard on either
 * side). Read from the strings alone: no DNS or interface lookup. A listener on port 0 (any
 * free port) is skipped: its port is known only once it listens, and the runtime loop check
 * covers it (request/via.ts), as it covers a DNS name, a proxy or a port forward that leads
 * back.
 *
 * Reported failure (a hostile new user's trial 10, F4): `listen.port: P` with an agent
 * `url: http://127.0.0.1:P/agents/acme/mcp` (the host's URL pasted into the seller field)
 * passed `--check-config`, and one host call then recursed through the gateway about 10,000
 * times, one socket and one exchange line per hop, until connections failed
 * (test/regressions/agent-url-loops-to-gateway.test.ts).
 */
import { urlReachesListener, type ListenerReach } from './listen-overlap.js';

/** One of the gateway's listeners as the config writes it. */
export interface OwnListener {
  /** The config key: `listen` or `ops_listen`. */
  readonly key: 'listen' | 'ops_listen';
  readonly host: string;
  /** 1 .. 65535 (port 0 is never given: see the file comment). */
  readonly port: number;
  /** Whether the port is the built-in default (not written in the file). */
  readonly portIsDefault: boolean;
  /**
   * A listener the running gateway has (a reload: its start-up host and the port it got),
   * not one the file writes: a change of `listen` or `ops_listen` applies only after a
   * restart, so until then a url naming the running one loops (a hostile trial 45, L4).
   */
  readonly running?: boolean;
}

/** What the url's host is, by how it reaches the listener `key` (hosts are never echoed: they may come from `${VAR}`). */
const HOST_IS: Record<ListenerReach, (key: string) => string> = {
  same_host: (key) => `its host is ${key}.host`,
  same_address: (key) =>
    `its host takes the same address as ${key}.host (localhost is 127.0.0.1 and ::1; an IPv4-mapped IPv6 address ::ffff:a.b.c.d is a.b.c.d)`,
  url_wildcard: () => "its host is a wildcard address (0.0.0.0 or ::), which a connection takes as this machine's loopback (127.0.0.1 or ::1)",
  listen_wildcard: (key) => `its host is a loopback address, which ${key}.host, a wildcard address (0.0.0.0 or ::), takes too`,
};

/**
 * The problem of an agent url (`text`, after `${VAR}` expansion) that names one of
 * `listeners` (the first it names, in order), or undefined: when it names none, or is no http(s) URL the parser reads (the
 * schema reports that). The url's port is its written one, else 80 for `http:` and 443 for
 * `https:`. Never echoes the url (it may hold a credential). Never throws.
 */
export function agentUrlSelfProblem(text: string, listeners: readonly OwnListener[]): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  for (const listener of listeners) {
    if (listener.port !== port) continue;
    const reach = urlReachesListener(listener.host, url.hostname);
    if (reach === undefined) continue;
    const key = listener.running === true ? `the running ${listener.key}` : listener.key;
    const portText =
      listener.running === true
        ? `${listener.port}; a change of ${listener.key} applies only after a restart`
        : `${listener.port}${listener.portIsDefault ? ', the default' : ''}`;
    const what = `its port is ${key}.port (${portText}) and ${HOST_IS[reach](key)}`;
    return listener.key === 'listen'
      ? `is the gateway's own listen address, so each call would come back to the gateway and be forwarded to it again, in a loop, ` +
          `until connections run out: ${what}; set the seller's MCP endpoint here, not the gateway's`
      : `is the gateway's own ops_listen address, which serves /healthz, /readyz and /metrics, not MCP: ${what}; ` +
          "set the seller's MCP endpoint here, not the gateway's";
  }
  return undefined;
}
