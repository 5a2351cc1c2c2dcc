/**
 * What the kernel holds of a host connection's output that the host has not taken: the
 * `tx_queue` of its TCP socket (bytes, unsigned: written by the gateway into the socket and not
 * yet acknowledged by the host's TCP stack), read from /proc/net/tcp (IPv4) or /proc/net/tcp6
 * (IPv6, IPv4-mapped included) of the gateway's network namespace (Linux only: elsewhere every
 * look answers `undefined`). Used by host-take-watch.ts to see a host take bytes while Node sees
 * no write complete.
 *
 * Why the kernel's table: Node tells the gateway only that a write was handed whole to the
 * kernel (its callback, `writableLength`, 'drain'), and libuv hands more only when the socket
 * polls writable, which Linux reports once a third of the send buffer is free
 * (`sk_stream_is_writeable`: free space >= half of what is queued). On loopback the send buffer
 * grows to ~2.5-4 MiB, so a host must take ~1 MB before Node sees any progress. Measured (Node
 * 20, host SO_RCVBUF 4096 reading ~120 KB/s): 64 KiB writes issued one after the other, each
 * after the previous one's callback, stalled 6.8 s after the first 2.75 MB; one 3 MB write,
 * 13.5 s before its callback, while `tx_queue` fell by ~30 KB every 500 ms. Writing in slices
 * gives no earlier signal; the kernel's count does. Node has no API for it (SIOCOUTQ, TCP_INFO),
 * hence the table. Reported failure: hostile trial 55, F3
 * (test/regressions/slow-reading-host-reset-as-not-reading.test.ts).
 *
 * Cost: the kernel walks every TCP socket of the namespace per read (measured here, 2 cores:
 * ~2 ms with 26 sockets, ~15 ms with 2,000, ~45 ms with 9,000), so reads are made only for
 * connections the gateway has waited on for a while (host-take-watch.ts), never on a fast path,
 * asynchronously (libuv's threadpool), and shared: looks asked for within
 * {@link MIN_TABLE_READ_INTERVAL_MS} of the last read wait for the next one, which answers them
 * all (at most one read of each table per interval, however many hosts are watched).
 */
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { endianness } from 'node:os';

/** Least time between two reads of the tables (ms): looks asked for meanwhile share the next read. */
export const MIN_TABLE_READ_INTERVAL_MS = 200;

/** Whether the tables may be read here (Linux; turned off for the process when /proc/net/tcp cannot be read). */
let tablesReadable = process.platform === 'linux';

/** Whether looks can answer anything (a watch without them keeps Node's own signal alone). */
export function kernelQueuesReadable(): boolean {
  return tablesReadable;
}

/** A socket's addresses and ports as its table line spells them (`LOCAL:PORT REMOTE:PORT`, uppercase hex), and its table. */
export interface SendQueueKey {
  readonly key: string;
  readonly v6: boolean;
}

interface Look {
  readonly key: SendQueueKey;
  readonly resolve: (bytes: number | undefined) => void;
}

let waiting: Look[] = [];
let readTimer: NodeJS.Timeout | undefined;
let lastReadAt = -Infinity;

/**
 * The unacknowledged bytes the kernel holds for `socket` at the next shared read (at most
 * {@link MIN_TABLE_READ_INTERVAL_MS} from now); `undefined` when it cannot be told (not Linux,
 * the table unreadable, the socket not found in it: closed, or not TCP). Never rejects.
 */
export function lookSendQueue(key: SendQueueKey): Promise<number | undefined> {
  if (!tablesReadable) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    waiting.push({ key, resolve });
    if (readTimer === undefined) readTimer = setTimeout(readTables, Math.max(0, Math.ceil(lastReadAt + MIN_TABLE_READ_INTERVAL_MS - performance.now())));
  });
}

async function readTables(): Promise<void> {
  const looks = waiting;
  waiting = [];
  lastReadAt = performance.now();
  const found = new Map<string, number>();
  const tables: Array<[string, boolean]> = [];
  if (looks.some((l) => !l.key.v6)) tables.push(['/proc/net/tcp', false]);
  if (looks.some((l) => l.key.v6)) tables.push(['/proc/net/tcp6', true]);
  const wanted = new Set(looks.map((l) => l.key.key));
  for (const [path, v6] of tables) {
    try {
      collectSendQueues(await readFile(path, 'latin1'), v6, wanted, found);
    } catch {
      // No such table (no /proc, or no IPv6): nothing found in it. Without the IPv4 one, none is readable.
      if (!v6) tablesReadable = false;
    }
  }
  readTimer = undefined;
  // Looks asked for during the read wait for the next one.
  if (waiting.length > 0) readTimer = setTimeout(readTables, MIN_TABLE_READ_INTERVAL_MS);
  for (const look of looks) look.resolve(found.get(look.key.key));
}

