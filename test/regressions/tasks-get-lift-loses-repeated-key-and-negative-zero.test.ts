/**
 * Reported failure (a hostile trial 26, L1): on MCP 2026-07-28 a `tasks/get` answering a
 * completed task whose only text was `{"status":"rejected","status":"approved","pad":…}` was
 * lifted, and the host got `"structuredContent":{"status":"approved",…}` with the text
 * replaced by its summary: a `tasks/get` result is rewritten by re-serializing the message
 * (rewrite.ts: `result.result` is never spliced), so `structuredContent` was `JSON.parse`'s
 * reading of the text, and the `"rejected"` member was in nothing the host received (a
 * `tools/call` lift splices the text's bytes and keeps both). The same with the second key
 * spelled `"\u0073tatus"`, and one level down (`{"a":{"k":"first","k":"last"}}`). And
 * `{"price":1.0,"neg":-0.0,"e":1E2,…}` became `{"price":1,"neg":0,"e":100,…}`: the sign of
 * `-0.0` lost (`JSON.stringify(-0)` is `0`), a value the host could no longer read anywhere.
 *
 * Now (src/mcp/reserialized-lift.ts, called by response/scanned-message.ts rewriteScanned
 * wherever a lift goes out re-serialized: a `tasks/get` result, and a `tools/call` result the
 * splice declines, escaped keys): a text whose JSON repeats a key at any depth, or holds a
 * negative zero, is not lifted; the answer goes out as the seller wrote it, the exchange line
 * says `text_not_lifted: "repeated_key"` / `"negative_zero"`, and
 * `adcp_gateway_texts_not_lifted_total` counts it. Where the lift is spliced (a `tools/call`
 * with plain keys) it is made as before: `structuredContent` is the text's own bytes.
 * `1.0` -> `1` and `1E2` -> `100` are the same JSON numbers (README): such a text is still
 * lifted, re-serialized.
 *
 * Since review 38 a `tasks/get` result is spliced as a `tools/call` one is (the seller's bytes,
 * the text's own bytes as `structuredContent`: mcp/tool-result-ranges.ts), so the trial's
 * texts are lifted there with every member and `-0.0` kept; the refusal is shown on a
 * `tools/call` result with an escaped key, which still goes out re-serialized.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway answering `tasks/get` (host on
 * 2026-07-28) and `tools/call` (host on 2025-06-18), chosen by task id or tool name, as a
 * JSON body (and one case as a one-event SSE stream). Expectation: the host's exact bytes,
 * the exchange line's outcome and `text_not_lifted`, and the counts in /metrics.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postCase, resultMessage, textItem as item, useCaseStack } from '../helpers/task-or-tool.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { messageEvent as frame } from '../helpers/tool-result-seller.js';

const PAD = 'p'.repeat(400);
const summary = (text: string, shown: string): string => `Result in structuredContent (${Buffer.byteLength(text)} bytes): ${shown}.`;

/** The trial's texts. */
const STATUS_DUP = `{"status":"rejected","status":"approved","pad":"${PAD}"}`;
const STATUS_DUP_ESCAPED = `{"status":"rejected","\\u0073tatus":"approved","pad":"${PAD}"}`;
const DEEP_DUP = `{"a":{"k":"first","k":"last"},"pad":"${PAD}"}`;
const NUMBERS = `{"price":1.0,"neg":-0.0,"e":1E2,"pad":"${PAD}"}`;
const DEEP_NEGATIVE_ZERO = `{"a":[{"x":-0e3}],"pad":"${PAD}"}`;
/** Controls: the same numbers without a negative zero, a negative number, each key once. */
const SAME_NUMBERS = `{"price":1.0,"e":1E2,"neg":-0.5,"pad":"${PAD}"}`;
const STATUS = `{"status":"approved","pad":"${PAD}"}`;

type Path = 'task' | 'tool' | 'tool_escaped';

interface Case {
  readonly path: Path;
  readonly text: string;
  readonly sse?: boolean;
  /** The reason the lift is refused; undefined: lifted. */
  readonly reason?: 'repeated_key' | 'negative_zero';
  /** Lifted: the summary's key list. */
  readonly shown?: string;
}

