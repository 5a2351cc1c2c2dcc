/**
 * A demo AdCP seller: a real MCP server built with the MCP TypeScript SDK, serving
 * deterministic, AdCP-shaped payloads that exercise everything the gateway does.
 *
 * Two endpoints on one node:http server:
 *   POST /mcp      stateless, `application/json` answers (enableJsonResponse: true)
 *   /sse/mcp       stateful sessions, answers as SSE streams (GET stream and DELETE supported)
 *
 * Tools:
 *   list_products           structuredContent AND the full JSON copy as text (the double payload)
 *   get_products_legacy     JSON only in content[0].text (legacy; the gateway lifts it)
 *   get_media_buy_delivery  a report sized by `rows` (default ~5 MB, past the 4 MiB client cap)
 *   list_creative_formats   sends two progress notifications, then the result
 *   create_media_buy        small mutating tool, structuredContent plus a terse summary
 *
 * Standalone: `node --import tsx examples/seller.ts --port 3001 [--host 127.0.0.1]`
 * (config/gateway.yaml's `demo` agent points at http://127.0.0.1:3001/mcp).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface DemoSeller {
  /** The JSON endpoint: `http://<host>:<port>/mcp`. */
  readonly url: string;
  /** The SSE endpoint: `http://<host>:<port>/sse/mcp`. */
  readonly sseUrl: string;
  close(): Promise<void>;
}

