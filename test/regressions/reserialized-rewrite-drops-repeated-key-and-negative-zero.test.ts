/**
 * Reported failure (a hostile trial 27, M1, M2): where an answer is rewritten by
 * re-serializing the whole message (a 2026-07-28 `tasks/get`, whose `result.result` is never
 * spliced; a `tools/call` result with an escaped key), what the seller wrote OUTSIDE the lifted
 * text was lost too. M1: a `structuredContent` writing `status` twice beside a text copy of it
 * was deduped, the text summarized and `structuredContent` sent `{"status":"approved",…}`: the
 * first value in nothing the host received (README: such a copy "is not summarized away").
 * M2: `{"n":-0}` in `structuredContent` beside its copy went out `{"n":0}`; a liftable text
 * with `result._meta` `{"x":-0}` was lifted and `_meta` sent `{"x":0}`. (trial 26, L1 had
 * guarded only the lifted text itself.)
 *
 * Now (response/scanned-message.ts rewriteScanned): a rewrite that would go out re-serialized
 * is not made when the message writes a key twice anywhere or holds a -0: the seller's bytes
 * go out, outcome `ok`. Spliced answers (a `tools/call` with plain keys) are unchanged. Since
 * review 38 a `tasks/get` result is spliced too (mcp/tool-result-ranges.ts), so its -0 cases
 * are rewritten with the seller's bytes kept (`-0` as written), and a dedupe is never
 * re-serialized (test/regressions/dedupe-past-sixteen-items-respells-structured-content.test.ts);
 * a `structuredContent` repeating a key still keeps its copy (normalize.ts summarizeCopies,
 * now told the seller's bytes of a `tasks/get`'s `structuredContent` too).
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway; host requests on 2026-07-28
 * (tasks/get) and 2025-06-18 (tools/call). Expectation: the host's exact bytes and the
 * exchange line's outcome.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postCase, resultMessage, textItem as copy, useCaseStack } from '../helpers/task-or-tool.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const PAD = 'p'.repeat(400);

interface Case {
  readonly task: boolean;
  /** The tool result as the seller writes it. */
  readonly result: string;
  /** True: the rewrite is refused and the seller's bytes go out. */
  readonly unchanged: boolean;
  /** Rewritten: the tool result the host gets, given the summary's JSON string (spliced: the seller's bytes around it). */
  readonly rewritten?: (summary: string) => string;
}

const STATUS_DUP = `{"status":"rejected","status":"approved","pad":"${PAD}"}`;
const STATUS = `{"status":"approved","pad":"${PAD}"}`;
const MINUS_ZERO = `{"n":-0,"pad":"${PAD}"}`;
const CASES: Record<string, Case> = {
  // M1: the seller's structuredContent repeats a key; its text copy equals JSON.parse's reading.
  task_structured_dup: { task: true, result: `{"content":[${copy(STATUS)}],"structuredContent":${STATUS_DUP}}`, unchanged: true },
  tool_escaped_structured_dup: { task: false, result: `{"content":[${copy(STATUS)}],"structuredContent":${STATUS_DUP},"_m\\u0065ta":{"n":1}}`, unchanged: true },
  // M2: a -0 in structuredContent beside its copy; a -0 in _meta beside a liftable text.
  // Spliced since review 38: rewritten, the -0 kept as written.
  task_structured_minus_zero: {
    task: true,
    result: `{"content":[${copy(MINUS_ZERO)}],"structuredContent":${MINUS_ZERO}}`,
    unchanged: false,
    rewritten: (summary) => `{"content":[{"type":"text","text":${summary}}],"structuredContent":${MINUS_ZERO}}`,
  },
  task_meta_minus_zero: {
    task: true,
    result: `{"content":[${copy(STATUS)}],"_meta":{"x":-0,"y":1}}`,
    unchanged: false,
    rewritten: (summary) => `{"content":[{"type":"text","text":${summary}}],"_meta":{"x":-0,"y":1},"structuredContent":${STATUS}}`,
  },
  // Controls: nothing lost, so the rewrite is made (dedupe, lift).
  task_structured: {
    task: true,
    result: `{"content":[${copy(STATUS)}],"structuredContent":${STATUS}}`,
    unchanged: false,
    rewritten: (summary) => `{"content":[{"type":"text","text":${summary}}],"structuredContent":${STATUS}}`,
  },
  task_meta: {
    task: true,
    result: `{"content":[${copy(STATUS)}],"_meta":{"x":0,"y":1}}`,
    unchanged: false,
    rewritten: (summary) => `{"content":[{"type":"text","text":${summary}}],"_meta":{"x":0,"y":1},"structuredContent":${STATUS}}`,
  },
};

const sellerMessage = (c: Case, id: number, result = c.result): string => resultMessage(c.task, id, result);

const stack = useCaseStack((name, id) => ({ body: sellerMessage(CASES[name]!, id) }));

let nextId = 300;

describe('a rewrite that would go out re-serialized is not made when the message repeats a key or writes -0', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: ${c.unchanged ? "the seller's bytes" : 'rewritten'}`, async () => {
      const id = nextId++;
      const r = await postCase(stack.gateway.agentUrl('s'), c.task, id, name);
      assert.equal(r.status, 200);
      const line = await stack.gateway.exchangeLine('s', id);
      if (c.unchanged) {
        assert.equal(r.text(), sellerMessage(c, id));
        assert.deepEqual([line.outcome, line.reason], ['ok', null]);
      } else {
        const text = (JSON.parse(r.text()) as { result: { result: { content: { text: string }[] } } }).result.result.content[0]!.text;
        assert.match(text, /^Result in structuredContent \(\d+ bytes\): (status=approved; pad|n, pad)\.$/);
        assert.equal(r.text(), sellerMessage(c, id, c.rewritten!(JSON.stringify(text))));
        assert.deepEqual([line.outcome, line.reason], ['rewritten', null]);
      }
    });
  }
});
