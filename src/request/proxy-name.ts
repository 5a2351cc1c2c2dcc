/**
 * The proxy header family, never passed either way (request/headers.ts isStrippedRequestHeader,
 * response/headers.ts isStrippedResponseHeader): `Proxy-*` names (the proxy hop's: RFC 9110
 * §11.7, `Proxy-Connection`, `Proxy-Status` of RFC 9209), and the names that only look like
 * them, `Proxy` and `Proxy_*`, which CGI and WSGI read as the same variables:
 *
 * - `Proxy: http://evil:8080` becomes `HTTP_PROXY` there (RFC 3875 §4.1.18: `HTTP_` and the
 *   name upper-cased, `-` as `_`), the variable many HTTP clients take as their proxy
 *   ("httpoxy", CVE-2016-5385 and siblings): a seller (or a host behind such a layer) would
 *   send its own outbound requests through the sender's proxy;
 * - `Proxy_Authorization` becomes `HTTP_PROXY_AUTHORIZATION`, as `Proxy-Authorization` does:
 *   the stripped header under another spelling.
 *
 * Reported failure (hostile trial 30, L3): a host's `Proxy: p` and `Proxy_Foo: u` reached the
 * seller, and a seller's `Proxy: c` and `Proxy_Foo: d` the host
 * (test/regressions/proxy-lookalike-headers-pass.test.ts).
 */

/** The family's name, and its first letter (`p`), which callers compare before calling {@link isProxyFamilyName}. */
export const PROXY = 'proxy';
export const PROXY_FIRST = PROXY.charCodeAt(0);
const DASH = 0x2d;
const UNDERSCORE = 0x5f;

/** Whether the header name `name` (lowercase) is `proxy` or starts with `proxy-` or `proxy_`. */
export function isProxyFamilyName(name: string): boolean {
  if (!name.startsWith(PROXY)) return false;
  if (name.length === PROXY.length) return true;
  const next = name.charCodeAt(PROXY.length);
  return next === DASH || next === UNDERSCORE;
}
