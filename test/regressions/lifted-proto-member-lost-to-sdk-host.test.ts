/**
 * Reported failure (a hostile trial 24, L1): a seller's legacy text-only result whose JSON
 * object has a `__proto__` member (`{"__proto__":{"polluted":1},"a":1,"pad":…}`) was lifted:
 * the wire carried `"structuredContent":{"__proto__":{"polluted":1},…}` and the text became
 * the summary `Result in structuredContent (343 bytes): __proto__, a, pad.`. The MCP
 * TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) reads `structuredContent` through
 * zod's `z.record`, which builds a new object by assignment: a `__proto__` member sets a
 * prototype there instead, so the host read `{"a":1,"pad":…}`. The member was lost, and the
 * summary had removed the only copy the host could read (called directly, the host had it in
 * the text, which `JSON.parse` reads with the member). The dedupe did the same to a text copy
 * beside a seller's `structuredContent` holding `__proto__`.
 *
 * Now (src/mcp/proto-key.ts, normalize.ts; the scan paths leave such a text to the parse path:
 * json-scan.ts ObjectTextFacts.mayHoldProtoKey, lift-text.ts): a text whose JSON object holds
 * a member `__proto__` at any depth (written plainly or with escapes) is not lifted, its
 * exchange line says `text_not_lifted: "proto_key"` and
 * `adcp_gateway_texts_not_lifted_total{reason="proto_key"}` counts it; and it is no copy for
 * the dedupe (kept, no field: a dedupe is no lift). At any depth: the SDK drops only a
 * top-level member, but a host validating `structuredContent` with a record schema of its own
 * drops a deeper one the same way, while the text reaches every host as `JSON.parse` reads it.
 *
 * Input: a raw seller on 127.0.0.1 (it answers `initialize` too) behind the real gateway, a
 * host on MCP 2025-06-18 (normalization applies), the seller's result chosen by tool name, as a
 * JSON body and as a one-event SSE stream. Expectation: the seller's exact bytes for the
 * `__proto__` cases, the lifted bytes for the controls (a `"__proto__"` value, an escaped
 * non-ASCII key), the exchange lines and counts; and the SDK client reads through the gateway
 * exactly what it reads from the seller directly (the trial's comparison), the member in the text.
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

const PAD = 'v'.repeat(300);
/** The trial's text: 343 bytes. */
const PROTO_TEXT = `{"__proto__":{"polluted":1},"a":1,"pad":"${PAD}"}`;
/** A member `__proto__` three levels down, in an array. */
const NESTED_TEXT = `{"a":1,"b":{"c":[{"__proto__":{"polluted":1}}]},"pad":"${PAD}"}`;
/** `__proto__` spelled with an escape (`\u005f` is `_`): `JSON.parse` reads the same member. */
const ESCAPED_TEXT = `{"\\u005f_proto__":{"polluted":1},"a":1,"pad":"${PAD}"}`;
/** The trial's object in another key order: deep-equal to PROTO_TEXT, not byte-equal (the dedupe's parse path). */
const REORDERED_TEXT = `{"a":1,"__proto__":{"polluted":1},"pad":"${PAD}"}`;
/** Controls, lifted: `__proto__` as a value only; a key escaped as Python's json.dumps writes non-ASCII. */
const VALUE_TEXT = `{"note":"__proto__","a":1,"pad":"${PAD}"}`;
const CAFE_TEXT = `{"caf\\u00e9":1,"pad":"${PAD}"}`;

const item = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;

interface Case {
  readonly result: string;
  /** The lift's `text_not_lifted` (undefined: none). */
  readonly reason?: 'proto_key';
  /** Control: lifted, its summary. */
  readonly summary?: string;
}

const CASES: Record<string, Case> = {
  trial: { result: `{"content":[${item(PROTO_TEXT)}]}`, reason: 'proto_key' },
  nested: { result: `{"content":[${item(NESTED_TEXT)}]}`, reason: 'proto_key' },
  escaped: { result: `{"content":[${item(ESCAPED_TEXT)}]}`, reason: 'proto_key' },
  dedupe_byte_copy: { result: `{"content":[${item(PROTO_TEXT)}],"structuredContent":${PROTO_TEXT}}` },
  dedupe_reordered: { result: `{"content":[${item(REORDERED_TEXT)}],"structuredContent":${PROTO_TEXT}}` },
  value_control: { result: `{"content":[${item(VALUE_TEXT)}]}`, summary: `Result in structuredContent (${Buffer.byteLength(VALUE_TEXT)} bytes): note, a, pad.` },
  escape_control: { result: `{"content":[${item(CAFE_TEXT)}]}`, summary: `Result in structuredContent (${Buffer.byteLength(CAFE_TEXT)} bytes): café, pad.` },
};

