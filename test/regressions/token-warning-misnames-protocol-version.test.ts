/**
 * Regression (hostile trial 56, F4, Low): the untokenized-id warning's cause (src/response/
 * sse-id-token-log.ts tokenRefusalCause, from hostile trial 55, F4) misnamed what made a resume
 * token too long in two corners:
 * (a) a 3,100-character `MCP-Protocol-Version` header (forwarded, and carried in every token of
 *     the stream as `v`) was not among the parts named, so the warning blamed the seller's event
 *     id `ev1`: `(the token would be over 4096 characters: the seller's event id is 3
 *     characters)`;
 * (b) a string request id was measured as its UTF-16 length and its quotes, not as the token
 *     carries it (its JSON text, UTF-8, base64url): 700 U+0001 characters read 702, though their
 *     JSON text is 4,202 bytes (`\u0001` each), so a 1,500-character tool name was named first:
 *     `(the token would be over 4096 characters: the tool name is 1500 characters; the request's
 *     id 702; the seller's event id 3)`.
 * Now each part is measured as the token encodes it (resume/token.ts tokenPartCosts: the
 * characters of the token its JSON value takes, escapes, UTF-8 and base64url included), the
 * protocol version among them, the biggest first.
 *
 * Input: a raw seller answering each tools/call with SSE: a progress notification with
 * `id: ev1`, then the response with `id: ev2` -> gateway (agent `s`, a configured resume
 * secret) -> raw POSTs (no session): (a) id 5, tool `get_products`, `MCP-Protocol-Version: p x
 * 3100`; (b) id `\x01 x 700`, tool `t x 1500`, `MCP-Protocol-Version: 2025-06-18`.
 * Expectation: both events without an `id:` line, the stream ends `ok`; the agent's first warning
 * is exactly `... forwarded without an id (the token would be over 4096 characters: the protocol
 * version takes 4136 characters of the token; the seller's event id 7)` (a: 3,102 bytes of JSON x 4/3), and
 * `(... the request's id takes 5603 characters of the token; the tool name 2003; the seller's event id 7)` (b:
 * 4,202 and 1,502 bytes), then one end summary for the second id. Before the fix: both tests
 * failed (2 of 2: the lines quoted above).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { FIRST, PROGRESS, SUMMARY, callCollectingWarnings, frame, response } from '../helpers/token-warning.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const { id } = JSON.parse(req.body.toString('utf8')) as { id: unknown };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(frame(PROGRESS, 'ev1') + frame(response(id), 'ev2'));
    }),
  (seller: RawSeller) => startObservedGateway(agentsYaml({ s: seller.url }, RESUME_YAML)),
);
const gw = (): ObservedGateway => stack.gateway;

/** Calls agent `s` with JSON-RPC id `id`, tool `tool` and `MCP-Protocol-Version: version`; its body, outcome and the agent's warning lines once its exchange line is written. */
const call = (id: string | number, tool: string, version: string): ReturnType<typeof callCollectingWarnings> =>
  callCollectingWarnings(gw(), 's', id, tool, { 'mcp-protocol-version': version });

describe('the untokenized-id warning names the part that made the token too long, as the token carries it', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [label, id, tool, version, cause] of [
    ['(a) a 3,100-character MCP-Protocol-Version', 5, 'get_products', 'p'.repeat(3100), "the token would be over 4096 characters: the protocol version takes 4136 characters of the token; the seller's event id 7"],
    [
      '(b) a request id of 700 U+0001 characters beside a 1,500-character tool name',
      '\x01'.repeat(700),
      't'.repeat(1500),
      '2025-06-18',
      "the token would be over 4096 characters: the request's id takes 5603 characters of the token; the tool name 2003; the seller's event id 7",
    ],
  ] as const) {
    test(label, async () => {
      const { text, outcome, warnings } = await call(id, tool, version);
      assert.equal(text, frame(PROGRESS) + frame(response(id)));
      assert.equal(outcome, 'ok');
      assert.deepEqual(warnings, [`${FIRST}forwarded without an id (${cause})`, { msg: SUMMARY, not_tokenized: 1, not_tokenized_total: 2 }]);
    });
  }
});
