/**
 * Prometheus metrics after real exchanges through the gateway against a raw seller on
 * 127.0.0.1: exact counter values read from the `/metrics` text exposition.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { startRawSeller, toolResponse, toolResponseOfSize, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { createMetrics, methodLabel } from '../../src/observability/metrics.js';

const LIMIT = 4096;
const SECRET = 'metrics-test-resume-secret-0123456789';
const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };

// --- exposition parsing ------------------------------------------------------------------

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the sample with exactly these labels, or undefined when there is none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  return samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}

/** Every sample of `name`, as `label=value,...` -> value. */
function series(samples: Sample[], name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples.filter((x) => x.name === name)) {
    out[
      Object.entries(s.labels)
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join(',')
    ] = s.value;
  }
  return out;
}

// --- fixtures ----------------------------------------------------------------------------

let seller: RawSeller;
let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => answer(req, res));
});
after(async () => {
  await seller.close();
});

const yaml = () =>
  `log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n  t:\n    url: ${seller.url}\n`;

/** Resolves once `n` more exchanges have ended (metrics are updated before this listener runs). */
function exchangesEnded(gw: RunningGateway, n: number): Promise<void> {
  let left = n;
  return withTimeout(
    new Promise<void>((resolve) => {
      gw.app.gateway.onExchangeEnd(() => {
        if (--left === 0) resolve();
      });
    }),
    10_000,
    `${n} exchanges`,
  );
}

async function scrape(gw: RunningGateway): Promise<{ status: number; contentType: string | null; text: string; samples: Sample[] }> {
  const res = await fetch(`${gw.baseUrl}/metrics`);
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), text, samples: parseExposition(text) };
}

/** A tools/call result whose text item duplicates structuredContent (the gateway dedupes it for 2025-06-18 hosts). */
function duplicatedResult(id: number): string {
  const data = { products: Array.from({ length: 20 }, (_, i) => ({ product_id: `p${i}`, name: `Product ${i}` })) };
  return toolResponse(id, { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data });
}