const lifted = (id: number, c: Case, text: string): string => message(id, `{"content":[${item(c.summary!)}],"structuredContent":${text}}`);

const stack = useSellerAndGateway(
  () => startToolResultSeller(Object.fromEntries(Object.entries(CASES).map(([name, c]) => [name, c.result])), 'proto'),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

/** `proto_key` lifts refused so far (raw calls and SDK calls), for the /metrics check. */
let refused = 0;
let nextId = 1;

describe('a text whose JSON holds a __proto__ member is neither lifted nor summarized away', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const sse of [false, true]) {
    for (const [name, c] of Object.entries(CASES)) {
      test(`${sse ? 'SSE' : 'JSON'}: ${name}: ${c.summary === undefined ? "the seller's bytes" : 'lifted (control)'}`, async () => {
        const id = nextId++;
        const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, name, { sse }), { 'mcp-protocol-version': '2025-06-18' }));
        assert.equal(r.status, 200);
        const text = (JSON.parse(c.result) as { content: { text: string }[] }).content[0]!.text;
        const expected = c.summary === undefined ? message(id, c.result) : lifted(id, c, text);
        assert.equal(r.text(), sse ? frame(expected) : expected);
        const line = await stack.gateway.exchangeLine('s', id);
        assert.deepEqual([line.outcome, line.reason, line.text_not_lifted], [c.summary === undefined ? 'ok' : 'rewritten', null, c.reason]);
        if (c.reason === undefined) assert.equal(Object.hasOwn(line, 'text_not_lifted'), false);
        else refused++;
      });
    }
  }

  test('the MCP SDK client reads through the gateway what it reads from the seller: the __proto__ member, in the text', async () => {
    const direct = await connectClient(stack.seller.url, { protocolVersion: '2025-06-18' });
    const viaGateway = await connectClient(stack.gateway.agentUrl('s'), { protocolVersion: '2025-06-18' });
    const call = (client: Client, name: string) => withTimeout(client.callTool({ name, arguments: {} }), undefined, name);
    try {
      // The premise: the SDK drops a top-level `__proto__` member of structuredContent (zod's z.record).
      const seller = await call(direct, 'dedupe_byte_copy');
      assert.equal(JSON.stringify(seller.structuredContent), `{"a":1,"pad":"${PAD}"}`);
      for (const name of ['trial', 'nested', 'escaped', 'dedupe_byte_copy', 'dedupe_reordered']) {
        const want = await call(direct, name);
        const got = await call(viaGateway, name);
        if (CASES[name]!.reason !== undefined) refused++;
        assert.equal(JSON.stringify(got), JSON.stringify(want), name);
        // The one copy an SDK host reads of the member: the text, as JSON.parse reads it.
        const parsed = JSON.parse((got.content as { text: string }[])[0]!.text) as Record<string, unknown>;
        const holder = name === 'nested' ? (parsed.b as { c: object[] }).c[0]! : parsed;
        assert.ok(Object.hasOwn(holder, '__proto__'), name);
        assert.deepEqual(Object.getOwnPropertyDescriptor(holder, '__proto__')?.value, { polluted: 1 }, name);
      }
    } finally {
      await direct.close();
      await viaGateway.close();
    }
  });

  test('nothing is polluted in the gateway process, and /metrics counts each refused lift as proto_key', async () => {
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const res = await fetch(`${stack.gateway.baseUrl}/metrics`);
    const lines = (await res.text()).split('\n').filter((l) => l.startsWith('adcp_gateway_texts_not_lifted_total{'));
    // JSON and SSE: trial, nested, escaped (6); the SDK client: trial, nested, escaped (3).
    assert.equal(refused, 9);
    assert.deepEqual(lines, [`adcp_gateway_texts_not_lifted_total{agent="s",reason="proto_key"} ${refused}`]);
  });
});
