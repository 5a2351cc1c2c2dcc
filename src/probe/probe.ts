/**
 * `adcp-buyer-gateway probe <agent>`: measures an agent's discovery surfaces against the
 * AdCP size targets (`src/mcp/discovery-size.ts`), through the gateway's own pipeline.
 *
 * The gateway is built in-process from the config (`buildApp`) and listens on 127.0.0.1 on a
 * free port, never on `listen` (so a probe runs beside a live gateway), then a raw JSON-RPC
 * client (`rpc.ts`) talks to `/agents/<agent>/mcp` like a host would:
 *
 * 1. `initialize` (offering `PROBE_PROTOCOL_VERSION`), then `notifications/initialized`;
 * 2. `tools/list`, following `nextCursor` to the end (at most `MAX_TOOLS_LIST_PAGES` pages, each
 *    cursor a string of at most `MAX_CURSOR_BYTES`; a cursor seen before ends it: a loop; one
 *    that is no string ends it too: `notStringCursor`);
 * 3. `tools/call get_adcp_capabilities` with `{}`, when the tool is listed.
 *
 * Each response is measured on the bytes the gateway sent (after its normalization), so the
 * report shows what a host on the gateway receives: every byte of the answer through the
 * response (rpc.ts `answerBytes`), on SSE the events before the response included, which the
 * row also counts apart (`events_before`, `bytes_before`), without the `id:` lines carrying
 * resume tokens (`sizeOf`: the target is about the seller's answer, as the live check counts
 * it). It counted the response message
 * alone, and a page answered after 3,000 progress events was reported at 195 bytes, `all
 * within target`, for 311,093 bytes delivered (a hostile new user's trial 15, L1:
 * test/regressions/probe-ignores-events-before-response.test.ts). The capabilities document
 * is measured as AdCP sets its budget, on the document (`measureDiscovery`), with the
 * events before its answer beside it. A gateway local error
 * (`RESPONSE_TOO_LARGE`, `SERVICE_UNAVAILABLE`, ...) or any other failure is a row of its own;
 * an `upstream_not_mcp` for an answer the seller sent in an SSE event named other than
 * `message` says so, with the name (answer-events.ts).
 */
import { kindOfValue } from '../request/peek.js';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createHash, randomBytes } from 'node:crypto';
import { buildApp } from '../app.js';
import { displayUrl } from '../config/display-url.js';
import type { AgentConfig, GatewayConfig } from '../config/types.js';
import { CAPABILITIES_TOOL, DISCOVERY_TARGETS, measureDiscovery, shownBefore, type BeforeResponse, type DiscoveryMeasurement, type DiscoverySurface } from '../mcp/discovery-size.js';
import { extractAdcpError, isJsonObject, ownValue } from '../mcp/extract.js';
import { VERSION } from '../version.js';
import { createRpcClient, PROBE_PROTOCOL_VERSION, type RpcReply } from './rpc.js';
import { AnswerEvents, namedEventAnswer } from './answer-events.js';
import { DEFAULT_PROBE_TIMEOUT_MS } from './options.js';

/** Bound on `tools/list` pages followed: a seller that never stops paging must not keep the probe busy. */
export const MAX_TOOLS_LIST_PAGES = 1000;
/**
 * Bound on one `nextCursor` the probe follows, in UTF-8 bytes (64 KiB): MCP cursors are
 * opaque tokens, far smaller in practice. A larger one ends the listing with an error row.
 * Between pages the probe keeps the one cursor it sends next (at most this size) and a
 * 32-byte SHA-256 digest of each cursor followed, for loop detection: at most
 * `MAX_TOOLS_LIST_PAGES` x 32 bytes, whatever the seller sends. It kept every cursor whole, and
 * a seller answering each page with a new 1,000,000-character cursor made it run out of heap
 * after 245 pages (a new user's trial 9, F6;
 * test/regressions/probe-cursor-memory-unbounded.test.ts).
 */
export const MAX_CURSOR_BYTES = 65_536;
export { DEFAULT_PROBE_TIMEOUT_MS, PROBE_EXIT } from './options.js';

/**
 * The error row's text for a `tools/list` `nextCursor` that is present and not a string:
 * `nextCursor is a number, not a string (MCP cursors are opaque strings): stopped`, naming its
 * JSON type (`a number`, `a boolean`, `an array`, `an object`, `null`), not its value. Such a cursor is never sent back, and ends the listing as an
 * error: MCP's schema has `PaginatedResult.nextCursor?: Cursor` with `Cursor: string`, "An
 * opaque token used to represent a cursor for pagination", and its pagination page says "The
 * cursor is an opaque string token"
 * (https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination, and
 * the same in 2025-03-26, 2025-06-18 and 2026-07-28); the MCP TypeScript SDK client's schema
 * (`CursorSchema`, a string) refuses such a page, `null` included, so a host's listing of this
 * seller fails. The probe took it for the end of the listing and reported `all within target`,
 * exit 0 (a hostile new user's trial 12, L3:
 * test/regressions/probe-forwards-numeric-next-cursor.test.ts).
 */