describe('metrics after real exchanges', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(yaml());
  });
  after(async () => {
    await gw.close();
  });

  test('/metrics counts exchanges, bytes, dedupe savings and breaches exactly', async () => {
    const deduped = duplicatedResult(1);
    const plainList = JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools: [] } });
    const gzipBody = toolResponseOfSize(3, 2000);
    const gzipped = gzipSync(gzipBody);
    const tooLarge = toolResponseOfSize(4, LIMIT + 1);
    const bodies: Array<(res: ServerResponse) => void> = [
      (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(deduped),
      (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(plainList),
      (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipped),
      (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': LIMIT + 1 }).end(tooLarge),
    ];
    answer = (_req, res) => bodies.shift()!(res);

    const ended = exchangesEnded(gw, 4);
    const r1 = await rawPost(gw.agentUrl('s'), toolCall(1, 'list_products'), PROTOCOL);
    const r2 = await rawPost(gw.agentUrl('s'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }, PROTOCOL);
    const r3 = await rawPost(gw.agentUrl('s'), toolCall(3, 'get_media_buy_delivery'), PROTOCOL);
    const r4 = await rawPost(gw.agentUrl('s'), toolCall(4, 'get_media_buy_delivery'), PROTOCOL);
    await ended;

    // The exchanges did what the counters below say.
    assert.ok(r1.bytes < Buffer.byteLength(deduped), 'deduped');
    assert.equal(r2.text(), plainList);
    assert.equal(r3.text(), gzipBody);
    assert.equal((r4.json() as { result: { structuredContent: { adcp_error: { details: { reason: string } } } } }).result.structuredContent.adcp_error.details.reason, 'content_length');

    const m = await scrape(gw);
    assert.equal(m.status, 200);
    assert.equal(m.contentType, 'text/plain; version=0.0.4; charset=utf-8');
    assert.deepEqual(series(m.samples, 'adcp_gateway_exchanges_total'), {
      'agent=s,method=tools/call,outcome=rewritten,status_class=2xx': 1,
      'agent=s,method=tools/list,outcome=ok,status_class=2xx': 1,
      'agent=s,method=tools/call,outcome=ok,status_class=2xx': 1,
      'agent=s,method=tools/call,outcome=local_error,status_class=2xx': 1,
    });
    const raw = Buffer.byteLength(deduped) + Buffer.byteLength(plainList) + gzipped.length;
    const decoded = Buffer.byteLength(deduped) + Buffer.byteLength(plainList) + Buffer.byteLength(gzipBody);
    assert.deepEqual(series(m.samples, 'adcp_gateway_seller_bytes_total'), { 'agent=s,kind=raw': raw, 'agent=s,kind=decoded': decoded });
    assert.equal(valueOf(m.samples, 'adcp_gateway_host_bytes_total', { agent: 's' }), r1.bytes + r2.bytes + r3.bytes + r4.bytes);
    assert.equal(valueOf(m.samples, 'adcp_gateway_dedupe_saved_bytes_total', { agent: 's' }), Buffer.byteLength(deduped) - r1.bytes);
    assert.deepEqual(series(m.samples, 'adcp_gateway_limit_breaches_total'), { 'agent=s,reason=content_length': 1 });
    assert.equal(valueOf(m.samples, 'adcp_gateway_exchange_duration_seconds_count', { agent: 's', method: 'tools/call' }), 3);
    assert.equal(valueOf(m.samples, 'adcp_gateway_exchange_duration_seconds_count', { agent: 's', method: 'tools/list' }), 1);
    assert.equal(valueOf(m.samples, 'adcp_gateway_exchange_duration_seconds_bucket', { agent: 's', method: 'tools/list', le: '+Inf' }), 1);
    assert.ok(valueOf(m.samples, 'adcp_gateway_exchange_duration_seconds_bucket', { agent: 's', method: 'tools/list', le: '0.005' }) !== undefined);
    assert.ok(valueOf(m.samples, 'adcp_gateway_exchange_duration_seconds_bucket', { agent: 's', method: 'tools/list', le: '60' }) !== undefined);
    assert.deepEqual(series(m.samples, 'adcp_gateway_resumes_total'), {});
    assert.equal(valueOf(m.samples, 'adcp_gateway_sse_streams_open'), 0);
    assert.deepEqual(series(m.samples, 'adcp_gateway_config_reloads_total'), { 'result=ok': 0, 'result=error': 0, 'result=unchanged': 0 });
    // Default process metrics are on the same registry.
    assert.ok(valueOf(m.samples, 'process_cpu_user_seconds_total') !== undefined);
    // Tool names and ids never become label values.
    assert.doesNotMatch(m.text, /list_products|get_media_buy_delivery/);

    // One more breach of the same reason: exactly +1.
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': LIMIT + 1 }).end(toolResponseOfSize(5, LIMIT + 1));
    const once = exchangesEnded(gw, 1);
    await rawPost(gw.agentUrl('s'), toolCall(5, 'list_products'), PROTOCOL);
    await once;
    const after = await scrape(gw);
    assert.equal(valueOf(after.samples, 'adcp_gateway_limit_breaches_total', { agent: 's', reason: 'content_length' }), 2);
  });

  test('methods outside the MCP list are counted as other; messages without a method get fixed labels', async () => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 9, result: {} }));
    const ended = exchangesEnded(gw, 1);
    await rawPost(gw.agentUrl('t'), { jsonrpc: '2.0', id: 9, method: 'x-seller/secret_method_name' });
    await ended;
    const m = await scrape(gw);
    assert.equal(valueOf(m.samples, 'adcp_gateway_exchanges_total', { agent: 't', method: 'other', outcome: 'ok', status_class: '2xx' }), 1);
    assert.doesNotMatch(m.text, /secret_method_name/);

    assert.equal(methodLabel({ kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined }), 'none');
    assert.equal(methodLabel({ kind: 'batch', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined }), 'batch');
    assert.equal(methodLabel({ kind: 'notification', id: 1, idText: undefined, method: undefined, toolName: undefined, taskId: undefined }), 'response');
    assert.equal(methodLabel({ kind: 'notification', id: null, idText: undefined, method: 'notifications/initialized', toolName: undefined, taskId: undefined }), 'notifications/initialized');
  });

  test('sse_streams_open is 1 while a stream is open and 0 after it ends', async () => {
    let finish: () => void = () => {};
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      finish = () => res.end(`event: message\ndata: ${toolResponse(20, { content: [{ type: 'text', text: 'done' }] })}\n\n`);
    };
    const ended = exchangesEnded(gw, 1);
    const res = await fetch(gw.agentUrl('s'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...PROTOCOL },
      body: JSON.stringify(toolCall(20, 'list_products')),
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await withTimeout(reader.read(), 10_000, 'first event');
    assert.match(Buffer.from(first.value!).toString('utf8'), /notifications\/progress/);

    const during = await scrape(gw);
    assert.equal(valueOf(during.samples, 'adcp_gateway_sse_streams_open'), 1);

    finish();
    while (!(await withTimeout(reader.read(), 10_000, 'stream end')).done);
    await ended;
    const afterEnd = await scrape(gw);
    assert.equal(valueOf(afterEnd.samples, 'adcp_gateway_sse_streams_open'), 0);
  });

  test('a Last-Event-ID resume counts in resumes_total', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: up-1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      setTimeout(() => res.destroy(), 20); // drops after an event id: the host resumes
    };
    const dropped = exchangesEnded(gw, 1);
    const first = await rawPost(gw.agentUrl('s'), toolCall(30, 'list_products'), { 'mcp-protocol-version': '2025-11-25' });
    await dropped;
    const token = /^id: (.*)$/m.exec(first.text())?.[1];
    assert.ok(token);

    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: up-2\nevent: message\ndata: ${toolResponse(30, { content: [] })}\n\n`);
    const resumed = exchangesEnded(gw, 1);
    const res = await fetch(gw.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(res.status, 200);
    await res.text();
    await resumed;
    const m = await scrape(gw);
    assert.equal(valueOf(m.samples, 'adcp_gateway_resumes_total', { agent: 's' }), 1);
    assert.equal(valueOf(m.samples, 'adcp_gateway_exchanges_total', { agent: 's', method: 'tools/call', outcome: 'resumable_end', status_class: '2xx' }), 1);
  });
});

describe('metrics: counters for other parts of the gateway', () => {
  test('discovery overshoots by bounded surface, refusals by bounded reason, config reloads by result', async () => {
    const metrics = createMetrics();
    metrics.incDiscoveryOvershoot('s', 'tools_list_page');
    metrics.incDiscoveryOvershoot('s', 'tools_list_page');
    metrics.incDiscoveryOvershoot('s', 'get_adcp_capabilities');
    metrics.incRefusal('unknown_agent', '_unknown');
    metrics.incRefusal('not-a-reason', 's');
    metrics.incDiscoveryOvershoot('s', 'some_seller_tool');
    metrics.incConfigReload('ok');
    metrics.incConfigReload('error');
    metrics.incConfigReload('error');
    const samples = parseExposition(await metrics.render());
    assert.deepEqual(series(samples, 'adcp_gateway_discovery_size_overshoot_total'), {
      'agent=s,surface=tools_list_page': 2,
      'agent=s,surface=get_adcp_capabilities': 1,
      'agent=s,surface=other': 1,
    });
    assert.deepEqual(series(samples, 'adcp_gateway_refusals_total'), { 'agent=_unknown,reason=unknown_agent': 1, 'agent=s,reason=other': 1 });
    assert.deepEqual(series(samples, 'adcp_gateway_config_reloads_total'), { 'result=ok': 1, 'result=error': 2, 'result=unchanged': 0 });
    // The last attempt failed: the file on disk is not the config in force (hostile trial 53, F8).
    assert.deepEqual(series(samples, 'adcp_gateway_config_last_reload_successful'), { '': 0 });
    metrics.incConfigReload('unchanged');
    assert.deepEqual(series(parseExposition(await metrics.render()), 'adcp_gateway_config_last_reload_successful'), { '': 1 });
  });

  test('each app has its own registry', async () => {
    const a = await startGateway(yaml());
    const b = await startGateway(yaml());
    try {
      a.app.gateway.metrics.incConfigReload('ok');
      assert.notEqual(a.app.gateway.metrics.registry, b.app.gateway.metrics.registry);
      assert.equal(valueOf((await scrape(a)).samples, 'adcp_gateway_config_reloads_total', { result: 'ok' }), 1);
      assert.equal(valueOf((await scrape(b)).samples, 'adcp_gateway_config_reloads_total', { result: 'ok' }), 0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
