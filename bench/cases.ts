/**
 * The bench's cases: the exact JSON-RPC bytes a seller sends for each one, the request a
 * host sends, and the gateway config that routes them. Deterministic (no randomness), so
 * the seller process and the micro-benchmark build the same messages.
 *
 * Every case is one agent of the gateway config, named after the case; its seller URL is
 * `<seller>/c/<case>/mcp`. The direct target calls that URL; the pass-through and the
 * gateway are called at `/agents/<case>/mcp`.
 */

export const KiB = 1024;
export const MiB = 1024 * KiB;

/** The JSON-RPC id every bench host request uses; the seller answers with it whatever it receives. */
export const REQUEST_ID = 1;

/** The `tools/call` request a host on MCP 2025-06-18 sends (the gateway takes its rewrite path for it). */
export const REQUEST_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: REQUEST_ID,
  method: 'tools/call',
  params: { name: 'get_products', arguments: { brief: 'CTV inventory, US, Q4, sports and entertainment' }, _meta: { progressToken: 'bench-1' } },
});

export const REQUEST_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
});

/**
 * (a) nothing to rewrite: `structuredContent` plus a plain-text sentence;
 * (b) `structuredContent` plus its full JSON copy in a text item (deduped by the gateway);
 * (c) legacy text-only JSON (lifted into `structuredContent` by the gateway).
 */
export type Variant = 'a' | 'b' | 'c';
export const VARIANTS: readonly Variant[] = ['a', 'b', 'c'];
export const VARIANT_LABEL: Readonly<Record<Variant, string>> = {
  a: '(a) nothing to rewrite',
  b: '(b) text copy deduped',
  c: '(c) legacy text lifted',
};

export interface SizeSpec {
  label: string;
  bytes: number;
}
export const JSON_SIZES: readonly SizeSpec[] = [
  { label: '1 KiB', bytes: KiB },
  { label: '64 KiB', bytes: 64 * KiB },
  { label: '1 MiB', bytes: MiB },
  { label: '4 MiB', bytes: 4 * MiB },
];
export const SSE_ONE_EVENT_SIZES: readonly SizeSpec[] = [
  { label: '1 KiB', bytes: KiB },
  { label: '1 MiB', bytes: MiB },
];
/** Size of each result of the memory case's legitimate load. */
export const MEMORY_LEGIT_BYTES = 3 * MiB;
/** What each attacking seller tries to send. */
export const ATTACK_BYTES = 100 * MiB;

/** Progress stream: notifications, spacing, then the result. */
export const PROGRESS_EVENTS = 20;
export const PROGRESS_INTERVAL_MS = 20;
/** Flood stream: notifications per stream (sent as fast as the socket takes them), then the result. */
export const FLOOD_EVENTS = 10_000;
/** Notifications per `write()` in the flood stream (a busy seller's writes coalesce). */
export const FLOOD_EVENTS_PER_WRITE = 100;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export function sharedClockMs(): number {
  return performance.timeOrigin + performance.now();
}

// ---------------------------------------------------------------------------------------
// Payloads: AdCP get_products-shaped data

const DESCRIPTION =
  'Premium connected-TV inventory across sports and entertainment apps, household-level targeting, ' +
  'frequency capped, brand-safe, with third-party viewability and completion measurement. ' +
  'Available as guaranteed or programmatic guaranteed packages; live sports subject to availability. ' +
  'Creative must be a 15 or 30 second VAST 4 video with a broadcast-safe audio mix; no overlays. ';

function product(i: number, descriptionChars = DESCRIPTION.length * 2): Record<string, unknown> {
  const description = (DESCRIPTION + DESCRIPTION).slice(0, descriptionChars);
  return {
    product_id: `prod_${String(i).padStart(6, '0')}`,
    name: `CTV sports and entertainment package ${i}`,
    description,
    publisher_properties: [{ publisher_domain: `publisher${i % 50}.example`, selection_type: 'all' }],
    format_ids: [
      { agent_url: 'https://creative.adcontextprotocol.org', id: 'video_30s' },
      { agent_url: 'https://creative.adcontextprotocol.org', id: 'video_15s' },
    ],
    delivery_type: i % 2 === 0 ? 'guaranteed' : 'non_guaranteed',
    pricing_options: [{ pricing_option_id: `po_${i}`, pricing_model: 'cpm', currency: 'USD', fixed_price: 12.5 + (i % 7), min_spend_per_package: 5000 }],
    delivery_measurement: { provider: 'Example Measurement Co.' },
    brief_relevance: `Matches the brief: CTV, United States, fourth quarter; rank ${i}.`,
  };
}

function payloadOf(products: Record<string, unknown>[], pad: number): Record<string, unknown> {
  return { products, total_count: products.length, message: `Found ${products.length} products matching the brief.${'.'.repeat(pad)}` };
}

/** The tool result (`CallToolResult`) of a variant around a payload. */
export function toolResultOf(variant: Variant, payload: Record<string, unknown>): Record<string, unknown> {
  const count = (payload.products as unknown[]).length;
  if (variant === 'a') return { content: [{ type: 'text', text: `Found ${count} products matching the brief; details in structuredContent.` }], structuredContent: payload };
  if (variant === 'b') return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
  return { content: [{ type: 'text', text: JSON.stringify(payload) }] };
}

