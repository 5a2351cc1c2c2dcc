/**
 * DNS rebinding: which `Origin` and `Host` headers the MCP endpoint serves. Pure functions, no
 * allocation on the paths every request takes (a header read and a few character comparisons:
 * no `Origin`, and a `Host` that names a loopback address).
 *
 * Why both headers:
 * - `Origin`: MCP Streamable HTTP, Security Warning ("Servers MUST validate the Origin header
 *   on all incoming connections to prevent DNS rebinding attacks"). A browser sends it on a
 *   cross-origin request and on every POST; buyer agents and SDK clients send none.
 * - `Host`: after DNS rebinding a page at `http://rebind.evil.example:8790` is same-origin
 *   with the gateway, and a same-origin GET carries no `Origin`; its `Host` still names the
 *   page's host. MCP "Security Best Practices" (local MCP server compromise, DNS rebinding) and
 *   the TypeScript SDK's `hostHeaderValidation` protect a server on localhost by accepting
 *   only `localhost`, `127.0.0.1` and `[::1]` in `Host`. Reported failure:
 *   test/regressions/dns-rebinding-host-get-uses-credentials.test.ts.
 *
 * - `Sec-Fetch-Site`: a cross-site GET a page makes without CORS (an `<img>`, a link) carries
 *   no `Origin` and a loopback `Host`, and a page on another loopback port has a loopback
 *   `Origin`; the browser still says where it comes from ({@link isOtherSiteFetch}).
 * - `Content-Type`: a browser without Fetch Metadata still cannot label a blind POST as JSON
 *   ({@link isJsonContentType}).
 *
 * A loopback name (`localhost`, `127.0.0.1`, `[::1]`) in either header cannot come from DNS
 * rebinding: the rebound page's URL, and so its `Host` and `Origin`, carry the attacker's
 * host name; only a page the buyer's own machine serves on a loopback address has a loopback
 * origin (test/regressions/conformance-dns-rebinding-localhost-origin.test.ts).
 */
import { SPACE, TAB } from '../mcp/json-bytes.js';

/** `;` */
const SEMICOLON = 0x3b;

/**
 * Whether a `Sec-Fetch-Site` request header value says a browser sent the request for a page
 * of another site (`cross-site`) or of another origin of this site (`same-site`): Fetch
 * Metadata (W3C), which every current browser sends on every request. `same-origin` (the
 * gateway's own pages, which it has none of) and `none` (a typed URL, a bookmark) are not;
 * neither is an absent header (buyer agents and SDK clients send none). Values are compared
 * as browsers write them, lower case. One or two string comparisons, no allocation.
 *
 * Why (a new user's trial, 2026-12-03): a cross-site `<img>` GET carries no `Origin` (a
 * no-cors GET has none) and a loopback `Host`, so neither check applied and it was forwarded
 * with the agent's configured credentials. Such a request is refused 403 `origin_not_allowed`
 * (request/head-refusal.ts; test/regressions/cross-site-get-no-origin-uses-credentials.test.ts),
 * whatever its `Origin`: a page on another loopback port (`http://127.0.0.1:9101`, labelled
 * `same-site`; `http://[::1]:9102`, `cross-site`) has a loopback one, and its blind POSTs were
 * forwarded (hostile trial 33, F1: test/regressions/loopback-page-blind-post-calls-tool.test.ts).
 */
export function isOtherSiteFetch(site: string | string[] | undefined): site is 'cross-site' | 'same-site' {
  return site === 'cross-site' || site === 'same-site';
}

/**
 * Whether a request's `Content-Type` value labels JSON: the media type `application/json`
 * (letters in any case), alone or followed by parameters (`; charset=utf-8`) after optional
 * whitespace. Not absent, not `text/plain; x=application/json`, not `application/jsonx`, not
 * `application/json garbage` (no media type: Fastify refuses it, and the gateway reads it as
 * none: request/unreadable-content-type.ts).
 *
 * Why: a page can send a POST without a CORS preflight only with no `Content-Type` or one whose
 * media type is `text/plain`, `application/x-www-form-urlencoded` or `multipart/form-data`
 * (Fetch, "CORS-safelisted request-header"); any JSON label needs the preflight the gateway
 * never answers. So a POST carrying an `Origin` and no JSON label comes from a page that cannot
 * read the answer (head-refusal.ts). Reported failure (hostile trial 33, F1): a page on
 * `http://127.0.0.1:9101` sent `tools/call` as `text/plain` with `fetch(..., { mode: 'no-cors' })`,
 * a form and `sendBeacon`; the gateway forwarded them with the agent's configured credentials
 * (test/regressions/loopback-page-blind-post-calls-tool.test.ts).
 */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined || !matchesAt(value, 0, 'application/json')) return false;
  let at = 16;
  while (value.charCodeAt(at) === SPACE || value.charCodeAt(at) === TAB) at++;
  // End (NaN past it) or `;`, after optional whitespace: not `application/json garbage`.
  const next = value.charCodeAt(at);
  return Number.isNaN(next) || next === SEMICOLON;
}

