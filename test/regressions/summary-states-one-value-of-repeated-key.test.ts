/**
 * Reported failure (a hostile trial 24, L2): a seller's legacy text `{"status":"rejected",
 * "status":"approved","pad":…}` was lifted with `structuredContent` as written, both members
 * kept (README: repeats deeper in `result` pass as written), while the summary that replaced
 * the text said `status=approved`: `JSON.parse`'s reading (the last member wins), which the MCP
 * TypeScript SDK, the Python SDK (pydantic's JSON parser) and Go's encoding/json share. A
 * parser that keeps the first member (RFC 8259 §4 leaves it open) reads `rejected` in
 * `structuredContent`, and the gateway's own sentence told it otherwise.
 *
 * Now (src/mcp/summary.ts SummaryShape.repeated): the summary states no value of a key written
 * more than once at the top level of what goes out as `structuredContent`: `status` is listed
 * as a key, without `=value`, and an array without `[length]`. The lift itself is unchanged:
 * `structuredContent` carries the text's own bytes, so every host reads there what it read in
 * the text, and nothing is lost. The same for the dedupe of a byte copy of a
 * `structuredContent` that repeats a key (read exactly as `structuredContent` is: replaced,
 * as before, by the same summary). Both paths: the scan path (lift-text.ts, from the scan's
 * member table) and the parse path (normalize.ts, a result of more than the 16 items the scan
 * locates).
 *
 * Input: a raw seller on 127.0.0.1 (it answers `initialize` too) behind the real gateway, a
 * host on MCP 2025-06-18, the seller's result chosen by tool name, as a JSON body and as a
 * one-event SSE stream. Expectation: the exact bytes the host gets; the SDK client through the
 * gateway reads `status` "approved" in `structuredContent` and a summary naming no status.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { connectClient } from '../helpers/client.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { messageEvent as frame, resultMessageText as message, startToolResultSeller } from '../helpers/tool-result-seller.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const PAD = 'p'.repeat(300);
/** The trial's text. */
const TRIAL = `{"status":"rejected","status":"approved","pad":"${PAD}"}`;
/** An array written twice: its length is a value too. */
const ARRAYS = `{"status":"completed","products":[1],"products":[1,2,3],"pad":"${PAD}"}`;
/** Control: each key once. */
const SINGLE = `{"status":"approved","products":[1,2,3],"pad":"${PAD}"}`;

const item = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;
const summary = (text: string, shown: string): string => `Result in structuredContent (${Buffer.byteLength(text)} bytes): ${shown}.`;
/** 16 plain text items after the first: 17 in all, more than the scan locates (the parse path). */
const NOTES = Array.from({ length: 16 }, (_, k) => item(`note ${k}`)).join(',');

interface Case {
  /** The seller's `result`. */
  readonly result: string;
  /** The `result` the host gets. */
  readonly expected: string;
}

const lift = (text: string, shown: string, notes = ''): Case => ({
  result: `{"content":[${item(text)}${notes}]}`,
  expected: `{"content":[${item(summary(text, shown))}${notes}],"structuredContent":${text}}`,
});
const dedupe = (text: string, shown: string, notes = ''): Case => ({
  result: `{"content":[${item(text)}${notes}],"structuredContent":${text}}`,
  expected: `{"content":[${item(summary(text, shown))}${notes}],"structuredContent":${text}}`,
});

const CASES: Record<string, Case> = {
  trial: lift(TRIAL, 'status, pad'),
  arrays: lift(ARRAYS, 'status=completed; products, pad'),
  dedupe_byte_copy: dedupe(TRIAL, 'status, pad'),
  parse_path_lift: lift(TRIAL, 'status, pad', `,${NOTES}`),
  parse_path_dedupe: dedupe(ARRAYS, 'status=completed; products, pad', `,${NOTES}`),
  control: lift(SINGLE, 'status=approved; products[3], pad'),
  control_dedupe: dedupe(SINGLE, 'status=approved; products[3], pad'),
};

const stack = useSellerAndGateway(
  () => startToolResultSeller(Object.fromEntries(Object.entries(CASES).map(([name, c]) => [name, c.result])), 'repeats'),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

let nextId = 1;

describe('the summary states no value of a key written more than once', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const sse of [false, true]) {
    for (const [name, c] of Object.entries(CASES)) {
      test(`${sse ? 'SSE' : 'JSON'}: ${name}`, async () => {
        const id = nextId++;
        const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, name, { sse }), { 'mcp-protocol-version': '2025-06-18' }));
        assert.equal(r.status, 200);
        const expected = message(id, c.expected);
        assert.equal(r.text(), sse ? frame(expected) : expected);
        const line = await stack.gateway.exchangeLine('s', id);
        assert.deepEqual([line.outcome, line.reason, Object.hasOwn(line, 'text_not_lifted')], ['rewritten', null, false]);
      });
    }
  }

  test('the MCP SDK client reads status "approved" in structuredContent, and a summary that names no status value', async () => {
    const client = await connectClient(stack.gateway.agentUrl('s'), { protocolVersion: '2025-06-18' });
    try {
      for (const name of ['trial', 'dedupe_byte_copy', 'parse_path_lift']) {
        const out = await withTimeout(client.callTool({ name, arguments: {} }), undefined, name);
        assert.deepEqual(out.structuredContent, { status: 'approved', pad: PAD }, name);
        assert.equal((out.content as { text: string }[])[0]!.text, summary(TRIAL, 'status, pad'), name);
      }
    } finally {
      await client.close();
    }
  });
});