const CASES: Record<string, Case> = {
  // A tools/call result with an escaped key (`_m\u0065ta`): not spliced, re-serialized.
  tool_escaped_status_dup: { path: 'tool_escaped', text: STATUS_DUP, reason: 'repeated_key' },
  tool_escaped_status_dup_sse: { path: 'tool_escaped', text: STATUS_DUP, sse: true, reason: 'repeated_key' },
  tool_escaped_status_dup_escaped: { path: 'tool_escaped', text: STATUS_DUP_ESCAPED, reason: 'repeated_key' },
  tool_escaped_deep_dup: { path: 'tool_escaped', text: DEEP_DUP, reason: 'repeated_key' },
  tool_escaped_negative_zero: { path: 'tool_escaped', text: NUMBERS, reason: 'negative_zero' },
  tool_escaped_deep_negative_zero: { path: 'tool_escaped', text: DEEP_NEGATIVE_ZERO, reason: 'negative_zero' },
  // Controls.
  tool_escaped_same_numbers: { path: 'tool_escaped', text: SAME_NUMBERS, shown: 'price, e, neg, pad' },
  tool_escaped_status: { path: 'tool_escaped', text: STATUS, shown: 'status=approved; pad' },
  // Spliced: the text's bytes as structuredContent, both members and -0.0 kept (unchanged).
  tool_status_dup: { path: 'tool', text: STATUS_DUP, shown: 'status, pad' },
  tool_negative_zero: { path: 'tool', text: NUMBERS, shown: 'price, neg, e, pad' },
  task_status_dup: { path: 'task', text: STATUS_DUP, shown: 'status, pad' },
  task_status_dup_sse: { path: 'task', text: STATUS_DUP, sse: true, shown: 'status, pad' },
  task_status_dup_escaped: { path: 'task', text: STATUS_DUP_ESCAPED, shown: 'status, pad' },
  task_deep_dup: { path: 'task', text: DEEP_DUP, shown: 'a, pad' },
  task_negative_zero: { path: 'task', text: NUMBERS, shown: 'price, neg, e, pad' },
  task_deep_negative_zero: { path: 'task', text: DEEP_NEGATIVE_ZERO, shown: 'a[1], pad' },
  task_same_numbers: { path: 'task', text: SAME_NUMBERS, shown: 'price, e, neg, pad' },
  task_status: { path: 'task', text: STATUS, shown: 'status=approved; pad' },
};

/** The seller's message for call `id` of case `c`. */
function sellerMessage(c: Case, id: number): string {
  const content = `[${item(c.text)}]`;
  return resultMessage(c.path === 'task', id, c.path === 'tool_escaped' ? `{"content":${content},"_m\\u0065ta":{"n":1}}` : `{"content":${content}}`);
}

/** The lifted message the host gets: re-serialized (tool_escaped) or spliced (tool, task). */
function liftedMessage(c: Case, id: number): string {
  const text = summary(c.text, c.shown!);
  if (c.path !== 'tool_escaped') return resultMessage(c.path === 'task', id, `{"content":[${item(text)}],"structuredContent":${c.text}}`);
  const m = JSON.parse(sellerMessage(c, id)) as { result: Record<string, unknown> & { result?: Record<string, unknown> } };
  const toolResult = m.result;
  toolResult.content = [{ type: 'text', text }];
  toolResult.structuredContent = JSON.parse(c.text) as unknown;
  return JSON.stringify(m);
}

const stack = useCaseStack((name, id) => {
  const c = CASES[name]!;
  return { body: sellerMessage(c, id), sse: c.sse };
});

const counted = new Map<string, number>();
let nextId = 100;

describe('a lift that would go out re-serialized is not made when the text repeats a key or writes -0', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: ${c.reason === undefined ? 'lifted' : `the seller's bytes, text_not_lifted ${c.reason}`}`, async () => {
      const id = nextId++;
      const r = await postCase(stack.gateway.agentUrl('s'), c.path === 'task', id, name);
      assert.equal(r.status, 200);
      const expected = c.reason === undefined ? liftedMessage(c, id) : sellerMessage(c, id);
      assert.equal(r.text(), c.sse ? frame(expected) : expected);
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason, line.text_not_lifted], [c.reason === undefined ? 'rewritten' : 'ok', null, c.reason]);
      if (c.reason === undefined) assert.equal(Object.hasOwn(line, 'text_not_lifted'), false);
      else counted.set(c.reason, (counted.get(c.reason) ?? 0) + 1);
    });
  }

  test('/metrics: adcp_gateway_texts_not_lifted_total counts each refused lift by reason', async () => {
    const res = await fetch(`${stack.gateway.baseUrl}/metrics`);
    const got = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('adcp_gateway_texts_not_lifted_total{'))
      .sort();
    assert.deepEqual(Object.fromEntries(counted), { repeated_key: 4, negative_zero: 2 });
    assert.deepEqual(got, ['adcp_gateway_texts_not_lifted_total{agent="s",reason="negative_zero"} 2', 'adcp_gateway_texts_not_lifted_total{agent="s",reason="repeated_key"} 4']);
  });
});
