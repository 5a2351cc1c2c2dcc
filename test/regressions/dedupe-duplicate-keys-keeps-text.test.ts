/**
 * Reported failure (a new user's trial, 2026-12-02): "duplicate JSON keys can lose data in
 * dedupe". A text `{"a":"first zzz…","a":2}` beside `structuredContent` `{"a":2}` was replaced
 * by a summary, so "first zzz…" never reached the host: `JSON.parse` keeps a repeated key's
 * last value, so the text parsed to a value deep-equal to `structuredContent`, yet it held
 * more. Now a text with a repeated key is no copy (src/mcp/duplicate-keys.ts) and reaches the
 * host as the seller wrote it, over JSON and SSE; a copy that differs only in spacing is still
 * deduped (the control).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const PAD = 'p'.repeat(300);
const STRUCTURED = { a: 2, pad: PAD };
/** Repeats `a`: parses to STRUCTURED, but holds "first …" too. */
const DUPLICATE_KEY_TEXT = `{"a":"first ${'z'.repeat(40)}","a":2,"pad":"${PAD}"}`;
/** STRUCTURED spaced out: a deep-equal copy that is no byte copy (the parse path). */
const SPACED_TEXT = JSON.stringify(STRUCTURED, null, 1);
const SUMMARY = (text: string): string => `Result in structuredContent (${Buffer.byteLength(text)} bytes): a, pad.`;

const result = (text: string): unknown => ({ content: [{ type: 'text', text }], structuredContent: STRUCTURED });

describe('dedupe of a text with a repeated key', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const call = JSON.parse(req.body.toString()) as { id: number; params: { name: string } };
        const text = call.params.name === 'duplicate' ? DUPLICATE_KEY_TEXT : SPACED_TEXT;
        const body = toolResponse(call.id, result(text));
        if (req.headers['x-answer'] === 'sse') res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${body}\n\n`);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  const call = async (tool: string, sse: boolean): Promise<{ content: { text: string }[]; structuredContent: unknown }> => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-06-18', ...(sse ? { 'x-answer': 'sse' } : {}) }));
    assert.equal(r.status, 200);
    const message = (sse ? sseMessages(r.text())[0] : r.json()) as { id: number; result: { content: { text: string }[]; structuredContent: unknown } };
    assert.equal(message.id, 7);
    return message.result;
  };

  for (const sse of [false, true]) {
    const via = sse ? 'SSE' : 'JSON';
    test(`${via}: the text with a repeated key reaches the host as the seller wrote it`, async () => {
      const got = await call('duplicate', sse);
      assert.equal(got.content[0]!.text, DUPLICATE_KEY_TEXT);
      assert.deepEqual(got.structuredContent, STRUCTURED);
    });

    test(`${via}: control, a spaced-out copy is still replaced by its summary`, async () => {
      const got = await call('spaced', sse);
      assert.equal(got.content[0]!.text, SUMMARY(SPACED_TEXT));
      assert.deepEqual(got.structuredContent, STRUCTURED);
    });
  }
});
