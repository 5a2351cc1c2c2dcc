/**
 * A seller's `Set-Cookie` values as the host gets them: rebuilt, scoped to its agent's route
 * (response/headers.ts filterResponseHeaders calls {@link scopeSetCookies}).
 *
 * The gateway is one origin for every seller. A seller's `Set-Cookie: sess=…; Path=/` was
 * stored by a host keeping cookies (Python's httpx and aiohttp clients do by default, and a
 * browser) for the whole gateway, so the host sent it with its requests to every other agent,
 * and the gateway forwarded it to those sellers: one seller's session cookie reached the others
 * (a new user's trial, 2026-12-03). Each cookie goes out scoped to `/agents/<name>/mcp`.
 *
 * By construction, not by blacklist: the host gets no byte of the seller's line it did not
 * read strictly. Each cookie is rebuilt from
 *
 * 1. the seller's `name=value`, only when it is an RFC 6265 §4.1.1 cookie-pair: the name an
 *    RFC 9110 token not starting with `$`, the value *cookie-octet, optionally in DQUOTEs (no
 *    control, whitespace, DQUOTE, comma, semicolon, backslash or non-ASCII byte); SP and HTAB
 *    around the pair and around its `=` are trimmed. A pair that is not one drops the whole
 *    cookie: the seller's cookie is not set, and the exchange line counts it
 *    (`cookies_dropped`). A `$` name is one Python's `SimpleCookie` and aiohttp read as an
 *    attribute (RFC 2109 `$Path`), not a cookie;
 * 2. then `; Path=/agents/<name>/mcp`, at once, so a client that stops reading early, or takes
 *    the first `Path` (Python's `http.cookiejar`, under requests and httpx), has it;
 * 3. then only the attributes the gateway understands, each with a strictly valid value, once
 *    (the seller's last one wins, as in RFC 6265 §5.3), written canonically in this order:
 *    `Expires` (read as browsers read a cookie date, RFC 6265 §5.1.1, and written as an
 *    IMF-fixdate, §4.1.1's sane-cookie-date: cookie-date.ts; one that does not read is dropped),
 *    `Max-Age` (`0` or a non-zero digit and at most 9 more digits, optionally after `-`),
 *    `Secure`, `HttpOnly`, `SameSite` (`Strict`, `Lax` or `None`, any case), `Partitioned`
 *    (the three flags without a value). Every other attribute is dropped: the seller's `Path`
 *    and `Domain` (a cookie without `Domain` is host-only, RFC 6265 §5.3), `$`-prefixed
 *    names, extension attributes (`Priority`, `Comment`, `Version`, ...), a known one with an
 *    invalid value, and any holding a byte other than printable ASCII, SP and HTAB.
 *
 * Why (hostile trial 30, H1): aiohttp (3.14, the default ClientSession jar) reads Set-Cookie as
 * Python's `SimpleCookie` does: whitespace separates items as `;` does, `$Path` sets the path,
 * the last `Path` wins, and reading stops silently at an item it cannot read (a lone `=`, a
 * `x=\`, a `Max-Age` with no value). The gateway kept the seller's pair and attributes as sent
 * and appended its `Path`, so `sid=S; $Path=/; x=\`, `sid=S Path=/ =` and
 * `sid=S evil=1 Path=/ Domain` were all stored at `/` (the last also planting `evil=1`) and
 * sent to every agent (test/regressions/seller-cookie-escapes-scope-in-aiohttp.test.ts).
 * Before it (hostile trial 28, M1): `sid=S; \x85Path=/`, read as `Path=/` by
 * `http.cookiejar`, which `str.strip()`s U+0085
 * (test/regressions/seller-cookie-path-hidden-by-nel-byte.test.ts). What goes out now is
 * `name=value; Path=…` and canonical attributes with no space but the one after each `;` (and
 * those inside an `Expires` date, which every one of these parsers reads as a date): each
 * client reads one cookie with the agent's path.
 *
 * `Secure` is kept only on a `__Secure-`/`__Host-` cookie, a `SameSite=None` one or a
 * `Partitioned` one (a browser refuses those without it, and takes `Secure` cookies from
 * `http://localhost` anyway). Why it goes otherwise: the host reaches the gateway over plain
 * HTTP; a cookie jar that keeps `Secure` cookies for HTTPS only (`http.cookiejar`) stored a
 * seller's `sid=A1; Secure` and never sent it back, so a sticky session broke (a new user's
 * trial, 2026-12-03, finding 3). A `__Host-` cookie (which must have `Path=/`) is then refused
 * by a browser rather than shared with every seller.
 */
