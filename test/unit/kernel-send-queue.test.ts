/**
 * src/response/kernel-send-queue.ts: a host connection's line in /proc/net/tcp and tcp6 (its
 * addresses as the kernel prints them) and its `tx_queue`, for the host-take watch (hostile
 * trial 55, F3: test/regressions/slow-reading-host-reset-as-not-reading.test.ts).
 * Input: address texts as Node reports them; table texts in the kernel's format; on Linux, real
 * loopback connections (IPv4, and IPv6 when ::1 is up) whose server side holds unread bytes.
 * Expectation: the kernel's spelling (little-endian words on a little-endian host), the
 * `tx_queue` of the wanted line only (not a TIME_WAIT one), and on a real connection the bytes
 * the peer has not taken (more than 0, at most what was written).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { endianness } from 'node:os';
import { collectSendQueues, ipv4Hex, ipv6Hex, lookSendQueue, sendQueueKey } from '../../src/response/kernel-send-queue.js';
import { withTimeout } from '../helpers/timeout.js';

const LE = endianness() === 'LE';

test('addresses as the kernel prints them', () => {
  assert.equal(ipv4Hex('127.0.0.1'), LE ? '0100007F' : '7F000001');
  assert.equal(ipv4Hex('10.1.2.3'), LE ? '0302010A' : '0A010203');
  assert.equal(ipv4Hex('1.2.3'), undefined);
  assert.equal(ipv4Hex('1.2.3.256'), undefined);
  assert.equal(ipv6Hex('::1'), LE ? '00000000000000000000000001000000' : '00000000000000000000000000000001');
  // IPv4-mapped, in either text form Node may report.
  const mapped = LE ? '0000000000000000FFFF00000100007F' : '00000000000000000000FFFF7F000001';
  assert.equal(ipv6Hex('::ffff:127.0.0.1'), mapped);
  assert.equal(ipv6Hex('::ffff:7f00:1'), mapped);
  assert.equal(ipv6Hex('fe80::1%eth0'), LE ? '000080FE000000000000000001000000' : 'FE800000000000000000000000000001');
  assert.equal(ipv6Hex('2001:db8:0:0:1:0:0:1'), LE ? 'B80D0120000000000000010001000000' : '20010DB8000000000001000000000001');
  assert.equal(ipv6Hex('not an address'), undefined);
});

test('the tx_queue of the wanted lines only, TIME_WAIT skipped', () => {
  const table = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:1F90 0100007F:C350 01 0029A000:00000000 01:00000014 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1',
    '   2: 0100007F:1F90 0100007F:C351 06 00000000:00000000 03:00000014 00000000     0        0 0 3 0000000000000000',
    '   3: 0100007F:1F90 0100007F:C352 01 00000010:00000000 01:00000014 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1',
    '12345: 0100007F:1F90 0100007F:C353 01 00000001:00000000 01:00000014 00000000     0        0 4 1 0000000000000000 20 4 30 10 -1',
    '',
  ].join('\n');
  const found = new Map<string, number>();
  const key = (port: string): string => `0100007F:1F90 0100007F:${port}`;
  collectSendQueues(table, false, new Set([key('C350'), key('C351'), key('C353')]), found);
  assert.deepEqual([...found].sort(), [
    [key('C350'), 0x29a000],
    [key('C353'), 1],
  ]);
});

/** A loopback connection on `host` whose server side wrote `bytes` the client does not read; its server socket. */
async function unreadConnection(host: string, bytes: number): Promise<{ server: net.Socket; close: () => void }> {
  const srv = net.createServer();
  const accepted = new Promise<net.Socket>((resolve) => srv.once('connection', resolve));
  await new Promise<void>((resolve) => srv.listen(0, host, resolve));
  const client = net.connect((srv.address() as net.AddressInfo).port, host);
  client.pause();
  const server = await withTimeout(accepted, 5000, 'the connection');
  server.write(Buffer.alloc(bytes, 120));
  return {
    server,
    close: () => {
      client.destroy();
      server.destroy();
      srv.close();
    },
  };
}

for (const host of ['127.0.0.1', '::1']) {
  test(`a real connection on ${host}: what its peer has not taken`, { skip: process.platform !== 'linux' && 'Linux only' }, async (t) => {
    let conn: Awaited<ReturnType<typeof unreadConnection>>;
    try {
      conn = await unreadConnection(host, 8 * 1024 * 1024);
    } catch {
      return t.skip(`${host} is not up`);
    }
    try {
      const key = sendQueueKey(conn.server);
      assert.ok(key !== undefined);
      assert.equal(key.v6, host.includes(':'));
      const queued = await withTimeout(lookSendQueue(key), 5000, 'the look');
      assert.ok(queued !== undefined && queued > 0 && queued <= 8 * 1024 * 1024, `tx_queue ${queued}`);
    } finally {
      conn.close();
    }
  });
}
