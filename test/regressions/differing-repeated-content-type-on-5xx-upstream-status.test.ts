/**
 * Regression: a seller answering 500 or 503 with `Content-Type` sent as two field lines with
 * differing values got `upstream_status`, where the same lines on a 4xx or 3xx got
 * `upstream_not_mcp`.
 *
 * Failure (a new user's trial 6, Finding 5): response/pipeline.ts refused a 5xx
 * (`upstream_status`) before it checked the repeated Content-Type, though docs/errors.md has
 * differing lines be `upstream_not_mcp` "whatever its status": `Content-Type` is a singleton
 * field (RFC 9110 §8.3), so such an answer is an invalid message, whatever it says.
 *
 * Now: the repeated-field check comes first, before the status, the coding and the body, so
 * the reason no longer depends on the status. A 5xx with one Content-Type, or with repeated
 * lines naming one media type, is still `upstream_status`.
 *
 * Input: a raw seller on 127.0.0.1 answering a tools/call (by tool name) with the status and
 * Content-Type field lines of the case, and a JSON-RPC error body. Expectation: 200 with the
 * tool error for the id, reason and `upstream_status` detail exact, and the exchange line
 * `local_error` with that reason.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { useContentTypeSeller, type ContentTypeAnswer } from '../helpers/content-type-seller.js';

const errorBody = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: 'down' } });

/** Tool name -> [HTTP status, Content-Type field values, each sent as its own field line]. */
const ANSWERS: Record<string, [number, string[]]> = {
  differing_500: [500, ['application/json', 'text/plain']],
  differing_503: [503, ['application/json', 'text/plain']],
  differing_charset_503: [503, ['application/json', 'application/json; charset=utf-8']],
  differing_400: [400, ['application/json', 'text/plain']],
  differing_302: [302, ['application/json', 'text/plain']],
  one_500: [500, ['application/json']],
  equivalent_503: [503, ['application/json', 'Application/JSON']],
};

const CONTENT_TYPE_ANSWERS: Record<string, ContentTypeAnswer> = Object.fromEntries(
  Object.entries(ANSWERS).map(([tool, [status, contentType]]) => [tool, { status, contentType, body: errorBody }]),
);
const { stack, post } = useContentTypeSeller(CONTENT_TYPE_ANSWERS);

describe('differing repeated Content-Type lines, whatever the status', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends a 503 with two differing field lines', async () => {
    const res = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify(toolCall(90, 'differing_503')) });
    // fetch combines repeated field lines with ", " (RFC 9110 §5.3).
    assert.deepEqual([res.status, res.headers.get('content-type')], [503, 'application/json, text/plain']);
    await res.arrayBuffer();
  });

  const cases: Array<[string, number, 'upstream_not_mcp' | 'upstream_status', string]> = [
    ['differing_500', 1, 'upstream_not_mcp', '(was upstream_status)'],
    ['differing_503', 2, 'upstream_not_mcp', '(was upstream_status)'],
    ['differing_charset_503', 3, 'upstream_not_mcp', '(was upstream_status)'],
    ['differing_400', 4, 'upstream_not_mcp', '(control: as before)'],
    ['differing_302', 5, 'upstream_not_mcp', '(control: as before)'],
    ['one_500', 6, 'upstream_status', '(control: one line)'],
    ['equivalent_503', 7, 'upstream_status', '(control: lines naming one media type)'],
  ];
  for (const [tool, id, reason, note] of cases) {
    const [status, values] = ANSWERS[tool]!;
    test(`${tool}: ${status} with ${JSON.stringify(values)}: ${reason} for the id ${note}`, async () => {
      const r = await post(id, tool);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(r.text(), expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason, upstreamStatus: status }));
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason, line.upstream_status], ['local_error', reason, status]);
    });
  }
});
