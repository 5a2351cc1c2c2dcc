/**
 * Reported failure (a hostile new-user trial 16, H1): "dedupe/lift comparison is quadratic,
 * freezes the gateway, and makes other agents' healthy calls fail". A seller answered a
 * `tools/call` with a `structuredContent` of 30,000 keys beside 500 small JSON texts
 * (`{"k0":0}`), 445,849 bytes within every default bound: each text's deep-equal comparison
 * counted all 30,000 keys of `structuredContent` again before failing (deep-equal.ts), ~0.3 µs
 * x keys x texts of CPU: the event loop stalled 4.8-6.2 s (20,000 texts: 182 s), another
 * agent's 75-byte call waited as long, and a healthy SSE call on another agent ended
 * `sse_idle` while its seller sent an event every 500 ms. The legacy-lift form (the first text
 * holding the object, the small texts after it) did the same against the lifted object.
 * Now the comparisons share `structuredContent`'s key counts (normalize.ts summarizeCopies,
 * deep-equal.ts jsonDeepEqualCount `bKeyCounts`): the trial's repro 6,164 -> 385 ms (lift,
 * 1,000 texts: 7,557 -> 434 ms; 20,000 texts: 181,890 -> 986 ms).
 *
 * What this test holds, without timing anything: how many times the large object's keys are
 * enumerated (`Object.keys` returning its 2,000 keys) while one answer is normalized, once
 * per text before (200 texts: 200 and 201 times), at most twice now; and the answers' bytes through a
 * real gateway (the small texts kept, the one copy summarized).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeToolResult } from '../../src/mcp/normalize.js';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const KEYS = 2_000;
const TEXTS = 200;
const LIMITS = { maxTextBytes: 4_194_304, maxDepth: 64, maxNodes: 100_000 };
const STRUCTURED_TEXT = JSON.stringify(Object.fromEntries(Array.from({ length: KEYS }, (_, i) => [`k${i}`, i])));
const SMALL_TEXT = '{"k0":0}';
/** Normalization is for hosts on 2025-06-18 or later. */
const V2025_06_18 = { 'mcp-protocol-version': '2025-06-18' };
const text = (t: string) => ({ type: 'text', text: t });
const smallTexts = () => Array.from({ length: TEXTS }, () => text(SMALL_TEXT));

/** How many `Object.keys` calls returned `KEYS` or more keys while `run` ran. */
function largeKeyEnumerations(run: () => void): number {
  const keys = Object.keys;
  let large = 0;
  Object.keys = ((o: object) => {
    const k = keys(o);
    if (k.length >= KEYS) large++;
    return k;
  }) as typeof Object.keys;
  try {
    run();
  } finally {
    Object.keys = keys;
  }
  return large;
}

describe('deduping or lifting beside many small JSON texts', () => {
  test('dedupe: structuredContent of 2,000 keys beside 200 one-key texts: its keys are read at most twice, not once per text', () => {
    const result = { content: smallTexts(), structuredContent: JSON.parse(STRUCTURED_TEXT) as Record<string, unknown> };
    let outcome: ReturnType<typeof normalizeToolResult> | undefined;
    const large = largeKeyEnumerations(() => (outcome = normalizeToolResult(result, { ...LIMITS, structuredContentText: STRUCTURED_TEXT })));
    assert.equal(outcome?.action, 'none');
    assert.ok(large <= 2, `structuredContent's keys enumerated ${large} times`);
  });

  test('lift: the first text of 2,000 keys lifted, 200 one-key texts after it: its keys are read at most twice, not once per text', () => {
    const result = { content: [text(STRUCTURED_TEXT), ...smallTexts()] };
    let outcome: ReturnType<typeof normalizeToolResult> | undefined;
    const large = largeKeyEnumerations(() => (outcome = normalizeToolResult(result, LIMITS)));
    assert.equal(outcome?.action, 'lifted');
    assert.equal(outcome?.replacedItems, 1);
    assert.ok(large <= 2, `the lifted object's keys enumerated ${large} times`);
  });
});

describe('the trial\'s answers through the gateway', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const call = JSON.parse(req.body.toString()) as { id: number; params: { name: string } };
        const items = call.params.name === 'lift' ? [text(STRUCTURED_TEXT), ...smallTexts()] : smallTexts();
        const result = call.params.name === 'lift' ? `{"content":${JSON.stringify(items)}}` : `{"content":${JSON.stringify(items)},"structuredContent":${STRUCTURED_TEXT}}`;
        res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${call.id},"result":${result}}`);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  test('structuredContent beside 200 small texts: the answer goes out as the seller wrote it', async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(3, 'dedupe'), V2025_06_18));
    assert.equal(res.status, 200);
    const items = smallTexts();
    assert.equal(res.text(), `{"jsonrpc":"2.0","id":3,"result":{"content":${JSON.stringify(items)},"structuredContent":${STRUCTURED_TEXT}}}`);
  });

  test('a legacy result: the first text lifted and summarized, the 200 small texts kept', async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(4, 'lift'), V2025_06_18));
    assert.equal(res.status, 200);
    const answer = res.json() as { result: { content: { type: string; text: string }[]; structuredContent: unknown } };
    assert.deepEqual(answer.result.structuredContent, JSON.parse(STRUCTURED_TEXT));
    assert.equal(answer.result.content.length, TEXTS + 1);
    assert.match(answer.result.content[0]!.text, new RegExp(`^Result in structuredContent \\(${Buffer.byteLength(STRUCTURED_TEXT)} bytes\\): k0, k1, `));
    assert.deepEqual(answer.result.content.slice(1), smallTexts());
  });
});