import { cookieExpires } from './cookie-date.js';
import { trimOws } from './ows.js';

/** The path every cookie of agent `agentName`'s seller is scoped to: its route, `/agents/<name>/mcp` (app.ts). */
export function agentCookiePath(agentName: string): string {
  return `/agents/${agentName}/mcp`;
}

/**
 * The seller's `Set-Cookie` values (`value`, one or several lines) as the host gets them, each
 * rebuilt and scoped to `path` (see the module's comment); a line whose cookie-pair is not
 * strict is left out, so the result may be shorter, or empty.
 */
export function scopeSetCookies(value: string | readonly string[], path: string): string[] {
  const out: string[] = [];
  for (const line of typeof value === 'string' ? [value] : value) {
    const cookie = scopeSetCookie(line, path);
    if (cookie !== undefined) out.push(cookie);
  }
  return out;
}

/** One `Set-Cookie` line rebuilt, or undefined when its cookie-pair is not strict. */
export function scopeSetCookie(line: string, path: string): string | undefined {
  const semi = line.indexOf(';');
  const pair = COOKIE_PAIR.exec(semi === -1 ? line : line.slice(0, semi));
  if (pair === null) return undefined;
  const name = pair[1]!;
  let expires: string | undefined;
  let maxAge: string | undefined;
  let secure = false;
  let httpOnly = false;
  let sameSite: string | undefined;
  let partitioned = false;
  let at = semi;
  while (at !== -1) {
    const next = line.indexOf(';', at + 1);
    const attribute = next === -1 ? line.slice(at + 1) : line.slice(at + 1, next);
    at = next;
    // Only the names below are kept, each with a value read strictly (anchored patterns), so
    // no byte of any other attribute, odd or not, reaches the host.
    const eq = attribute.indexOf('=');
    const attrName = trimOws(eq === -1 ? attribute : attribute.slice(0, eq)).toLowerCase();
    const attrValue = eq === -1 ? undefined : trimOws(attribute.slice(eq + 1));
    switch (attrName) {
      case 'expires':
        if (attrValue !== undefined) expires = cookieExpires(attrValue) ?? expires;
        break;
      case 'max-age':
        if (attrValue !== undefined && MAX_AGE.test(attrValue)) maxAge = attrValue;
        break;
      case 'samesite': {
        const canonical = attrValue === undefined ? undefined : sameSiteValue(attrValue);
        if (canonical !== undefined) sameSite = canonical;
        break;
      }
      case 'secure':
        if (attrValue === undefined) secure = true;
        break;
      case 'httponly':
        if (attrValue === undefined) httpOnly = true;
        break;
      case 'partitioned':
        if (attrValue === undefined) partitioned = true;
        break;
      // Path, Domain and every other name: dropped.
    }
  }
  let out = `${name}=${pair[2]!}; Path=${path}`;
  if (expires !== undefined) out += `; Expires=${expires}`;
  if (maxAge !== undefined) out += `; Max-Age=${maxAge}`;
  if (secure && (sameSite === 'None' || partitioned || SECURE_PREFIX.test(name))) out += '; Secure';
  if (httpOnly) out += '; HttpOnly';
  if (sameSite !== undefined) out += `; SameSite=${sameSite}`;
  if (partitioned) out += '; Partitioned';
  return out;
}

/**
 * An RFC 6265 §4.1.1 cookie-pair, SP and HTAB around it and its `=` allowed: groups name (an
 * RFC 9110 token not starting with `$`) and value (*cookie-octet, or that in DQUOTEs). A
 * cookie-octet is %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E.
 */
const COOKIE_PAIR = /^[ \t]*([!#%&'*+\-.^_`|~0-9A-Za-z][!#$%&'*+\-.^_`|~0-9A-Za-z]*)[ \t]*=[ \t]*("[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"|[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*)[ \t]*$/;

/** `Max-Age`: `0`, or a non-zero digit and at most 9 more digits (~317 years), optionally after `-`. */
const MAX_AGE = /^-?(?:0|[1-9][0-9]{0,9})$/;

/** A `SameSite` value (`Strict`, `Lax`, `None`, read in any case) written canonically, or undefined for any other. */
function sameSiteValue(value: string): string | undefined {
  switch (value.toLowerCase()) {
    case 'strict':
      return 'Strict';
    case 'lax':
      return 'Lax';
    case 'none':
      return 'None';
    default:
      return undefined;
  }
}

/** Cookie names a browser takes only with `Secure` (`__Secure-`, `__Host-`; RFC 6265bis §4.1.3), matched as browsers do, in any case. */
const SECURE_PREFIX = /^__(secure|host)-/i;