export function notStringCursor(value: unknown): string {
  return `nextCursor is ${kindOfValue(value)}, not a string (MCP cursors are opaque strings): stopped`;
}

/** `info`: no target (initialize); `skipped`: not asked because `tools/list` did not complete. */
export type RowStatus = 'pass' | 'over' | 'error' | 'info' | 'not_offered' | 'skipped';

/** One line of the report. */
export interface ProbeRow {
  /** `initialize`, `tools_list_page`, or a `DiscoverySurface`. */
  readonly surface: 'initialize' | DiscoverySurface;
  /** `tools/list` page number (1-based). */
  readonly page?: number;
  /** How the response arrived. */
  readonly transport?: 'json' | 'sse';
  /**
   * Bytes measured (undefined when nothing was received): for `initialize` and a `tools/list`
   * page every byte of the answer through the response (the JSON body; on SSE the events before
   * the response and the response's event, framing included); for the capabilities surfaces,
   * the document or field (`measureDiscovery`).
   */
  readonly bytes?: number;
  /**
   * On an SSE answer that carried anything before the response's event: the events a host's
   * SSE reader dispatched before it (progress notifications, server requests, ...), and the
   * bytes before that event (those events, comments, id-only blocks); counted in `bytes` too,
   * except on the capabilities row, whose `bytes` is the document's.
   */
  readonly events_before?: number;
  readonly bytes_before?: number;
  /** The target (null for `initialize`, which has none). */
  readonly target_bytes: number | null;
  readonly status: RowStatus;
  /** For `status: error`: what went wrong, e.g. `RESPONSE_TOO_LARGE (content_length)`. */
  readonly error?: string;
  /** Tools on a `tools/list` page. */
  readonly tools?: number;
}

export interface ProbeReport {
  readonly agent: string;
  /**
   * The seller's endpoint as `--check-config` shows it (config/display-url.ts `displayUrl`):
   * its query as `?[redacted]` and any path segment shaped like a credential as `[redacted]`.
   */
  readonly seller: string;
  /** The MCP revision the seller negotiated, if `initialize` succeeded. */
  readonly protocol_version: string | undefined;
  readonly server: { readonly name?: string; readonly version?: string } | undefined;
  readonly rows: readonly ProbeRow[];
  readonly totals: {
    readonly tools: number;
    readonly tools_list_pages: number;
    readonly tools_list_bytes: number;
    /** Response messages received. */
    readonly messages: number;
    /** Their rows' bytes together, and the `bytes_before` of the capabilities row (whose `bytes` is the document's). */
    readonly bytes: number;
    readonly over: number;
    readonly errors: number;
  };
  readonly within_target: boolean;
}

export interface ProbeOptions {
  readonly config: GatewayConfig;
  readonly agent: string;
  /** The gateway's logger (the probe passes one writing to stderr). */
  readonly logger: Logger | false;
  readonly timeoutMs?: number;
}