/**
 * Adds to `found` the `tx_queue` of each line of `table` (the text of /proc/net/tcp, or tcp6
 * when `v6`) whose addresses are a key in `wanted`. The kernel writes every line with fixed
 * widths after its `sl:` field (`%08X:%04X %08X:%04X %02X %08X:%08X ...`, tcp6 with 32 hex
 * digits per address); a line in TIME_WAIT (state 06) holds nothing and is skipped.
 */
export function collectSendQueues(table: string, v6: boolean, wanted: ReadonlySet<string>, found: Map<string, number>): void {
  const pairLength = v6 ? 75 : 27;
  let at = table.indexOf('\n') + 1; // the header line
  while (at > 0 && at < table.length) {
    const end = table.indexOf('\n', at);
    const lineEnd = end === -1 ? table.length : end;
    const colon = table.indexOf(':', at);
    if (colon !== -1 && colon < lineEnd) {
      const pairAt = colon + 2;
      const pair = table.slice(pairAt, pairAt + pairLength);
      if (wanted.has(pair) && table.slice(pairAt + pairLength + 1, pairAt + pairLength + 3) !== '06') {
        const tx = Number.parseInt(table.slice(pairAt + pairLength + 4, pairAt + pairLength + 12), 16);
        if (Number.isFinite(tx)) found.set(pair, tx);
      }
    }
    at = lineEnd + 1;
  }
}

/** `socket`'s line key ({@link SendQueueKey}), or undefined when its addresses are not known (closed) or not IP. */
export function sendQueueKey(socket: Socket): SendQueueKey | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (localAddress === undefined || remoteAddress === undefined || localPort === undefined || remotePort === undefined) return undefined;
  const v6 = socket.remoteFamily === 'IPv6';
  const local = v6 ? ipv6Hex(localAddress) : ipv4Hex(localAddress);
  const remote = v6 ? ipv6Hex(remoteAddress) : ipv4Hex(remoteAddress);
  if (local === undefined || remote === undefined) return undefined;
  return { key: `${local}:${portHex(localPort)} ${remote}:${portHex(remotePort)}`, v6 };
}

const LITTLE_ENDIAN = endianness() === 'LE';

function portHex(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}

/** 4 bytes of an address as the kernel prints one 32-bit word of it (`%08X` of the word read in host order). */
function wordHex(bytes: readonly number[], from: number): string {
  let hex = '';
  for (let k = 0; k < 4; k++) hex += bytes[from + (LITTLE_ENDIAN ? 3 - k : k)]!.toString(16).toUpperCase().padStart(2, '0');
  return hex;
}

/** `a.b.c.d` as /proc/net/tcp prints it (`0100007F` for 127.0.0.1 on a little-endian host). */
export function ipv4Hex(address: string): string | undefined {
  const parts = address.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = parts.map(Number);
  if (bytes.some((b) => !Number.isInteger(b) || b < 0 || b > 255)) return undefined;
  return wordHex(bytes, 0);
}

/**
 * An IPv6 address (any text form Node reports: compressed, IPv4-mapped `::ffff:1.2.3.4`, a
 * `%zone`) as /proc/net/tcp6 prints it: four words, 32 hex digits. Read through the WHATWG URL
 * parser, whose serialization is canonical (hex groups, at most one `::`).
 */
export function ipv6Hex(address: string): string | undefined {
  let host: string;
  try {
    host = new URL(`http://[${address.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const halves = host.split('::');
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length > 1 && halves[1] !== '' ? halves[1]!.split(':') : [];
  const groups = halves.length > 1 ? [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail] : head;
  if (groups.length !== 8) return undefined;
  const bytes: number[] = [];
  for (const g of groups) {
    const n = Number.parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  return wordHex(bytes, 0) + wordHex(bytes, 4) + wordHex(bytes, 8) + wordHex(bytes, 12);
}
