/**
 * The ONE catalog of what the gateway answers on its own (ARCHITECTURE §3): the AdCP error
 * codes it mints, the `details.reason` values with their code, and the refusals of a host's
 * request. Data only; `src/mcp/local-error.ts` builds the messages from it and
 * `docs/errors.md` documents it (a test keeps the two identical, both ways).
 *
 * Descriptions and sources are plain text without `|` (they are table cells in the doc). An
 * entry with many rules keeps a short summary here, with a link to its subsection of the doc
 * (`upstream_not_mcp in detail`, `invalid_request in detail`), which holds every rule and source.
 */

/** AdCP `recovery` values the gateway emits. */
export type Recovery = 'transient' | 'correctable' | 'terminal';

/** Methods whose request can be narrowed (`fields`, `max_results`, a cursor): the tool-result shape and `correctable` apply (ARCHITECTURE §3). */
export const NARROWABLE_METHODS: readonly string[] = ['tools/call', 'tasks/result'];

export interface AdcpCodeSpec {
  /** JSON-RPC `error.code` for the non-tool shape (ARCHITECTURE §3; avoids -32000, -32001, -32002, -32042). */
  readonly jsonRpcCode: number;
  /** `recovery` when the method is in {@link NARROWABLE_METHODS}. */
  readonly recoveryNarrowable: Recovery;
  /** `recovery` for every other method. */
  readonly recoveryOther: Recovery;
  readonly description: string;
  readonly source: string;
}

/** The AdCP error codes the gateway mints. */
export const ADCP_CODES = {
  RESPONSE_TOO_LARGE: {
    jsonRpcCode: -32050,
    recoveryNarrowable: 'correctable',
    recoveryOther: 'terminal',
    description: "The seller's answer broke a byte, JSON depth or JSON node bound; the host gets this error instead of the answer (on SSE, events complete before the bound are forwarded first).",
    source: 'mcp-response-extraction §Size Limits; ARCHITECTURE §3',
  },
  SERVICE_UNAVAILABLE: {
    jsonRpcCode: -32027,
    recoveryNarrowable: 'transient',
    recoveryOther: 'transient',
    description: 'The seller was too slow, unreachable, or did not answer with MCP, or with a response head too large for a host to read (upstream_headers_too_large); or the host did not take what the gateway wrote to it in time (host_not_reading).',
    source: 'transport-errors §Reserved JSON-RPC Codes (-32027); ARCHITECTURE §3',
  },
} as const satisfies Record<string, AdcpCodeSpec>;

export type AdcpCode = keyof typeof ADCP_CODES;

/** Fields a minted error's `details` may carry besides `reason`. */
export type DetailField =
  | 'limit_bytes'
  | 'observed_bytes'
  | 'limit_depth'
  | 'observed_depth'
  | 'limit_nodes'
  | 'observed_nodes'
  | 'limit_ms'
  | 'observed_ms'
  | 'limit_lines'
  | 'observed_lines'
  | 'upstream_status';

export interface ReasonSpec {
  readonly code: AdcpCode;
  /** `details` fields besides `reason`, in order; each is present when the stage knows it. */
  readonly details: readonly DetailField[];
  /** false only when the request never reached the seller, so no operation can have run. */
  readonly mayHaveExecuted: boolean;
  /**
   * The HTTP status of this error's JSON body when it answers no request (id null: the
   * standalone GET stream, a POSTed notification or response; errors/local-reply.ts
   * `answerWithLocalError`): 504 (Gateway Timeout) when time ran out (a deadline, a wait behind
   * another answer), else 502 (Bad Gateway), RFC 9110 §15.6.3 and §15.6.5. An error that answers
   * a request goes out with HTTP 200 (its JSON-RPC error carries the failure). docs/errors.md,
   * the reasons table's `HTTP status (id null)` column. Before, local-reply.ts picked 504 from a
   * list of reason names kept apart from this catalog.
   */
  readonly idNullStatus: 502 | 504;
  readonly description: string;
  readonly source: string;
}

const BYTES: readonly DetailField[] = ['limit_bytes', 'observed_bytes'];
const TIME: readonly DetailField[] = ['limit_ms', 'observed_ms'];
const SIZE_LIMITS = 'mcp-response-extraction §Size Limits';

