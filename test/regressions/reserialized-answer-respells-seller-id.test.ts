/**
 * Reported failure (a review, N1; the differential fuzz counted it as "respelled ids"): where
 * the gateway rewrites an answer by re-serializing the whole message (a `tools/call` result
 * the scan-and-splice path declines, here a content item whose key is written `"t\u0079pe"`;
 * until review 38 a 2026-07-28 `tasks/get` too), the seller's response id went out as `JSON.stringify` writes its
 * value: `7.0`, `8e0` and `0.9e1` as `7`, `8` and `9`, the string `"a\u0022b"` as `"a\"b"`.
 * The value was kept, but a host that matches ids by their text missed the answer, and the
 * splice path (which keeps the seller's bytes) answered the same message with other id bytes.
 *
 * Now (response/reserialized-message.ts): a re-serialized answer carries the seller's id bytes
 * exactly as written, on the JSON path and the SSE path alike; the rest of the message is
 * written as before.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway; host requests whose id is written
 * by raw bytes (`7.0`...), the seller answering with a text copy of its `structuredContent`
 * (deduped) in its own spelling of the id, as a JSON body or as one SSE event. Expectation: the
 * host's exact answer bytes (the seller's id bytes in the re-serialized message) and the
 * exchange line's outcome `rewritten`; a plain-key control is spliced with the same id bytes.
 * Since review 38 a dedupe is never re-serialized (the seller's `structuredContent` would be
 * re-spelled: it is not made) and a `tasks/get` result is spliced: the escaped-key cases are a
 * legacy text-only result the gateway lifts (still re-serialized), the `tasks/get` ones are
 * spliced with the same id bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postCase, resultMessage, useCaseStack } from '../helpers/task-or-tool.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { messageEvent } from '../helpers/tool-result-seller.js';

const STATUS = `{"status":"approved","pad":"${'p'.repeat(400)}"}`;
const SUMMARY = `Result in structuredContent (${Buffer.byteLength(STATUS)} bytes): status=approved; pad.`;
const TYPE_KEY = { escaped: '"t\\u0079pe"', plain: '"type"' } as const;

interface Case {
  /** The request id as the host writes it, and the seller's id for it (one value, another spelling). */
  readonly hostId: string;
  readonly sellerId: string;
  /** `tasks/get` on 2026-07-28 (its `result.result` spliced since review 38), else `tools/call` on 2025-06-18. */
  readonly task: boolean;
  /** How the content item's `type` key is written: escaped, the splice declines and the message is re-serialized (then a lift: the seller sends no `structuredContent`). */
  readonly typeKey: keyof typeof TYPE_KEY;
  readonly sse: boolean;
  /** The exchange line's `rpc_id` (the host's id: its text when JSON.stringify writes it otherwise). */
  readonly rpcId: unknown;
}

const CASES: Record<string, Case> = {
  json_7_0: { hostId: '7.0', sellerId: '7.0', task: false, typeKey: 'escaped', sse: false, rpcId: '7.0' },
  json_8e0: { hostId: '8.0', sellerId: '8e0', task: false, typeKey: 'escaped', sse: false, rpcId: '8.0' },
  json_0_9e1: { hostId: '9.0', sellerId: '0.9e1', task: false, typeKey: 'escaped', sse: false, rpcId: '9.0' },
  json_escaped_string: { hostId: '"a\\u0022b"', sellerId: '"a\\u0022b"', task: false, typeKey: 'escaped', sse: false, rpcId: 'a"b' },
  json_task_7_0: { hostId: '10.0', sellerId: '10.0', task: true, typeKey: 'plain', sse: false, rpcId: '10.0' },
  json_task_escaped_string: { hostId: '"c\\"d"', sellerId: '"c\\u0022d"', task: true, typeKey: 'plain', sse: false, rpcId: 'c"d' },
  sse_7_0: { hostId: '11.0', sellerId: '11.0', task: false, typeKey: 'escaped', sse: true, rpcId: '11.0' },
  sse_0_9e1: { hostId: '12.0', sellerId: '0.12e2', task: false, typeKey: 'escaped', sse: true, rpcId: '12.0' },
  sse_escaped_string: { hostId: '"e\\u0022f"', sellerId: '"e\\u0022f"', task: false, typeKey: 'escaped', sse: true, rpcId: 'e"f' },
  sse_task_7e0: { hostId: '13.0', sellerId: '13e0', task: true, typeKey: 'plain', sse: true, rpcId: '13.0' },
  // Controls: plain keys, spliced; the seller's id bytes, as before.
  json_spliced: { hostId: '14.0', sellerId: '14e0', task: false, typeKey: 'plain', sse: false, rpcId: '14.0' },
  sse_spliced: { hostId: '"g\\u0022h"', sellerId: '"g\\u0022h"', task: false, typeKey: 'plain', sse: true, rpcId: 'g"h' },
};

/** The tool result, its text item's `type` key written as `key`, the text `text`; without `structuredContent` when `legacy`. */
const toolResult = (key: string, text: string, legacy = false): string => `{"content":[{${key}:"text","text":${JSON.stringify(text)}}]${legacy ? '' : `,"structuredContent":${STATUS}`}}`;

/** The message with `id` written `idText` around the tool result `result`. */
const message = (c: Case, idText: string, result: string): string => resultMessage(c.task, idText, result);

const sellerMessage = (c: Case): string => message(c, c.sellerId, toolResult(TYPE_KEY[c.typeKey], STATUS, c.typeKey === 'escaped'));
/** What the host gets: the text copy summarized (or lifted, appended as `structuredContent`), every key plain, the id the seller's bytes. */
const expectedMessage = (c: Case): string => message(c, c.sellerId, toolResult(TYPE_KEY.plain, SUMMARY));

const stack = useCaseStack((name) => {
  const c = CASES[name]!;
  return { body: sellerMessage(c), sse: c.sse };
});

describe("a re-serialized answer carries the seller's id bytes as written", { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: id ${c.sellerId} for the host's ${c.hostId} (${c.task ? 'tasks/get' : 'tools/call'}, ${c.sse ? 'SSE' : 'JSON'}, ${c.typeKey} key)`, async () => {
      const r = await postCase(stack.gateway.agentUrl('s'), c.task, c.hostId, name);
      assert.equal(r.status, 200);
      assert.equal(r.text(), c.sse ? messageEvent(expectedMessage(c)) : expectedMessage(c));
      const line = await stack.gateway.exchangeLine('s', c.rpcId as string);
      assert.deepEqual([line.outcome, line.reason], ['rewritten', null]);
    });
  }
});
