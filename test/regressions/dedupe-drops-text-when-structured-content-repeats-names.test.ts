/**
 * Reported failure (a new user's trial, Finding 3): the seller sent `structuredContent`
 * `{"price":1,"price":2,"note":"n…"}` beside a text item `{"price":2,"note":"n…"}`. As
 * `JSON.parse` reads it (the last `price` wins) the text is deep-equal to `structuredContent`,
 * so the gateway replaced it by a summary, and forwarded `structuredContent` as the seller
 * wrote it (the rewrite splices the seller's bytes: src/response/splice.ts), repeat included.
 * A host whose parser keeps the first member reads `price` 1, and the one unambiguous copy,
 * the text saying 2, was gone. docs/errors.md ("Names are unique") said such a rewrite was
 * re-serialized; it is not.
 *
 * The rule now (src/mcp/normalize.ts summarizeCopies): a text that is not a byte copy of
 * `structuredContent` is no copy when the seller's bytes of `structuredContent` repeat a name
 * at any depth. A byte copy is read exactly as `structuredContent` is, so it is still
 * replaced. The same holds for a text after a lifted one, whose bytes become
 * `structuredContent` as written.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway, a host on MCP 2025-06-18
 * (normalization applies), the seller's answer chosen by tool name:
 * (a) the trial's case, as a JSON body and as an SSE event;
 * (b) control: the same without the repeat (`{"price":2,…}`), the text the same object in
 *     another key order (no byte copy: the parse path);
 * (c) the text a byte copy of a `structuredContent` that repeats `price`;
 * (d) a legacy result: text 0 `{"price":1,"price":2,…}` (lifted), text 1 `{"price":2,…}`.
 * Expectation, exact bytes: (a) the seller's bytes unchanged; (b) the text replaced by the
 * summary; (c) the text replaced by the summary (as decided: nothing lost); (d) text 0
 * replaced by its summary and its bytes appended as `structuredContent`, text 1 as written.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const NOTE = 'n'.repeat(200);
/** `price` twice: 1 for a first-wins parser, 2 for `JSON.parse`. */
const REPEATING_SC = `{"price":1,"price":2,"note":"${NOTE}"}`;
const PLAIN_SC = `{"price":2,"note":"${NOTE}"}`;
/** What `JSON.parse` reads in REPEATING_SC, as a seller's `JSON.stringify` writes it. */
const PRICE_2_TEXT = JSON.stringify({ price: 2, note: NOTE });
/** The same object, keys in another order: deep-equal to PLAIN_SC, not byte-equal. */
const REORDERED_TEXT = JSON.stringify({ note: NOTE, price: 2 });
const summary = (text: string): string => `Result in structuredContent (${Buffer.byteLength(text)} bytes): price, note.`;

const item = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;
const message = (id: number, result: string): string => `{"jsonrpc":"2.0","id":${id},"result":${result}}`;

/** The seller's `result` by tool name. */
const RESULTS: Record<string, string> = {
  trial: `{"content":[${item(PRICE_2_TEXT)}],"structuredContent":${REPEATING_SC}}`,
  control: `{"content":[${item(REORDERED_TEXT)}],"structuredContent":${PLAIN_SC}}`,
  byte_copy: `{"content":[${item(REPEATING_SC)}],"structuredContent":${REPEATING_SC}}`,
  lift: `{"content":[${item(REPEATING_SC)},${item(PRICE_2_TEXT)}]}`,
};

describe('dedupe beside a structuredContent that repeats a name', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const call = JSON.parse(req.body.toString()) as { id: number; params: { name: string } };
        const body = message(call.id, RESULTS[call.params.name]!);
        if (req.headers['x-answer'] === 'sse') res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${body}\n\n`);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  const call = async (id: number, tool: string, sse = false): Promise<string> => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18', ...(sse ? { 'x-answer': 'sse' } : {}) }));
    assert.equal(r.status, 200);
    return r.text();
  };

  test('(a) JSON: the text saying 2 stays beside the repeating structuredContent, the answer as the seller wrote it', async () => {
    assert.equal(await call(7, 'trial'), message(7, RESULTS.trial!));
  });

  test('(a) SSE: the same, as the seller wrote it', async () => {
    assert.equal(await call(8, 'trial', true), `event: message\ndata: ${message(8, RESULTS.trial!)}\n\n`);
  });

  test('(b) control: structuredContent without a repeat, a reordered copy is replaced by its summary', async () => {
    const expected = message(9, `{"content":[${item(summary(REORDERED_TEXT))}],"structuredContent":${PLAIN_SC}}`);
    assert.equal(await call(9, 'control'), expected);
  });

  test('(c) a byte copy of a repeating structuredContent is replaced by its summary (read as structuredContent is)', async () => {
    const expected = message(10, `{"content":[${item(summary(REPEATING_SC))}],"structuredContent":${REPEATING_SC}}`);
    assert.equal(await call(10, 'byte_copy'), expected);
  });

  test('(d) lift: a later text deep-equal to a lifted text that repeats a name stays as written', async () => {
    const expected = message(11, `{"content":[${item(summary(REPEATING_SC))},${item(PRICE_2_TEXT)}],"structuredContent":${REPEATING_SC}}`);
    assert.equal(await call(11, 'lift'), expected);
  });
});
