/**
 * HTTP/1.1 responses read off a raw wire (net.connect), for tests of exact framing: the
 * status line, the headers, the body (chunked or by Content-Length), and the bytes left
 * after the last response.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { withTimeout } from './timeout.js';

/**
 * Writes `text` (raw HTTP/1.1 bytes) on a new connection to the gateway at `baseUrl` and
 * resolves with everything it writes back until the connection closes.
 */
export function exchangeUntilClose(baseUrl: string, text: string): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (s: string) => (got += s));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    socket.write(text);
  });
}

/** What {@link writeAndRead} got back. */
export interface WireAnswer {
  /** Everything the server sent (latin1) until it closed the connection, or until the wait ran out. */
  text: string;
  /** When its first byte came, ms after the request was written (null: none came). */
  firstByteMs: number | null;
  /** Whether the server closed the connection within the wait. */
  closed: boolean;
}

/**
 * Writes `head`, then each of `parts` (latin1: one byte per character), on a new connection to
 * 127.0.0.1:`port`, leaving it open after the last; reads until the server closes it or
 * `waitMs` runs out (then the test closes it).
 */
export function writeAndRead(port: number, head: string, parts: readonly string[] = [], waitMs = 2000): Promise<WireAnswer> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let firstByteMs: number | null = null;
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, firstByteMs, closed });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      firstByteMs ??= performance.now() - started;
      text += d;
    });
    socket.on('error', () => {});
    socket.on('close', () => done(true));
    socket.write(head, 'latin1');
    for (const part of parts) socket.write(part, 'latin1');
  });
}

/** The status line, the `Connection` field and the body of the first answer in `text`. */
export function firstAnswer(text: string): { status: string; connection: string | undefined; body: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const lines = head.split('\r\n');
  const connection = lines.find((l) => l.toLowerCase().startsWith('connection:'))?.slice('connection:'.length).trim();
  return { status: lines[0] ?? '', connection, body };
}

/** A raw connection to a server that records all it receives and whether the server closed it. */
export interface RawConnection {
  socket: Socket;
  /** Everything received so far (latin1, as the wire parser reads it). */
  text(): string;
  /** Resolves with everything received once the server has closed the connection. */
  closed: Promise<string>;
  /** Resolves once the received text holds `n` complete head-ends (`\r\n\r\n`). */
  heads(n: number): Promise<void>;
  /** Resolves once the received text holds `part`. */
  received(part: string): Promise<void>;
}

/** Opens a raw connection to `port` on 127.0.0.1 (see {@link RawConnection}); resolves once connected. */
export function openRawConnection(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const waiters: Array<() => void> = [];
    const text = (): string => Buffer.concat(chunks).toString('latin1');
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      for (const w of [...waiters]) w();
    });
    socket.on('error', () => {});
    const closed = new Promise<string>((done) => socket.once('close', () => done(text())));
    const until = (met: (received: string) => boolean): Promise<void> =>
      new Promise((done) => {
        const check = (): void => {
          if (met(text())) done();
        };
        waiters.push(check);
        check();
      });
    const heads = (n: number): Promise<void> => until((t) => t.split('\r\n\r\n').length - 1 >= n);
    const received = (part: string): Promise<void> => until((t) => t.includes(part));
    socket.once('connect', () => resolve({ socket, text, closed, heads, received }));
    socket.once('error', reject);
  });
}

/**
 * The raw HTTP/1.1 text of a `tools/call` (tool `x`, JSON-RPC id `id`) POSTed to `agent`
 * (default `s`) by a host on MCP 2025-06-18 that accepts JSON or SSE.
 */
