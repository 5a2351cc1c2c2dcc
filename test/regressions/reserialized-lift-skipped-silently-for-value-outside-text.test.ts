/**
 * Reported failure (hostile trial 39, item 2, Info): on MCP 2026-07-28 a `tasks/get` answering
 * a completed task whose text was liftable went out as the seller wrote it, the exchange line
 * `ok` with no `text_not_lifted`, when a value OUTSIDE the text could not be re-serialized
 * exactly: `"n":-0.0` (JSON.stringify writes `0`), `"n":1e400` (a double reads Infinity,
 * written `null`), `"n":12345678901234567891` (a double changes its digits). Such a lift goes
 * out re-serialized (README: "Re-serialized (a completed task's result in a 2026-07-28
 * `tasks/get`"), so the gateway rightly made none, but said nothing: `repeated_key` and
 * `negative_zero` covered the text only. Why: response/rewrite.ts rewriteResponse refuses any
 * rewrite of a message holding a number a double cannot carry (json-numbers.ts
 * hasLossyNumber), and response/scanned-message.ts rewriteScanned one that re-serialized would
 * lose a repeated key's first value or a -0's sign anywhere (messageLosesOnReserialization),
 * both returning the message unchanged without a reason.
 *
 * Now a lift refused so is recorded: `text_not_lifted` `lossy_number` (a number a double
 * cannot carry, outside the texts; a new reason, also given now to a text to lift that holds
 * one itself, which was never lifted, silently too), `negative_zero` and `repeated_key` (as for
 * the text, now for the rest of the message too), counted by
 * `adcp_gateway_texts_not_lifted_total`. The same holds for a `tools/call` result, which the
 * gateway does not rewrite at all when its message holds such a number. A dedupe refused for
 * the same reasons sets no `text_not_lifted` (it is no lift): the field stays absent.
 *
 * Since review 38 a `tasks/get` result is spliced (the seller's bytes kept: mcp/tool-result-ranges.ts),
 * so its -0 and repeated key outside the text no longer stop the lift; the refusals are shown on
 * a `tools/call` result with an escaped key (`_m\u0065ta`), which still goes out re-serialized.
 *
 * Input: a raw seller behind the real gateway answering `tasks/get` (host on 2026-07-28) or
 * `tools/call` (host on 2025-06-18), chosen by task id or tool name, as a JSON body (one case
 * as a one-event SSE stream). Expectation: the host's exact bytes, the exchange line's
 * outcome and `text_not_lifted`, and the counts in /metrics.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postCase, textItem as item, useCaseStack } from '../helpers/task-or-tool.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { messageEvent as frame } from '../helpers/tool-result-seller.js';

/** The trial's liftable text (mk.py): `{"status": "ok", "a": 1}`. */
const TEXT = '{"status": "ok", "a": 1}';
const SUMMARY = 'Result in structuredContent (24 bytes): status=ok; a.';

type Path = 'task' | 'tool' | 'tool_escaped';

interface Case {
  readonly path: Path;
  /** Members written beside `content` (the task's envelope for `task`, the tool result's for `tool`). */
  readonly extra: string;
  readonly sse?: boolean;
  /** A seller `structuredContent` equal to the text: a dedupe, not a lift. */
  readonly dedupe?: boolean;
  /** The exchange line's `text_not_lifted`; undefined: none. */
  readonly reason?: 'lossy_number' | 'negative_zero' | 'repeated_key';
  /** The host's bytes are the lifted message (else the seller's). */
  readonly lifted?: boolean;
  /** The text (default: the trial's {@link TEXT}). */
  readonly text?: string;
}

