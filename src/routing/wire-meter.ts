/**
 * The wire meter: bounds the bytes a seller's connection delivers for one response, as they
 * arrive on its socket, before undici parses them. What the response pipeline counts as raw
 * bytes (response/body-source.ts) is the body undici hands out, after it removed the HTTP/1.1
 * chunked framing; the framing itself (chunk sizes, chunk extensions, trailers) and the heads
 * of informational (1xx) responses were counted nowhere.
 *
 * Reported failure (review 37, F1, Medium): undici 7 reads chunk extensions of any length
 * (`1;aaaa…\r\n`; Node's own HTTP server caps them at 16 KiB since CVE-2024-22019): 800 chunks
 * of 1 byte each with a 1 MiB extension per chunk, 839 MB on the wire, were counted as 875
 * bytes and forwarded `ok` after 1.8 s of the gateway's CPU; two such calls beside a 3 s
 * deadline took 2.5 s of CPU and doubled another agent's p50. Framing on the standalone GET
 * stream was never charged at all (test/regressions/chunk-extensions-uncounted-raw-bytes.test.ts).
 *
 * The rules, per response ("wire bytes": every byte read from the response's connection from
 * the moment its request starts, less what undici had already consumed: its 1xx heads, its
 * head, the framing, the body, the trailers):
 * - a response with a total ({@link totalWireRule}: every answer but an SSE stream without a
 *   cumulative bound): wire bytes <= 6 x max_response_bytes + {@link WIRE_SLACK_BYTES} (the
 *   body and {@link WIRE_FRAMING_PER_BODY_BYTE} framing bytes for each of its bytes). Past
 *   it the request is aborted with the DecodeError `raw_bytes` the raw-bytes cap raises
 *   (limitBytes max_response_bytes, observedBytes the wire bytes), so the host gets
 *   RESPONSE_TOO_LARGE `raw_bytes` as for too many body bytes (docs/errors.md).
 * - a stream without a total ({@link STREAM_WIRE_RULE}: the standalone GET stream, a
 *   long-lived one: exchange.ts hasCumulativeBound): framing overhead (wire bytes minus the
 *   body bytes undici has delivered, of the bytes it took from the socket) <=
 *   {@link STREAM_SLACK_BYTES} + 5 x those body bytes. Past it
 *   the request is aborted with a {@link WireOverheadError}: the SSE stage ends the stream
 *   plainly, `sse_wire_overhead` (errors/codes.ts END_REASONS); any other answer on such an
 *   exchange is reported as `raw_bytes` (body-source.ts bodyErrorToLocal).
 * Either way the connection is closed (undici destroys the socket of an aborted request).
 *
 * How: each undici Pool the gateway makes for sellers (upstream-pools.ts) builds its
 * connections with {@link MeteredClient}, which wraps the pool's connector (so the pool's TLS
 * session cache still serves every connection) and puts a 'readable' listener on each socket
 * before undici's own. A request's handler that carries a rule (dispatcher.ts: the exchange's
 * {@link WireRule}) is handed the client's {@link WireSlot} at dispatch; when undici starts the
 * request (`onConnect`) it opens a {@link ResponseMeter} on the slot, which notes the socket's
 * `bytesRead - readableLength` then and, at each socket read, compares `bytesRead` since with
 * its rule before undici parses that read. The handler counts the body bytes undici delivers
 * into it (`onData`) and closes it when the request is over (`onComplete`, `onError`), so a
 * kept-alive connection's next response starts from 0. One response at a time per socket:
 * {@link METERED_CONNECTION_OPTIONS} (`pipelining: 1`, no HTTP/2), the pool's options
 * (upstream-pools.ts), which a MeteredClient requires.
 * A check comes with each read, so a response passes its bound by at most what one 'readable'
 * brings: one read (64 KiB for TCP, a TLS record for TLS), or, after undici paused for
 * back-pressure, what the socket buffered meanwhile (its high-water mark, 64 KiB) and the
 * read after it.
 *
 * Cost: an `in` test and a store per dispatch, one object per response, an addition per body
 * chunk, two reads and a comparison per socket read: ~0.15 µs per response (begin, two checks,
 * end; measured on a loaded 2-core machine), against ~65 µs of a 1 KiB request's CPU.
 */
import type { Socket } from 'node:net';
import { Client, type Dispatcher, type buildConnector } from 'undici';
import { DecodeError } from '../response/decode.js';

/**
 * The slack of both rules, bytes: room for a response head (undici reads one of up to 16 KiB),
 * honest framing and one socket read checked before undici parses it (64 KiB).
 */
export const WIRE_SLACK_BYTES = 64 * 1024;