/** Runs the probe. Throws only when the gateway cannot be built or started; the agent must exist in the config. */
export async function runProbe(opts: ProbeOptions): Promise<ProbeReport> {
  const agentConfig = opts.config.agents.get(opts.agent);
  if (!agentConfig) throw new Error(`unknown agent ${JSON.stringify(opts.agent)}`);
  // A probe mints no resume token a host could keep: a random secret of its own, so the
  // gateway's "no resume secret" warning (about resumption across restarts) is not printed for
  // it (a new user's trial, 2026-12-03: `probe --verbose` warned about it).
  const config = opts.config.resume.secret === undefined ? { ...opts.config, resume: { ...opts.config.resume, secret: randomBytes(32).toString('base64url') } } : opts.config;
  const app = await buildApp(config, { logger: opts.logger });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}/agents/${encodeURIComponent(opts.agent)}/mcp`;
    // The probe's own guard: twice the largest response limit this agent may answer with, plus room for framing.
    const maxBodyBytes = 2 * largestResponseLimit(agentConfig) + 1024 * 1024;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    const client = createRpcClient({ url, timeoutMs, maxBodyBytes });
    const answerEvents = new AnswerEvents(app.gateway);
    const explain = (reply: RpcReply): Promise<string | undefined> => explainedError(reply, answerEvents, timeoutMs);
    try {
      return await probeAgent(client, explain, opts.agent, displayUrl(agentConfig.url));
    } finally {
      await client.close();
    }
  } finally {
    const closed = app.close();
    app.server.closeAllConnections();
    await closed;
  }
}

/** `replyError`, with what the gateway knows of why it refused the answer when the host's error does not say (`explainedError`). */
type ExplainReply = (reply: RpcReply) => Promise<string | undefined>;

async function probeAgent(client: ReturnType<typeof createRpcClient>, explain: ExplainReply, agent: string, seller: string): Promise<ProbeReport> {
  const rows: ProbeRow[] = [];
  const seen: { protocolVersion?: string; server?: ProbeReport['server']; tools: number } = { tools: 0 };
  const report = (): ProbeReport => finish(agent, seller, seen.protocolVersion, seen.server, rows, seen.tools);

  // 1. initialize
  const init = await client.call('initialize', {
    protocolVersion: PROBE_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'adcp-buyer-gateway-probe', version: VERSION },
  });
  const initError = await explain(init);
  if (initError !== undefined) {
    rows.push({ surface: 'initialize', ...received(init), target_bytes: null, status: 'error', error: initError });
    return report();
  }
  const initResult = ownValue(init.message as object, 'result') as Record<string, unknown>;
  const negotiated = ownValue(initResult, 'protocolVersion');
  const protocolVersion = typeof negotiated === 'string' ? negotiated : undefined;
  if (protocolVersion !== undefined) seen.protocolVersion = protocolVersion;
  const info = ownValue(initResult, 'serverInfo');
  if (isJsonObject(info)) {
    const name = ownValue(info, 'name');
    const version = ownValue(info, 'version');
    seen.server = { ...(typeof name === 'string' ? { name } : {}), ...(typeof version === 'string' ? { version } : {}) };
  }
  rows.push({ surface: 'initialize', ...received(init), target_bytes: null, status: 'info' });
  const session = init.headers['mcp-session-id'];
  client.setSession(typeof session === 'string' ? session : undefined, protocolVersion);
  const initialized = await client.notify('notifications/initialized');
  if (initialized < 200 || initialized > 299) {
    rows.push({ surface: 'initialize', target_bytes: null, status: 'error', error: `notifications/initialized: HTTP ${initialized}` });
    return report();
  }

  // 2. tools/list, every page
  let cursor: string | undefined;
  /** SHA-256 of every cursor followed (32 bytes each, base64; at most MAX_TOOLS_LIST_PAGES): a repeat is a loop. */
  const followed = new Set<string>();
  let offersCapabilities = false;
  let listed = false;
  for (let page = 1; ; page++) {
    if (page > MAX_TOOLS_LIST_PAGES) {
      rows.push({ surface: 'tools_list_page', page, target_bytes: DISCOVERY_TARGETS.tools_list_page, status: 'error', error: `more than ${MAX_TOOLS_LIST_PAGES} pages: stopped` });
      break;
    }
    const reply = await client.call('tools/list', cursor === undefined ? {} : { cursor });
    const base = { surface: 'tools_list_page' as const, page, ...received(reply), target_bytes: DISCOVERY_TARGETS.tools_list_page };
    const error = await explain(reply);
    if (error !== undefined) {
      rows.push({ ...base, status: 'error', error });
      break;
    }
    const result = ownValue(reply.message as object, 'result') as Record<string, unknown>;
    const tools = ownValue(result, 'tools');
    if (!Array.isArray(tools)) {
      rows.push({ ...base, status: 'error', error: 'result has no tools array' });
      break;
    }
    seen.tools += tools.length;
    if (tools.some((t) => isJsonObject(t) && ownValue(t, 'name') === CAPABILITIES_TOOL)) offersCapabilities = true;
    const [m] = measureDiscovery({ method: 'tools/list', toolName: undefined, message: reply.message, ...sizeOf(reply) });
    rows.push({ ...base, status: statusOf(m), tools: tools.length });
    const next = ownValue(result, 'nextCursor');
    if (next === undefined || next === '') {
      listed = true;
      break;
    }
    const stop = (error: string): void => {
      rows.push({ surface: 'tools_list_page', page: page + 1, target_bytes: DISCOVERY_TARGETS.tools_list_page, status: 'error', error });
    };
    if (typeof next !== 'string') {
      stop(notStringCursor(next));
      break;
    }
    const cursorBytes = Buffer.byteLength(next, 'utf8');
    if (cursorBytes > MAX_CURSOR_BYTES) {
      stop(`nextCursor is ${cursorBytes} bytes, over the probe's limit of ${MAX_CURSOR_BYTES} bytes: stopped`);
      break;
    }
    // UTF-16 code units, not UTF-8: two cursors differing only in a lone surrogate (JSON's
    // `\ud800`) would both encode as U+FFFD and look like a repeat.
    const digest = createHash('sha256').update(next, 'utf16le').digest('base64');
    if (followed.has(digest)) {
      stop('nextCursor repeats an earlier cursor: stopped');
      break;
    }
    followed.add(digest);
    cursor = next;
  }

  // 3. get_adcp_capabilities
  const capsTarget = DISCOVERY_TARGETS.get_adcp_capabilities;
  if (!offersCapabilities) {
    rows.push({ surface: 'get_adcp_capabilities', target_bytes: capsTarget, status: listed ? 'not_offered' : 'skipped' });
    return report();
  }
  const caps = await client.call('tools/call', { name: CAPABILITIES_TOOL, arguments: {} });
  const capsError = await explain(caps);
  if (capsError !== undefined) {
    rows.push({ surface: 'get_adcp_capabilities', ...received(caps), target_bytes: capsTarget, status: 'error', error: capsError });
    return report();
  }
  const measured = measureDiscovery({ method: 'tools/call', toolName: CAPABILITIES_TOOL, message: caps.message, ...sizeOf(caps) });
  if (measured.length === 0) {
    rows.push({ surface: 'get_adcp_capabilities', ...received(caps), target_bytes: capsTarget, status: 'error', error: 'the result carries no AdCP payload' });
    return report();
  }
  for (const m of measured) {
    const answer = m.surface === 'get_adcp_capabilities' ? { transport: transportOf(caps) } : {};
    rows.push({ surface: m.surface, ...answer, bytes: m.bytes, ...beforeFields(m.before), target_bytes: m.target_bytes, status: statusOf(m) });
  }
  return report();
}

