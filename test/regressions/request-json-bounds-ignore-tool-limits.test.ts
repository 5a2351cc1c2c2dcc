/**
 * Regression (a hostile trial 22, F2, Medium): the host's request body was bounded by the
 * agent's `max_json_nodes` / `max_json_depth` whatever its tool's own. With agent `acme` at
 * `max_json_nodes: 2000` and `tools.sync_creatives.max_json_nodes: 200000`, a 54 KB
 * `tools/call` of `sync_creatives` with 300 creatives got HTTP 400 `invalid_request`, "the
 * request body is over max_json_nodes (2000)", and the seller got nothing; with the agent at
 * `max_json_depth: 2` and `tools.deep_ok.max_json_depth: 64`, every `deep_ok` call with an
 * `arguments` object was refused so. docs/configuration.md gave the tool keys "As in
 * defaults", which read as: the tool's values bound its calls, as they bound its results.
 *
 * Input: a raw seller on 127.0.0.1 answering every request with a short tool result for its
 * id, behind the real gateway; agent `acme` (`max_json_nodes: 2000`; tools `sync_creatives`
 * 200000 values, `small_sync` 3000, `tiny` 10, `list_creatives` with a response limit only)
 * and agent `deep` (`max_json_depth: 2`; tool `deep_ok` 64 levels); real POSTs.
 * Expected: a single `tools/call` is bounded by its tool's `max_json_nodes` / `max_json_depth`
 * when the tool sets them (as its results are), the agent's otherwise: the calls within their
 * tool's bounds reach the seller byte for byte and its answer comes back; a call over its
 * tool's bound is refused 400 `invalid_request` for its id, the message naming the tool's
 * bound (one below the agent's included: `tiny`'s 10). Controls: a tool without bounds of its
 * own (no entry, or an entry setting only `max_response_bytes`), another method and a batch
 * (MCP 2025-03-26) keep the agent's, the message naming it; the seller gets none of those.
 * Bodies under and over 1 KiB (the peek's parse and scan readings: request/peek.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

/** The seller's answer to request `id`: a short tool result for a `tools/call`, `{}` for another method (2 levels: within agent `deep`'s depth). */
const answerOf = (id: unknown, method: string): string => JSON.stringify({ jsonrpc: '2.0', id, result: method === 'tools/call' ? { content: [{ type: 'text', text: 'done' }] } : {} });

/** The gateway's refusal of request `id` over `bound` (`max_json_nodes (2000)`). */
const refusal = (id: unknown, bound: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: `Invalid Request: the request body is over ${bound}.`, data: { reason: 'invalid_request' } } });

/** The trial's 300 creatives (about 54 KB, 4,500 JSON values). */
const creatives = (count: number): unknown[] =>
  Array.from({ length: count }, (_, i) => ({ creative_id: `c${i}`, format_id: { agent_url: 'https://creative.example', id: 'display_300x250' }, assets: { image: { url: `https://cdn.example/${i}.png`, width: 300, height: 250 } } }));

