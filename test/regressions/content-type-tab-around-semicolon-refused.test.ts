/**
 * Regression: a seller answer with `Content-Type: application/json\t;\tcharset=utf-8` (tabs
 * around the `;`) was refused `upstream_not_mcp`.
 *
 * Failure (a hostile trial): fast-content-type-parse takes only SP after a `;` and after a
 * parameter, so a tab there made the value unparsable: the body kind was none, and a 200 JSON
 * answer was not MCP. RFC 9110 §8.3.1 has `media-type = type "/" subtype parameters`, §5.6.6
 * `parameters = *( OWS ";" OWS [ parameter ] )`, and §5.6.3 `OWS = *( SP / HTAB )`: a tab
 * there is whitespace like a space, and the value is `application/json;charset=utf-8`.
 *
 * Now: only when the library's parse fails, the value is parsed once more without the OWS
 * around each `;` (and without empty parameters: content-type.ts parseMediaType). OWS around
 * `=` is not in the grammar (§5.6.6 `parameter-name "=" parameter-value`): still refused.
 *
 * Input: a raw seller on 127.0.0.1 answering a tools/call (by tool name) with 200, its body,
 * and one or more Content-Type field lines holding tabs. Expectation: 200, the first value as
 * sent (SSE: `text/event-stream`), the seller's exact bytes, outcome `ok`; a tab around `=`,
 * or a repeated line naming another media type: 200 with the `upstream_not_mcp` tool error for
 * the id, outcome `local_error`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { contentTypeAnswers, okResult, okSseBody, testAnswersNotMcp, testAnswersPass, useContentTypeSeller } from '../helpers/content-type-seller.js';

const result = okResult;
const sseBody = okSseBody;

/** Tool name -> [Content-Type field values, each sent as its own field line; body]. */
const ANSWERS: Record<string, [string[], (id: number) => string]> = {
  json_tabs_around: [['application/json\t;\tcharset=utf-8'], result],
  json_tab_before: [['application/json\t;charset=utf-8'], result],
  json_tab_after: [['application/json;\tcharset=utf-8'], result],
  json_tabs_between_parameters: [['application/json; charset=utf-8\t \t;\t profile="a;b"'], result],
  sse_tabs_around: [['text/event-stream\t;\tcharset=utf-8'], sseBody],
  repeated_tabs_and_spaces: [['application/json\t;\tcharset=utf-8', 'application/json; charset=UTF-8'], result],
  tab_around_equals: [['application/json;charset\t=\tutf-8'], result],
  repeated_other_parameters: [['application/json\t;\tcharset=utf-8', 'application/json'], result],
};

const seller = useContentTypeSeller(contentTypeAnswers(ANSWERS));
const { stack, post } = seller;

describe('a seller Content-Type with tabs around `;` (RFC 9110 §5.6.3 OWS)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends the tabs', async () => {
    const one = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify(toolCall(90, 'json_tabs_around')) });
    assert.equal(one.headers.get('content-type'), 'application/json\t;\tcharset=utf-8');
    await one.arrayBuffer();
  });

  // The tab before the first `;` was read before too (the library trims the media type).
  test('control: json_tab_before: ["application/json\\t;charset=utf-8"] is a media type with its parameters', async () => {
    const r = await post(2, 'json_tab_before');
    assert.deepEqual([r.status, r.headers.get('content-type'), r.text()], [200, 'application/json\t;charset=utf-8', result(2)]);
    const line = await stack.gateway.exchangeLine('s', 2);
    assert.deepEqual([line.outcome, line.reason], ['ok', null]);
  });

  const passing: Array<[string, number, string, (id: number) => string]> = [
    ['json_tabs_around', 1, 'application/json\t;\tcharset=utf-8', result],
    ['json_tab_after', 3, 'application/json;\tcharset=utf-8', result],
    ['json_tabs_between_parameters', 4, 'application/json; charset=utf-8\t \t;\t profile="a;b"', result],
    ['sse_tabs_around', 5, 'text/event-stream', sseBody],
    ['repeated_tabs_and_spaces', 6, 'application/json\t;\tcharset=utf-8', result],
  ];
  testAnswersPass(seller, passing, (tool, type) => `${tool}: ${JSON.stringify(ANSWERS[tool]![0])} is a media type with its parameters: 200, ${JSON.stringify(type)}, the seller's bytes (was upstream_not_mcp)`);

  const refused: Array<[string, number]> = [
    ['tab_around_equals', 7],
    ['repeated_other_parameters', 8],
  ];
  testAnswersNotMcp(seller, refused, (tool) => `control: ${tool}: ${JSON.stringify(ANSWERS[tool]![0])} is still upstream_not_mcp for the id`);
});
