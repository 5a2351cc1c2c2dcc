/**
 * Reported failure (a hostile trial 29, M1): a seller's legacy text-only result whose text is
 * `{"s": "\ud800x", "pad": "ppp…"}` (the text holds the six characters `\ud800`: in the
 * JSON-RPC message the string is written `"{\"s\": \"\\ud800x\", …}"`) reached every client
 * fine directly. Through the gateway the text was lifted and its bytes spliced as
 * `"structuredContent":{"s": "\ud800x", …}`: a lone-surrogate escape at the message level,
 * which strict parsers refuse (the MCP Python SDK's call_tool, pydantic/jiter: "Invalid JSON:
 * unexpected end of hex escape"; Rust's serde_json), so the whole result was lost while the
 * gateway logged `rewritten`. The same with a lone low surrogate (`\udc00`) and one in a key
 * (`{"\udfff":1}`). RFC 8259 §8.2: such strings have unpredictable behaviour.
 *
 * Now (src/mcp/lone-surrogate.ts; normalize.ts on the parse path, lift-splice.ts on the scan
 * path): a text whose JSON object holds a lone surrogate in any string or key, at any depth,
 * is not lifted: the host gets the seller's bytes, the exchange line says
 * `text_not_lifted: "lone_surrogate"` and `adcp_gateway_texts_not_lifted_total` counts it. So
 * is a text that is itself not well-formed (the message writes `"text":"{\"s\":\"\ud800\"}"`:
 * the lift would write `JSON.stringify` of its object, `\ud800` again). A proper pair
 * (`\ud83d\ude00`, as Python's json.dumps writes an emoji) and an escaped backslash before
 * `ud800` (`\\ud800`: no escape) are lifted as before.
 *
 * Input: a raw seller on 127.0.0.1 (it answers `initialize` too) behind the real gateway, a
 * host on MCP 2025-06-18, the seller's result chosen by tool name, as a JSON body and as a
 * one-event SSE stream. Expectation: the host's exact bytes (the seller's for the refused
 * lifts, no `structuredContent`), the exchange lines and counts; every answer a strict parser
 * reads where the seller's was (each string and key well-formed UTF-16, what jiter checks);
 * and the MCP SDK client reads through the gateway what it reads from the seller directly.
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

const PAD = 'p'.repeat(200);
/** The trial's text: it holds the escape `\ud800` (backslash, u, d, 8, 0, 0) then `x`. */
const HIGH_TEXT = `{"s": "\\ud800x", "pad": "${PAD}"}`;
const LOW_TEXT = `{"s": "\\udc00", "pad": "${PAD}"}`;
const KEY_TEXT = `{"\\udfff":1, "pad": "${PAD}"}`;
/** A lone surrogate deeper down: two highs in a row, the second one paired. */
const DEEP_TEXT = `{"a": [{"b": "\\uD800\\uD83D\\uDE00"}], "pad": "${PAD}"}`;
/** The text itself holds the lone code unit (the message escapes it: `"text":"{\"s\":\"\ud800\"}"`). */
const OUTER_TEXT = `{"s": "\ud800", "pad": "${PAD}"}`;
/** Controls, lifted: a proper pair; a backslash escaped before `ud800` (no surrogate at all). */
const PAIR_TEXT = `{"s": "\\ud83d\\ude00", "pad": "${PAD}"}`;
const BACKSLASH_TEXT = `{"s": "\\\\ud800", "pad": "${PAD}"}`;

const item = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;

interface Case {
  readonly text: string;
  /** Refused: `lone_surrogate`; undefined: lifted (a control). */
  readonly refused: boolean;
}

const CASES: Record<string, Case> = {
  trial_high: { text: HIGH_TEXT, refused: true },
  low: { text: LOW_TEXT, refused: true },
  key: { text: KEY_TEXT, refused: true },
  deep: { text: DEEP_TEXT, refused: true },
  outer: { text: OUTER_TEXT, refused: true },
  pair_control: { text: PAIR_TEXT, refused: false },
  backslash_control: { text: BACKSLASH_TEXT, refused: false },
};