export interface DemoSellerOptions {
  /** Default 0 (the OS picks a free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

/** Rows `get_media_buy_delivery` returns when the call does not say: about 5 MB serialized. */
export const DEFAULT_DELIVERY_ROWS = 26_500;

const CREATIVE_AGENT_URL = 'https://creative.adcontextprotocol.org';
const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Deterministic catalog data
// ---------------------------------------------------------------------------------------------

const PUBLISHERS = [
  { domain: 'sportsnetwork.example', name: 'Sports Network', vertical: 'sports' },
  { domain: 'dailynews.example', name: 'Daily News Group', vertical: 'news' },
  { domain: 'streamhub.example', name: 'StreamHub', vertical: 'entertainment' },
  { domain: 'outdoorlife.example', name: 'Outdoor Life Media', vertical: 'lifestyle' },
  { domain: 'techwire.example', name: 'TechWire', vertical: 'technology' },
  { domain: 'foodie.example', name: 'Foodie Collective', vertical: 'food' },
] as const;

const CHANNELS = [
  { channel: 'ctv', label: 'Connected TV', formats: ['video_15s_ctv', 'video_30s_ctv'], cpm: 32 },
  { channel: 'olv', label: 'Online Video', formats: ['video_15s', 'video_30s', 'video_6s_bumper'], cpm: 18 },
  { channel: 'display', label: 'Display', formats: ['display_300x250', 'display_728x90', 'display_320x50'], cpm: 6 },
  { channel: 'audio', label: 'Streaming Audio', formats: ['audio_30s'], cpm: 14 },
] as const;

const GEOS = ['US', 'CA', 'GB', 'DE'] as const;

const PRODUCT_COUNT = 16;

/** One realistic AdCP product. Everything derives from `i`: same input, same bytes. */
function product(i: number): Record<string, unknown> {
  const pub = PUBLISHERS[i % PUBLISHERS.length]!;
  const ch = CHANNELS[i % CHANNELS.length]!;
  const guaranteed = i % 3 === 0;
  const tier = guaranteed ? 'premium' : 'standard';
  const id = `${pub.vertical}_${ch.channel}_${tier}_${String(i + 1).padStart(2, '0')}`;
  const cpm = ch.cpm + (i % 5) * 1.5;
  return {
    product_id: id,
    name: `${tier === 'premium' ? 'Premium' : 'Standard'} ${pub.name} ${ch.label}`,
    description:
      `${ch.label} inventory across ${pub.name} properties, ${guaranteed ? 'sold on a guaranteed basis with reserved delivery' : 'sold in a non-guaranteed auction with a floor'}. ` +
      `Audience skews toward ${pub.vertical} enthusiasts; brand-safety verified and viewability measured by a third party.`,
    publisher_properties: [
      { publisher_domain: pub.domain, selection_type: 'by_tag', property_tags: [ch.channel, pub.vertical, 'brand_safe'] },
    ],
    channels: [ch.channel],
    format_ids: ch.formats.map((f) => ({ agent_url: CREATIVE_AGENT_URL, id: f })),
    placements: [
      { placement_id: `${id}_pre`, name: 'Pre-roll / top slot', format_ids: [{ agent_url: CREATIVE_AGENT_URL, id: ch.formats[0] }] },
      { placement_id: `${id}_mid`, name: 'Mid-roll / in-feed', format_ids: [{ agent_url: CREATIVE_AGENT_URL, id: ch.formats[ch.formats.length - 1] }] },
    ],
    delivery_type: guaranteed ? 'guaranteed' : 'non_guaranteed',
    pricing_options: [
      guaranteed
        ? { pricing_option_id: `${id}_cpm_fixed`, pricing_model: 'cpm', currency: 'USD', fixed_price: cpm, min_spend_per_package: 5000 }
        : { pricing_option_id: `${id}_cpm_auction`, pricing_model: 'cpm', currency: 'USD', floor_price: cpm / 2, price_guidance: { p25: cpm * 0.6, p50: cpm * 0.75, p75: cpm * 0.9 } },
      ...(ch.channel === 'olv' || ch.channel === 'ctv'
        ? [{ pricing_option_id: `${id}_cpcv`, pricing_model: 'cpcv', currency: 'USD', fixed_price: Number((cpm / 1000 * 1.8).toFixed(4)) }]
        : []),
    ],
    targeting: {
      geo_countries: GEOS.slice(0, 1 + (i % GEOS.length)),
      frequency_cap: { max_impressions: 3 + (i % 4), per: 'day' },
      dayparts: i % 2 === 0 ? ['prime', 'late_night'] : ['all_day'],
    },
    forecast: {
      impressions_per_week: 250_000 * (1 + (i % 7)),
      reach_per_week: 120_000 * (1 + (i % 5)),
      basis: 'trailing_28_days',
    },
    delivery_measurement: {
      provider: i % 2 === 0 ? 'Integral Ad Science' : 'DoubleVerify',
      notes: 'MRC-accredited impression counting; viewability per MRC standard (50% pixels, 2s video / 1s display).',
    },
    reporting_capabilities: {
      available_reporting_frequencies: ['hourly', 'daily'],
      expected_delay_minutes: 60 + (i % 3) * 60,
      timezone: 'UTC',
      available_metrics: ['impressions', 'spend', 'clicks', 'ctr', 'video_completions', 'completion_rate', 'viewability'],
      supports_webhooks: true,
    },
    creative_policy: {
      co_branding: 'optional',
      landing_page: 'any',
      templates_available: i % 4 === 0,
    },
    brief_relevance: `Matches ${ch.label.toLowerCase()} reach goals for ${pub.vertical} audiences in ${GEOS[i % GEOS.length]}.`,
  };
}

const PRODUCTS: readonly Record<string, unknown>[] = Array.from({ length: PRODUCT_COUNT }, (_, i) => product(i));

function productsResponse(maxResults: number | undefined): Record<string, unknown> {
  const products = maxResults === undefined ? PRODUCTS : PRODUCTS.slice(0, maxResults);
  return {
    status: 'completed',
    message: `Found ${products.length} products across ${PUBLISHERS.length} publishers.`,
    products,
    feed_version: 'fv_2026_05_01_a',
    cache_scope: 'public',
  };
}

const FORMATS = [
  ['video_15s_ctv', 'CTV 15s Spot', 'video', 15],
  ['video_30s_ctv', 'CTV 30s Spot', 'video', 30],
  ['video_15s', 'Online Video 15s', 'video', 15],
  ['video_30s', 'Online Video 30s', 'video', 30],
  ['video_6s_bumper', 'Bumper 6s', 'video', 6],
  ['display_300x250', 'Medium Rectangle', 'display', 0],
  ['display_728x90', 'Leaderboard', 'display', 0],
  ['display_320x50', 'Mobile Banner', 'display', 0],
  ['audio_30s', 'Streaming Audio 30s', 'audio', 30],
] as const;

function formatsResponse(): Record<string, unknown> {
  return {
    status: 'completed',
    message: `${FORMATS.length} creative formats supported.`,
    formats: FORMATS.map(([id, name, type, seconds]) => ({
      format_id: { agent_url: CREATIVE_AGENT_URL, id },
      name,
      type,
      assets: [
        type === 'display'
          ? { asset_id: 'image', asset_type: 'image', required: true, requirements: { dimensions: id.split('_')[1], max_file_size_kb: 150, formats: ['png', 'jpg', 'gif'] } }
          : { asset_id: type, asset_type: type, required: true, requirements: { duration_seconds: seconds, formats: type === 'audio' ? ['mp3', 'aac'] : ['mp4', 'webm'] } },
        { asset_id: 'click_url', asset_type: 'url', required: type === 'display' },
      ],
    })),
  };
}

/** A delivery report with `rows` geo rows; about 190 bytes a row serialized. */
function deliveryResponse(mediaBuyId: string, rows: number): Record<string, unknown> {
  const byGeo = Array.from({ length: rows }, (_, i) => {
    const impressions = 1_000 + ((i * 7_919) % 50_000);
    const clicks = Math.floor(impressions / (180 + (i % 40)));
    const completions = Math.floor(impressions * (0.6 + (i % 30) / 100));
    return {
      geo_level: 'postal_area',
      geo_code: `US-${String(10_000 + (i % 89_999)).padStart(5, '0')}`,
      impressions,
      spend: Number((impressions * 0.018).toFixed(2)),
      clicks,
      ctr: Number((clicks / impressions).toFixed(5)),
      video_completions: completions,
      completion_rate: Number((completions / impressions).toFixed(4)),
      viewable_impressions: Math.floor(impressions * 0.71),
    };
  });
  const totalImpressions = byGeo.reduce((s, r) => s + r.impressions, 0);
  const totalSpend = Number(byGeo.reduce((s, r) => s + r.spend, 0).toFixed(2));
  return {
    status: 'completed',
    reporting_period: { start: '2026-04-01T00:00:00Z', end: '2026-04-30T23:59:59Z' },
    currency: 'USD',
    aggregated_totals: { impressions: totalImpressions, spend: totalSpend, media_buy_count: 1 },
    media_buy_deliveries: [
      {
        media_buy_id: mediaBuyId,
        status: 'active',
        totals: { impressions: totalImpressions, spend: totalSpend },
        by_geo: byGeo,
        by_geo_truncated: false,
        by_geo_sorted_by: 'impressions',
        by_geo_sort_direction: 'desc',
      },
    ],
  };
}

function stableId(prefix: string, seed: string): string {
  return `${prefix}_${createHash('sha256').update(seed).digest('hex').slice(0, 12)}`;
}

// ---------------------------------------------------------------------------------------------
// The MCP server
// ---------------------------------------------------------------------------------------------

function json(value: unknown): string {
  return JSON.stringify(value);
}

/** A fresh McpServer with the five tools. One per stateless request, one per SSE session. */
export function buildSellerServer(): McpServer {
  const server = new McpServer({ name: 'adcp-demo-seller', version: '1.0.0' });

  server.registerTool(
    'list_products',
    {
      description: 'Published products matching a brief (AdCP list_products).',
      inputSchema: { brief: z.string().optional(), max_results: z.number().int().min(1).max(100).optional() },
    },
    async ({ max_results }): Promise<CallToolResult> => {
      const data = productsResponse(max_results);
      // The double-payload habit: the whole response again as a text item.
      return { content: [{ type: 'text', text: json(data) }], structuredContent: data };
    },
  );

  server.registerTool(
    'get_products_legacy',
    {
      description: 'Same catalog, legacy shape: the JSON payload only in content[0].text.',
      inputSchema: { brief: z.string().optional(), max_results: z.number().int().min(1).max(100).optional() },
    },
    async ({ max_results }): Promise<CallToolResult> => ({
      content: [{ type: 'text', text: json(productsResponse(max_results ?? 12)) }],
    }),
  );

  server.registerTool(
    'get_media_buy_delivery',
    {
      description: 'Delivery report for a media buy, broken down by geo.',
      inputSchema: {
        media_buy_id: z.string().optional(),
        rows: z.number().int().min(0).max(200_000).optional(),
      },
    },
    async ({ media_buy_id, rows }): Promise<CallToolResult> => {
      const n = rows ?? DEFAULT_DELIVERY_ROWS;
      const data = deliveryResponse(media_buy_id ?? 'mb_demo_0001', n);
      return { content: [{ type: 'text', text: `Delivery report: ${n} geo rows.` }], structuredContent: data };
    },
  );

  server.registerTool(
    'list_creative_formats',
    { description: 'Creative formats this seller accepts.', inputSchema: {} },
    async (_args, extra): Promise<CallToolResult> => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) {
        for (const [progress, message] of [[1, 'Loading format registry'], [2, 'Resolving asset requirements']] as const) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 3, message } });
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
      const data = formatsResponse();
      return { content: [{ type: 'text', text: json(data) }], structuredContent: data };
    },
  );

  server.registerTool(
    'create_media_buy',
    {
      description: 'Create a media buy from products and a budget.',
      inputSchema: {
        buyer_ref: z.string(),
        product_ids: z.array(z.string()).min(1),
        total_budget: z.number().positive(),
        start_time: z.string().optional(),
        end_time: z.string().optional(),
      },
    },
    async ({ buyer_ref, product_ids, total_budget, start_time, end_time }): Promise<CallToolResult> => {
      const mediaBuyId = stableId('mb', `${buyer_ref}|${product_ids.join(',')}|${total_budget}`);
      const data = {
        status: 'completed',
        media_buy_id: mediaBuyId,
        buyer_ref,
        packages: product_ids.map((p, i) => ({
          package_id: stableId('pkg', `${mediaBuyId}|${p}|${i}`),
          product_id: p,
          budget: Number((total_budget / product_ids.length).toFixed(2)),
          status: 'pending_creatives',
        })),
        flight: { start_time: start_time ?? '2026-06-01T00:00:00Z', end_time: end_time ?? '2026-06-30T23:59:59Z' },
      };
      return { content: [{ type: 'text', text: `Media buy ${mediaBuyId} created.` }], structuredContent: data };
    },
  );

  return server;
}