const call = (id: number, name: string, args: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** Over 1 KiB: the peek's scan reading. */
const PAD = 'p'.repeat(1500);

describe('request-json-bounds-ignore-tool-limits', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const msg = JSON.parse(req.body.toString('utf8')) as { id: unknown; method: string };
        res.writeHead(200, { 'content-type': 'application/json' }).end(answerOf(msg.id, msg.method));
      }),
    (seller) =>
      startGateway(
        [
          'log_level: silent',
          'agents:',
          '  acme:',
          `    url: ${seller.url}`,
          '    max_json_nodes: 2000',
          '    tools:',
          '      sync_creatives: { max_json_nodes: 200000 }',
          '      small_sync: { max_json_nodes: 3000 }',
          '      tiny: { max_json_nodes: 10 }',
          '      list_creatives: { max_response_bytes: 100000 }',
          '  deep:',
          `    url: ${seller.url}`,
          '    max_json_depth: 2',
          '    tools:',
          '      deep_ok: { max_json_depth: 64 }',
          '',
        ].join('\n'),
      ),
  );

  async function post(agent: string, body: string, protocolVersion = '2025-06-18'): Promise<{ status: number; text: string; forwarded: boolean }> {
    const seen = stack.seller.requests.length;
    const r = await withTimeout(
      fetch(stack.gateway.agentUrl(agent), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': protocolVersion },
        body,
      }),
    );
    const text = await withTimeout(r.text());
    const forwarded = stack.seller.requests.length > seen;
    if (forwarded) assert.equal(stack.seller.requests[seen]!.body.toString('utf8'), body, 'forwarded byte for byte');
    return { status: r.status, text, forwarded };
  }

  const FORWARDED: ReadonlyArray<readonly [label: string, agent: string, body: string]> = [
    ['the trial: sync_creatives with 300 creatives (54 KB, 200000 values allowed)', 'acme', call(1, 'sync_creatives', { creatives: creatives(300) })],
    ['sync_creatives under 1 KiB (the parse reading)', 'acme', call(2, 'sync_creatives', { creatives: creatives(1) })],
    ['the trial: deep_ok with an arguments object (agent max_json_depth 2)', 'deep', call(3, 'deep_ok', { a: { b: 1 } })],
    ['deep_ok over 1 KiB, 6 levels deep', 'deep', call(4, 'deep_ok', { note: PAD, a: { b: { c: [1] } } })],
    ['control: ping with no params, within the agent depth 2', 'deep', JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' })],
  ];
  for (const [label, agent, body] of FORWARDED) {
    test(`${label}: forwarded, the seller's answer back`, async () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      assert.deepEqual(await post(agent, body), { status: 200, text: answerOf(id, method), forwarded: true });
    });
  }

  const batch = (...messages: string[]): string => `[${messages.join(',')}]`;
  const REFUSED: ReadonlyArray<readonly [label: string, agent: string, body: string, bound: string, protocolVersion?: string]> = [
    ['small_sync with 300 creatives: its own 3000', 'acme', call(11, 'small_sync', { creatives: creatives(300) }), 'max_json_nodes (3000)'],
    ['tiny, a bound below the agent, under 1 KiB: its own 10', 'acme', call(12, 'tiny', { creatives: creatives(1) }), 'max_json_nodes (10)'],
    ['tiny over 1 KiB: its own 10', 'acme', call(13, 'tiny', { note: PAD, a: [1, 2, 3, 4, 5, 6] }), 'max_json_nodes (10)'],
    ['control: a tool with no entry, 300 creatives: the agent 2000', 'acme', call(14, 'get_products', { creatives: creatives(300) }), 'max_json_nodes (2000)'],
    ['control: list_creatives (an entry without JSON bounds), 300 creatives: the agent 2000', 'acme', call(15, 'list_creatives', { creatives: creatives(300) }), 'max_json_nodes (2000)'],
    ['control: another method (ping, params of 300 creatives): the agent 2000', 'acme', JSON.stringify({ jsonrpc: '2.0', id: 16, method: 'ping', params: { creatives: creatives(300) } }), 'max_json_nodes (2000)'],
    ['control: a tool with no entry and an arguments object: the agent depth 2', 'deep', call(17, 'other', { a: 1 }), 'max_json_depth (2)'],
    ['control: a tool with no entry over 1 KiB: the agent depth 2', 'deep', call(18, 'other', { note: PAD }), 'max_json_depth (2)'],
    ['control: a batch (MCP 2025-03-26) of one deep_ok call: the agent depth 2', 'deep', batch(call(19, 'deep_ok', {})), 'max_json_depth (2)', '2025-03-26'],
    ['control: a batch of sync_creatives calls: the agent 2000', 'acme', batch(call(20, 'sync_creatives', { creatives: creatives(150) }), call(21, 'sync_creatives', { creatives: creatives(150) })), 'max_json_nodes (2000)', '2025-03-26'],
  ];
  for (const [label, agent, body, bound, protocolVersion] of REFUSED) {
    test(`${label}: 400 invalid_request naming ${bound}, the seller not contacted`, async () => {
      const parsed = JSON.parse(body) as { id?: number };
      const id = Array.isArray(parsed) ? null : parsed.id;
      assert.deepEqual(await post(agent, body, protocolVersion), { status: 400, text: refusal(id, bound), forwarded: false });
    });
  }
});
