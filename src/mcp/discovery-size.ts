/**
 * Discovery size targets (AdCP 3.3 "Managing response size", section "Discovery surfaces")
 * and the one function that measures a message against them.
 *
 * These are *targets*, not limits: a message over one is conformant and must still reach
 * the host (the hard bound is the response limit, `max_response_bytes`). The gateway logs a
 * warning and counts a metric for an overshoot; `adcp-buyer-gateway probe` reports it.
 *
 * Pure: no I/O, no Fastify or undici. Cheap: it returns `[]` at once for any method other
 * than `tools/list` and `tools/call` of `get_adcp_capabilities`, and otherwise serializes at
 * most the capabilities payload and two of its fields.
 *
 * One definition for both: the live gateway (routing/handler.ts, its warning and
 * `adcp_gateway_discovery_size_overshoot_total`) and `probe` (probe/probe.ts, its rows) measure
 * a `tools/list` page on the same bytes, every byte of the answer the host receives through
 * the response ({@link DiscoveryInput.bytes}), with what an SSE answer carried before the
 * response said apart ({@link BeforeResponse}, {@link beforeResponseText}). The live check
 * measured the response event's data alone, and a page answered after 3,000
 * `notifications/progress` events (499,944 bytes to the host) drew no warning and no count
 * where the probe reported it over (hostile trial 57, F2:
 * test/regressions/discovery-size-ignores-sse-events-before-response.test.ts).
 */
import { extractAdcpResponse, isJsonObject, ownValue } from './extract.js';

/**
 * `tools/list`, per page: 131,072 bytes (128 KiB).
 *
 * > "For pageable reads and other read-only tasks that offer field projection, AdCP
 * > producers SHOULD keep each serialized MCP response at or below **128 KiB (131,072
 * > bytes)**." ... "| `tools/list` (per page) | 128 KiB | The interoperability target
 * > above. Page size is the *server's* choice — MCP's `cursor` has no page-size parameter —
 * > so a buyer cannot ask for less |"
 */
export const TOOLS_LIST_PAGE_TARGET_BYTES = 131_072;

/**
 * `get_adcp_capabilities`: 65,536 bytes (64 KiB), `MAX_CAPABILITIES_BYTES`.
 *
 * > "| `get_adcp_capabilities` | 64 KiB | `MAX_CAPABILITIES_BYTES`, a normative fetch budget
 * > on the signing-key discovery path. Binding on any agent that signs |" ... "a document
 * > above that budget fails with `request_signature_capabilities_unreachable` and the
 * > agent's signing keys stop resolving"
 */
export const CAPABILITIES_TARGET_BYTES = 65_536;

/**
 * One counterparty-asserted field (`media_buy.portfolio.publisher_domains`,
 * `signals.data_provider_domains`): 8,192 bytes.
 *
 * > "From 3.3 a normative byte budget caps any single counterparty-asserted field at 8,192
 * > bytes and both together at 16,384, measured as uncompressed serialized JSON"
 */
export const COUNTERPARTY_FIELD_TARGET_BYTES = 8_192;

/** Both counterparty-asserted fields together: 16,384 bytes (same quote as above). */
export const COUNTERPARTY_FIELDS_TOTAL_TARGET_BYTES = 16_384;

/** The tool whose result is the capabilities document. */
export const CAPABILITIES_TOOL = 'get_adcp_capabilities';

/**
 * True when a response to this request is a discovery surface measured here (`tools/list`,
 * or a `tools/call` of {@link CAPABILITIES_TOOL}): the stages parse and hand over the message
 * only then (a response nobody measures is never parsed just to be observed).
 */
export function isDiscoveryRequest(method: string | undefined, toolName: string | undefined): boolean {
  return method === 'tools/list' || toolName === CAPABILITIES_TOOL;
}

/** What a measurement is about. */
export type DiscoverySurface =
  | 'tools_list_page'
  | 'get_adcp_capabilities'
  | 'publisher_domains'
  | 'data_provider_domains'
  | 'counterparty_fields_total';

/** Target of each surface, in bytes. */
export const DISCOVERY_TARGETS: Readonly<Record<DiscoverySurface, number>> = Object.freeze({
  tools_list_page: TOOLS_LIST_PAGE_TARGET_BYTES,
  get_adcp_capabilities: CAPABILITIES_TARGET_BYTES,
  publisher_domains: COUNTERPARTY_FIELD_TARGET_BYTES,
  data_provider_domains: COUNTERPARTY_FIELD_TARGET_BYTES,
  counterparty_fields_total: COUNTERPARTY_FIELDS_TOTAL_TARGET_BYTES,
});