/** `[` */
const OPEN_BRACKET = 0x5b;
/** `:` */
const COLON = 0x3a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const UPPER_A = 0x41;
const UPPER_Z = 0x5a;
/** Highest TCP port. */
const MAX_PORT = 65_535;

/**
 * Where the host name of an authority `host[:port]` that starts at `start` of `value` ends
 * (the index of its `:`, or `value.length`), or -1 when it is not one: an IPv6 literal without
 * its `]`, or a port part that is not `:` and 1 to 5 digits up to 65535. A bracketed host ends
 * after its `]`; any other ends at the first `:`. What follows the authority is not allowed
 * (a path makes the whole of it the host name, which then matches nothing).
 */
export function hostNameEnd(value: string, start: number): number {
  let end: number;
  if (value.charCodeAt(start) === OPEN_BRACKET) {
    const close = value.indexOf(']', start);
    if (close === -1) return -1;
    end = close + 1;
  } else {
    end = value.indexOf(':', start);
    if (end === -1) return value.length;
  }
  if (end === value.length) return end;
  if (value.charCodeAt(end) !== COLON) return -1;
  const digits = value.length - end - 1;
  if (digits < 1 || digits > 5) return -1;
  let port = 0;
  for (let i = end + 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < DIGIT_0 || c > DIGIT_9) return -1;
    port = port * 10 + (c - DIGIT_0);
  }
  return port > MAX_PORT ? -1 : end;
}

