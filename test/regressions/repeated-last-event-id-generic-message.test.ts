/**
 * Regression (hostile trial 54, F5b): a GET with `Last-Event-ID` sent twice (two field lines,
 * Node joins them `a, b`) was refused `resume_token_invalid` with the generic "Last-Event-ID is
 * not a well-formed resume token.", while MCP-Protocol-Version and Mcp-Session-Id sent twice
 * have messages that say so. Now it gets its own message, `resume_token_invalid` still (400,
 * id null, no seller contacted): src/request/last-event-id-header.ts.
 *
 * Input: a gateway in front of a raw seller; GETs with two Last-Event-ID lines (the same
 * token-shaped value twice, two different ones), and with one value `a, b`.
 * Expected: the exact refusal with the repeated-header message each; the seller gets nothing.
 * Control: one malformed value without a list keeps the generic message.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';

const REPEATED =
  'Last-Event-ID must be sent at most once, with one resume token (the id of the last event received): this request carries several (two field lines, or a list "a, b"); send the last one only.';
const TOKEN = `agw1.${'A'.repeat(40)}.${'B'.repeat(43)}`;
const HEAD = 'GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\nmcp-session-id: s-1\r\nconnection: close\r\n';

describe('Last-Event-ID sent twice (hostile trial 54, F5b)', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((_req, res) => {
        res.end();
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );
  const port = (): number => Number(new URL(stack.gateway.baseUrl).port);

  async function refusalMessage(lines: string): Promise<string> {
    const wire = await writeAndRead(port(), `${HEAD}${lines}\r\n`, [], 5_000);
    const [head, body] = wire.text.split('\r\n\r\n', 2) as [string, string];
    assert.equal(head.split('\r\n')[0], 'HTTP/1.1 400 Bad Request');
    const parsed = JSON.parse(body) as { id: unknown; error: { code: number; message: string; data: { reason: string } } };
    assert.deepEqual({ id: parsed.id, code: parsed.error.code, reason: parsed.error.data.reason }, { id: null, code: -32600, reason: 'resume_token_invalid' });
    assert.equal(stack.seller.requests.length, 0, 'the seller got nothing');
    return parsed.error.message;
  }

  for (const [name, lines] of [
    ['the same token twice', `Last-Event-ID: ${TOKEN}\r\nLast-Event-ID: ${TOKEN}\r\n`],
    ['two different values', `Last-Event-ID: ${TOKEN}\r\nLast-Event-ID: other\r\n`],
    ['one value "a, b"', `Last-Event-ID: ${TOKEN}, ${TOKEN}\r\n`],
  ] as const) {
    test(`${name}: the repeated-header message`, async () => {
      assert.equal(await refusalMessage(lines), REPEATED);
    });
  }

  test('control: one malformed value keeps the generic message', async () => {
    assert.equal(await refusalMessage(`Last-Event-ID: ${TOKEN},x\r\n`), 'Last-Event-ID is not a well-formed resume token.');
  });
});