export function toolCallRequest(id: number, agent = 's'): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } });
  return (
    `POST /agents/${agent}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

export interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses exactly `n` HTTP/1.1 responses from `wire`; returns them and any bytes left after. */
export function parseResponses(wire: Buffer, n: number): { responses: Parsed[]; rest: string } {
  const s = wire.toString('latin1');
  let at = 0;
  const responses: Parsed[] = [];
  for (let r = 0; r < n; r++) {
    const headEnd = s.indexOf('\r\n\r\n', at);
    assert.ok(headEnd !== -1, `response ${r}: no head in ${JSON.stringify(s.slice(at, at + 200))}`);
    const [statusLine, ...lines] = s.slice(at, headEnd).split('\r\n');
    const m = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
    assert.ok(m, `response ${r}: bad status line ${JSON.stringify(statusLine)} (at ${at})`);
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    at = headEnd + 4;
    let body = '';
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const eol = s.indexOf('\r\n', at);
        const size = Number.parseInt(s.slice(at, eol), 16);
        assert.ok(Number.isInteger(size) && /^[0-9a-f]+$/i.test(s.slice(at, eol)), `response ${r}: chunk size at ${at}: ${JSON.stringify(s.slice(at, at + 20))}`);
        at = eol + 2;
        if (size === 0) {
          assert.equal(s.slice(at, at + 2), '\r\n', `response ${r}: after terminator`);
          at += 2;
          break;
        }
        body += s.slice(at, at + size);
        at += size;
        assert.equal(s.slice(at, at + 2), '\r\n', `response ${r}: chunk end`);
        at += 2;
      }
    } else {
      const len = Number(headers['content-length'] ?? '0');
      body = s.slice(at, at + len);
      at += len;
    }
    responses.push({ status: Number(m[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') });
  }
  return { responses, rest: s.slice(at) };
}

/** Resolves with the first `n` responses (see {@link parseResponses}) once `conn` holds them whole. */
export function responsesWhenWhole(conn: RawConnection, n: number): Promise<{ responses: Parsed[]; rest: string }> {
  const parsed = (): { responses: Parsed[]; rest: string } | undefined => {
    try {
      return parseResponses(Buffer.from(conn.text(), 'latin1'), n);
    } catch {
      return undefined; // not all in yet
    }
  };
  return new Promise((resolve) => {
    const check = (): void => {
      const got = parsed();
      if (got === undefined) return;
      conn.socket.off('data', check);
      resolve(got);
    };
    conn.socket.on('data', check);
    check();
  });
}

/**
 * Has the seller send `notifications/tools/list_changed` (`notify`: on every session) until
 * `conn` has received it: at most 50 tries, 50 ms apart at most (the SDK seller may not have
 * registered the host's GET stream yet). Fails the test when it never arrives. Returns how many
 * were sent: on a loaded machine one may arrive after the next was sent, so the host can get
 * more than one (up to that many).
 */
export async function notificationReaches(conn: RawConnection, notify: () => Promise<void>): Promise<number> {
  let sent = 0;
  for (let k = 0; k < 50 && !conn.text().includes('notifications/tools/list_changed'); k++) {
    await notify();
    sent++;
    await Promise.race([conn.received('notifications/tools/list_changed'), new Promise((r) => setTimeout(r, 50))]);
  }
  assert.ok(conn.text().includes('notifications/tools/list_changed'), 'the notification reached the host');
  return sent;
}

/** 1 to `atMost` copies of the message `each`: what a host gets of a notification sent `atMost` times (notificationReaches). */
export interface MessageCopies {
  each: unknown;
  atMost: number;
}

/** Asserts the messages a stream carried: exactly `expected`, or 1 to `atMost` copies of one message ({@link MessageCopies}). */
export function assertStreamMessages(got: unknown[], expected: unknown[] | MessageCopies): void {
  if (Array.isArray(expected)) {
    assert.deepEqual(got, expected);
    return;
  }
  assert.ok(got.length >= 1 && got.length <= expected.atMost, `1 to ${expected.atMost} copies, got ${got.length}`);
  assert.deepEqual(got, Array.from({ length: got.length }, () => expected.each));
}

/**
 * The gateway's whole answer to a DELETE of session `session` on agent `agent` (sent on a
 * raw connection with `connection: close`): its head lines (Date left out) and its body.
 */
export async function deleteAnswer(baseUrl: string, session: string, agent = 's'): Promise<{ head: string[]; body: string }> {
  const conn = await openRawConnection(Number(new URL(baseUrl).port));
  conn.socket.write(`DELETE /agents/${agent}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nmcp-session-id: ${session}\r\nmcp-protocol-version: 2025-06-18\r\nconnection: close\r\n\r\n`);
  const wire = await withTimeout(conn.closed, 5_000, `the answer to the DELETE of ${session}`).finally(() => conn.socket.destroy());
  const headEnd = wire.indexOf('\r\n\r\n');
  assert.ok(headEnd !== -1, `a head in ${JSON.stringify(wire)}`);
  return { head: wire.slice(0, headEnd).split('\r\n').filter((l) => !/^date:/i.test(l)), body: wire.slice(headEnd + 4) };
}