/** Where each counterparty-asserted field sits in the capabilities document. */
export const COUNTERPARTY_FIELD_PATHS: Readonly<Record<'publisher_domains' | 'data_provider_domains', readonly string[]>> = Object.freeze({
  publisher_domains: Object.freeze(['media_buy', 'portfolio', 'publisher_domains']),
  data_provider_domains: Object.freeze(['signals', 'data_provider_domains']),
});

/**
 * What an SSE answer carried before its response's event, as a host's SSE reader sees it
 * (WHATWG HTML §9.2.6): `events`, those dispatched before the response's (each with at least
 * one `data:` line, whatever its `event:` name: progress notifications, server requests, ...);
 * `bytes`, every byte before the response's event's own lines (those events, comments,
 * `retry:` and id-only blocks, blank lines; a comment line with no blank line between it and the
 * response's event too, though the reader reads it in that event's block: the gateway writes
 * comments so, and ~132 KB of comments before a page were no "before" at all, in the probe's
 * row or the warning: hostile trial 58, 2,
 * test/regressions/discovery-size-comments-before-response-unexplained.test.ts; `events` 0
 * then). Counted in a `tools/list` page's `bytes`. The probe reads it on the wire (probe/rpc.ts `readSseResponse`), the gateway counts
 * what it gives the host (response/sse-encode.ts `SseFrameBatch.answerSoFar`).
 */
export interface BeforeResponse {
  readonly events: number;
  readonly bytes: number;
}

/**
 * The text a report or a log line gives a {@link BeforeResponse}:
 * `3,000 events before the response: 310,890 bytes` (`1 event ...`; numbers with `en-US`
 * thousands separators). The probe's table puts it after a row's result, in parentheses; the
 * gateway's warning after its message.
 */
export function beforeResponseText(before: BeforeResponse): string {
  const { events, bytes } = before;
  return `${events.toLocaleString('en-US')} event${events === 1 ? '' : 's'} before the response: ${bytes.toLocaleString('en-US')} bytes`;
}

export interface DiscoveryMeasurement {
  readonly surface: DiscoverySurface;
  /** UTF-8 bytes of the surface's uncompressed serialized JSON. */
  readonly bytes: number;
  readonly target_bytes: number;
  /** `bytes > target_bytes` (exactly at the target is within it). */
  readonly over: boolean;
  /**
   * On a whole answer's surface (`tools_list_page`, `get_adcp_capabilities`): what the SSE
   * answer carried before the response ({@link DiscoveryInput.before}), when it carried any
   * byte; absent otherwise (a JSON body, nothing before, a counterparty field's surface).
   */
  readonly before?: BeforeResponse;
}

export interface DiscoveryInput {
  /** The JSON-RPC method of the request this message answers (`tools/list`, `tools/call`, ...). */
  readonly method: string | undefined;
  /** `params.name` of a `tools/call` request. */
  readonly toolName: string | undefined;
  /** The parsed JSON-RPC response message (one object; a batch array measures nothing). */
  readonly message: unknown;
  /**
   * Every byte of the answer the host receives through the response, as UTF-8 on the wire:
   * the JSON body; on SSE, all the stream carried before the response's event and that event
   * whole, its `id:`, `event:` and `data:` lines and the blank line ending it, less each `id:`
   * line carrying a gateway resume token (the target is about the seller's answer: 1,000 events
   * with short ids, 126,843 bytes from the seller, were judged at 335,628 with their tokens;
   * review of hostile trial 57 F2's fix:
   * test/regressions/discovery-size-counts-gateway-resume-tokens.test.ts; the whole line, not
   * the token counted as the seller id it carries: which events get a token depends on the
   * tokens' lengths, and probe and the live check disagreed, hostile trial 58, 1:
   * test/regressions/probe-and-live-discovery-size-disagree.test.ts). The probe reads
   * it (probe/rpc.ts `answerBytes` less `tokenBytes`); the gateway counts it as it writes
   * (response/sse-stage.ts `responseSize`: `SseFrameBatch.answerSoFar` less
   * `SseEventIds.tokenLineBytes`). Used for `tools/list` only. {@link before}'s bytes are
   * counted the same way.
   */
  readonly bytes: number;
  /** On SSE: what came before the response's event (counted in `bytes` too). Absent for a JSON body. */
  readonly before?: BeforeResponse;
}