/** `details.reason` values (snake_case, stable), each with its code. */
export const REASONS = {
  content_length: {
    code: 'RESPONSE_TOO_LARGE',
    details: BYTES,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: "The seller announced a Content-Length over the limit (pre-check; observed_bytes is the announced length, in the digits announced, leading zeros aside, even past 2^53 - 1, which a double cannot carry: a JSON number of up to 20 digits, exact for a host that reads integers exactly; hostile trial 28, L3: test/regressions/huge-content-length-observed-bytes-rounded.test.ts). Never on a 204, whose Content-Length announces nothing: it has no body (RFC 9112 §6.3), and none is read (a bogus `Content-Length: 5000` on a notification's 204 was this error, and under the limit `upstream_reset`: review 37, F6, test/regressions/no-content-answer-bogus-content-length-refused.test.ts).",
    source: `${SIZE_LIMITS} (pre-reject an over-limit Content-Length)`,
  },
  raw_bytes: {
    code: 'RESPONSE_TOO_LARGE',
    details: BYTES,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      "The bytes received on the wire, before decoding, went over the limit: the body as received (still content-coded, its chunked framing removed) over max_response_bytes, or the whole response as its connection delivered it (1xx heads, the head, chunk sizes and chunk extensions, trailers and the body) over 6 x max_response_bytes + 65,536 bytes (the body and 5 bytes of framing for each of its bytes, what a body sent in 1-byte chunks takes): then observed_bytes is those wire bytes and limit_bytes still max_response_bytes. The wire bytes are checked at each read of the connection, before they are parsed, so observed_bytes may pass that bound by up to two reads (64 KiB each); the connection is closed. On the standalone GET stream and a long-lived stream, which have no total, the wire bytes bound the framing instead (`sse_wire_overhead`); an answer there that is not SSE (a 4xx) whose framing breaks that bound gets this error, observed_bytes its wire bytes.",
    source: `${SIZE_LIMITS} (bound raw bytes as they arrive); review 37, F1 (chunk extensions were never counted: 800 chunks of 1 byte, each with a 1 MiB extension, 839 MB on the wire, were counted as 875 bytes and forwarded ok after 1.8 s of CPU: test/regressions/chunk-extensions-uncounted-raw-bytes.test.ts)`,
  },
  decoded_bytes: {
    code: 'RESPONSE_TOO_LARGE',
    details: BYTES,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: 'The body went over the limit once decompressed.',
    source: `${SIZE_LIMITS} (bound decoded bytes)`,
  },
  sse_event: {
    code: 'RESPONSE_TOO_LARGE',
    details: BYTES,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: 'The data of one SSE event went over max_sse_event_bytes.',
    source: `${SIZE_LIMITS} (the bound applies to each SSE event)`,
  },
  sse_event_memory: {
    code: 'RESPONSE_TOO_LARGE',
    details: BYTES,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      "One SSE event not yet ended (no blank line yet) took what the gateway's parser holds for its complete `data` lines and its last `event` and `id` values over four times the per-event cap, 4 x (max_sse_event_bytes + 65,536) (limit_bytes; twice, the bound until a re-read of trial 52's fix, ended honest events of many 100-byte lines under the cap): counted as the parser's memory, the bytes of each piece of the event's lines that holds a `data` line (twice when not ASCII), plus 104 bytes per `data` line (64 for a one-byte ASCII value, 32 for an empty one) for the strings the parser builds to join them (eventsource-parser 3.1.1 on Node 20 and 22: 32 bytes per empty line, 64-65 for a one-character value, up to 104-105 for others), plus the bytes of the piece holding the last non-empty `event:` value and of the one holding the last non-empty `id:` value when no `data` line is in it (twice when not ASCII; an `id:` line's twice again when its piece holds a CR; a later `event:` line replaces the former: the parser keeps one value each; a re-read of that fix: each may reach the per-event cap, and 8 standalone GET streams of a 4 MiB `event:` and a 4 MiB `id:` line each held 113 MB counted as 0); observed_bytes is that count with the piece that would have taken it over, which did not reach the parser. So an event of many short lines ends here long before its data reaches max_sse_event_bytes (about 448,000 empty `data:` lines, 2.7 MB of them, at the default 4 MiB: 38 bytes each); an event of one line never does, nor one at the cap whose lines average ~35 bytes or more (~50 of non-ASCII text). The same count is what the stream holds of the event against max_buffered_response_bytes.",
    source: `${SIZE_LIMITS} (the bound applies to each SSE event); hostile trial 52, F1 (one event of 4.1M empty \`data:\` lines, 25 MB, held ~130 MB of the parser's strings counted as 4.1 MB: 10 standalone GET streams took the gateway to 1.47 GB under a 64 MiB cap, 8 crashed a 768 MB heap: test/regressions/sse-empty-data-lines-heap-uncounted.test.ts); a re-read of that fix, A (\`event:\` and \`id:\` values uncounted: test/regressions/sse-open-event-id-values-uncounted.test.ts)`,
  },
  sse_cumulative: {
    code: 'RESPONSE_TOO_LARGE',
    details: BYTES,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: "An SSE stream answering a POST (a request's, a batch's, a notification's or JSON-RPC response's; not the standalone GET stream nor a long-lived one) went over the limit: all its bytes, plus what the gateway's resume tokens add to the host's stream (each token's length over the seller event id it replaces), plus what the gateway's re-encoding of an event block adds over the seller's bytes for it (e.g. `data: x` for `data:x`), plus 1,024 bytes for each line the parser ignores (an unknown field such as `x`, a `retry:` whose value is no number) and for each event it drops (data naming no kind of message such as `{}`, but a connection's first `{}`: an MCP SDK server's priming event; a response on a notification's or response's stream) (what such a line or event costs the gateway, src/response/sse-ignored-lines.ts; observed_bytes is then past the limit by at most 1,024), counted across Last-Event-ID reconnects. The event whose encoding or token would cross the limit is not delivered.",
    source: `${SIZE_LIMITS} (cumulative per request, carried across resumption); a new user's trial (a notification's SSE answer had no total: test/regressions/sse-notification-answer-unbounded.test.ts); hostile trial 52, F2 (3.9 MiB of \`x\` lines, ~0.6 µs each, within the limit: 8 such calls took 12-19 s of CPU in 20 s: test/regressions/sse-unknown-field-lines-cost-uncharged.test.ts); its leftover (dropped events, ~0.9 µs each for a 10-byte \`data: {}\`, counted as their bytes only: ~400,000 per call within 4 MiB: test/regressions/sse-dropped-events-cost-uncharged.test.ts)`,
  },
  json_depth: {
    code: 'RESPONSE_TOO_LARGE',
    details: ['limit_depth', 'observed_depth', ...BYTES],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: 'The JSON nests arrays/objects deeper than max_json_depth (observed_depth is the limit plus one: the scan stops there).',
    source: `${SIZE_LIMITS} (bound JSON depth after the cap passes)`,
  },
  json_nodes: {
    code: 'RESPONSE_TOO_LARGE',
    details: ['limit_nodes', 'observed_nodes', ...BYTES],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: 'The JSON holds more values than max_json_nodes (observed_nodes is the limit plus one: the scan stops there).',
    source: `${SIZE_LIMITS} (bound JSON node count after the cap passes)`,
  },
  deadline_exceeded: {
    code: 'SERVICE_UNAVAILABLE',
    details: TIME,
    mayHaveExecuted: true,
    idNullStatus: 504,
    description: 'A JSON response did not arrive in full within response_deadline_ms.',
    source: `${SIZE_LIMITS} (pair the cap with a deadline)`,
  },
  sse_idle: {
    code: 'SERVICE_UNAVAILABLE',
    details: TIME,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: "The SSE stream sent no byte (comments included) for sse_idle_timeout_ms before the stream was over (on a request stream: before its response arrived), counted while the gateway was waiting for the seller (not while a host that stopped reading held the stream back: host_not_reading; nor, on a stream with a deadline, while a request the seller sent to the host, elicitation/create and the like, awaited the host's answer in the same session: sse_idle_timeout_ms in docs/configuration.md).",
    source: 'ARCHITECTURE §3 and §5 (the gateway idle timeout replaces undici body timeout); hostile trial 57, F3 (a host answering an elicitation after the limit had its call end sse_idle: test/regressions/elicitation-wait-hits-sse-idle.test.ts)',
  },
  sse_deadline: {
    code: 'SERVICE_UNAVAILABLE',
    details: TIME,
    mayHaveExecuted: true,
    idNullStatus: 504,
    description:
      "An SSE stream answering a POST did not finish within sse_deadline_ms (from its start, across Last-Event-ID resumes): a request's did not deliver the response, a notification's or JSON-RPC response's did not end. A resume that comes after the deadline has run out gets it at once, and the seller is not contacted: HTTP 200 with one SSE event for the request's id (one per request a batch's token still awaits; HTTP 504, id null, where none is awaited), its exchange line `local_error`, `upstream_status` null, nothing from the seller.",
    source: `${SIZE_LIMITS} (pair the cap with a deadline); ARCHITECTURE §3; review 35, F3 (such a resume sent the seller a GET with Last-Event-ID first: test/regressions/resume-past-deadline-contacts-seller.test.ts)`,
  },
  host_not_reading: {
    code: 'SERVICE_UNAVAILABLE',
    details: TIME,
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      "The host did not take what the gateway wrote to it. While an SSE stream runs: none of it for sse_idle_timeout_ms, or sse_deadline_ms ran out while the gateway waited for it (the seller is not read meanwhile, so it is not its sse_idle). Once the gateway has ended the answer (a JSON body; an SSE stream's last event and end): not all of it by the end of response_deadline_ms (JSON) or within sse_idle_timeout_ms of the end (SSE). Progress is what the host's socket reports (Node's `drain`, an ended answer's last byte handed over), and on Linux a writer is told the socket can take more only once about a third of its send buffer is free again (the send buffer grows to a few MiB on loopback), so a host reading slower than roughly that much per sse_idle_timeout_ms (e.g. a 4 KiB receive buffer read at ~120 KB/s with a 3 s limit) is reset host_not_reading although it reads (hostile trial 55, F3: left open). The host's connection is then reset, as the rest could not reach it; after an ended answer, this reason and outcome local_error replace the answer's own in the exchange line and the metrics. Never sooner: what a host has not taken counts against its agent's max_buffered_response_bytes meanwhile (over it, the agent's answers are received one at a time, oldest first), but a host is not cut for holding that room, as a slow reader cannot be told from one that does not read while Node writes one large answer (test/regressions/slow-reading-host-cut-by-stall-rule.test.ts).",
    source: 'reported by a new user (a host that stopped reading was logged and counted as the seller going silent, sse_idle); an ended answer the host never took held its connection and bytes for good, with no exchange line (test/regressions/host-never-reads-the-answer.test.ts); hostile trial 54, F3 (150 hosts that never read held 4 MB answers each, counted nowhere, for sse_idle_timeout_ms: test/regressions/non-reading-hosts-hold-unbounded-answers.test.ts; a cut after 1 s without progress, tried for it, reset a host reading slowly but steadily: test/regressions/slow-reading-host-cut-by-stall-rule.test.ts); hostile trial 55, F3 (a host reading ~117 KB/s through a 4 KiB receive buffer was reset 3.1 s into a 3 s sse_idle_timeout_ms; counting the send queue in the kernel as progress, tried for it, was reverted: after an SSE end it restarted the clock at every change with no overall cap, so a host taking a little per limit held a whole answer, counted in max_buffered_response_bytes, for days); ARCHITECTURE §3 (neither possible: reset)',
  },
  upstream_unreachable: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: false,
    idNullStatus: 502,
    description: 'No connection to the seller (DNS, connect or TLS failure): the request was not delivered.',
    source: 'ARCHITECTURE §3',
  },
  agent_backoff: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: false,
    idNullStatus: 502,
    description:
      "The agent backs off for this kind of call (its method, or its tool for tools/call): those answers kept breaking size or structure bounds (backoff_after_breaches), so the gateway sends one probe request after each backoff and answers the requests that waited for it without sending them when it breaches again, when the wait reaches response_deadline_ms, when its turn comes too late to finish within it, when 256 already wait, or when the gateway shuts down. A clean answer ends the backoff. A stream resumed with Last-Event-ID is never answered this: its request was sent already; its outcome counts for its kind as the request's answer would (docs/configuration.md backoff_after_breaches).",
    source: 'issue 5 (fairness: a hostile seller must not stall other agents); docs/configuration.md backoff_after_breaches',
  },
  pipeline_wait: {
    code: 'SERVICE_UNAVAILABLE',
    details: TIME,
    mayHaveExecuted: false,
    idNullStatus: 504,
    description:
      "The request was pipelined on its HTTP/1.1 connection behind answers still being written, and the gateway sends such a request to its seller only at its turn, once the answers before it were written; its turn came with less than 1 s or a quarter of its response_deadline_ms left (the deadline runs from the request's arrival, the wait included), so it was not sent. observed_ms is how long it waited. Send it again on a connection with nothing ahead of it.",
    source:
      'a hostile new-user trial 15, H1 (pipelined requests were forwarded at once and their answers held behind the answer being written, outside max_buffered_response_bytes: test/regressions/pipelined-answers-unbounded-memory.test.ts); docs/configuration.md response_deadline_ms',
  },
  cancel_wait: {
    code: 'SERVICE_UNAVAILABLE',
    details: TIME,
    mayHaveExecuted: false,
    idNullStatus: 504,
    description:
      "A `notifications/cancelled` naming the request (its seller url, session and id) came before the gateway sent it (pipelined behind other answers on its connection, or waiting for its agent's backoff turn), and the gateway sends such a request only once the seller has answered the cancellation (2xx: never sent; any other answer: sent); its turn came while that answer was awaited, and less than 1 s or a quarter of its response_deadline_ms was left (the deadline runs from the request's arrival, every wait included) before the seller refused it, or before any answer came, so it was not sent. Cancellations that came after its turn are not waited for. observed_ms is how long it waited in all. Send it again if the host did not cancel it (anyone knowing the session id can send a cancellation; the seller decides whether it holds).",
    source:
      'a review of the cancel-accept fix, Medium 2 (a request held for such answers waited as long as new cancellations kept coming, or as long as a twin agent\'s deadline, past its own: 5,368 ms and 4,115 ms with a 1,000 ms deadline, then answered `pipeline_wait`: test/regressions/overlapping-cancels-hold-request-past-deadline.test.ts); docs/configuration.md response_deadline_ms',
  },
  agent_url_changed: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: false,
    idNullStatus: 502,
    description:
      "A config reload moved the request's agent to another url (another resource: a url only respelled, `/mcp?` for `/mcp`, is no move) while the request waited for its agent's backoff turn (backoff_after_breaches). Such a request was resolved under the config of its arrival (url, headers, limits), as every exchange in flight keeps its config, and a request not yet sent goes to no seller the config no longer gives its agent: not to the seller the agent left, and not with the old config's headers to the new one. So it was not sent; it is answered at the reload, its place in the queue given up. Send it again: it goes to the new url. A reload that removes the agent answers such requests unknown_agent instead; one that keeps the agent's url (its headers or limits changed) leaves them to be sent at their turn as they were resolved (docs/configuration.md, Reload).",
    source:
      'hostile trial 57, F4 (a request waiting out its backoff was sent with the old config, its headers included, about 4 s after a reload removed its agent: test/regressions/backoff-waiter-sent-after-agent-removed.test.ts); docs/configuration.md Reload',
  },
  agent_backoff_shed: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      "The request was sent, but its answer was waiting for room under the agent's max_buffered_response_bytes while that kind of call backs off (backoff_after_breaches): the gateway stopped reading it instead of holding it (load shedding). Answers that read on within the cap, and the agent's oldest, are never shed.",
    source: 'issue 5 (memory under attack: 50 concurrent 100 MiB answers); docs/configuration.md max_buffered_response_bytes',
  },
  upstream_reset: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: 'The seller closed or reset the connection, or sent an unreadable response, after the request was sent and before its response was complete. The seller may not have received it: a request sent on a kept-alive connection just as the seller closes it (the seller\'s `Keep-Alive: timeout` not kept, or the two ends\' timers crossing) fails the same way, with no byte of an answer (hostile trial 42, L2: 5 of 200 calls to a seller that closed each connection 0-30 ms after its answer), and the gateway never sends a request twice, so the host is told, either way, that the seller may have completed it. An unsolicited `100 Continue` or a `101 Switching Protocols` counts as an unreadable response (undici, the gateway\'s HTTP client, closes the connection on them; the gateway never sends `Expect` or `Upgrade` to a seller; a new user\'s trial, 2026-12-03). A body that arrived whole but cannot be decoded by its Content-Encoding is `upstream_encoding_invalid` instead. On SSE that includes a stream that ends cleanly with the response in an event its blank line never completed (`data: {…}\\n` and the end): such an event is never dispatched (WHATWG HTML §9.2.6), so nothing of it is forwarded (a hostile new user\'s trial 10, F5).',
    source: "ARCHITECTURE §3; a hostile new user's trial 10, F5 (an SSE event cut off after its last line's line break was forwarded as the answer, logged `ok`: test/regressions/sse-unterminated-event-delivered.test.ts)",
  },
  upstream_headers_too_large: {
    code: 'SERVICE_UNAVAILABLE',
    details: ['limit_bytes', 'observed_bytes', 'limit_lines', 'observed_lines'],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      "The seller's response head was too large. Either the head the host would get is over 16,384 bytes (MAX_HOST_HEAD_BYTES, src/response/head-size.ts: Node's and undici's default header limit, which most HTTP clients share) or over 99 header lines (MAX_HOST_HEAD_LINES: the most Python's http.client reads, which `requests` and `urllib` use: 100 lines after the status line, the blank line ending the head among them, then `HTTPException: got more than 100 headers`; Rust's hyper and Envoy read 100 by default; Node's http client keeps 2,000 and drops the rest), both fixed, not configured, counted as written: the status line (in the bytes), the seller's header lines as the gateway forwards them (stripped ones gone, each Set-Cookie and each line of a repeated header a line, each Set-Cookie with its added `; Path=/agents/<name>/mcp`), and a reserve of 221 bytes and 7 lines for the lines the gateway and Node add (the SSE headers, Content-Length, Date, Connection, Keep-Alive, and the blank line in the bytes); judged on a 2xx or 4xx answer when its head arrives, before anything is written to the host or the body is read. Over the bytes: limit_bytes and observed_bytes, that count, which may exceed what Node would write by up to a few hundred bytes (the seller's lines a gateway line replaces, such as its Content-Type, count too), never fall short of it. Over the lines alone: limit_lines and observed_lines, counted alike, up to 5 lines over what Node writes on a JSON answer and 3 on an SSE one (the reserve's SSE Cache-Control and X-Accel-Buffering lines, absent on JSON; its Keep-Alive line, absent to a `Connection: close` host; and the seller's own Date and Content-Type, which count beside the lines written in their place; hostile trial 44). The seller's headers, cookies included, are not forwarded and its body is not read (its cookies are not dropped to make the rest fit: a session or load balancer that relies on them would break on the next call, with no word of why). Or the seller's head was over the limit the gateway reads it with (undici's maxHeaderSize, Node's --max-http-header-size, 16,384 by default, counted over header names and values): limit_bytes is that limit, observed_bytes absent (undici stops reading at the limit). Either way the request was delivered.",
    source:
      "a hostile new user's trial 15, M1 (the gateway's `Path` on each of 650 small cookies took a 12.9 KB seller head over 16 KiB: the MCP SDK client's callTool failed `fetch failed`, UND_ERR_HEADERS_OVERFLOW, node:http HPE_HEADER_OVERFLOW, the exchange line said `ok`: test/regressions/set-cookie-path-overflows-host-headers.test.ts) and L3 (a seller head over undici's limit was `upstream_reset`: test/regressions/seller-headers-over-limit-reported-as-reset.test.ts); hostile trial 42, Medium (2,500 lines `x: 1`, 15 KB: a Python host's http.client raised `got more than 100 headers`, Node's kept 2,000 lines, the exchange line said `ok`: test/regressions/seller-header-lines-break-python-host.test.ts)",
  },
  upstream_status: {
    code: 'SERVICE_UNAVAILABLE',
    details: ['upstream_status'],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: 'The seller answered with an HTTP 5xx status, or with any error status to a resumed request stream (whose request would otherwise never be answered); with Content-Type as several field lines with differing values it is `upstream_not_mcp` instead, whatever the status.',
    source:
      "ARCHITECTURE §3; a new user's trial 6 (a 500 or 503 with differing Content-Type lines was `upstream_status`, a 4xx or 3xx `upstream_not_mcp`: test/regressions/differing-repeated-content-type-on-5xx-upstream-status.test.ts)",
  },
  upstream_not_mcp: {
    code: 'SERVICE_UNAVAILABLE',
    details: ['upstream_status'],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description: "The seller did not answer with MCP: a 2xx that is not JSON or SSE (an empty answer to a request included), a 3xx, a status outside 100-599 (RFC 9110 §15: `600`, `099`; its message says so), Content-Type as several field lines with differing values (checked first, whatever the status), a body that is no JSON-RPC message or no well-formed response to the request's id (another id, a repeated member name, a message object or its `error` of more than 1000 members), anything but SSE to a GET, or SSE to a DELETE. The host gets this error (for each request a batch still awaits; HTTP 502, id null, where none awaits one). A notification's non-SSE 2xx answer holding no JSON-RPC message is an acknowledgement: the host gets 202. Details: [below](#upstream_not_mcp-in-detail).",
    source: "ARCHITECTURE §3; JSON-RPC 2.0 §4, §5; regression tests: see [below](#upstream_not_mcp-in-detail)",
  },
  gateway_shutdown: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      "The gateway shut down and the request's SSE stream could not be resumed: it had sent no event id to resume from, or had sent one while the resume secret is the random per-process one (none configured: no gateway verifies this process's tokens once it exits, so a resume is refused `resume_token_invalid`). Such a stream is left to finish within `shutdown_grace_ms`; this error comes when it is still open min(1000 ms, half the grace) before the grace runs out, or at a second signal, or (per-process secret) when the seller ends it after an event id without the answer; for the request's id, for each request still awaited on a batch's stream. With a configured secret a stream that sent an event id is left to finish the same way and, still open then, ends plainly instead (outcome `resumable_end`): the host's MCP client resumes with its last token on the successor.",
    source:
      "ARCHITECTURE §3 and §4; a hostile new user's trial 13, M1 (with no resume secret, a stream that had sent an event id ended plainly at shutdown, the MCP SDK client resumed into `resume_token_invalid` on the restarted gateway 5 times and its call hung until its own timeout: test/regressions/restart-without-secret-hangs-sdk-call.test.ts); a hostile trial 47, F1 (it came at the signal, although the seller would have answered within the grace: test/regressions/shutdown-answers-unresumable-sse-call-at-once.test.ts); a hostile operator's trial 49, finding 1 (with a configured secret such a stream ended plainly at the signal, and on a same-port restart the SDK client's resume met `draining` and gave up: test/regressions/restart-with-secret-loses-answered-sse-call.test.ts)",
  },
  unsupported_encoding: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      'The seller used a Content-Encoding the gateway did not ask for (a coding not in the agent\'s `accept_encoding`, or `br` on the standalone GET stream or a long-lived stream, which are not offered it: docs/configuration.md accept_encoding) or cannot decode (anything but `gzip`, `x-gzip`, `deflate`, `br` and `identity`: `compress`, `zstd`, `gzip;q=1`), or stacked more than 4 codings (`MAX_STACKED_CODINGS`, src/response/decode.ts: `gzip, gzip` decodes, up to 4 layers; a list of 5 or more codings other than `identity` is refused before any decoder is made, `identity` entries and empty list elements being no coding and ignored), or more than one `br` (`MAX_BROTLI_LAYERS`: no encoder stacks brotli, and each layer holds a window of up to 16 MiB), or stacked more than one coding on the standalone GET stream or a long-lived stream (they have no total, raw or decoded, so an intermediate layer there would be bounded by nothing: exchange.ts maxStackedCodings; `gzip, gzip` whose outer layer inflated endless empty stored blocks held a CPU core). RFC 9110 §8.4 sets no maximum and real sellers send one coding; each layer is a decoder of its own (a zlib stream, or a brotli window of up to 16 MiB) whose output is bounded separately by the decoded-bytes limit, so every layer multiplies what one small compressed body can make the gateway decode.',
    source: 'ARCHITECTURE §3; a new user\'s trial, 2026-12-03 (the 4-layer limit was undocumented; identity entries not counted: a hostile trial, F8); a hostile new user\'s trial 15, H2 (brotli windows outside every bound: 30 GET streams with one `br` layer took 655 MB, `br, br, br, br` ~62 MB per GET stream: test/regressions/brotli-window-on-get-stream-unbounded.test.ts); review 30, finding 1 (`gzip, gzip` on the GET stream, its intermediate layer unbounded: 8.78 s of CPU in 10 s at ~1 MB/s of wire: test/regressions/get-stream-stacked-codings-unbounded-cpu.test.ts)',
  },
  upstream_encoding_invalid: {
    code: 'SERVICE_UNAVAILABLE',
    details: [],
    mayHaveExecuted: true,
    idNullStatus: 502,
    description:
      "The seller's body could not be decoded by its declared Content-Encoding (any layer of it: `gzip`, `x-gzip`, `deflate`, `br`): corrupt data (a wrong CRC-32 or Adler-32, an invalid block), data that is not in that coding (a body labelled `gzip` that is not gzip; under `deflate`, data that is neither a zlib stream, RFC 9110 §8.4.1.2, nor a raw deflate stream, RFC 1951: raw deflate is decoded, as browsers and curl do, since servers send it under that name), an empty body where the answer needs content (the 2xx answer to a request, 204 and 205 aside: no byte is data in any coding; a 202 or 204 with no body answering a notification passes as before; a 202 with no body answering a request is an empty 202, `upstream_not_mcp`, whatever its coding: hostile trial 59, F1), a compressed stream cut short in a body that nonetheless ended (its Content-Length reached, its last chunk sent, or its connection closed where that ends the body), or any byte after the end of the compressed stream, the same for every coding. For `gzip` a next member is data, not such a byte (RFC 1952 §2.2: a gzip file is a series of members; Node's gunzip decodes it): `gzip(A)` then `gzip(B)` is the body AB, while anything else after the last member is this error, zero bytes included (Node's gunzip alone would skip them as padding); after a `deflate` or `br` stream every byte is, a second stream included (RFC 9110 §8.4.1: one stream per coding; Node's inflate and brotli decoders stop at its end). The connection was sound: a reset or close before the body's end stays `upstream_reset`. A JSON body is read whole, so nothing of it is forwarded. On SSE the events decoded before it go out, then it ends the stream as a bound's breach does (the error for the request's id; for id null on a notification's stream); the standalone GET stream or a long-lived one ends plainly instead (outcome `resumable_end`, this reason), as sse_idle ends it. An SSE stream is decoded as it arrives, so a check value (at the stream's end) is verified at the end only, and a request's stream ends at its response: what follows the response is not read, a wrong check value there included, as on an uncompressed stream.",
    source:
      "RFC 1952 §2.2; RFC 9110 §8.4.1; a new user's hostile trial 8, F9 (bytes after a complete gzip member were `upstream_reset`, the same bytes after a `deflate` or `br` stream ignored and the answer forwarded; a wrong CRC, a compressed stream cut short in a complete body and a body labelled `gzip` that is not gzip were `upstream_reset`, which names a network fault: test/regressions/corrupt-compressed-body-upstream-reset.test.ts; a hostile trial 26, L4 (an empty body labelled `gzip` answering a request was `upstream_not_mcp`: test/regressions/empty-coded-body-reported-not-mcp.test.ts))",
  },
} as const satisfies Record<string, ReasonSpec>;