/**
 * The slack of the stream rule, bytes: {@link WIRE_SLACK_BYTES} and one more read (64 KiB) that
 * undici took from the socket and holds unparsed while the SSE stage applies back-pressure:
 * its body bytes are not yet delivered, so they look like framing until it resumes. A re-read
 * of review 37's fix: a GET stream written one byte per chunk (5 framing bytes per body byte)
 * ended `sse_wire_overhead` after 115 of 400 notifications with one read's slack.
 */
export const STREAM_SLACK_BYTES = 2 * WIRE_SLACK_BYTES;

/**
 * Framing bytes an honest seller may take per body byte: 5, what a body sent in 1-byte chunks
 * without extensions takes (`1\r\n` + the byte + `\r\n`: 6 wire bytes per body byte), the most
 * HTTP/1.1 chunking takes short of extensions or zero-padded sizes. A re-read of review 37's fix
 * (Low-Medium): at 1 (2 x max_response_bytes in all) a Node seller writing its answer one
 * character per `res.write` was refused `raw_bytes` at 61% of max_response_bytes, and a GET
 * stream of notifications written byte by byte ended `sse_wire_overhead` after ~16 KiB
 * (test/regressions/chunk-extensions-uncounted-raw-bytes.test.ts, the tiny-chunk cases).
 */
export const WIRE_FRAMING_PER_BODY_BYTE = 5;

/** How a response's wire bytes are bounded (module doc). */
export type WireRule = { readonly kind: 'total'; readonly limitBytes: number } | { readonly kind: 'stream' };

/** The rule of a response with a total: wire bytes <= 6 x `limitBytes` (its max_response_bytes, >= 1) + {@link WIRE_SLACK_BYTES}. */
export function totalWireRule(limitBytes: number): WireRule {
  return { kind: 'total', limitBytes };
}

/** The rule of a stream without a total: framing <= {@link STREAM_SLACK_BYTES} + 5 x the body bytes delivered. */
export const STREAM_WIRE_RULE: WireRule = Object.freeze({ kind: 'stream' });

/**
 * The abort reason of a stream without a total whose framing passed its bound:
 * `observedBytes` the wire bytes, `bodyBytes` the body bytes undici had delivered, so
 * `limitBytes` (the wire bytes the rule allowed then) = {@link STREAM_SLACK_BYTES} + 6 x `bodyBytes`.
 */
export class WireOverheadError extends Error {
  override readonly name = 'WireOverheadError';
  readonly limitBytes: number;
  constructor(
    readonly observedBytes: number,
    readonly bodyBytes: number,
  ) {
    super(`the seller's framing took ${observedBytes - bodyBytes} bytes for ${bodyBytes} body bytes (at most ${STREAM_SLACK_BYTES} + ${WIRE_FRAMING_PER_BODY_BYTE} x the body bytes)`);
    this.limitBytes = STREAM_SLACK_BYTES + (1 + WIRE_FRAMING_PER_BODY_BYTE) * bodyBytes;
  }
}

/** The wire bytes of one response on one socket, from its start (module doc). */
export class ResponseMeter {
  /** Body bytes undici has delivered for this response (the handler's `onData`). */
  body = 0;
  /** The socket's bytes consumed before this response: `bytesRead - readableLength` at its start. */
  private readonly start: number;
  /** A total rule's max_response_bytes; -1 under the stream rule. */
  private readonly limitBytes: number;
  /** The wire bytes allowed under a total rule: 6 x {@link limitBytes} + {@link WIRE_SLACK_BYTES}. */
  private readonly cap: number;

  constructor(
    private readonly slot: WireSlot,
    private readonly socket: Socket,
    rule: WireRule,
    private readonly abort: (reason: Error) => void,
  ) {
    this.start = socket.bytesRead - socket.readableLength;
    this.limitBytes = rule.kind === 'total' ? rule.limitBytes : -1;
    this.cap = (1 + WIRE_FRAMING_PER_BODY_BYTE) * this.limitBytes + WIRE_SLACK_BYTES;
  }

  /** Compares the wire bytes read so far with the rule (at each socket read, before undici parses it); aborts the request past it. */
  check(): void {
    const wire = this.socket.bytesRead - this.start;
    if (this.limitBytes >= 0) {
      if (wire > this.cap) this.trip(new DecodeError({ reason: 'raw_bytes', limitBytes: this.limitBytes, observedBytes: wire }));
      return;
    }
    // The stream rule compares framing with the body undici delivered, so it counts only what
    // undici took from the socket: bytes the socket buffers while the stage holds undici back
    // (back-pressure) are neither parsed nor delivered yet (up to the socket's 64 KiB
    // high-water mark), and one read undici took may wait unparsed ({@link STREAM_SLACK_BYTES}).
    const taken = wire - this.socket.readableLength;
    if (taken - this.body > STREAM_SLACK_BYTES + WIRE_FRAMING_PER_BODY_BYTE * this.body) this.trip(new WireOverheadError(taken, this.body));
  }

