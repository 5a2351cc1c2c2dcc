/**
 * Regression: a seller answer with `Content-Type: application/json;` (an empty parameter) was
 * refused `upstream_not_mcp`, as a single field line and repeated beside `application/json`.
 *
 * Failure (a new user's trial 6, Finding 4): fast-content-type-parse follows the RFC 7231
 * §3.1.1.1 grammar, `*( OWS ";" OWS parameter )`, and could not parse `application/json;`,
 * `application/json; ` or `application/json;;`: the body kind was none, so a 200 JSON answer
 * was not MCP, and the repeated-line check (content-type.ts repeatedContentType) compared the
 * unparsable value only as a string, so `application/json;` beside `application/json` differed.
 * RFC 9110 §5.6.6 has `parameters = *( OWS ";" OWS [ parameter ] )`: an empty parameter is
 * valid and names nothing, so those values are `application/json` (§8.3.1).
 *
 * Now: only when the library's parse fails, the value is parsed once more without its empty
 * parameters (content-type.ts parseMediaType). Values that stay invalid are still refused.
 *
 * Input: a raw seller on 127.0.0.1 answering a tools/call (by tool name) with 200, its body,
 * and one or more Content-Type field lines. Expectation: 200, the first value as sent (SSE:
 * `text/event-stream`), the seller's exact bytes, outcome `ok`; an invalid parameter
 * (`; =x`) or a differing repeated line: 200 with the `upstream_not_mcp` tool error for the
 * id, outcome `local_error`.
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
  json_semicolon: [['application/json;'], result],
  json_semicolon_space: [['application/json; '], result],
  json_two_semicolons_charset: [['application/json;;charset=utf-8'], result],
  sse_semicolon: [['text/event-stream;'], sseBody],
  repeated_semicolon: [['application/json;', 'application/json'], result],
  repeated_two_semicolons: [['application/json;;', 'application/json'], result],
  repeated_plain_first: [['application/json', 'application/json; '], result],
  invalid_parameter: [['application/json; =x'], result],
  repeated_semicolon_charset: [['application/json;', 'application/json; charset=utf-8'], result],
  repeated_invalid_parameter: [['application/json', 'application/json; =x'], result],
};

const seller = useContentTypeSeller(contentTypeAnswers(ANSWERS));
const { stack } = seller;

describe('a seller Content-Type with an empty parameter (RFC 9110 §5.6.6)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends the empty parameter and the repeated lines', async () => {
    const one = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify(toolCall(90, 'json_semicolon')) });
    assert.equal(one.headers.get('content-type'), 'application/json;');
    await one.arrayBuffer();
    const two = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify(toolCall(91, 'repeated_semicolon')) });
    // fetch combines repeated field lines with ", " (RFC 9110 §5.3).
    assert.equal(two.headers.get('content-type'), 'application/json;, application/json');
    await two.arrayBuffer();
  });

  const passing: Array<[string, number, string, (id: number) => string]> = [
    ['json_semicolon', 1, 'application/json;', result],
    ['json_semicolon_space', 2, 'application/json; ', result],
    ['json_two_semicolons_charset', 3, 'application/json;;charset=utf-8', result],
    ['sse_semicolon', 4, 'text/event-stream', sseBody],
    ['repeated_semicolon', 5, 'application/json;', result],
    ['repeated_two_semicolons', 6, 'application/json;;', result],
    ['repeated_plain_first', 7, 'application/json', result],
  ];
  testAnswersPass(seller, passing, (tool, type) => `${tool}: ${JSON.stringify(ANSWERS[tool]![0])} is the media type without its empty parameter: 200, ${JSON.stringify(type)}, the seller's bytes (was upstream_not_mcp)`);

  const refused: Array<[string, number]> = [
    ['invalid_parameter', 8],
    ['repeated_semicolon_charset', 9],
    ['repeated_invalid_parameter', 10],
  ];
  testAnswersNotMcp(seller, refused, (tool) => `control: ${tool}: ${JSON.stringify(ANSWERS[tool]![0])} is still upstream_not_mcp for the id`);
});
