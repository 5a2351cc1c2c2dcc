/**
 * `npm run demo`: the gateway in front of the demo seller, end to end, on loopback ports it
 * picks itself.
 *
 *   MCP SDK client (the "host")  ->  gateway /agents/<agent>/mcp  ->  demo seller (MCP SDK server)
 *
 * For each call the host makes through the gateway, the demo replays the very same JSON-RPC
 * request directly at the seller with a raw POST, and compares:
 *   - bytes from seller: the body the seller answers the replayed request with;
 *   - bytes to host: the body the host's MCP client actually read from the gateway (counted by
 *     the `fetch` handed to the SDK transport, as the SDK consumes the stream);
 *   - what the gateway did, read off the two results.
 *
 * Exits 0 when every row shows what it should, 1 otherwise (or when something hangs).
 */
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { startDemoSeller } from './seller.js';

/** The whole demo must finish in this time; a hang is a failure, not a wait. */
const DEMO_DEADLINE_MS = 60_000;

type Transport = 'json' | 'sse';
type Action = 'deduped' | 'lifted to structuredContent' | 'lifted to structuredContent, text summarized' | 'passed through' | `RESPONSE_TOO_LARGE (${string})` | `unexpected: ${string}`;

interface Row {
  tool: string;
  transport: Transport;
  sellerBytes: number;
  hostBytes: number;
  action: Action;
  expected: RegExp;
  note: string;
}

interface Captured {
  body: string;
  headers: Headers;
  bytes: Promise<number>;
  contentType: string | null;
}

/** A fetch for the SDK transport that remembers each tools/call request and counts the bytes the client reads back. */
function countingFetch(calls: Captured[]): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    const body = typeof init?.body === 'string' ? init.body : undefined;
    let id: string | number | undefined;
    if (body !== undefined) {
      try {
        const msg = JSON.parse(body) as { id?: string | number; method?: string };
        if (msg.method === 'tools/call') id = msg.id;
      } catch {
        /* not JSON: not ours to count */
      }
    }
    if (id === undefined || body === undefined || !response.body) return response;
    const reader = response.body.getReader();
    let count = 0;
    let resolve!: (n: number) => void;
    const bytes = new Promise<number>((r) => (resolve = r));
    calls.push({ body, headers: new Headers(init?.headers), bytes, contentType: response.headers.get('content-type') });
    const counted = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) {
          resolve(count);
          controller.close();
          return;
        }
        count += value.byteLength;
        controller.enqueue(value);
      },
      async cancel(reason) {
        resolve(count);
        await reader.cancel(reason);
      },
    });
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** POSTs `body` at `url` with the given headers and returns the body's byte length. */
async function rawBytes(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
}

/** A raw MCP session at a stateful seller endpoint (initialize + initialized), for replaying calls. */
async function rawSession(url: string, protocolVersion: string): Promise<Record<string, string>> {
  const init = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'demo-raw', version: '1.0.0' } } }),
  });
  await init.arrayBuffer();
  const sessionId = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !sessionId) throw new Error(`seller initialize failed: HTTP ${init.status}`);
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': protocolVersion };
  await rawBytes(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  return headers;
}

function classify(direct: CallToolResult, viaGateway: CallToolResult): Action {
  if (viaGateway.isError) {
    const err = (viaGateway.structuredContent as { adcp_error?: { code?: string; details?: { reason?: string } } } | undefined)?.adcp_error;
    return err?.code === 'RESPONSE_TOO_LARGE' ? `RESPONSE_TOO_LARGE (${err.details?.reason ?? '?'})` : `unexpected: error ${err?.code ?? '(no adcp_error)'}`;
  }
  if (isDeepStrictEqual(direct, viaGateway)) return 'passed through';
  if (direct.structuredContent === undefined && viaGateway.structuredContent !== undefined) {
    const text = direct.content.find((c) => c.type === 'text');
    const lifted = text?.type === 'text' && isDeepStrictEqual(JSON.parse(text.text), viaGateway.structuredContent);
    if (!lifted) return 'unexpected: structuredContent differs from the text';
    return isDeepStrictEqual(direct.content, viaGateway.content) ? 'lifted to structuredContent' : 'lifted to structuredContent, text summarized';
  }
  if (isDeepStrictEqual(direct.structuredContent, viaGateway.structuredContent) && viaGateway.content.length > 0) {
    return 'deduped';
  }
  return 'unexpected: result changed';
}

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

