/**
 * Reported failure (review 38, Low: ARCHITECTURE §5, "never drop or change
 * `structuredContent` a seller sent"): a rewritten answer the splice could not place went out
 * re-serialized (`JSON.stringify` of the parsed message), and the seller's own
 * `structuredContent` and `_meta` changed spelling and key order on the way:
 * `{"price":1.0,"cpm":2.50,"budget":1E3,"by_year":{"2026":"a","2025":"b"}}` reached the host as
 * `{"price":1,"cpm":2.5,"budget":1000,"by_year":{"2025":"b","2026":"a"}}` (`1.0` against `1`
 * is a float against an int to Python's json.loads, a different json.Number to Go), `_meta`'s
 * `"n":1e2` as `100`. It happened when the text to replace was `content` item 16 or later (the
 * JSON scan records the first 16 items' text ranges: json-scan.ts SCAN_CONTENT_ITEMS), for a
 * dedupe and for a lift alike, and for every 2026-07-28 `tasks/get` whose completed task result
 * was rewritten (its `result.result` ranges were never recorded).
 *
 * Now: those rewrites are spliced into the seller's bytes (mcp/tool-result-ranges.ts walks the
 * bytes for the ranges the scan lacks: response/splice.ts spliceTarget); a dedupe the splice
 * still declines (a key written with an escape) is not made: the seller's bytes go out.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway, answering `tools/call` (host on
 * 2025-06-18, JSON body; 2025-11-25, a one-event SSE stream) and `tasks/get` (host on
 * 2026-07-28), chosen by tool name or task id. Expectation: the host's exact bytes (the
 * seller's, the copy's text replaced by its summary, a lift's `structuredContent` appended as
 * the text's own bytes) and the exchange line's outcome. Before the fix 6 of the 7 cases failed
 * (all but `tool_copy_first`, the control the splice always placed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postCase, resultMessage, textItem, useCaseStack } from '../helpers/task-or-tool.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { messageEvent as frame } from '../helpers/tool-result-seller.js';

/** The seller's `structuredContent` bytes: spellings and a key order `JSON.stringify` would not keep. */
const SC = `{"status":"completed","price":1.0,"cpm":2.50,"budget":1E3,"by_year":{"2026":"a","2025":"b"},"pad":"${'p'.repeat(300)}"}`;
const META = '{"n":1e2,"7":"x","1":"y"}';
const COPY = textItem(SC);
const SUMMARY = textItem(`Result in structuredContent (${Buffer.byteLength(SC)} bytes): status=completed; price, cpm, budget, by_year, pad.`);
const IMAGES = Array.from({ length: 17 }, () => '{"type":"image","data":"eA==","mimeType":"image/png"}');

type Path = 'tool' | 'tool_sse' | 'task';

interface Case {
  readonly path: Path;
  /** The tool result as the seller writes it. */
  readonly result: string;
  /** The tool result the host gets; undefined: the seller's bytes. */
  readonly expected?: string;
}

const items = (...list: string[]): string => `[${list.join(',')}]`;

const CASES: Record<string, Case> = {
  // Control: a copy within the first 16 items was always spliced.
  tool_copy_first: {
    path: 'tool',
    result: `{"content":${items(COPY, ...IMAGES)},"structuredContent":${SC},"_meta":${META}}`,
    expected: `{"content":${items(SUMMARY, ...IMAGES)},"structuredContent":${SC},"_meta":${META}}`,
  },
  tool_copy_item_17: {
    path: 'tool',
    result: `{"content":${items(...IMAGES, COPY)},"structuredContent":${SC},"_meta":${META}}`,
    expected: `{"content":${items(...IMAGES, SUMMARY)},"structuredContent":${SC},"_meta":${META}}`,
  },
  tool_copy_item_17_sse: {
    path: 'tool_sse',
    result: `{"content":${items(...IMAGES, COPY)},"structuredContent":${SC},"_meta":${META}}`,
    expected: `{"content":${items(...IMAGES, SUMMARY)},"structuredContent":${SC},"_meta":${META}}`,
  },
  // A legacy result lifted from item 17: the text's own bytes become `structuredContent`.
  tool_lift_item_17: {
    path: 'tool',
    result: `{"content":${items(...IMAGES, COPY)},"_meta":${META}}`,
    expected: `{"content":${items(...IMAGES, SUMMARY)},"_meta":${META},"structuredContent":${SC}}`,
  },
  task_copy: {
    path: 'task',
    result: `{"content":${items(COPY)},"structuredContent":${SC},"_meta":${META}}`,
    expected: `{"content":${items(SUMMARY)},"structuredContent":${SC},"_meta":${META}}`,
  },
  task_lift: {
    path: 'task',
    result: `{"content":${items(COPY)},"_meta":${META}}`,
    expected: `{"content":${items(SUMMARY)},"_meta":${META},"structuredContent":${SC}}`,
  },
  // An escaped key the splice cannot place past: the dedupe is not made, the seller's bytes go out.
  tool_copy_escaped_key: {
    path: 'tool',
    result: `{"content":${items(COPY)},"structuredContent":${SC},"_m\\u0065ta":${META}}`,
  },
};

/** The seller's message for call `id` of case `c`, with `result` as the tool result. */
const message = (c: Case, id: number, result: string): string => resultMessage(c.path === 'task', id, result);

const stack = useCaseStack((name, id) => {
  const c = CASES[name]!;
  return { body: message(c, id, c.result), sse: c.path === 'tool_sse' };
});

let nextId = 1;

describe("a rewritten answer keeps the seller's bytes of structuredContent and _meta", { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: ${c.expected === undefined ? "the seller's bytes" : 'spliced, structuredContent as the seller wrote it'}`, async () => {
      const id = nextId++;
      const r = await postCase(stack.gateway.agentUrl('s'), c.path === 'task', id, name, c.path === 'tool_sse' ? '2025-11-25' : undefined);
      assert.equal(r.status, 200);
      const expected = message(c, id, c.expected ?? c.result);
      assert.equal(r.text(), c.path === 'tool_sse' ? frame(expected) : expected);
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], [c.expected === undefined ? 'ok' : 'rewritten', null]);
    });
  }
});
