/**
 * src/observability/url-query-redaction.ts: the query after an agent URL's prefix is
 * replaced to the URL's end, every occurrence; the secret texts of a query are its pairs
 * and values, raw, decoded and re-encoded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryPrefixOf, querySecretTexts, redactQueriesAfter } from '../../src/observability/url-query-redaction.js';

const R = '[redacted]';
const P = 'https://seller.example/mcp?';

test('queryPrefixOf: origin and path with a query, undefined without one', () => {
  assert.equal(queryPrefixOf(new URL('https://seller.example:8443/a/mcp?k=v')), 'https://seller.example:8443/a/mcp?');
  assert.equal(queryPrefixOf(new URL('https://seller.example/mcp')), undefined);
});

test('redactQueriesAfter (a string value, decoded): to the end of the URL, every occurrence, nothing else', () => {
  for (const [line, expected] of [
    [`{"url":"${P}k=s3cr3t&x=1"}`, `{"url":"${P}${R}"}`],
    [`to ${P}x=1&k=s3cr3t failed; again ${P}k=s3cr3t\nnext`, `to ${P}${R} failed; again ${P}${R}\nnext`],
    // A string value, decoded: a backslash is the query's own, not a JSON escape.
    [`a ${P}k=s3\\cr3t&x=1 b`, `a ${P}${R} b`],
    [`{"a":"${P}k=1#frag","b":"${P}k=2'"}`, `{"a":"${P}${R}#frag","b":"${P}${R}'"}`],
    [`{"url":"${P}"}`, `{"url":"${P}"}`],
    [`{"url":"https://seller.example/other?k=s3cr3t"}`, `{"url":"https://seller.example/other?k=s3cr3t"}`],
    [`ends with ${P}k=v`, `ends with ${P}${R}`],
  ] as const) {
    assert.equal(redactQueriesAfter(line, P, R), expected, line);
  }
});

test('querySecretTexts: pairs and values, raw, decoded and re-encoded; bare names and bad escapes kept raw', () => {
  assert.deepEqual(querySecretTexts(new URL('https://s.example/mcp?api_key=a%2Fb+c&flag&bad=%E0%A4%A')), [
    'api_key=a%2Fb+c',
    'a%2Fb+c',
    'a/b c',
    'a%2Fb%20c',
    'bad=%E0%A4%A',
    '%E0%A4%A',
  ]);
  assert.deepEqual(querySecretTexts(new URL('https://s.example/mcp')), []);
});