function messageOf(variant: Variant, payload: Record<string, unknown>, meta?: string): string {
  const result = toolResultOf(variant, payload);
  const json = JSON.stringify({ jsonrpc: '2.0', id: REQUEST_ID, result });
  if (meta === undefined) return json;
  // `_meta` first in `result`: `{"jsonrpc":"2.0","id":1,"result":{` + meta + `,` + rest.
  const at = json.indexOf('"result":{') + '"result":{'.length;
  return `${json.slice(0, at)}${meta},${json.slice(at)}`;
}

const sizedCache = new Map<string, string>();
const productCache: Record<string, unknown>[] = [];

/**
 * The whole JSON-RPC response message of `variant` at `targetBytes` (UTF-8 bytes, exact
 * unless the target is below the smallest message). Products are added whole while they
 * fit, one shortened product fills most of the rest, and the `message` field is padded to
 * the exact size.
 */
export function sizedMessage(variant: Variant, targetBytes: number): string {
  const key = `${variant}:${targetBytes}`;
  const cached = sizedCache.get(key);
  if (cached !== undefined) return cached;
  const products: Record<string, unknown>[] = [];
  const size = (pad: number): number => Buffer.byteLength(messageOf(variant, payloadOf(products, pad)));
  const factor = variant === 'b' ? 2 : 1;
  // The largest number of whole products that fits (binary search; each product is ~1.2 KiB).
  const all = (count: number): void => {
    while (productCache.length < count) productCache.push(product(productCache.length));
    products.length = 0;
    for (let i = 0; i < count; i++) products.push(productCache[i]!);
  };
  let lo = 0;
  let hi = Math.ceil(targetBytes / 1000) + 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    all(mid);
    if (size(0) <= targetBytes) lo = mid;
    else hi = mid - 1;
  }
  all(lo);
  // A shorter last product, if there is room for one.
  const room = targetBytes - size(0);
  const bare = Buffer.byteLength(JSON.stringify(product(lo, 0))) * factor * 1.1 + 2;
  if (room > bare + 40) {
    products.push(product(lo, Math.floor((room - bare - 20) / factor)));
    if (size(0) > targetBytes) products.pop();
  }
  let pad = Math.max(0, Math.floor((targetBytes - size(0)) / factor));
  while (pad > 0 && size(pad) > targetBytes) pad--;
  const message = messageOf(variant, payloadOf(products, pad));
  sizedCache.set(key, message);
  return message;
}

/** Number of JSON values in a message (what the gateway's `max_json_nodes` counts), for sanity checks. */
export function countNodes(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((n: number, v) => n + countNodes(v), 0);
  if (value !== null && typeof value === 'object') return 1 + Object.values(value).reduce((n: number, v) => n + countNodes(v), 0);
  return 1;
}

// ---------------------------------------------------------------------------------------
// SSE bodies

export function sseEvent(data: string): string {
  return `event: message\ndata: ${data}\n\n`;
}

/** One progress notification as an SSE event; `sentAt` goes into `params.sent_at` when given. */
export function progressEvent(progress: number, total: number, sentAt?: number): string {
  const at = sentAt === undefined ? '' : `,"sent_at":${sentAt.toFixed(3)}`;
  return sseEvent(
    `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"bench-1","progress":${progress},"total":${total},"message":"Searching inventory (${progress}/${total})"${at}}}`,
  );
}

/**
 * The final result of the progress stream (1 KiB, variant (b)), with `result._meta.sent_at`,
 * as the SSE event text before and after the timestamp (the seller stamps it when it writes).
 */
export function progressResultParts(): { head: string; tail: string } {
  const payload = (JSON.parse(sizedMessage('b', KiB)) as { result: { structuredContent: Record<string, unknown> } }).result.structuredContent;
  const event = sseEvent(messageOf('b', payload, '"_meta":{"sent_at":@T@}'));
  const at = event.indexOf('@T@');
  return { head: event.slice(0, at), tail: event.slice(at + 3) };
}

/** The flood stream, pre-split into writes of FLOOD_EVENTS_PER_WRITE events, the 1 KiB (a) result last. */
export function floodChunks(): Buffer[] {
  const chunks: Buffer[] = [];
  let batch = '';
  for (let i = 1; i <= FLOOD_EVENTS; i++) {
    batch += progressEvent(i, FLOOD_EVENTS);
    if (i % FLOOD_EVENTS_PER_WRITE === 0) {
      chunks.push(Buffer.from(batch));
      batch = '';
    }
  }
  chunks.push(Buffer.from(batch + sseEvent(sizedMessage('a', KiB))));
  return chunks;
}

// ---------------------------------------------------------------------------------------
// Attack bodies (the attacking seller)

/** Prefix of the plain/SSE 100 MiB bodies: a tool result whose text never ends. */
export const ATTACK_PREFIX = `{"jsonrpc":"2.0","id":${REQUEST_ID},"result":{"content":[{"type":"text","text":"`;
export const ATTACK_SUFFIX = '"}]}}';