export type AdcpErrorReason = keyof typeof REASONS;

/** One reason an SSE event is dropped, not answered, that is no minted error's (docs/errors.md, "Streams that answer no request"). */
export interface DropReasonSpec {
  readonly description: string;
  readonly source: string;
}

/**
 * Reasons an event is dropped from a stream that answers no request (the standalone GET
 * stream, a notification's or host response's, a long-lived one) besides a breach's {@link REASONS} (`sse_event`, `json_depth`,
 * `json_nodes`, `upstream_not_mcp`): the `reason` of the `SSE stream: event
 * dropped` warning (a stream's first drop) and a key of the summaries' counts
 * (response/sse-drop-log.ts), of the exchange line (`reason`, `events_dropped`), and of
 * `adcp_gateway_sse_events_dropped_total`.
 * No error is minted for these: the stream has no id to answer.
 */
export const DROP_REASONS = {
  get_stream_response: {
    description:
      "An event on the standalone GET stream (a GET without `Last-Event-ID`, or resuming that stream with one of its tokens), whatever its `event:` name (a new user's trial 9, F1: a named one went out unchecked), whose data is a JSON-RPC response: an object with a `result` or an `error` member (its name in any case as Go folds it: a Go host reads `\"Result\"` and `\"reſult\"` as `result`; a new user's trial 8, F3 and F3 (residual): test/regressions/case-variant-member-names-accepted.test.ts, unicode-fold-member-names-accepted.test.ts), with or without an `id`, a `method` beside them included, or an object that names no method (its names in any case likewise), with an `id` (the MCP Go SDK reads it as a response with that id; hostile trials: test/regressions/id-only-message-on-request-stream-passes.test.ts) or without (no message at all: `{\"jsonrpc\":\"2.0\"}`; a review: test/regressions/seller-message-without-kind-forwarded.test.ts), an empty `method` naming none (see \"Every message has a kind\" above), or an array holding one or holding an element that is not an object (a nested array: no JSON-RPC message, and a lenient client may flatten it; a new user's trial, 2026-12-03). MCP forbids a response there (a client matches a response to its pending call by id alone, so it would answer a call past that call's limits and rewrite); requests and notifications on that stream pass unchanged. Data that is no JSON text only for its `NaN`, `Infinity` or `-Infinity` literals is judged as a host whose parser reads them as numbers reads it (Python's `json`, pydantic: a new user's trial 8, F2). A stream that resumes a POST's (its token minted on a request's stream) is not the standalone stream: a response there answers its request, as before.",
    source:
      "MCP Streamable HTTP 2025-03-26 and 2025-06-18, \"Listening for Messages from the Server\" (\"The server MUST NOT send a JSON-RPC response on the stream unless resuming a stream associated with a previous client request\"); a new user's trial (a seller answered a pending call on the standalone GET stream: test/regressions/get-stream-answers-pending-call.test.ts); a new user's trial 9, F1 (the same under `event: x-custom`: test/regressions/sse-named-event-unchecked.test.ts)",
  },
  notification_stream_response: {
    description:
      "An event on the SSE stream answering a POSTed notification or JSON-RPC response (MCP expects 202 with no body there; a stream resumed with one of its tokens included), whatever its `event:` name (a new user's trial 9, F1), whose data is a JSON-RPC response, as on the standalone GET stream: an object with a `result` or an `error` member (its name in any case, as there), with or without an `id`, a `method` beside them included, or one that names no method, with an `id` or without (an empty `method` naming none), or an array holding one or holding an element that is not an object; data that is no JSON text only for its `NaN`, `Infinity` or `-Infinity` literals as a lenient host reads it. No request of that POST awaits a response, so it would answer another pending call by its id, past that call's limits and rewrite; requests and notifications on that stream pass unchanged, and the stream goes on. A JSON body holding such a response answering that POST is `upstream_not_mcp` (HTTP 502, the error for id null).",
    source:
      "MCP Streamable HTTP 2025-03-26 and 2025-06-18, \"Sending Messages to the Server\" (for a POST of only notifications or responses, \"the server MUST return HTTP status code 202 Accepted with no body\"); a new user's trial 8, F4 (a response to pending call 1 in the SSE and JSON answers to a notification and to a host response reached the host, logged ok, past the call's 500-byte tool limit, its text not deduped: test/regressions/notification-answer-carries-response-forwarded.test.ts); a new user's trial 9, F1 (the same under `event: x`: test/regressions/sse-named-event-unchecked.test.ts)",
  },
  message_without_kind: {
    description:
      "An event on a request's or a batch's SSE stream (resumed or not), whatever its `event:` name, whose data is no JSON-RPC message of any kind and names none: a JSON object (or a JSON object as a lenient host reads `NaN` and `Infinity`) with no `id`, `method`, `result` or `error` member, as written, escaped, or in any case as Go folds names (`\"ID\"`, `\"Method\"` are named), with or without a `jsonrpc` member (`{}`, `{\"jsonrpc\":\"2.0\"}`, `{\"jsonrpc\":\"2.0\",\"params\":{}}`, `{\"status\":\"working\"}`), or a non-empty array of only such objects. No host reads it as a message (the MCP TypeScript SDK client reports it through `onerror` and reads on; the MCP Go SDK refuses to decode it) and none can route it to a call, so the stream goes on without it: not forwarded, its `id:` not made a resume token (as a dropped event's on the standalone GET stream: a resume from the token before replays it, dropped again). Anything else that names no method is still `upstream_not_mcp` there: an id-only message (`{\"jsonrpc\":\"2.0\",\"id\":999}`, which a Go host reads as a response to its call 999), an empty or `null` `method`, a lone `\"Method\"`, or an array mixing such objects with messages. On the standalone GET stream and a notification's stream such data is dropped `get_stream_response` / `notification_stream_response` as before; as a request's JSON answer it is still `upstream_not_mcp` (the body is the answer).",
    source:
      "JSON-RPC 2.0 §4, §5; a hostile trial 17, M1 (the MCP TypeScript SDK's example InMemoryEventStore replays events sorted by `<stream>_<ms>_<random>` as strings, so a priming event stored as `{}` in the same millisecond as a progress event was replayed after it as `data: {}`; the gateway answered the call `upstream_not_mcp`, ~1 call in 5, while the SDK client reading the seller directly skipped it and returned the result, 30/30: test/regressions/sdk-example-event-store-priming-replay-fails-call.test.ts)",
  },
} as const satisfies Record<string, DropReasonSpec>;