const result = (c: Case): string => `{"content":[${item(c.text)}]}`;
const lifted = (id: number, c: Case): string =>
  message(id, `{"content":[${item(`Result in structuredContent (${Buffer.byteLength(c.text)} bytes): s, pad.`)}],"structuredContent":${c.text}}`);

/**
 * Whether a strict parser reads `json`: `JSON.parse` reads it and every string and key it holds
 * is well-formed UTF-16 (no lone surrogate), which jiter (the MCP Python SDK), serde_json and
 * Go's strict decoders require.
 */
function strictlyReadable(json: string): boolean {
  const stack: unknown[] = [JSON.parse(json)];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string' && !v.isWellFormed()) return false;
    if (typeof v !== 'object' || v === null) continue;
    for (const [k, e] of Object.entries(v)) {
      if (!k.isWellFormed()) return false;
      stack.push(e);
    }
  }
  return true;
}

const stack = useSellerAndGateway(
  () => startToolResultSeller(Object.fromEntries(Object.entries(CASES).map(([name, c]) => [name, result(c)])), 'surrogate'),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

/** `lone_surrogate` lifts refused so far (raw calls and SDK calls), for the /metrics check. */
let refused = 0;
let nextId = 1;

describe('a text whose JSON holds a lone surrogate is not lifted: no lone-surrogate escape reaches the host', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const sse of [false, true]) {
    for (const [name, c] of Object.entries(CASES)) {
      test(`${sse ? 'SSE' : 'JSON'}: ${name}: ${c.refused ? "the seller's bytes, text_not_lifted lone_surrogate" : 'lifted (control)'}`, async () => {
        const id = nextId++;
        const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, name, { sse }), { 'mcp-protocol-version': '2025-06-18' }));
        assert.equal(r.status, 200);
        const seller = message(id, result(c));
        const expected = c.refused ? seller : lifted(id, c);
        assert.equal(r.text(), sse ? frame(expected) : expected);
        // What a strict host reads from the seller it reads from the gateway.
        assert.equal(strictlyReadable(expected), strictlyReadable(seller), name);
        const line = await stack.gateway.exchangeLine('s', id);
        assert.deepEqual([line.outcome, line.reason, line.text_not_lifted], c.refused ? ['ok', null, 'lone_surrogate'] : ['rewritten', null, undefined]);
        if (!c.refused) assert.equal(Object.hasOwn(line, 'text_not_lifted'), false);
        else refused++;
      });
    }
  }

  test("the trial's three texts reach a strict parser through the gateway (the seller's answer is readable, the lifted one was not)", () => {
    for (const text of [HIGH_TEXT, LOW_TEXT, KEY_TEXT]) {
      assert.equal(strictlyReadable(message(1, `{"content":[${item(text)}]}`)), true);
      assert.equal(strictlyReadable(message(1, `{"content":[],"structuredContent":${text}}`)), false);
    }
  });

  test('the MCP SDK client reads through the gateway what it reads from the seller directly', async () => {
    const direct = await connectClient(stack.seller.url, { protocolVersion: '2025-06-18' });
    const viaGateway = await connectClient(stack.gateway.agentUrl('s'), { protocolVersion: '2025-06-18' });
    const call = (client: Client, name: string) => withTimeout(client.callTool({ name, arguments: {} }), undefined, name);
    try {
      for (const name of ['trial_high', 'low', 'key']) {
        const want = await call(direct, name);
        const got = await call(viaGateway, name);
        refused++;
        assert.equal(JSON.stringify(got), JSON.stringify(want), name);
        assert.equal(got.structuredContent, undefined, name);
      }
    } finally {
      await direct.close();
      await viaGateway.close();
    }
  });

  test('/metrics counts each refused lift as lone_surrogate', async () => {
    const res = await fetch(`${stack.gateway.baseUrl}/metrics`);
    const lines = (await res.text()).split('\n').filter((l) => l.startsWith('adcp_gateway_texts_not_lifted_total{'));
    // JSON and SSE: 5 cases each (10); the SDK client: 3.
    assert.equal(refused, 13);
    assert.deepEqual(lines, [`adcp_gateway_texts_not_lifted_total{agent="s",reason="lone_surrogate"} ${refused}`]);
  });
});
