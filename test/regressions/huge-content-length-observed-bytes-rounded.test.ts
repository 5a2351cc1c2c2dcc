/**
 * Regression (hostile trial 28, L3 b): a seller's `Content-Length: 9007199254740993` was
 * reported `"observed_bytes":9007199254740992`, and `18446744073709551615` as
 * `18446744073709552000`, where docs/errors.md says `content_length`'s observed_bytes is the
 * announced length: the digits went through a JavaScript double, exact only up to 2^53 - 1.
 * Now the announced digits are written as they were announced (leading zeros aside), in
 * `details.observed_bytes` (a JSON number still: JSON has no limit on digits, and a host that
 * reads integers exactly, Python's json, gets the seller's value) and in the message
 * (src/errors/exact-observed-bytes.ts).
 *
 * Input: a raw seller announcing each length on a 200 JSON answer to a tools/call (a tool
 * result error) and a tools/list (a JSON-RPC error), then sending nothing more.
 * Expected: exactly the gateway's `content_length` error with those digits.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';

const LIMIT = 4194304;
/** Stands for the announced digits in the expected text (no other number of the error holds it). */
const PLACEHOLDER = 123456789;

describe('a seller Content-Length beyond 2^53', () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const length = String(req.headers['x-length']);
        // The head only: the gateway refuses on it, and the socket closes with the gateway's abort.
        res.socket!.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
      }),
    // Each refusal is a size breach: no backoff, so every request is sent.
    (seller) => startGateway(agentsYaml({ acme: { url: seller.url, backoff_after_breaches: 0 } }, ['log_level: silent'])),
  );

  for (const [announced, reported] of [
    ['9007199254740993', '9007199254740993'],
    ['18446744073709551615', '18446744073709551615'],
    ['00009007199254740993', '9007199254740993'],
    ['9007199254740991', '9007199254740991'],
    ['4194305', '4194305'],
  ] as const) {
    test(`Content-Length ${announced}: observed_bytes ${reported}`, { timeout: TEST_TIMEOUT_MS }, async () => {
      for (const [id, message, method, toolName] of [
        [1, toolCall(1, 'get_products'), 'tools/call', 'get_products'],
        [2, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, 'tools/list', undefined],
      ] as const) {
        const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), message, { 'mcp-protocol-version': '2025-06-18', 'x-length': announced }));
        assert.equal(res.status, 200);
        const expected = expectedErrorJson({
          id,
          method,
          ...(toolName !== undefined ? { toolName } : {}),
          reason: 'content_length',
          limitBytes: LIMIT,
          observedBytes: PLACEHOLDER,
        }).replaceAll(String(PLACEHOLDER), reported);
        assert.equal(res.text(), expected, method);
        // The details and each copy of the message: a tool result holds both in its structuredContent and
        // its first text, and the message again in its second text; a JSON-RPC error, in its data and message.
        assert.equal(res.text().split(reported).length - 1, method === 'tools/call' ? 5 : 3);
      }
    });
  }
});