function finish(
  agent: string,
  seller: string,
  protocolVersion: string | undefined,
  server: ProbeReport['server'],
  rows: ProbeRow[],
  tools: number,
): ProbeReport {
  const pages = rows.filter((r) => r.surface === 'tools_list_page' && r.status !== 'error');
  // Messages: every row that is a whole response (the counterparty fields are parts of one).
  const messages = rows.filter((r) => r.bytes !== undefined && (r.surface === 'initialize' || r.surface === 'tools_list_page' || r.surface === 'get_adcp_capabilities'));
  const over = rows.filter((r) => r.status === 'over').length;
  const errors = rows.filter((r) => r.status === 'error').length;
  return {
    agent,
    seller,
    protocol_version: protocolVersion,
    server,
    rows,
    totals: {
      tools,
      tools_list_pages: pages.length,
      tools_list_bytes: pages.reduce((s, r) => s + (r.bytes ?? 0), 0),
      messages: messages.length,
      bytes: messages.reduce((s, r) => s + (r.bytes ?? 0) + (r.surface === 'get_adcp_capabilities' ? (r.bytes_before ?? 0) : 0), 0),
      over,
      errors,
    },
    within_target: over === 0 && errors === 0,
  };
}

function statusOf(m: DiscoveryMeasurement | undefined): RowStatus {
  if (m === undefined) return 'error';
  return m.over ? 'over' : 'pass';
}

function transportOf(reply: RpcReply): 'json' | 'sse' | undefined {
  return reply.transport === 'none' ? undefined : reply.transport;
}

/** A whole answer's row fields: how it came, every byte of it through the response, and what came before the response. */
function received(reply: RpcReply): { transport?: 'json' | 'sse'; bytes?: number; events_before?: number; bytes_before?: number } {
  const transport = transportOf(reply);
  if (transport === undefined || reply.message === undefined) return transport === undefined ? {} : { transport };
  const size = sizeOf(reply);
  return { transport, bytes: size.bytes, ...beforeFields(size.before) };
}

/**
 * `events_before` and `bytes_before` of an SSE answer that carried anything before its
 * response's event (mcp/discovery-size.ts `shownBefore`, as a measurement's `before`); nothing otherwise.
 */
function beforeFields(before: BeforeResponse | undefined): { events_before?: number; bytes_before?: number } {
  const shown = shownBefore(before);
  return shown === undefined ? {} : { events_before: shown.events, bytes_before: shown.bytes };
}

