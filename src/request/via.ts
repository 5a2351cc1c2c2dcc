/**
 * The gateway's `Via` entry (RFC 9110 §7.6.3) and request-loop detection.
 *
 * Every request the gateway sends a seller carries `Via: <host's Via, if any>, 1.1 <pseudonym>`:
 * an HTTP-to-HTTP gateway MUST send Via in each inbound request it forwards, each intermediary
 * appending its own entry, and Via exists for "avoiding request loops". The pseudonym is
 * random per gateway instance (`adcp-gw-` and 16 hex digits, 64 random bits): it names no
 * host, port or version, and two gateways, in two processes or in one, never share it. A
 * host request whose Via already carries this gateway's pseudonym has been through this
 * gateway: an agent url leads back to it (directly with `listen.port: 0`, or through a DNS
 * name, a proxy or a port forward the config check cannot see: config/agent-url-self.ts), and
 * forwarding it would loop until connections fail. The handler refuses it (`request_loop`)
 * and sends nothing (routing/handler.ts).
 *
 * Cost per request: one header read on the host's request (`via`, absent nearly always: the
 * entries are parsed only when it is present), and one more header on the request to the
 * seller (a concatenation only when the host sent a Via).
 *
 * Reported failure (a hostile new user's trial 10, F4): one host call recursed through the
 * gateway about 10,000 times, one socket and one exchange line per hop, until connections
 * failed (test/regressions/agent-url-loops-to-gateway.test.ts).
 */
import { randomBytes } from 'node:crypto';

/** One gateway instance's Via: its pseudonym and the entries it appends, built once. */
export interface OwnVia {
  /** `adcp-gw-` and 16 lower-case hex digits: the received-by of every entry this instance appends. */
  readonly pseudonym: string;
  /** The entry for a host request received over HTTP/1.1 (`1.1 <pseudonym>`). */
  readonly entry11: string;
  /** The entry for a host request received over HTTP/1.0 (`1.0 <pseudonym>`). */
  readonly entry10: string;
}

/** A new random pseudonym and its entries (one per app: routing/handler.ts). */
export function createOwnVia(): OwnVia {
  const pseudonym = `adcp-gw-${randomBytes(8).toString('hex')}`;
  return { pseudonym, entry11: `1.1 ${pseudonym}`, entry10: `1.0 ${pseudonym}` };
}

/** HTTP whitespace around and inside a Via entry (RFC 9110 §5.6.3 OWS/RWS: space and tab). */
const WHITESPACE = /[ \t]+/;

/**
 * Whether a Via field value (Node joins repeated fields with `, `) has an entry received by
 * `pseudonym`: `received-protocol RWS received-by [ RWS comment ]`, the received-by compared
 * exactly, with or without a `:port` (RFC 9110 §7.6.3). A pseudonym inside a comment or
 * another token is none. `value` is the header as Node gives it (undefined, a string; an array
 * is read joined). Never throws.
 */
export function viaCarries(value: string | string[] | undefined, pseudonym: string): boolean {
  if (value === undefined) return false;
  const text = Array.isArray(value) ? value.join(', ') : value;
  // Cheap precheck: the pseudonym is 64 random bits, so a Via without it (nearly all) ends here.
  if (!text.includes(pseudonym)) return false;
  for (const member of text.split(',')) {
    const parts = member.trim().split(WHITESPACE);
    const receivedBy = parts[1];
    if (receivedBy === undefined) continue;
    const colon = receivedBy.indexOf(':');
    if ((colon === -1 ? receivedBy : receivedBy.slice(0, colon)) === pseudonym) return true;
  }
  return false;
}

/**
 * The Via to send the seller: the host's (as forwarded: Node joins repeated fields with `, `),
 * then `entry` (RFC 9110 §7.6.3: each intermediary appends its own). `entry` alone when the
 * host sent none (or an empty one).
 */
export function appendVia(hostVia: string | string[] | undefined, entry: string): string {
  if (hostVia === undefined) return entry;
  const text = (Array.isArray(hostVia) ? hostVia.join(', ') : hostVia).trim();
  return text === '' ? entry : `${text}, ${entry}`;
}
