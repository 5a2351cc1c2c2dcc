/**
 * Whether `listen.host` and `ops_listen.host` take a common address (on the same port, the
 * second listener fails with EADDRINUSE), and whether an agent url's host reaches one of those
 * listeners (`urlReachesListener`: agent-url-self.ts), read from the strings alone: no DNS lookup.
 *
 * Each host is reduced to the addresses it binds:
 * - an IP address in any spelling, to its canonical form: IPv6 as a URL writes it
 *   (`0:0:0:0:0:0:0:1` is `::1`, brackets dropped); IPv4 as WHATWG URL parsing reads it, the
 *   way `getaddrinfo`'s `inet_aton` does (`127.1` and `0x7f.0.0.1` are `127.0.0.1`); an
 *   IPv4-mapped IPv6 address as its IPv4 address (`::ffff:127.0.0.1` and `::ffff:7f00:1` are
 *   `127.0.0.1`: Linux refuses the second bind of the pair);
 * - `localhost` (any case, with or without the root's trailing dot), to both loopback
 *   addresses, `127.0.0.1` and `::1`: Fastify listens on every address `localhost` resolves to
 *   (lib/server.js, multipleBindings), which on a usual system is both. Counting both even
 *   where one is missing reports a port shared with one of them, which would otherwise fail
 *   at start or leave the second listener off it;
 * - any other host name, to itself (lower case): looking it up would need DNS, and the
 *   config check stays offline;
 * - `0.0.0.0` and `::` (any spelling), to "every address": they share the port with any host.
 *
 * Reported failure: `listen` 127.0.0.1:P with `ops_listen` `localhost:P` or
 * `::ffff:127.0.0.1:P` passed `--check-config`, then the gateway failed at start-up with
 * EADDRINUSE (a new user's trial 9, F7;
 * test/regressions/ops-listen-same-address-spelled-differently.test.ts).
 */
import { isIP } from 'node:net';

/** How two listen hosts overlap: one a wildcard, both the same text once canonical, or a common address. */
export type ListenOverlap = 'same_host' | 'first_wildcard' | 'second_wildcard' | 'same_address';

const LOOPBACK = ['127.0.0.1', '::1'] as const;
const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;
/** What may spell an IPv4 address (`127.1`, `0x7f.1`, `2130706433`): digits, hex digits, `x` and dots. */
const IPV4_SPELLING = /^[0-9a-fx.]+$/;

/**
 * How the hosts `first` and `second` overlap, or undefined when they take no common address.
 * Both are strings as the config gives them (a host name, an IP address, an IPv6 address in
 * brackets or not). `same_host`: the same text once lower-cased, unbracketed and, for IPv6,
 * canonical (`::1` and `0:0:0:0:0:0:0:1`); `same_address`: different texts with an address in
 * common (`localhost` and `127.0.0.1`, `::ffff:127.0.0.1` and `127.1`). Never throws.
 */
export function listenOverlap(first: string, second: string): ListenOverlap | undefined {
  const a = canonicalHost(first);
  const b = canonicalHost(second);
  if (a === b) return 'same_host';
  const fromA = addressesOf(a);
  const fromB = addressesOf(b);
  if (fromA.some(isWildcard)) return 'first_wildcard';
  if (fromB.some(isWildcard)) return 'second_wildcard';
  return fromA.some((address) => fromB.includes(address)) ? 'same_address' : undefined;
}

/**
 * How an agent url's host reaches a listener on the same port:
 * - `same_host`, `same_address`: as for {@link listenOverlap} (`localhost` and `127.0.0.1`,
 *   `[::ffff:127.0.0.1]` and `127.1`);
 * - `url_wildcard`: the url's host is `0.0.0.0` or `::`, which a connection takes as this
 *   machine's loopback, `127.0.0.1` or `::1` (Linux: connect() to the unspecified address);
 * - `listen_wildcard`: the listener is on `0.0.0.0`, which a connection to any IPv4 loopback
 *   address (`127.0.0.0/8`) reaches, or on `::`, which a connection to any loopback address
 *   reaches (Node listens there dual-stack).
 *
 * A listener on a wildcard address with a url naming another address or a host name is
 * undefined: that may be this machine or another one, which only interface or DNS lookups
 * could tell (the config check stays offline). Both hosts as the config and a URL give them
 * (brackets or not). Never throws.
 */
export type ListenerReach = 'same_host' | 'same_address' | 'url_wildcard' | 'listen_wildcard';

/**
 * Whether a connection to `urlHost` reaches a listener bound on `listenHost` (same port), and
 * how ({@link ListenerReach}), or undefined. Read from the two strings alone: no DNS lookup.
 * Reported failure: an agent url pointing back at the gateway's own listen address passed
 * `--check-config`, and one call recursed through the gateway about 10,000 times (a hostile
 * new user's trial 10, F4; test/regressions/agent-url-loops-to-gateway.test.ts).
 */
export function urlReachesListener(listenHost: string, urlHost: string): ListenerReach | undefined {
  const listen = canonicalHost(listenHost);
  const url = canonicalHost(urlHost);
  if (listen === url) return 'same_host';
  const bound = addressesOf(listen);
  const named = addressesOf(url);
  if (named.some((address) => bound.includes(address))) return 'same_address';
  const connected = named.map((address) => (address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '::1' : address));
  if (connected.some((address) => bound.includes(address))) return 'url_wildcard';
  if (bound.includes('0.0.0.0') && connected.some(isIpv4Loopback)) return 'listen_wildcard';
  if (bound.includes('::') && connected.some((address) => isIpv4Loopback(address) || address === '::1')) return 'listen_wildcard';
  return undefined;
}

/** `127.0.0.0/8`, in the dotted decimal form {@link addressesOf} gives. */
function isIpv4Loopback(address: string): boolean {
  return address.startsWith('127.') && isIP(address) === 4;
}

/** `0.0.0.0` and `::`: a listener there takes the port on every address. */
function isWildcard(address: string): boolean {
  return address === '0.0.0.0' || address === '::';
}

/** A host for comparison: lower-cased, brackets dropped, IPv6 in its canonical form; anything else as it is. */
function canonicalHost(host: string): string {
  const bare = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 6) return bare;
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return bare; // e.g. with a zone id (fe80::1%eth0), which URLs don't take
  }
}

/**
 * The addresses a canonical host binds (see the file comment): `localhost` both loopback
 * addresses; an IPv4-mapped IPv6 address its IPv4 address; an IPv4 spelling (`127.1`) its
 * dotted decimal form; anything else itself.
 */
function addressesOf(host: string): readonly string[] {
  if (host === 'localhost' || host === 'localhost.') return LOOPBACK;
  const mapped = MAPPED_IPV4.exec(host);
  if (mapped !== null) {
    const high = parseInt(mapped[1] as string, 16);
    const low = parseInt(mapped[2] as string, 16);
    return [`${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`];
  }
  if (!IPV4_SPELLING.test(host)) return [host];
  try {
    // WHATWG reads a host of digits, dots and hex as IPv4 (`127.1`); a name comes back as it is.
    const parsed = new URL(`http://${host}/`).hostname;
    return [isIP(parsed) === 4 ? parsed : host];
  } catch {
    return [host];
  }
}