/**
 * A reply's size for `measureDiscovery` and its row, as the live gateway passes it
 * (routing/discovery-warning.ts observeDiscovery): every byte of the answer through the response, and
 * what an SSE answer carried before it, without the `id:` lines carrying resume tokens
 * (rpc.ts `tokenBytes`; the live stage: response/sse-event-ids.ts `tokenLineBytes`): the
 * target is about the seller's answer, and a page behind 1,000 events with short ids, 126,843
 * bytes from the seller, was reported over at 335,628 (review of hostile trial 57 F2's fix:
 * test/regressions/discovery-size-counts-gateway-resume-tokens.test.ts; hostile trial 58, 1:
 * test/regressions/probe-and-live-discovery-size-disagree.test.ts). The capabilities
 * surfaces are measured on the document (`bytes` serves a page only).
 */
function sizeOf(reply: RpcReply): { bytes: number; before?: BeforeResponse } {
  const tokens = reply.tokenBytes ?? { through: 0, before: 0 };
  const bytes = reply.answerBytes - tokens.through;
  return reply.before === undefined ? { bytes } : { bytes, before: { events: reply.before.events, bytes: reply.before.bytes - tokens.before } };
}

/**
 * What went wrong with a reply, or undefined for a JSON-RPC success whose result is an
 * object (and, for a tool call, not `isError`). An AdCP error (the gateway's or the
 * seller's) reads `CODE (reason)`.
 */
export function replyError(reply: RpcReply): string | undefined {
  const message = reply.message;
  if (message === undefined) {
    const status = reply.status === 0 ? '' : `HTTP ${reply.status}: `;
    return `${status}${reply.problem ?? 'no response'}`;
  }
  const adcp = extractAdcpError(message);
  if (adcp) {
    const details = ownValue(adcp, 'details');
    const reason = isJsonObject(details) ? ownValue(details, 'reason') : undefined;
    return `${adcp.code}${typeof reason === 'string' ? ` (${reason})` : ''}`;
  }
  if (!isJsonObject(message)) return 'not a JSON-RPC response';
  const error = ownValue(message, 'error');
  if (isJsonObject(error)) {
    const data = ownValue(error, 'data');
    const reason = isJsonObject(data) ? ownValue(data, 'reason') : undefined;
    const code = ownValue(error, 'code');
    const text = ownValue(error, 'message');
    const status = reply.status !== 200 ? `HTTP ${reply.status} ` : '';
    return `${status}JSON-RPC ${String(code)}${typeof reason === 'string' ? ` ${reason}` : ''}${typeof text === 'string' ? `: ${text.slice(0, 120)}` : ''}`;
  }
  if (reply.status < 200 || reply.status > 299) return `HTTP ${reply.status}`;
  const result = ownValue(message, 'result');
  if (!isJsonObject(result)) return 'not a JSON-RPC response';
  if (ownValue(result, 'isError') === true) {
    const content = ownValue(result, 'content');
    const first = Array.isArray(content) && isJsonObject(content[0]) ? ownValue(content[0], 'text') : undefined;
    return `tool error${typeof first === 'string' ? `: ${first.slice(0, 120)}` : ''}`;
  }
  return undefined;
}

/**
 * `replyError(reply)`, and for the gateway's `upstream_not_mcp` refusal of an answer the
 * seller sent in an SSE event named other than `message`, the event's name after it
 * (`namedEventAnswer`): `SERVICE_UNAVAILABLE (upstream_not_mcp): the answer came in an SSE
 * event named "x-custom"; ...`. The name is the gateway's record of the exchange
 * (answer-events.ts), waited for at most `waitMs`.
 */
async function explainedError(reply: RpcReply, answerEvents: AnswerEvents, waitMs: number): Promise<string | undefined> {
  const error = replyError(reply);
  if (error === undefined || !isJsonObject(reply.message)) return error;
  const adcp = extractAdcpError(reply.message);
  const details = adcp === null ? undefined : ownValue(adcp, 'details');
  if (!isJsonObject(details) || ownValue(details, 'reason') !== 'upstream_not_mcp') return error;
  const id = ownValue(reply.message, 'id');
  if (typeof id !== 'number' && typeof id !== 'string') return error;
  const name = await answerEvents.nameFor(id, waitMs);
  return name === undefined ? error : `${error}: ${namedEventAnswer(name)}`;
}

/** The largest response limit an exchange with this agent can have (agent, any tool, the call ceiling). */
function largestResponseLimit(agent: AgentConfig): number {
  const tools = Object.values(agent.tools).map((t) => t.max_response_bytes ?? 0);
  return Math.max(agent.limits.max_response_bytes, agent.max_call_response_bytes ?? 0, ...tools);
}