const CASES: Record<string, Case> = {
  tool_escaped_negative_zero: { path: 'tool_escaped', extra: '"n":-0.0', reason: 'negative_zero' },
  tool_escaped_negative_zero_sse: { path: 'tool_escaped', extra: '"n":-0.0', sse: true, reason: 'negative_zero' },
  task_infinity: { path: 'task', extra: '"n":1e400', reason: 'lossy_number' },
  task_big_integer: { path: 'task', extra: '"n":12345678901234567891', reason: 'lossy_number' },
  task_big_integer_sse: { path: 'task', extra: '"n":12345678901234567891', sse: true, reason: 'lossy_number' },
  tool_escaped_repeated_key: { path: 'tool_escaped', extra: '"n":1,"n":2', reason: 'repeated_key' },
  // Spliced (a tools/call result with plain keys, a tasks/get result): -0 and a repeated key
  // outside the text are kept as written, so the lift is made; a lossy number stops every rewrite.
  task_negative_zero: { path: 'task', extra: '"n":-0.0', lifted: true },
  task_negative_zero_sse: { path: 'task', extra: '"n":-0.0', sse: true, lifted: true },
  task_repeated_key: { path: 'task', extra: '"n":1,"n":2', lifted: true },
  tool_big_integer: { path: 'tool', extra: '"n":12345678901234567891', reason: 'lossy_number' },
  tool_infinity: { path: 'tool', extra: '"n":1e400', reason: 'lossy_number' },
  tool_negative_zero: { path: 'tool', extra: '"n":-0.0', lifted: true },
  // A dedupe refused for the same reason: no text_not_lifted.
  task_dedupe_negative_zero: { path: 'task', extra: '"n":-0.0', dedupe: true },
  task_dedupe_big_integer: { path: 'task', extra: '"n":12345678901234567891', dedupe: true },
  // Inside the text: a number a double cannot carry was never lifted, silently too.
  task_text_big_integer: { path: 'task', extra: '"n":1', text: '{"status":"ok","n":12345678901234567891}', reason: 'lossy_number' },
  tool_text_big_integer: { path: 'tool', extra: '"n":1', text: '{"status":"ok","n":12345678901234567891}', reason: 'lossy_number' },
  // Controls: values a double carries exactly are lifted (spliced; re-serialized with an escaped key: `1.0` written `1`).
  task_negative_half: { path: 'task', extra: '"n":-0.5', lifted: true },
  task_one_point_zero: { path: 'task', extra: '"n":1.0', lifted: true },
  tool_escaped_one_point_zero: { path: 'tool_escaped', extra: '"n":1.0', lifted: true },
};

/** The seller's message for call `id` of `name`. */
function sellerMessage(name: string, id: number): string {
  const c = CASES[name]!;
  const text = c.text ?? TEXT;
  const sc = c.dedupe ? `,"structuredContent":${text}` : '';
  if (c.path === 'task') return `{"jsonrpc":"2.0","id":${id},"result":{"taskId":"${name}","status":"completed",${c.extra},"result":{"content":[${item(text)}]${sc}}}}`;
  if (c.path === 'tool_escaped') return `{"jsonrpc":"2.0","id":${id},"result":{${c.extra},"content":[${item(text)}],"_m\\u0065ta":{"k":1}${sc}}}`;
  return `{"jsonrpc":"2.0","id":${id},"result":{${c.extra},"content":[${item(text)}]${sc}}}`;
}

/** The lifted message the host gets: spliced (tool, task) or re-serialized (tool_escaped). */
function liftedMessage(name: string, id: number): string {
  const c = CASES[name]!;
  if (c.path === 'tool') return `{"jsonrpc":"2.0","id":${id},"result":{${c.extra},"content":[${item(SUMMARY)}],"structuredContent":${TEXT}}}`;
  if (c.path === 'tool_escaped') return `{"jsonrpc":"2.0","id":${id},"result":{${c.extra.replace('1.0', '1')},"content":[${item(SUMMARY)}],"_meta":{"k":1},"structuredContent":{"status":"ok","a":1}}}`;
  return `{"jsonrpc":"2.0","id":${id},"result":{"taskId":"${name}","status":"completed",${c.extra},"result":{"content":[${item(SUMMARY)}],"structuredContent":${TEXT}}}}`;
}

const stack = useCaseStack((name, id) => ({ body: sellerMessage(name, id), sse: CASES[name]!.sse }));

const counted = new Map<string, number>();
let nextId = 100;

describe('a lift not made because a value outside the text cannot be re-serialized says why', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: ${c.lifted ? 'lifted' : `the seller's bytes, text_not_lifted ${c.reason ?? 'absent'}`}`, async () => {
      const id = nextId++;
      const r = await postCase(stack.gateway.agentUrl('s'), c.path === 'task', id, name);
      assert.equal(r.status, 200);
      const expected = c.lifted ? liftedMessage(name, id) : sellerMessage(name, id);
      assert.equal(r.text(), c.sse ? frame(expected) : expected);
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason, line.text_not_lifted], [c.lifted ? 'rewritten' : 'ok', null, c.reason]);
      if (c.reason === undefined) assert.equal(Object.hasOwn(line, 'text_not_lifted'), false);
      else counted.set(c.reason, (counted.get(c.reason) ?? 0) + 1);
    });
  }

  test('/metrics: adcp_gateway_texts_not_lifted_total counts each by reason', async () => {
    const res = await fetch(`${stack.gateway.baseUrl}/metrics`);
    const got = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('adcp_gateway_texts_not_lifted_total{'))
      .sort();
    assert.deepEqual(Object.fromEntries(counted), { negative_zero: 2, lossy_number: 7, repeated_key: 1 });
    assert.deepEqual(got, [
      'adcp_gateway_texts_not_lifted_total{agent="s",reason="lossy_number"} 7',
      'adcp_gateway_texts_not_lifted_total{agent="s",reason="negative_zero"} 2',
      'adcp_gateway_texts_not_lifted_total{agent="s",reason="repeated_key"} 1',
    ]);
  });
});