async function main(): Promise<number> {
  const seller = await startDemoSeller();
  const yaml = [
    'log_level: silent',
    'agents:',
    '  demo:',
    `    url: ${seller.url}`,
    '  demo-sse:',
    `    url: ${seller.sseUrl}`,
    '',
  ].join('\n');
  const app = await buildApp(parseConfig(yaml, { source: 'examples/demo.ts' }), { logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const gatewayBase = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const sellerUrl: Record<Transport, string> = { json: seller.url, sse: seller.sseUrl };
  const agentOf: Record<Transport, string> = { json: 'demo', sse: 'demo-sse' };

  const clients: Client[] = [];
  const calls: Captured[] = [];
  const connect = async (url: string, fetchImpl?: FetchLike): Promise<Client> => {
    const client = new Client({ name: 'demo-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), fetchImpl ? { fetch: fetchImpl } : {}));
    clients.push(client);
    return client;
  };

  try {
    const host: Record<Transport, Client> = {
      json: await connect(`${gatewayBase}/agents/${agentOf.json}/mcp`, countingFetch(calls)),
      sse: await connect(`${gatewayBase}/agents/${agentOf.sse}/mcp`, countingFetch(calls)),
    };
    const direct: Record<Transport, Client> = { json: await connect(seller.url), sse: await connect(seller.sseUrl) };
    const sseReplayHeaders = await rawSession(seller.sseUrl, '2025-11-25');

    const plan: Array<{ tool: string; transport: Transport; args?: Record<string, unknown>; expected: RegExp; note?: string }> = [
      { tool: 'list_products', transport: 'json', expected: /^deduped$/ },
      { tool: 'get_products_legacy', transport: 'json', expected: /^lifted to structuredContent/ },
      { tool: 'list_creative_formats', transport: 'sse', expected: /^deduped$/ },
      { tool: 'list_products', transport: 'sse', expected: /^deduped$/ },
      {
        tool: 'create_media_buy',
        transport: 'json',
        args: { buyer_ref: 'acme-q4-olv', product_ids: ['sports_ctv_premium_01', 'news_olv_standard_02'], total_budget: 50_000 },
        expected: /^passed through$/,
      },
      { tool: 'get_media_buy_delivery', transport: 'json', args: { rows: 100 }, expected: /^passed through$/, note: 'rows: 100' },
      { tool: 'get_media_buy_delivery', transport: 'json', expected: /^RESPONSE_TOO_LARGE \(content_length\)$/ },
      { tool: 'get_media_buy_delivery', transport: 'sse', expected: /^RESPONSE_TOO_LARGE \((sse_cumulative|sse_event)\)$/ },
    ];

    const rows: Row[] = [];
    for (const step of plan) {
      const args = step.args ?? {};
      let progressEvents = 0;
      const before = calls.length;
      const viaGateway = (await host[step.transport].callTool({ name: step.tool, arguments: args }, undefined, {
        onprogress: () => void (progressEvents += 1),
      })) as CallToolResult;
      if (calls.length !== before + 1) throw new Error(`expected one tools/call exchange for ${step.tool}, saw ${calls.length - before}`);
      const captured = calls[before]!;
      const hostBytes = await captured.bytes;

      // Replay the host's exact request at the seller: same id, same params (progress token included).
      const protocolVersion = captured.headers.get('mcp-protocol-version') ?? '2025-03-26';
      const replayHeaders = step.transport === 'json' ? { 'mcp-protocol-version': protocolVersion } : sseReplayHeaders;
      const fromSeller = await rawBytes(sellerUrl[step.transport], captured.body, replayHeaders);
      if (fromSeller.status !== 200) throw new Error(`seller answered HTTP ${fromSeller.status} for ${step.tool}`);

      const want = (await direct[step.transport].callTool({ name: step.tool, arguments: args })) as CallToolResult;
      const action = classify(want, viaGateway);
      const notes = [step.note, progressEvents > 0 ? `${progressEvents} progress events` : undefined].filter((n) => n !== undefined);
      rows.push({ tool: step.tool, transport: step.transport, sellerBytes: fromSeller.bytes, hostBytes, action, expected: step.expected, note: notes.join(', ') });
    }

    const header = ['tool', 'transport', 'bytes from seller', 'bytes to host', 'what the gateway did'];
    const table = rows.map((r) => [
      r.note ? `${r.tool} (${r.note})` : r.tool,
      r.transport,
      fmt(r.sellerBytes),
      fmt(r.hostBytes),
      r.expected.test(r.action) ? r.action : `${r.action}   <-- expected ${r.expected.source}`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((cells) => cells[i]!.length)));
    const line = (cells: string[]): string =>
      cells
        .map((c, i) => (i === 4 ? c : pad(c, widths[i]!, i === 2 || i === 3)))
        .join('  ')
        .trimEnd();
    console.log('');
    console.log(`adcp-buyer-gateway demo: host -> ${gatewayBase}/agents/{demo,demo-sse}/mcp -> seller ${seller.url} (JSON), ${seller.sseUrl} (SSE)`);
    console.log('');
    console.log(line(header));
    console.log(line(widths.map((w) => '-'.repeat(w))));
    for (const cells of table) console.log(line(cells));
    const unexpected = rows.filter((r) => !r.expected.test(r.action)).length;
    const saved = rows.filter((r) => r.action === 'deduped').reduce((s, r) => s + (r.sellerBytes - r.hostBytes), 0);
    console.log('');
    console.log('What happened:');
    console.log(`- deduped: the seller sent structuredContent AND the same JSON again as text. The host (MCP 2025-06-18+,`);
    console.log(`  reads structuredContent) got the structured data unchanged and a short summary instead of the copy:`);
    console.log(`  ${fmt(saved)} bytes the host's model never has to read on these calls.`);
    console.log('- lifted to structuredContent: a legacy seller put its JSON only in text; the gateway parsed it (bounded)');
    console.log('  and moved it into structuredContent, where the AdCP extraction algorithm looks first; the text,');
    console.log('  now a duplicate, became a summary too.');
    console.log('- passed through: nothing to fix, the seller\'s answer is forwarded as it came (still byte-counted).');
    console.log('- RESPONSE_TOO_LARGE: the report was ~5 MB, past the 4 MiB default. Over JSON the declared Content-Length');
    console.log('  was refused before a body byte was read; over SSE the stream was counted as it arrived and cut at the');
    console.log('  limit. Either way the host got an isError tool result with structuredContent.adcp_error (recovery:');
    console.log('  correctable, narrow the request) for the same JSON-RPC id, not a truncated body or a hang.');
    console.log('  The same report with rows: 100 passes.');
    console.log('');
    if (unexpected > 0) {
      console.error(`demo: ${unexpected} row(s) did not show what they should`);
      return 1;
    }
    console.log('demo: all rows as expected');
    return 0;
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    const closing = app.close();
    app.server.closeAllConnections();
    await closing;
    await seller.close();
  }
}

const deadline = setTimeout(() => {
  console.error(`demo: did not finish within ${DEMO_DEADLINE_MS} ms`);
  process.exit(1);
}, DEMO_DEADLINE_MS);

main().then(
  (code) => {
    clearTimeout(deadline);
    process.exitCode = code;
    // Everything is closed: nothing should keep the process alive. If something does, say so and fail.
    setTimeout(() => {
      console.error('demo: handles still open 5 s after shutdown');
      process.exit(1);
    }, 5_000).unref();
  },
  (err: unknown) => {
    clearTimeout(deadline);
    console.error('demo failed:', err);
    process.exit(1);
  },
);