/** The `reason` of an event dropped from a stream that answers no request: a breach's, or a {@link DROP_REASONS} entry. */
export type DropReason = AdcpErrorReason | keyof typeof DROP_REASONS;

/** One reason a stream that answers no request ends plainly, that is no minted error's or drop's (docs/errors.md, "Streams that answer no request"). */
export interface EndReasonSpec {
  readonly description: string;
  readonly source: string;
}

/**
 * Reasons the gateway ends a stream without a cumulative bound (the standalone GET stream, a
 * long-lived one) plainly, outcome `resumable_end`, besides a minted error's {@link REASONS}
 * (`sse_idle`, `sse_deadline`, `upstream_encoding_invalid`) and a reload's (routing/open-streams.ts
 * RECONFIGURED_REASONS): the exchange line's `reason`. No error is minted for these: the
 * stream has no id to answer, and the host resumes with its last event id.
 */
export const END_REASONS = {
  sse_undelivered: {
    description:
      "A stream without a cumulative bound (the standalone GET stream, a long-lived one) took max_response_bytes plus the per-event cap (max_sse_event_bytes + 65,536: room for the event being read, so that one the cap accepts goes out after up to max_response_bytes of bytes that reached the host as nothing) of the seller's decoded bytes taken for nothing (every frame forwarded lowers the count by 64 times what it carries to the host: an event's frame as written except its `id:` line (8 bytes, `data: \\n\\n`, for an event with empty data), a token's, a comment's such as `: keepalive` or a `retry:` line's as written, at the end of its own line; so a 2-byte `:\\n` or an event with empty data every so often no longer keeps the stream decoding for nothing, while heartbeats alone never end it), and more came: events dropped (a JSON-RPC response on the GET stream, a breach; each one the parser dispatched counting 1,024 bytes more than its own, but a connection's first `{}`, an MCP SDK server's priming event: what judging it costs, hostile trial 52's leftover), bytes skipped of an event over its cap, unknown-field lines (each, and each `retry:` line whose value is no number, counting 1,024 bytes more than its own: what the parser's work on it costs; hostile trial 52, F2), id-only blocks (their id waits for the next event), blank lines, an event's bytes before its blank line. The bytes up to the limit point are parsed (an event or comment they complete still goes out, and the count is lowered), nothing past it; the stream ends plainly, outcome `resumable_end`, a seller's id not yet sent going out first, so the host resumes with Last-Event-ID, from 0 again. Counted per connection, in decoded bytes (src/response/sse-undelivered.ts). It replaces the skip allowance of one over-cap event (hostile trial 32, L1, which ended such a stream with reason `sse_event`).",
    source:
      "hostile trial 37, F1 (such streams had no bound on bytes decoded for nothing: 50 events each past the per-event cap but ending within the skip allowance, deflate-coded, made 404,439 bytes decode to 415,000,450, 1.6 s of CPU, 270 bytes to the host; dropped `get_stream_response` responses, endless unknown-field lines and id-only blocks did the same: test/regressions/get-stream-undelivered-bytes-unbounded.test.ts); a review of e72ea9d (a comment line in the middle of a block cleared the count for the bytes after it in the same range, so the end depended on the chunking: test/unit/sse-undelivered-cuts.test.ts; a `:\\n` every limit bytes reset the count, the gateway decoding ~1000:1 for nothing without end: test/regressions/get-stream-tiny-comments-reset-undelivered.test.ts); hostile trial 40, F1 (an event with empty data did the same: 885,408 wire bytes decoded to 419,420,600 for 200 bytes to the host: test/regressions/get-stream-empty-events-reset-undelivered.test.ts); a check of the count's chunk independence (the LF of an event's CR LF blank line: whole, the event's frame forgave it with the block, cut between the CR and the LF it was counted after the frame, so the end moved by a byte: test/regressions/get-stream-crlf-blank-line-lf-undelivered-chunks.test.ts; a run of `data:` blocks holding invalid UTF-8, parsed as one piece: an event's frame forgave the run's blocks after it, an event dropped there included, where cut in the run it did not: test/regressions/get-stream-invalid-utf8-run-undelivered-chunks.test.ts; an event credited its block whole in a chunk, forwarded raw, but its data alone cut inside it, parsed, in UTF-16 units, or held: test/regressions/get-stream-event-credit-depends-on-chunks.test.ts); hostile trial 52, F2 (a GET stream of 60 KB of `x` lines per 1.1 KB comment kept the gateway parsing them, ~0.6 µs each, for as long as it lasted: test/regressions/sse-unknown-field-lines-cost-uncharged.test.ts); its leftover (dropped events, ~1.3-2.3 µs each on the GET stream, counted as their bytes only: test/regressions/sse-dropped-events-cost-uncharged.test.ts)",
  },
  sse_wire_overhead: {
    description:
      "A stream without a cumulative bound (the standalone GET stream, a long-lived one) took more than 131,072 bytes plus 5 times its body bytes of framing on its connection (5 bytes of framing per body byte: what a body sent in 1-byte chunks takes): its wire bytes (the head, chunk sizes and chunk extensions, trailers, counted as the connection delivers them, before they are parsed) less the body bytes the HTTP parser delivered (content-coded, as counted before decoding), per connection. The events before went out; the rest is not read, the seller's connection is closed, and the stream ends plainly, outcome `resumable_end`, a seller's id not yet sent going out first, so the host resumes with Last-Event-ID. Honest chunking stays far within it (a chunk of n bytes costs 5 bytes of framing plus its length's hex digits; a `: keepalive` comment chunked alone, 5 for 13). Checked at each read, so the framing may pass the bound by up to two reads (64 KiB each). A stream with a total has its wire bytes bounded by `raw_bytes` instead (src/routing/wire-meter.ts).",
    source:
      "review 37, F1 (chunk framing was never counted: chunk extensions of any length, which undici reads where Node's HTTP server caps them at 16 KiB since CVE-2024-22019, kept the gateway parsing for nothing; on a request's answer 839 MB on the wire were counted as 875 bytes: test/regressions/chunk-extensions-uncounted-raw-bytes.test.ts)",
  },
} as const satisfies Record<string, EndReasonSpec>;

