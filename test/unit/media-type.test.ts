/**
 * request/unreadable-content-type.ts isMediaType: whether Fastify reads a `Content-Type` value
 * as a media type, for a head judged before Fastify sees it (head-refusal.ts, `Expect:
 * 100-continue`). It must agree with Fastify's own ContentType (lib/content-type.js), or a
 * POST with an Origin would be told one thing from its head and another from its route
 * (hostile trial 35, leftover 2: test/regressions/unparseable-content-type-said-unlabelled.test.ts).
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { isMediaType } from '../../src/request/unreadable-content-type.js';

const require = createRequire(import.meta.url);
const ContentType = require('fastify/lib/content-type.js') as new (value: string) => { isValid: boolean };

const VALUES = [
  'application/json',
  'Application/JSON ; charset=utf-8',
  'application/json;',
  'application/json;;',
  'application/json; charset=',
  'text/plain',
  'application/*+json',
  'application/json ',
  ' application/json',
  'application/json garbage',
  'application/json x;charset=utf-8',
  'application/json, text/plain',
  'application/json/x',
  'application /json',
  'application/ json',
  'json',
  ';',
  '; charset=utf-8',
  '/',
  'a/',
  '/b',
  'a/b',
  'a(b)/c',
  'text/plain; x=application/json',
  'multipart/form-data; boundary=x',
  'application/json\tx',
  'é/json',
];

test('isMediaType agrees with Fastify ContentType on every value', () => {
  for (const value of VALUES) assert.equal(isMediaType(value), new ContentType(value).isValid, JSON.stringify(value));
});

test('the trial value and a list are no media type; JSON with parameters is one', () => {
  assert.deepEqual(
    ['application/json garbage', 'application/json, text/plain', 'json', 'application/json; charset=utf-8'].map(isMediaType),
    [false, false, false, true],
  );
});
