/**
 * The hostile seller as one server behind one gateway config: every agent points at a
 * different misbehaviour (`/hostile/<mode>/mcp`), all called AT ONCE. Each call gets its own
 * distinct error for its own id (no cross-talk between exchanges), a well-behaved agent on the
 * same seller keeps working during and after, and nothing is left open afterwards (no SSE
 * stream to a host, no exchange without its log line). The per-misbehaviour details live in
 * test/regressions/.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIB, resultMessage, startHostileSeller, startObservedGateway, type HostileMode } from '../support/hostile-seller.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

interface Case {
  agent: string;
  mode: HostileMode;
  params?: Record<string, string | number>;
  /** Extra YAML lines for the agent (indented by 4). */
  limits?: string[];
  /** max_response_bytes (default 4096). */
  max?: number;
  reason: string;
}

const CASES: Case[] = [
  { agent: 'cl', mode: 'oversized-json', params: { bytes: 10_000 }, reason: 'content_length' },
  { agent: 'chunked', mode: 'oversized-json', params: { bytes: 10_000, content_length: 0 }, reason: 'raw_bytes' },
  { agent: 'cl-small', mode: 'lying-length', params: { bytes: 2000, claim: 100 }, reason: 'upstream_not_mcp' },
  { agent: 'cl-large', mode: 'lying-length', params: { bytes: 2000, claim: 3000 }, reason: 'upstream_reset' },
  { agent: 'gzip', mode: 'gzip-bomb', params: { zeros: 64 * MIB }, max: 1 * MIB, reason: 'decoded_bytes' },
  { agent: 'br', mode: 'brotli-bomb', params: { zeros: 64 * MIB }, max: 1 * MIB, reason: 'decoded_bytes' },
  { agent: 'stacked', mode: 'stacked-encodings', params: { depth: 5 }, reason: 'unsupported_encoding' },
  { agent: 'zstd', mode: 'unknown-encoding', reason: 'unsupported_encoding' },
  { agent: 'drip', mode: 'slow-drip', params: { interval_ms: 50 }, limits: ['response_deadline_ms: 300'], reason: 'deadline_exceeded' },
  { agent: 'silent', mode: 'headers-then-silence', limits: ['response_deadline_ms: 300'], reason: 'deadline_exceeded' },
  { agent: 'silent-sse', mode: 'headers-then-silence', params: { type: 'sse' }, limits: ['sse_idle_timeout_ms: 300'], reason: 'sse_idle' },
  { agent: 'line', mode: 'sse-data-line', params: { bytes: 5000 }, max: 65536, limits: ['max_sse_event_bytes: 2048'], reason: 'sse_event' },
  { agent: 'many', mode: 'sse-many-events', params: { count: 20, event_bytes: 1024 }, reason: 'sse_cumulative' },
  { agent: 'ka', mode: 'sse-keepalive-forever', limits: ['sse_idle_timeout_ms: 1000', 'sse_deadline_ms: 1500'], reason: 'sse_deadline' },
  { agent: 'deep', mode: 'deep-nesting', params: { bytes: 4000 }, reason: 'json_depth' },
  { agent: 'nodes', mode: 'node-bomb', params: { bytes: 4096 }, limits: ['max_json_nodes: 1000'], reason: 'json_nodes' },
  { agent: 'html', mode: 'html-200', reason: 'upstream_not_mcp' },
  { agent: 'down', mode: 'server-error', reason: 'upstream_status' },
  { agent: 'flood', mode: 'compressed-flood', params: { mib: 1, sse: 1 }, reason: 'raw_bytes' },
];

const stack = useSellerAndGateway(startHostileSeller, async (seller) => {
  const yaml = ['agents:', '  ok:', `    url: ${seller.url('ok', { text: 'fine' })}`];
  for (const c of CASES) {
    yaml.push(`  ${c.agent}:`, `    url: ${seller.url(c.mode, c.params)}`, `    max_response_bytes: ${c.max ?? 4096}`, ...(c.limits ?? []).map((l) => `    ${l}`));
  }
  return startObservedGateway(yaml.join('\n') + '\n');
});

type Answer = { id: number; result: { isError?: boolean; content: Array<{ text: string }>; structuredContent?: { adcp_error: { details: { reason: string } } } } };

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('hostile matrix', { timeout: TEST_TIMEOUT_MS }, () => {
  test('every misbehaviour at once: each call gets its own reason for its own id; the good agent is unaffected', async () => {
    const okBody = resultMessage(1000, { content: [{ type: 'text', text: 'fine' }] });
    const [good, ...answers] = await Promise.all([call('ok', 1000), ...CASES.map((c, i) => call(c.agent, i + 1))]);
    assert.equal(good!.text(), okBody);
    for (const [i, c] of CASES.entries()) {
      const r = answers[i]!;
      assert.equal(r.status, 200, c.agent);
      const sse = r.headers.get('content-type') === 'text/event-stream';
      const m = (sse ? sseMessages(r.text()).at(-1) : r.json()) as Answer;
      assert.equal(m.id, i + 1, c.agent);
      assert.equal(m.result.isError, true, c.agent);
      assert.equal(m.result.structuredContent?.adcp_error.details.reason, c.reason, c.agent);
    }

    // Afterwards: the good agent still works, and every exchange was logged and closed.
    const again = await call('ok', 1000);
    assert.equal(again.text(), okBody);
    for (const [i, c] of CASES.entries()) {
      const line = await stack.gateway.exchangeLine(c.agent, i + 1);
      assert.equal(line.reason, c.reason, c.agent);
    }
    // The SSE stage unregisters its stream in a `finally` that may run just after the log line:
    // bounded wait (at most 100 x 20 ms).
    for (let i = 0; i < 100 && stack.gateway.app.gateway.openStreams > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(stack.gateway.app.gateway.openStreams, 0);
  });
});
