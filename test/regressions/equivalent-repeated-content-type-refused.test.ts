/**
 * Regression: a seller answer with `Content-Type` sent as several field lines that name the
 * same media type in different spellings was refused `upstream_not_mcp`.
 *
 * Failure: repeated Content-Type lines counted as one only when they were the same string
 * (content-type.ts repeatedContentType), so `application/json` + `Application/JSON`, or
 * `text/event-stream;charset=utf-8` + `text/event-stream; charset="UTF-8"`, made a valid
 * answer the gateway's `upstream_not_mcp` error, though RFC 9110 §8.3.1 makes them one media
 * type: type, subtype and parameter names are case-insensitive, a charset value is too
 * (§8.3.2), a parameter value may be a token or a quoted-string, and whitespace around `;` is
 * optional.
 *
 * Now: equivalent values count as one and the host gets the first as sent (the SSE stage
 * writes its own `text/event-stream`); values that name different media types, parameters
 * included, are still refused (`application/json` vs `application/json; charset=utf-8`: a
 * parameter only one of them has; a non-charset parameter value compares exactly).
 *
 * Input: a raw seller on 127.0.0.1 answering a tools/call (by tool name) with 200, its body,
 * and two Content-Type field lines. Expectation: equivalent lines: 200, that first value
 * (SSE: `text/event-stream`), the seller's exact bytes, outcome `ok`; differing lines: 200
 * with the `upstream_not_mcp` tool error for the id, outcome `local_error`.
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
  json_case: [['application/json', 'Application/JSON'], result],
  json_params: [['Application/JSON ; Charset="UTF-8"', 'application/json;charset=utf-8'], result],
  sse_params: [['text/event-stream;charset=utf-8', 'text/event-stream; charset="UTF-8"'], sseBody],
  json_charset_once: [['application/json', 'application/json; charset=utf-8'], result],
  sse_other_charset: [['text/event-stream; charset=utf-8', 'text/event-stream; charset=utf-16'], sseBody],
  json_profile_case: [['application/json; profile=A', 'application/json; profile=a'], result],
};

const seller = useContentTypeSeller(contentTypeAnswers(ANSWERS));
const { stack } = seller;

describe('a seller answer with two equivalent Content-Type fields', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends two field lines, spelled differently', async () => {
    const res = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify(toolCall(90, 'json_case')) });
    // fetch combines repeated field lines with ", " (RFC 9110 §5.3).
    assert.equal(res.headers.get('content-type'), 'application/json, Application/JSON');
    await res.arrayBuffer();
  });

  const equivalent: Array<[string, number, string, (id: number) => string]> = [
    ['json_case', 1, 'application/json', result],
    ['json_params', 2, 'Application/JSON ; Charset="UTF-8"', result],
    ['sse_params', 3, 'text/event-stream', sseBody],
  ];
  testAnswersPass(seller, equivalent, (tool, type) => `${tool}: ${ANSWERS[tool]![0].join(' + ')} are one media type (RFC 9110 §8.3.1): 200, ${type}, the seller's bytes (was upstream_not_mcp)`);

  const differing: Array<[string, number]> = [
    ['json_charset_once', 4],
    ['sse_other_charset', 5],
    ['json_profile_case', 6],
  ];
  testAnswersNotMcp(seller, differing, (tool) => `${tool}: ${ANSWERS[tool]![0].join(' + ')} differ: still upstream_not_mcp for the id`);
});