// ---------------------------------------------------------------------------------------------
// HTTP plumbing
// ---------------------------------------------------------------------------------------------

function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

async function readJsonBody(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BODY_BYTES) return { ok: false, status: 413, message: 'Request body too large' };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, status: 400, message: 'Parse error: Invalid JSON' };
  }
}

function containsInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
}

export async function startDemoSeller(opts: DemoSellerOptions = {}): Promise<DemoSeller> {
  const host = opts.host ?? '127.0.0.1';
  /** Live SSE sessions: session id -> transport. */
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  /** Everything that must be closed on shutdown (stateless pairs included while in flight). */
  const live = new Set<{ close(): Promise<void> }>();

  async function handleStateless(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      // The JSON endpoint is stateless: no GET stream, no session to delete.
      res.setHeader('allow', 'POST');
      sendJsonRpcError(res, 405, -32000, 'Method not allowed.');
      return;
    }
    const body = await readJsonBody(req);
    if (!body.ok) return sendJsonRpcError(res, body.status, -32700, body.message);
    const server = buildSellerServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const pair = {
      close: async () => {
        live.delete(pair);
        await transport.close();
        await server.close();
      },
    };
    live.add(pair);
    res.on('close', () => void pair.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body.value);
  }

  async function handleSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (req.method === 'POST') {
      const body = await readJsonBody(req);
      if (!body.ok) return sendJsonRpcError(res, body.status, -32700, body.message);
      if (sessionId !== undefined) {
        const transport = sessions.get(sessionId);
        if (!transport) return sendJsonRpcError(res, 404, -32001, 'Session not found');
        await transport.handleRequest(req, res, body.value);
        return;
      }
      if (!containsInitialize(body.value)) {
        return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      }
      const server = buildSellerServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      const entry = {
        close: async () => {
          live.delete(entry);
          await transport.close();
          await server.close();
        },
      };
      live.add(entry);
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
        live.delete(entry);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, body.value);
      return;
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      const transport = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (!transport) {
        return sessionId === undefined
          ? sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
          : sendJsonRpcError(res, 404, -32001, 'Session not found');
      }
      await transport.handleRequest(req, res);
      return;
    }
    res.setHeader('allow', 'GET, POST, DELETE');
    sendJsonRpcError(res, 405, -32000, 'Method not allowed.');
  }

  const httpServer: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://seller.invalid').pathname;
    const handler = path === '/mcp' ? handleStateless : path === '/sse/mcp' ? handleSession : undefined;
    if (!handler) {
      sendJsonRpcError(res, 404, -32601, `No MCP endpoint at ${path}`);
      return;
    }
    handler(req, res).catch(() => sendJsonRpcError(res, 500, -32603, 'Internal server error'));
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(opts.port ?? 0, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/mcp`,
    sseUrl: `${origin}/sse/mcp`,
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...live].map((t) => t.close()));
        sessions.clear();
        const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        httpServer.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// CLI: node --import tsx examples/seller.ts --port 3001
// ---------------------------------------------------------------------------------------------

async function cli(): Promise<void> {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '3001' }, host: { type: 'string', default: '127.0.0.1' } },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be an integer 0-65535, got ${values.port}`);
    process.exit(2);
  }
  const seller = await startDemoSeller({ port, host: values.host });
  console.log(`demo seller: JSON endpoint ${seller.url}`);
  console.log(`demo seller: SSE endpoint  ${seller.sseUrl}`);
  const stop = (): void => {
    seller.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  cli().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