/**
 * Measures one discovery response against the targets.
 *
 * Contract:
 * - `method: 'tools/list'` and `message` a JSON-RPC success response (an object with a
 *   `result` object): one `tools_list_page` measurement whose `bytes` is `input.bytes` (every
 *   byte of the answer through that page's message: the spec's "serialized MCP response", and
 *   on SSE what the host had to read before it), with `input.before` when it holds any byte.
 * - `method: 'tools/call'`, `toolName: 'get_adcp_capabilities'`, and `message` a success
 *   response whose result yields an AdCP payload (`extractAdcpResponse`: `structuredContent`,
 *   else the first text item that parses to a JSON object; nothing when `isError`): a
 *   `get_adcp_capabilities` measurement of `JSON.stringify(payload)` (compact: whitespace in
 *   a text item does not count; `input.before` beside it, as for a page), then, for each counterparty-asserted field present in the
 *   payload (own properties along `COUNTERPARTY_FIELD_PATHS`), its `JSON.stringify` bytes,
 *   then `counterparty_fields_total` (their sum) when at least one is present.
 * - Anything else (another method, an error response, a JSON-RPC error, a batch, a value
 *   that is not an object): `[]`.
 *
 * Never throws on seller input (a value `JSON.stringify` cannot serialize, which a parsed
 * JSON message never holds, measures nothing). `over` is `bytes > target_bytes`.
 */
export function measureDiscovery(input: DiscoveryInput): DiscoveryMeasurement[] {
  const { method, message } = input;
  if (method === 'tools/list') {
    if (!isSuccess(message)) return [];
    return [withBefore(measurement('tools_list_page', input.bytes), input.before)];
  }
  if (method !== 'tools/call' || input.toolName !== CAPABILITIES_TOOL || !isSuccess(message)) return [];
  const payload = extractAdcpResponse(ownValue(message, 'result'));
  if (payload === null) return [];
  const documentBytes = serializedBytes(payload);
  if (documentBytes === undefined) return [];
  const out = [withBefore(measurement('get_adcp_capabilities', documentBytes), input.before)];
  let total = 0;
  let present = 0;
  for (const surface of ['publisher_domains', 'data_provider_domains'] as const) {
    const value = valueAt(payload, COUNTERPARTY_FIELD_PATHS[surface]);
    if (value === undefined) continue;
    const bytes = serializedBytes(value);
    if (bytes === undefined) continue;
    out.push(measurement(surface, bytes));
    total += bytes;
    present++;
  }
  if (present > 0) out.push(measurement('counterparty_fields_total', total));
  return out;
}

/**
 * `before` when it holds any byte, as a copy of its two counts; undefined otherwise (a JSON
 * body has none; an SSE answer whose response came first has 0 bytes). The one place where
 * "nothing before the response" is decided: {@link measureDiscovery}'s `before` and the probe's
 * row fields (probe/probe.ts `beforeFields`) both read it.
 */
export function shownBefore(before: BeforeResponse | undefined): BeforeResponse | undefined {
  return before === undefined || before.bytes === 0 ? undefined : { events: before.events, bytes: before.bytes };
}

/** `m` with `before` when it holds any byte ({@link shownBefore}). */
function withBefore(m: DiscoveryMeasurement, before: BeforeResponse | undefined): DiscoveryMeasurement {
  const shown = shownBefore(before);
  return shown === undefined ? m : { ...m, before: shown };
}

function measurement(surface: DiscoverySurface, bytes: number): DiscoveryMeasurement {
  const target_bytes = DISCOVERY_TARGETS[surface];
  return { surface, bytes, target_bytes, over: bytes > target_bytes };
}

/** A JSON-RPC success response: an object with an own `result` object and no `error`. */
function isSuccess(message: unknown): message is Record<string, unknown> {
  return isJsonObject(message) && isJsonObject(ownValue(message, 'result')) && !Object.hasOwn(message, 'error');
}

/** Own-property walk; undefined when a step is missing or not an object. */
function valueAt(root: Record<string, unknown>, path: readonly string[]): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (!isJsonObject(node)) return undefined;
    node = ownValue(node, key);
  }
  return node;
}

function serializedBytes(value: unknown): number | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return undefined;
  }
  return text === undefined ? undefined : Buffer.byteLength(text, 'utf8');
}
