/**
 * bodyKind (response/content-type.ts) classifies by the parsed essence and remembers the
 * last header value (issue 5): alternating, repeated and list values must still classify
 * exactly as a fresh parse does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyKind, repeatedContentType } from '../../src/response/content-type.js';

test('repeated and alternating values classify as a fresh parse', () => {
  const cases: Array<[string | string[] | undefined, string]> = [
    ['application/json', 'json'],
    ['application/json', 'json'],
    ['Text/Event-Stream; charset=utf-8', 'sse'],
    ['application/json', 'json'],
    ['application/problem+json', 'json'],
    ['text/html', 'other'],
    ['text/html', 'other'],
    [undefined, 'none'],
    ['text/html', 'other'],
    ['', 'none'],
    [['text/event-stream', 'application/json'], 'sse'],
    ['application/json', 'json'],
    ['not a media type', 'none'],
    ['application/jsonx', 'other'],
  ];
  for (const [header, kind] of cases) assert.equal(bodyKind(header), kind, String(header));
});

test('repeatedContentType: identical lines are one value, differing lines none (RFC 9110 §5.3, §8.3)', () => {
  assert.equal(repeatedContentType(['application/json', 'application/json']), 'application/json');
  assert.equal(repeatedContentType(['text/event-stream', 'text/event-stream', 'text/event-stream']), 'text/event-stream');
  assert.equal(repeatedContentType(['application/json']), 'application/json');
  assert.equal(repeatedContentType(['application/json', 'text/html']), undefined);
  assert.equal(repeatedContentType(['application/json', 'application/json; charset=utf-8']), undefined);
  assert.equal(repeatedContentType(['application/json', 'application/json', 'text/html']), undefined);
  assert.equal(repeatedContentType([]), undefined);
});