/** Whether `value` from `start` is `lower` (a lower-case ASCII string), letters compared case-insensitively. */
function matchesAt(value: string, start: number, lower: string): boolean {
  if (value.length - start < lower.length) return false;
  for (let i = 0; i < lower.length; i++) {
    let c = value.charCodeAt(start + i);
    if (c >= UPPER_A && c <= UPPER_Z) c += 0x20;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Whether the authority `host[:port]` at `start` of `value` names a loopback host: `localhost`
 * (any letter case), `127.0.0.1` or `[::1]`, with no port or any port (1 to 5 digits, at most
 * 65535). The names the MCP TypeScript SDK's `localhostHostValidation` accepts; nothing else
 * (not `127.0.0.2`, `[0:0:0:0:0:0:0:1]`, `localhost.`): no browser writes those for a page the
 * buyer's machine serves at `http://localhost` or `http://127.0.0.1`.
 */
export function isLoopbackAuthority(value: string, start: number): boolean {
  const end = hostNameEnd(value, start);
  const length = end - start;
  if (length === 9) return matchesAt(value, start, 'localhost') || value.startsWith('127.0.0.1', start);
  return length === 5 && value.startsWith('[::1]', start);
}

/**
 * Whether an `Origin` header value is the origin of a page served on a loopback name:
 * `http://` or `https://`, then a loopback authority ({@link isLoopbackAuthority}), nothing
 * after it (origins have no path). E.g. `http://localhost:6274` (the MCP Inspector),
 * `http://127.0.0.1:8787`, `https://[::1]`. Not `null` (an opaque origin: a sandboxed frame, a
 * `file:` page). Accepted by default beside `allowed_origins`: DNS rebinding cannot produce
 * such an origin (the rebound page's origin carries the attacker's host name).
 */
export function isLoopbackOrigin(origin: string): boolean {
  const start = origin.startsWith('http://') ? 7 : origin.startsWith('https://') ? 8 : 0;
  return start !== 0 && isLoopbackAuthority(origin, start);
}

/**
 * Whether the gateway listening on `listenHost` (`listen.host`, as configured) listens on a
 * loopback address only, and so checks `Host` by default: `localhost` (also with a trailing
 * dot, and any `*.localhost` name, which RFC 6761 §6.3 reserves for loopback), an IPv4 address
 * in 127.0.0.0/8, or `::1` (any spelling, and `::ffff:127.x.y.z`). A wildcard (`0.0.0.0`,
 * `::`), another address or another host name is not loopback: its `Host` is checked only
 * when `allowed_hosts` is not empty. Read once, at start-up (`listen` needs a restart).
 */
export function isLoopbackListenHost(listenHost: string): boolean {
  const bare = listenHost.replace(/^\[(.*)\]$/, '$1');
  let host: string;
  try {
    // Canonical: lower case, IPv4 shorthand (127.1) and IPv6 spellings written out one way.
    host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return false; // e.g. an IPv6 address with a zone id, which a URL does not take
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host === 'localhost' || host.endsWith('.localhost') || LOOPBACK_IPV4.test(host) || host === '[::1]' || LOOPBACK_IPV4_MAPPED.test(host);
}

/** 127.0.0.0/8, as a URL writes an IPv4 address. */
const LOOPBACK_IPV4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
/** `::ffff:127.x.y.z`, as a URL writes it (`[::ffff:7f00:1]`). */
const LOOPBACK_IPV4_MAPPED = /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/;

/**
 * Whether `host` (a `Host` header value) is listed in `allowedHosts` (`allowed_hosts`: lower
 * case, each `name` or `name:port`, validated by the config schema). An entry without a port
 * matches its name with any port or none; one with a port matches only that port. Names are
 * compared case-insensitively. A `Host` whose port part is malformed matches nothing.
 */
export function isListedHost(host: string, allowedHosts: readonly string[]): boolean {
  const end = hostNameEnd(host, 0);
  if (end === -1) return false;
  for (let i = 0; i < allowedHosts.length; i++) {
    const entry = allowedHosts[i] as string;
    if (entry.length === host.length ? matchesAt(host, 0, entry) : entry.length === end && hostNameEnd(entry, 0) === entry.length && matchesAt(host, 0, entry)) return true;
  }
  return false;
}

/**
 * Whether a request with this `Host` header is served (the MCP endpoint's check, before any
 * seller is contacted; refused otherwise with 403 `host_not_allowed`):
 * - no `Host` (HTTP/1.0; HTTP/1.1 without one is refused 400 `malformed_http` on its own):
 *   served. Every browser sends `Host`; a client that can leave it out could as well send an
 *   allowed one.
 * - `loopbackListen` false and `allowedHosts` empty (the gateway listens on `0.0.0.0`, a pod
 *   IP...: it is meant to be reached under names it cannot know): served, unchecked.
 * - otherwise: a loopback name ({@link isLoopbackAuthority}) or a listed host
 *   ({@link isListedHost}).
 */
export function isHostAllowed(host: string | undefined, loopbackListen: boolean, allowedHosts: readonly string[], ownHosts: readonly string[] = []): boolean {
  if (host === undefined) return true;
  if (!loopbackListen && allowedHosts.length === 0) return true;
  return isLoopbackAuthority(host, 0) || isListedHost(host, allowedHosts) || isListedHost(host, ownHosts);
}

/**
 * The `Host` names a gateway listening on `listenHost` serves besides the loopback names
 * ({@link isHostAllowed} `ownHosts`): the listen address itself, as a client writes it in
 * `Host` (lower case, an IPv6 address in brackets), when it is a loopback address the
 * loopback names do not cover (`127.0.0.2`, `my.localhost`); none otherwise. Found by a new
 * user's trial (2026-12-03, finding 5): `listen.host: 127.0.0.2` was taken as loopback, so
 * `Host` was checked, and `Host: 127.0.0.2:8787`, what its own clients send, was refused.
 */
export function ownListenHosts(listenHost: string): readonly string[] {
  if (!isLoopbackListenHost(listenHost)) return [];
  const bare = listenHost.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const written = bare.includes(':') ? `[${bare}]` : bare.endsWith('.') ? bare.slice(0, -1) : bare;
  return isLoopbackAuthority(written, 0) ? [] : [written];
}

/**
 * The authority of an absolute-form request target (`POST http://evil.example/agents/a/mcp`),
 * which stands for the request's host in place of its `Host` field (RFC 9112 §3.2.2: a server
 * MUST ignore `Host` then); undefined for the usual origin-form (`/agents/a/mcp`). A new
 * user's trial (2026-12-03, finding 4): such a request with `Host: localhost` was served.
 */
export function absoluteFormAuthority(target: string): string | undefined {
  if (target.charCodeAt(0) === 0x2f /* / */) return undefined;
  const scheme = target.indexOf('://');
  if (scheme === -1) return undefined;
  const start = scheme + 3;
  let end = target.length;
  for (let i = start; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 0x2f /* / */ || c === 0x3f /* ? */ || c === 0x23 /* # */) {
      end = i;
      break;
    }
  }
  return target.slice(start, end);
}
