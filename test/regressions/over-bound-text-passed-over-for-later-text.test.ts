/**
 * Reported failure (hostile trial 38, F1: spec conformance): a seller's legacy result with no
 * `structuredContent` and two text items, the first `{"status":"completed","arr":[0,…]}` of
 * 100,002 JSON values (one over the default `max_json_nodes`, in a ~200 KB message), the
 * second `{"status":"completed","products":[{"product_id":"SECOND"}]}`. The gateway lifted the
 * second into `structuredContent`. mcp-response-extraction §Extraction Algorithm step 3 ("For
 * each item where `type === 'text'`, enforce the configured response-size limit, then attempt
 * `JSON.parse`. If the result is a non-array object, return it.") returns the FIRST text's
 * object from the seller's result, and SECOND from the gateway's (structuredContent wins at
 * step 2): the host read other data than the seller sent. The same with a first text 65 levels
 * deep (over the default `max_json_depth` 64).
 *
 * Now (extract.ts findLiftableTextOrBound on the parse path; lift-text.ts `'over_bound'` and
 * lift-splice.ts on the scan path): a text over the depth or node bound ends the lift's walk,
 * nothing after it is lifted, and the exchange line says `text_not_lifted` with the bound; the
 * host gets the seller's bytes and extracts as the spec says. A text over the byte bound is
 * still passed over (the spec's own per-item skip), and so is a text that is no object, or no
 * JSON at all even though it is over a bound past where it breaks it (hostile trial 40, F2:
 * `{"a":[0,…100002…]` without its closing brace had ended the walk).
 *
 * Input: a raw seller on 127.0.0.1 (it answers `initialize` too) behind the real gateway with
 * its default bounds, a host on MCP 2025-06-18; the seller's result chosen by tool name, as a
 * JSON body and as a one-event SSE stream. Expectation: the exact bytes the host gets, the
 * exchange lines, and the spec's algorithm (written out below as the spec page gives it) run on
 * what the host got returns what it returns on the seller's result; and the MCP SDK client
 * reads through the gateway what it reads from the seller directly.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { connectClient } from '../helpers/client.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { messageEvent as frame, resultMessageText as message, startToolResultSeller } from '../helpers/tool-result-seller.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const item = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;
const SECOND = '{"status":"completed","products":[{"product_id":"SECOND"}]}';
/** The trial's first text: 100,002 values (the object, the array, 100,000 zeros). */
const WIDE = `{"status":"completed","arr":[${Array<string>(100_000).fill('0').join(',')}]}`;
/** 65 levels deep. */
const DEEP = '{"a":'.repeat(65) + '1' + '}'.repeat(65);
/** Controls: exactly at the bounds once lifted is another test's; here no object, and an invalid one. */
const PLAIN = 'Found 1 product.';
const INVALID = '{"status": oops';

interface Case {
  readonly first: string;
  /** The expected `text_not_lifted`, or undefined: SECOND is lifted (a control). */
  readonly reason?: 'json_nodes' | 'json_depth';
}

const CASES: Record<string, Case> = {
  trial_nodes: { first: WIDE, reason: 'json_nodes' },
  trial_depth: { first: DEEP, reason: 'json_depth' },
  plain_control: { first: PLAIN },
  invalid_control: { first: INVALID },
  // Hostile trial 40, F2: over a bound AND not JSON (invalid only past the value that broke the
  // bound): JSON.parse refuses it, so the spec passes over it and the second text is lifted.
  invalid_deep_control: { first: `${DEEP} trailing` },
  invalid_wide_control: { first: WIDE.slice(0, -1) },
};

const result = (c: Case): string => `{"content":[${item(c.first)},${item(SECOND)}]}`;
/** What the gateway sends for a control: SECOND lifted, its text replaced by the summary. */
const liftedSecond = (id: number, c: Case): string =>
  message(id, `{"content":[${item(c.first)},${item(`Result in structuredContent (${SECOND.length} bytes): status=completed; products[1].`)}],"structuredContent":${SECOND}}`);

/** mcp-response-extraction §Extraction Algorithm as the page writes it (no depth or node bound). */
function specExtract(r: { isError?: unknown; structuredContent?: unknown; content?: unknown }): unknown {
  if (r.isError) return null;
  const sc = r.structuredContent;
  if (sc !== null && typeof sc === 'object' && !Array.isArray(sc)) return Object.keys(sc).length === 1 && 'adcp_error' in sc ? null : sc;
  for (const it of Array.isArray(r.content) ? (r.content as { type?: unknown; text?: unknown }[]) : []) {
    if (it?.type !== 'text' || typeof it.text !== 'string') continue;
    try {
      const v: unknown = JSON.parse(it.text);
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(Object.keys(v).length === 1 && 'adcp_error' in v)) return v;
    } catch {
      // not JSON: skipped
    }
  }
  return null;
}
const resultOf = (json: string): Parameters<typeof specExtract>[0] => (JSON.parse(json) as { result: Parameters<typeof specExtract>[0] }).result;

const stack = useSellerAndGateway(
  () => startToolResultSeller(Object.fromEntries(Object.entries(CASES).map(([name, c]) => [name, result(c)])), 'over-bound'),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

let nextId = 1;

describe('a text over the depth or node bound is not passed over for a later text (hostile trial 38, F1)', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const sse of [false, true]) {
    for (const [name, c] of Object.entries(CASES)) {
      test(`${sse ? 'SSE' : 'JSON'}: ${name}: ${c.reason ? `the seller's bytes, text_not_lifted ${c.reason}` : 'the second text lifted (control)'}`, async () => {
        const id = nextId++;
        const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, name, { sse }), { 'mcp-protocol-version': '2025-06-18' }));
        assert.equal(r.status, 200);
        const seller = message(id, result(c));
        const expected = c.reason ? seller : liftedSecond(id, c);
        const got = r.text();
        assert.equal(got.length, (sse ? frame(expected) : expected).length);
        assert.ok(got === (sse ? frame(expected) : expected), 'exact bytes');
        // The spec's algorithm reads from the host's answer what it reads from the seller's.
        assert.deepEqual(specExtract(resultOf(expected)), specExtract(resultOf(seller)));
        const line = await stack.gateway.exchangeLine('s', id);
        assert.deepEqual([line.outcome, line.reason, line.text_not_lifted], c.reason ? ['ok', null, c.reason] : ['rewritten', null, undefined]);
      });
    }
  }

  test('the MCP SDK client reads through the gateway what it reads from the seller directly', async () => {
    const direct = await connectClient(stack.seller.url, { protocolVersion: '2025-06-18' });
    const viaGateway = await connectClient(stack.gateway.agentUrl('s'), { protocolVersion: '2025-06-18' });
    const call = (client: Client, name: string) => withTimeout(client.callTool({ name, arguments: {} }), undefined, name);
    try {
      for (const name of ['trial_nodes', 'trial_depth']) {
        const want = await call(direct, name);
        const got = await call(viaGateway, name);
        assert.equal(got.structuredContent, undefined, name);
        assert.equal(JSON.stringify(got), JSON.stringify(want), name);
      }
    } finally {
      await direct.close();
      await viaGateway.close();
    }
  });
});