/** Under the default 4 MiB: 2,000,000 levels of `[` (bound: max_json_depth 64). */
export function deepNestingBody(): string {
  const depth = 2_000_000;
  return `{"jsonrpc":"2.0","id":${REQUEST_ID},"result":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

/** Under the default 4 MiB: ~2,000,000 JSON values (bound: max_json_nodes 100,000). */
export function nodeBombBody(): string {
  const zeros = new Array<string>(1_990_000).fill('0').join(',');
  return `{"jsonrpc":"2.0","id":${REQUEST_ID},"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"rows":[${zeros}]}}}`;
}

// ---------------------------------------------------------------------------------------
// The case catalogue

export type CaseKind =
  | { type: 'json'; variant: Variant; bytes: number }
  | { type: 'sse1'; variant: Variant; bytes: number }
  | { type: 'progress' }
  | { type: 'flood' }
  | { type: 'attack-json100' }
  | { type: 'attack-gzip100' }
  | { type: 'attack-sse100' }
  | { type: 'attack-deep' }
  | { type: 'attack-nodes' };

export interface CaseDef {
  /** Also the agent name in the gateway config. */
  id: string;
  kind: CaseKind;
  /** Which seller process serves it. */
  seller: 'good' | 'attack';
  /** `bench`: raised limits (the 4 MiB results fit); `default`: the built-in limits (4 MiB, 100,000 nodes). */
  limits: 'bench' | 'default';
}

export function jsonCaseId(variant: Variant, size: SizeSpec): string {
  return `json-${variant}-${size.bytes}`;
}
export function sse1CaseId(variant: Variant, size: SizeSpec): string {
  return `sse1-${variant}-${size.bytes}`;
}
export const MEMORY_LEGIT_A = 'mem-a-3m';
export const MEMORY_LEGIT_B = 'mem-b-3m';
export const FAIR_GOOD = 'fair-a-1k';
export const PROGRESS_CASE = 'sse-progress';
export const FLOOD_CASE = 'sse-flood';
export const ATTACK_CASES = ['attack-json100', 'attack-gzip100', 'attack-sse100', 'attack-deep', 'attack-nodes'] as const;
export type AttackCase = (typeof ATTACK_CASES)[number];

export function allCases(): CaseDef[] {
  const cases: CaseDef[] = [];
  for (const size of JSON_SIZES) for (const v of VARIANTS) cases.push({ id: jsonCaseId(v, size), kind: { type: 'json', variant: v, bytes: size.bytes }, seller: 'good', limits: 'bench' });
  for (const size of SSE_ONE_EVENT_SIZES) for (const v of ['a', 'b'] as const) cases.push({ id: sse1CaseId(v, size), kind: { type: 'sse1', variant: v, bytes: size.bytes }, seller: 'good', limits: 'bench' });
  cases.push({ id: PROGRESS_CASE, kind: { type: 'progress' }, seller: 'good', limits: 'bench' });
  cases.push({ id: FLOOD_CASE, kind: { type: 'flood' }, seller: 'good', limits: 'bench' });
  cases.push({ id: MEMORY_LEGIT_A, kind: { type: 'json', variant: 'a', bytes: MEMORY_LEGIT_BYTES }, seller: 'good', limits: 'default' });
  cases.push({ id: MEMORY_LEGIT_B, kind: { type: 'json', variant: 'b', bytes: MEMORY_LEGIT_BYTES }, seller: 'good', limits: 'default' });
  cases.push({ id: FAIR_GOOD, kind: { type: 'json', variant: 'a', bytes: KiB }, seller: 'good', limits: 'default' });
  for (const id of ATTACK_CASES) cases.push({ id, kind: { type: id }, seller: 'attack', limits: 'default' });
  return cases;
}

/** Limits of the `bench` agents: the 4 MiB messages (and their lifted text) fit. */
export const BENCH_AGENT_LIMITS = Object.freeze({ max_response_bytes: 16 * MiB, max_json_nodes: 1_000_000 });

/** The gateway's YAML config for the bench. */
/**
 * The gateway config of a run. `guard: false` (`--no-guard`) turns the agent guard off
 * (`backoff_after_breaches: 0`, a 1 GiB buffered-bytes cap) to measure the pipeline itself
 * under the full attack rate.
 */
export function gatewayYaml(sellers: { good: string; attack: string }, guard = true): string {
  const lines = [
    'log_level: silent',
    'resume:',
    '  secret: "bench-resume-secret-0123456789abcdef0123456789"',
    ...(guard ? [] : ['defaults:', '  backoff_after_breaches: 0', '  max_buffered_response_bytes: 1073741824']),
    'agents:',
  ];
  for (const c of allCases()) {
    lines.push(`  ${c.id}:`, `    url: ${sellers[c.seller]}/c/${c.id}/mcp`);
    if (c.limits === 'bench') {
      lines.push(`    max_response_bytes: ${BENCH_AGENT_LIMITS.max_response_bytes}`, `    max_json_nodes: ${BENCH_AGENT_LIMITS.max_json_nodes}`);
    }
  }
  return lines.join('\n') + '\n';
}
