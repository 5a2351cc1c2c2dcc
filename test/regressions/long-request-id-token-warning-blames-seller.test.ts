/**
 * Regression (hostile trial 55, F4, Info): a long but valid host request id (a 3,000-character
 * string) pushed every resume token of its stream over the 4,096-character limit (a token
 * carries the request's id, base64url-coded): the events went out without ids, and the warning
 * said `SSE event id could not be turned into a resume token: forwarded without an id`, though
 * the seller's event id was `ev1`; the docs named only the seller's id as what can push a token
 * over the limit. Now the first warning says why (src/response/sse-id-token-log.ts
 * tokenRefusalCause): the part of the token that made it too long and its length, the seller's
 * id beside it; or that the seller's id cannot be sent back in a Last-Event-ID header.
 *
 * Input: a raw seller answering each tools/call with SSE: a progress notification with
 * `id: ev1`, then the response with `id: ev2` -> gateway (agent `s`, a configured resume
 * secret) -> raw POSTs (no session): (a) request id `"i" x 3000`; (b) id 9, tool name
 * `"t" x 3000`; (c) control: id 7, tool `get_products`. A second agent `u` whose seller answers
 * with `id: \x01` events: (d) id 8.
 * Expectation: (a) and (b) get both events without an `id:` line, the stream ends `ok`; the
 * agent's first warning is exactly `... forwarded without an id (the token would be over 4096
 * characters: the request's id takes 4003 characters of the token; the seller's event id 7)` (b: `the tool
 * name takes 4003 characters of the token`: each part as the token carries it, its JSON text x 4/3 for
 * base64url, since hostile trial 56, F4), then one end summary for the second id. (c) gets tokens and no
 * warning. (d): `(the seller's event id cannot be sent back in a Last-Event-ID header
 * (printable ASCII only))`. Before the fix: (a), (b) and (d) failed (the line ended at
 * `forwarded without an id`), (c) passed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { FIRST, PROGRESS, SUMMARY, callCollectingWarnings, frame, response } from '../helpers/token-warning.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const { id } = JSON.parse(req.body.toString('utf8')) as { id: unknown };
      const [first, second] = req.url.includes('ctl') ? ['\x01', '\x01'] : ['ev1', 'ev2'];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(frame(PROGRESS, first) + frame(response(id), second));
    }),
  (seller: RawSeller) => startObservedGateway(agentsYaml({ s: `${seller.url}?s=s`, u: `${seller.url}?s=ctl` }, RESUME_YAML)),
);
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

/** Calls `agent` with JSON-RPC id `id` and tool `tool`; its body, and the agent's warning lines (msg, and the summary's counts) once its exchange line is written. */
const call = (agent: string, id: string | number, tool: string): ReturnType<typeof callCollectingWarnings> => callCollectingWarnings(gw(), agent, id, tool, HEADERS);

describe('the untokenized-id warning says what made the token too long', { timeout: TEST_TIMEOUT_MS }, () => {
  const longId = 'i'.repeat(3000);
  const longTool = 't'.repeat(3000);
  for (const [label, id, tool, cause] of [
    ['a 3,000-character request id', longId, 'get_products', "the token would be over 4096 characters: the request's id takes 4003 characters of the token; the seller's event id 7"],
    ['a 3,000-character tool name', 9, longTool, "the token would be over 4096 characters: the tool name takes 4003 characters of the token; the seller's event id 7"],
  ] as const) {
    test(`${label}: the events without ids, the warning names it`, async () => {
      const { text, outcome, warnings } = await call('s', id, tool);
      assert.equal(text, frame(PROGRESS) + frame(response(id)));
      assert.equal(outcome, 'ok');
      assert.deepEqual(warnings, [`${FIRST}forwarded without an id (${cause})`, { msg: SUMMARY, not_tokenized: 1, not_tokenized_total: 2 }]);
    });
  }

  test('control: a short request id and tool name get tokens and no warning', async () => {
    const { text, outcome, warnings } = await call('s', 7, 'get_products');
    const ids = sseIds(text);
    assert.equal(ids.length, 2);
    for (const token of ids) assert.match(token, RESUME_TOKEN);
    assert.equal(outcome, 'ok');
    assert.deepEqual(warnings, []);
  });

  test('a seller id a Last-Event-ID header cannot carry: the warning says so', async () => {
    const { text, warnings } = await call('u', 8, 'get_products');
    assert.equal(text, frame(PROGRESS) + frame(response(8)));
    assert.deepEqual(warnings, [
      `${FIRST}forwarded without an id (the seller's event id cannot be sent back in a Last-Event-ID header (printable ASCII only))`,
      { msg: SUMMARY, not_tokenized: 1, not_tokenized_total: 2 },
    ]);
  });
});