/** The `reason` of a plain end of a stream that answers no request: an {@link END_REASONS} entry. */
export type EndReason = keyof typeof END_REASONS;

export interface RefusalSpec {
  /** HTTP status of the refusal. */
  readonly statusCode: number;
  /** JSON-RPC `error.code` of its body. */
  readonly jsonRpcCode: number;
  readonly description: string;
  readonly source: string;
}

/** JSON-RPC 2.0 standard codes used by refusals. */
export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_INTERNAL_ERROR = -32603;
/** AdCP's reserved code for SERVICE_UNAVAILABLE (transient: send the request again), used by the `draining` refusal. */
export const JSONRPC_SERVICE_UNAVAILABLE = ADCP_CODES.SERVICE_UNAVAILABLE.jsonRpcCode;

/**
 * Refusals of a host's request, made before any seller is contacted (ARCHITECTURE §3), plus
 * the three answers of the same shape that are not about a seller (`not_found`,
 * `internal_error`, and `draining` while the gateway shuts down); `error.data.reason` is the key.
 */
export const REFUSALS = {
  not_found: {
    statusCode: 404,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The path is not an MCP endpoint of the gateway (those are /agents/<agent>/mcp) nor, on the listener that serves them, /healthz, /readyz or /metrics; the message names the path by its first 64 characters (followed by … when it is longer) and what the listener serves. The ops_listen listener answers any other path so too, logged and counted as on the main one.",
    source: "ARCHITECTURE §1; a hostile new user's trial 19, L1 (the ops_listen listener answered Fastify's own 404 body, not logged or counted: test/regressions/ops-listen-unknown-path-fastify-404.test.ts)",
  },
  origin_not_allowed: {
    statusCode: 403,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The request carries an Origin header (a browser's) that is neither a loopback origin (http or https, localhost, 127.0.0.1 or [::1], any port) nor listed in allowed_origins; id null. Also a request whose Sec-Fetch-Site is cross-site or same-site, whatever its Origin: a browser's request for another site's page, or another origin of this site (a page on another loopback port), made without CORS (an img, a link, a no-cors fetch, a form, sendBeacon; same-origin and none, a typed URL, are served). Also a GET with an Origin not listed in allowed_origins, loopback or not: a page's WebSocket handshake (Chromium sends it with no Sec-Fetch-*) or EventSource. Also a POST with an Origin whose Content-Type is not application/json (parameters allowed): what a page sends without a CORS preflight (none, text/plain, a form, multipart), from a browser that sends no Sec-Fetch-Site; when its Content-Type is no media type at all (`application/json garbage`, `json`, a list), the message says it could not be parsed and quotes it (first 64 characters). Buyer agents send neither header; a web page reaching the gateway (DNS rebinding, a cross-site form or image) would otherwise use the agents' configured credentials. A head with `Expect: 100-continue` gets it at once, no 100 Continue, its body not read, the connection closed after it (the same status, body, refused line and count). On the `ops_listen` listener too (`/healthz`, `/readyz`, `/metrics`: a page's request for the agents' names; hostile trial 53, F4).",
    source: "MCP Streamable HTTP, Security Warning (servers MUST validate the Origin header; 403 on an invalid one); found by a new user (a rebinding Host and Origin got the configured Authorization added); Fetch Metadata (Sec-Fetch-Site); a new user's trial, 2026-12-03 (a cross-site img GET, no Origin, got the configured Authorization added: test/regressions/cross-site-get-no-origin-uses-credentials.test.ts); hostile trial 33, F1 (a page on another loopback port, in Chromium, had tools called with text/plain no-cors fetches, forms and sendBeacon: test/regressions/loopback-page-blind-post-calls-tool.test.ts); hostile trial 35, F1 (its WebSocket handshake, a GET with an Origin, reached the seller: the same test); hostile trial 35, leftover 2 (`Content-Type: application/json garbage` was told it must be labelled application/json: test/regressions/unparseable-content-type-said-unlabelled.test.ts); a hostile trial 23, L1 (with `Expect: 100-continue` it came only after 100 Continue and the whole body, 408 when the body never came: test/regressions/expect-continue-before-header-refusal.test.ts)",
  },
  host_not_allowed: {
    statusCode: 403,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The Host header names neither localhost, 127.0.0.1 or [::1] (any port) nor a host listed in allowed_hosts, and the gateway checks Host: it listens on a loopback address, or allowed_hosts is not empty; id null. After DNS rebinding a same-origin GET carries no Origin, only the attacker's host name in Host. A head with `Expect: 100-continue` gets it at once, no 100 Continue, its body not read, the connection closed after it (the same status, body, refused line and count). On the `ops_listen` listener too (`/healthz`, `/readyz`, `/metrics`, GET and HEAD), judged by `ops_listen.host` in place of `listen.host`.",
    source: "MCP Security Best Practices (local MCP server compromise: DNS rebinding; the TypeScript SDK's Host validation); a hostile operator's trial 53, F4 (`ops_listen` answered `/metrics` to `Host: rebind.evil.example`: test/regressions/ops-listen-metrics-dns-rebinding.test.ts); found by a new user (a GET with a rebinding Host got the configured Authorization added); a hostile trial 23, L1 (with `Expect: 100-continue` it came only after 100 Continue and the whole body, 408 when the body never came: test/regressions/expect-continue-before-header-refusal.test.ts)",
  },
  unknown_agent: {
    statusCode: 404,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The path /agents/<agent>/mcp names no agent of the configuration: a name of any length a request head can carry (longer, the head is refused as request_header_too_large); the message and data.agent give its first 64 characters, followed by … when it is longer (the `refused` log line's `agent` has the 64 characters alone); the request's id (null for a GET, a DELETE, a notification or a batch; a body over the built-in max_json_depth, 64, or max_json_nodes, 100,000, has its id read without parsing it, as an over-bound body's is, null when that cannot tell it). A body to an unknown agent is read only for that id, up to defaults.max_request_bytes (not the largest agent's bound): a Content-Length over it gets this error from the head, id null, the body not read (an `Expect: 100-continue` gets it, no 100 Continue), a chunked body as soon as its bytes pass it; the connection closes after it. A name that is not valid percent-encoding (`/agents/%zz/mcp`, RFC 3986 §2.1) names no agent either: this error for id null (its body is not read), the name as written. Also a request waiting for its agent's backoff turn (backoff_after_breaches) when a config reload removes the agent: answered at the reload, never sent, with the same body a request arriving then gets; its exchange line says outcome `refused` (not counted: its agent has no series any more), with no `refused` line.",
    source: "ARCHITECTURE §3; a new user's trial, 2026-12-03 (a name over 100 characters got Fastify's own 414 body, not logged or counted: test/regressions/agent-name-over-100-chars-fastify-414.test.ts; a name that does not percent-decode got Fastify's bare 400: test/regressions/agent-name-bad-percent-encoding-fastify-400.test.ts); a review (a DELETE whose body was a JSON-RPC request with id 7 was refused for id 7: test/regressions/delete-body-id-in-refusal.test.ts); a hostile trial 23, H2 (a POST of 200 MB to an unknown agent was told 100 Continue and read whole under the largest agent's max_request_bytes, 1 GiB, before its 404: test/regressions/unknown-agent-body-read-to-largest-limit.test.ts); a review of the request side, M1 (4 MiB of `[` to an unknown agent was parsed whole for its id, the event loop held 2 s: test/regressions/unknown-agent-refusal-unbounded-parse.test.ts); hostile trial 57, F4 (a request waiting out its backoff was sent to the removed agent's seller with the old config when the backoff ended: test/regressions/backoff-waiter-sent-after-agent-removed.test.ts)",
  },
  request_too_large: {
    statusCode: 413,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The host's request body is over the agent's max_request_bytes. A DELETE's body (never forwarded: a DELETE ends the session) is held to defaults.max_request_bytes instead, whatever the agent's: a Content-Length over it gets this error from the head (id null, `data.limit_bytes` that bound, no 100 Continue to an `Expect: 100-continue`), a chunked body as soon as its bytes pass it (id null: its body is not read). A body read whole under a bound a reload has since lowered (a request pipelined behind another answer on its connection, judged at its turn) gets it for its id, `data.limit_bytes` and `data.observed_bytes` its size (hostile trial 59, I3: it was id null). The answer closes the connection; a body the host is still sending is read and discarded meanwhile (at most 2 s and 64 MiB, or until the host closes its side), so a host that sends the whole body without waiting reads this answer, not a reset.",
    source: "ARCHITECTURE §3; hostile trial 23, H1 (a host sending an oversized body without waiting mostly got a reset, not this answer: test/regressions/oversized-body-413-lost-to-reset.test.ts); a hostile trial 23 follow-up (a DELETE's body was read under the largest agent's max_request_bytes, 100 Continue first, for nothing: test/regressions/delete-body-read-to-largest-limit.test.ts); hostile trial 59, I3 (a pipelined request refused at its turn over a max_request_bytes a reload lowered got id null: test/regressions/held-request-over-lowered-limit-refused-id-null.test.ts)",
  },
  batch_too_large: {
    statusCode: 400,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description:
      "A JSON-RPC batch from the host (MCP 2025-03-26) holds more messages (requests, notifications and responses) than the agent's max_batch_messages (default 100); id null, `data.limit_messages` and `data.observed_messages`; judged once the body is read and its elements are valid, before anything is sent to the seller. The bound keeps the gateway's own answer to a batch small: when a batch's answer breaks a limit or the seller fails, each request of the batch gets an error minted by the gateway (about 1.1 KB for a `tools/call`), so that answer is at most max_batch_messages such errors. Send fewer messages per batch (several batches, or single messages).",
    source:
      "JSON-RPC 2.0 §6; a hostile new-user trial 14, M1 (12,000 `tools/call` in one batch to an agent with max_response_bytes 100000 got a 13.5 MB answer of minted errors, 1-2.6 s of event loop: test/regressions/batch-minted-errors-unbounded.test.ts)",
  },
  unsupported_content_encoding: {
    statusCode: 415,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The host's request body has a Content-Encoding that names a coding other than identity, known to the gateway or not (`gzip`, `, br`, `zstd`): request bodies are read and forwarded uncompressed (the answer carries Accept-Encoding: identity); id null (a body with a Content-Encoding is never read, so its id is unknown). The header is read as a seller's is: empty list elements and `identity` (any case) are no coding, so an empty value (`Content-Encoding: `), `,` or `identity, identity` is none, and the request is forwarded with the header as sent, as `identity` is.",
    source: 'RFC 9110 §12.5.3, §15.5.16; found by a new user (a gzip body was refused as parse_error); a hostile trial 26, L3 (an empty value was refused as naming a coding, while the seller side reads it as none: test/regressions/empty-request-content-encoding-refused.test.ts)',
  },
  parse_error: {
    statusCode: 400,
    jsonRpcCode: JSONRPC_PARSE_ERROR,
    description: "The host's request body is not valid JSON, or is not well-formed UTF-8 (a stray 0xFF, a Latin-1 `é`, an overlong or surrogate encoding, a sequence cut at the end: RFC 8259 §8.1 has JSON exchanged between systems be UTF-8, so such bytes are no JSON text; the message says so, whatever the `charset` label; a single message and a batch alike). A UTF-8 byte order mark (EF BB BF) at the very start of a POST body is ignored, not refused: the body is read and forwarded without it, the seller's Content-Length that of the bytes after it (RFC 8259 §8.1 lets a parser ignore one, and the gateway drops a seller's the same way); a second one, or one anywhere else, is no JSON text, and a body that is only a BOM is empty. The body is read as JSON whatever its Content-Type (none, `text/plain`); one that is no media type (empty, `;`, `json`) is served as none (README, Headers sent to the seller).",
    source: "ARCHITECTURE §3; JSON-RPC 2.0 §5.1; a hostile new user's trial 11, F2 (a Content-Type that is no media type was refused `invalid_request` with Fastify's \"Unsupported Media Type\", id null: test/regressions/empty-content-type-fastify-refusal.test.ts); RFC 8259 §8.1 and a hostile new-user trial 14, L2 (a body with `\"name\":\"small_tool<0xFF>\"` was forwarded byte for byte while the gateway read `small_tool\\uFFFD`, a tool with no limits of its own, so a seller decoding leniently ran small_tool past its `max_response_bytes`: test/regressions/host-body-invalid-utf8-skips-tool-limit.test.ts); a hostile new-user trial 14, L3 (a body starting with a BOM, as some .NET and PowerShell encoders write, got a bare \"not valid JSON\", id null: test/regressions/host-body-bom-parse-error.test.ts)",
  },
  invalid_request: {
    statusCode: 400,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The request is not a valid JSON-RPC message (a request, notification, host response or batch that breaks JSON-RPC 2.0 or MCP: a wrong `jsonrpc`, `method`, id or `params`, a request's id null, an empty batch), is a batch from a host on MCP 2025-06-18 or later, is over its `max_json_depth` or `max_json_nodes` (a `tools/call`'s tool's when the tool sets them, else the agent's), writes a member the gateway acts on more than once or in another case, has a message object, `params` of a `tools/call`, `tasks/result` or `notifications/cancelled`, or response `error` of more than 1000 members, or a gateway header is malformed, MCP-Protocol-Version or Mcp-Session-Id is sent more than once, or Mcp-Session-Id is no session ID (empty, or a character outside visible ASCII, 0x21-0x7E), or, on MCP 2026-07-28 or later, Mcp-Method or Mcp-Name names another method or tool than the body, or a GET declares a body (refused from its head, connection closed), or a POSTed request reuses the id of a request still in flight in its seller endpoint (the agent's url) and MCP session (a batch holding such an id, or one id twice, id null). Details: [below](#invalid_request-in-detail).",
    source: "ARCHITECTURE §3; JSON-RPC 2.0 §4.2, §5, §5.1, §6; MCP Basic, Requests; regression tests: see [below](#invalid_request-in-detail)",
  },
  request_header_too_large: {
    statusCode: 431,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The host's request head is over Node's maximum header size, 16 KiB (16,384 bytes, unless --max-http-header-size says otherwise), as Node counts it: the request target and the bytes of each header field name and value (a value's trailing spaces included), not the method, the version, the colons or the line ends, so 4,000 `X-a: 1` lines (32 KB on the wire) count 16,000 bytes; the total must stay under 16,384. Answered by the HTTP server, id null, connection closed (after the answers to the requests pipelined before it on the connection, as for malformed_http). Also a request with more than 1,000 header fields, on any path: Node keeps no more and drops the rest unseen, so such a head was forwarded truncated (an Origin after 1,000 padding fields never checked); refused from its head, id null, Connection: close, its body not read, nothing forwarded, no 100 Continue, with the message `Request header fields too large: the request has more than 1000 header fields (Node keeps no more, and the rest would be dropped unseen): send fewer.`",
    source: 'RFC 6585 §5; found by a new user (Fastify answered with its own non-JSON-RPC body); hostile trial 54, F5a (the doc said 16 KiB while a 32 KB head of 4,000 short fields passed, and fields past the first 1,000 were dropped unseen: test/regressions/header-fields-past-node-count-dropped-forwarded.test.ts)',
  },
  request_timeout: {
    statusCode: 408,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: 'The host did not send its whole request (head and body) within `request_timeout_ms` (default 30 s), counted from the first byte of the request, or, for the first request on a connection, from when the connection opened: a connection that sends nothing gets it too, though it refused no request (a browser\'s speculative preconnect): it writes a debug line `unused connection closed` (`status`, `http_error`), no refused line, and is counted in `adcp_gateway_unused_connections_total`, not as a refusal; answered by the HTTP server, id null, connection closed (after the answers to the requests pipelined before it on the connection, as for malformed_http); never written inside the answer to that request once it has started: the connection closes then, no refused line or count (that answer\'s exchange is its record; a GET that declares a body is refused from its head, invalid_request: hostile trial 54, F2).',
    source: 'RFC 9110 §15.5.9; hostile trial 35, leftover 3 (each of Chromium\'s preconnects, a connection that sent no byte, left a refused line and a count: test/regressions/preconnect-timeout-logged-refused.test.ts)',
  },
  malformed_http: {
    statusCode: 400,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "Node's HTTP parser rejected the request (a malformed request line, header or chunked body) before any route read it (no seller is contacted for it), or an HTTP/1.1 request to an MCP endpoint has no Host header, or any request to one has more than one (RFC 9112 §3.2); id null, connection closed. Refused for its Host header, a head with `Expect: 100-continue` gets it at once, no 100 Continue, its body not read. Requests the host pipelined before the rejected bytes on the same HTTP/1.1 connection are served as usual: their answers go out first, in order, then this refusal, however long they take (each ends by its own bounds: response_deadline_ms, sse_idle_timeout_ms, sse_deadline_ms; a stream with no deadline of its own, the standalone GET stream or a long-lived one, gets its agent's sse_deadline_ms from its start once this refusal waits behind it, and then ends plainly, outcome resumable_end, reason sse_deadline, as sse_idle_timeout_ms ends it), then the connection closes; bytes the host sends meanwhile get no second refusal. Requests the host pipelined after a request refused for its Host header, on the same connection, are not processed (RFC 9112 §9.6): never sent to a seller, not refused, neither logged nor counted; the connection closes after this 400 and the host sends them again (RFC 9112 §9.3.2); this refusal's refused line is their only record.",
    source: "RFC 9112; RFC 9112 §9.3.2 (pipelined requests answered in order); a new user's trial, 2026-12-03 (a malformed request pipelined after valid calls was answered first and alone, the calls forwarded all the same and logged host_aborted: test/regressions/pipelined-bad-request-answers-first.test.ts); a hostile trial, Finding 9 (behind a standalone GET stream the refusal waited as long as the stream lived: test/regressions/pipelined-bad-request-behind-get-stream-unbounded.test.ts); a hostile review, Defect A (valid calls pipelined after a request with no Host were forwarded to their seller, their answers never written: test/regressions/pipelined-behind-closing-refusal-forwarded.test.ts); a hostile trial 23, L1 (with `Expect: 100-continue` it came only after 100 Continue and the whole body, 408 when the body never came: test/regressions/expect-continue-before-header-refusal.test.ts)",
  },
  expectation_failed: {
    statusCode: 417,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The host's request carries an Expect header other than 100-continue (the one expectation HTTP defines, which the gateway meets: it answers 100 Continue and reads the body when a route takes the request (an MCP endpoint, an ops path with GET or HEAD) within its bound, and sends a head it refuses from the head alone (no route takes it; a Content-Length over the bound: its agent's max_request_bytes for a POST, defaults.max_request_bytes for an unknown agent, a method the MCP endpoint does not take or a DELETE's body; or the MCP endpoint's refusals from its headers, before anything of the body counts: origin_not_allowed, host_not_allowed, malformed_http for Host) its refusal at once, no 100, the connection closed after it, and while the gateway drains `draining` in place of that refusal, from the head too (a refusal that carries the request's id, unknown_agent within its bound or an invalid gateway header such as X-Max-Response-Bytes, gets its 100 and the body is read for that id); a list holding 100-continue, `100-continue, foo`, counts as 100-continue, as Node's HTTP server reads it, and RFC 9110 §10.1.1 lets a server ignore the other members); answered by the HTTP server before routing, id null, connection closed; requests pipelined after it on the connection are not processed, as after malformed_http.",
    source: "RFC 9110 §10.1.1, §15.5.18; a new user's trial, 2026-12-03 (Node answered a bare 417 with an empty body, not logged or counted: test/regressions/expect-header-bare-417.test.ts); a hostile review, Defect A (calls pipelined after it reached their seller: test/regressions/pipelined-behind-closing-refusal-forwarded.test.ts)",
  },
  method_not_allowed: {
    statusCode: 405,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: "The HTTP method is not one the path takes: an MCP endpoint takes POST, GET, DELETE; /healthz, /readyz and /metrics (on the listener that serves them, ops_listen's when set) take GET, HEAD. Allow lists them. Id null. An MCP endpoint reads the body of such a request up to defaults.max_request_bytes at most: a Content-Length over it gets this error from the head (an `Expect: 100-continue` gets it, no 100 Continue), a chunked body as soon as its bytes pass it, and the connection closes after it.",
    source: "ARCHITECTURE §3; MCP Streamable HTTP; RFC 9110 §15.5.6; a hostile new user's trial 19, L1 (a POST to /healthz: 404, or Fastify's own 404 on ops_listen); a hostile trial 23, H2 (a PUT of 200 MB to an MCP endpoint was told 100 Continue and read whole under the largest agent's max_request_bytes before its 405: test/regressions/unknown-agent-body-read-to-largest-limit.test.ts)",
  },
  resume_token_invalid: {
    statusCode: 400,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description:
      "Last-Event-ID is not a resume token this gateway minted for this agent and its seller url (format or signature; a request's stream's token from before a reload that moved the agent to another url included: docs/configuration.md, \"The resume secret\"). A url only respelled (`/mcp?` or `/m%63p` for `/mcp`) is the same url (README, Config reload). Last-Event-ID sent more than once (two field lines, or one value `a, b`) gets this reason too, with the message `Last-Event-ID must be sent at most once, with one resume token (the id of the last event received): this request carries several (two field lines, or a list \"a, b\"); send the last one only.` A token minted for a request that carried an Mcp-Session-Id resumes only with that same Mcp-Session-Id: with another, or none, it is refused with a message of its own, no seller contacted (a token without that binding, minted for a request without a session or by an older process of the same secret, resumes with any, until it expires: docs/configuration.md, \"The resume secret\"). The standalone GET stream's token for a url the agent had before such a reload is not refused: that GET opens a fresh GET stream at the new seller, no `Last-Event-ID` sent, its exchange line `\"resume_url_moved\":true`; a replica that did not apply the reload, or this one after a restart, still refuses it.",
    source:
      "ARCHITECTURE §4; hostile trial 36, F2 (such a GET stream's token was refused and the MCP SDK client gave its GET stream up after two refusals: test/regressions/moved-agent-get-stream-given-up.test.ts), F5 (a respelled url counted as moved: test/regressions/reload-url-spelling-counts-as-moved.test.ts); hostile trial 54, F5b (Last-Event-ID sent twice got the generic malformed-token message: test/regressions/repeated-last-event-id-generic-message.test.ts); hostile trial 54, F6 (session A's token resumed with session B's Mcp-Session-Id was forwarded to the seller: test/regressions/resume-token-other-session-forwarded.test.ts)",
  },
  resume_token_expired: {
    statusCode: 400,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description: 'Last-Event-ID verified but is older than resume.ttl_ms.',
    source: 'ARCHITECTURE §4',
  },
  request_loop: {
    statusCode: 400,
    jsonRpcCode: JSONRPC_INVALID_REQUEST,
    description:
      "The request has already passed through this gateway: its Via header carries the entry this gateway appends to every request it sends a seller (`1.1 adcp-gw-` and 16 hex digits, random per gateway instance; RFC 9110 §7.6.3), so an agent's url leads back to the gateway, directly or through a DNS name, a proxy or a port forward. Not forwarded again; the request's id (null for a GET, a DELETE, a notification or a batch). A 4xx, so the gateway that sent it, and each gateway on the way back, passes it to the host as it is (a seller's 4xx passes through): the host gets this error, not a minted `upstream_status`. Another gateway's entry (a second gateway in series) is no loop. An agent url that names the gateway's own listen or ops_listen address is a config error already (docs/configuration.md, agents.<agent>.url).",
    source:
      "RFC 9110 §7.6.3 (Via: avoiding request loops); a hostile new user's trial 10, F4 (an agent url pointing back at the gateway passed --check-config, and one call recursed through the gateway about 10,000 times, one socket and one exchange line per hop, until connections failed: test/regressions/agent-url-loops-to-gateway.test.ts)",
  },
  internal_error: {
    statusCode: 500,
    jsonRpcCode: JSONRPC_INTERNAL_ERROR,
    description: 'A fault in the gateway itself, before anything was sent to the host; the seller may have been contacted (logged).',
    source: 'JSON-RPC 2.0 §5.1',
  },
  pipeline_too_deep: {
    statusCode: 503,
    jsonRpcCode: JSONRPC_SERVICE_UNAVAILABLE,
    description:
      "An MCP request pipelined on an HTTP/1.1 connection while 16 requests already wait there for their turn: the gateway sends a pipelined request to its seller only once the answers before it were written, so one connection has at most one answer being received or held at a time, and at most 16 requests waiting, each holding its body. Not sent to any seller; the request's id (null for a GET, a DELETE, a notification or a batch; a body over the built-in max_json_depth, 64, or max_json_nodes, 100,000, has its id read without parsing it, as for unknown_agent, null when that cannot tell it), `data.limit_requests` 16. This answer goes out in its turn, after those before it; the connection stays open. Send the request again once earlier answers have arrived, or on another connection.",
    source:
      'RFC 9112 §9.3.2 (pipelining); a hostile new-user trial 15, H1 (every pipelined request was forwarded at once and its answer held behind the answer being written, outside max_buffered_response_bytes: 3 connections of 100 pipelined tools/call with 2 MB answers took the gateway from 94 MB to 1.2 GB: test/regressions/pipelined-answers-unbounded-memory.test.ts); a review (a DELETE whose body was a JSON-RPC request with id 7 was refused for id 7: test/regressions/delete-body-id-in-refusal.test.ts)',
  },
  draining: {
    statusCode: 503,
    jsonRpcCode: JSONRPC_SERVICE_UNAVAILABLE,
    description:
      "The gateway is shutting down (SIGTERM, SIGINT, SIGQUIT): a request it receives on a connection opened before the signal (an idle keep-alive connection it had not closed yet, a request half sent when the signal came, one pipelined behind a busy request) is not sent to any seller, whatever its path (the ops endpoints excepted: /readyz answers 503 draining; so is a resume, a GET on an MCP endpoint with Last-Event-ID, handled as usual and its stream kept under the shutdown's rules: README, Graceful shutdown; a hostile operator's trial 51, finding 1: test/regressions/resume-during-drain-refused-draining.test.ts); the answer carries Connection: close, and the request's id when its body can be read (null for a GET, a DELETE, a notification or a batch; a body over the built-in max_json_depth, 64, or max_json_nodes, 100,000, has its id read without parsing it, as for unknown_agent, null when that cannot tell it). A request the gateway refuses from its head when not draining (a Content-Length over its bound, a path no route takes, a bad Origin or Host) gets this from its head, id null, its body not read (an `Expect: 100-continue` gets it, no 100 Continue); any other gets 100 Continue if it asks and has its body read, within its bound, for its id. Send it again, to another instance or once the gateway is back. A new connection is refused (the listener is closed). Requests the host pipelined behind the refused one on its connection (HTTP/1.1) get no answer: the connection closes after the 503 (RFC 9112 §9.6: no further request is processed), and the host sends them again (RFC 9112 §9.3.2); only refusals written to the host are logged (refused) and counted.",
    source: "RFC 9110 §15.6.4; a new user's trial (such requests got Fastify's own 503 body, not logged or counted: test/regressions/shutdown-503-not-json-rpc.test.ts); a hostile trial, Finding 6 (requests pipelined behind a draining refusal were each logged refused and counted, the host got only the first 503: test/regressions/pipelined-after-draining-unanswered.test.ts); a review (a DELETE whose body was a JSON-RPC request with id 7 was refused for id 7: test/regressions/delete-body-id-in-refusal.test.ts); a hostile trial 23, M1 (every `Expect: 100-continue` head got 100 Continue while draining, one over its bound or to no route read whole for a 503: test/regressions/unknown-agent-body-read-to-largest-limit.test.ts)",
  },
} as const satisfies Record<string, RefusalSpec>;

export type RefusalReason = keyof typeof REFUSALS;