  /** The response is over (complete, failed or aborted): the socket's later reads are not its. */
  end(): void {
    if (this.slot.current === this) this.slot.current = undefined;
  }

  private trip(reason: Error): void {
    this.end();
    // undici fails the request with `reason` (its handler's onError, then the body) and destroys the socket.
    this.abort(reason);
  }
}

/** A client's connection, as its responses' meters see it: the socket it runs on, the response in progress. */
export class WireSlot {
  /** The response being received; undefined between responses. */
  current: ResponseMeter | undefined = undefined;
  private socket: Socket | undefined = undefined;

  /** `connect` (the pool's connector), with every socket it makes watched by this slot. */
  wrapConnector(connect: buildConnector.connector): buildConnector.connector {
    return (options, callback) =>
      connect(options, (...args) => {
        if (args[0] === null) this.watch(args[1]);
        callback(...args);
      });
  }

  /**
   * Opens the meter of a response whose request undici starts now (the handler's `onConnect`),
   * or undefined when the client has no socket (not reached: undici starts a request on a
   * connected socket).
   */
  begin(rule: WireRule, abort: (reason: Error) => void): ResponseMeter | undefined {
    const socket = this.socket;
    if (socket === undefined) return undefined;
    return (this.current = new ResponseMeter(this, socket, rule, abort));
  }

  /** Added before undici's own 'readable' listener (connectH1 runs after the connector's callback). */
  private watch(socket: Socket): void {
    this.socket = socket;
    this.current = undefined;
    socket.on('readable', () => {
      if (this.socket === socket) this.current?.check();
    });
  }
}

/** A dispatch handler that takes a {@link WireSlot} (dispatcher.ts: the exchange's handler). */
export interface WireMeteredHandler {
  wireSlot: WireSlot | undefined;
}

/**
 * An undici Client whose connections are metered (module doc): the `factory` of the gateway's
 * seller pools (upstream-pools.ts). `options` are the pool's, `connect` its connector function.
 *
 * @throws {TypeError} `connect` is not a function; `options` allow more than one response at a
 *   time per socket (`pipelining` over 1, `allowH2`: give the pool {@link METERED_CONNECTION_OPTIONS}).
 */
export class MeteredClient extends Client {
  private readonly slot: WireSlot;

  constructor(origin: string | URL, options: Client.Options) {
    const slot = new WireSlot();
    const connect = options.connect;
    if (typeof connect !== 'function') throw new TypeError('MeteredClient: the pool gives its connector as `connect`');
    if ((options.pipelining ?? 1) > 1 || options.allowH2 === true) throw new TypeError('MeteredClient: one response at a time per socket (pipelining 1, allowH2 false)');
    super(origin, { ...options, connect: slot.wrapConnector(connect) });
    this.slot = slot;
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if ('wireSlot' in handler) (handler as WireMeteredHandler).wireSlot = this.slot;
    return super.dispatch(opts, handler);
  }
}

/**
 * What a metered connection needs of its pool's options (one response at a time per socket):
 * `pipelining: 1` (a Pool hands it to the clients it makes) and `allowH2: false` (the Pool's
 * own connector offers `h2` by ALPN only when allowed; a client's `allowH2` does not reach a
 * connector given to it). Both undici's defaults, said out loud; upstream-pools.ts
 * UPSTREAM_POOL_OPTIONS spreads them.
 */
export const METERED_CONNECTION_OPTIONS = { pipelining: 1, allowH2: false } as const;

/** The Pool `factory` making {@link MeteredClient}s. */
export function meteredClientFactory(origin: URL, options: object): Dispatcher {
  return new MeteredClient(origin, options as Client.Options);
}

/**
 * The `raw_bytes` local error for an abort by the wire meter, or undefined for any other
 * error: a total rule's DecodeError as it is; a {@link WireOverheadError} (an answer other than
 * SSE on an exchange without a total, or one aborted before its head) with `limitBytes`, the
 * exchange's max_response_bytes, and its wire bytes as `observedBytes`.
 */
export function wireBreach(err: unknown, limitBytes: number): { reason: 'raw_bytes'; limitBytes: number; observedBytes: number } | undefined {
  if (err instanceof WireOverheadError) return { reason: 'raw_bytes', limitBytes, observedBytes: err.observedBytes };
  if (err instanceof DecodeError && err.failure.reason === 'raw_bytes') return { reason: 'raw_bytes', limitBytes: err.failure.limitBytes, observedBytes: err.failure.observedBytes };
  return undefined;
}
