/**
 * Regression (review 35, F6, Nit, docs): the doc of the resume token's `final` field
 * (src/resume/token.ts ResumeState) said a resume from such a token gets a stream "that ends at
 * once, empty". Since hostile trial 17, M2 it is held open, and ends after
 * `sse_idle_timeout_ms` (or at a graceful shutdown, or when another answer waits behind it on
 * its connection) plainly after one event `id: <the token>` (routing/handler.ts,
 * errors/local-reply.ts answerStreamOver; the behaviour is tested in
 * test/regressions/already-answered-resume-ends-at-once-sdk-reconnect-loop.test.ts). The doc now
 * says so.
 *
 * Input: src/resume/token.ts, the doc comment just before `readonly final?: boolean;`.
 * Expected: it no longer says the stream ends at once; it says the stream is held open and how
 * it ends, in the words below.
 * Before the fix: 2 of the 2 assertions failed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers/repo.js';

test('final-token-resume-doc-says-ends-at-once: the `final` doc says the stream is held open, then ends after `id: <token>`', () => {
  const src = readFileSync(join(REPO, 'src/resume/token.ts'), 'utf8');
  const field = src.indexOf('readonly final?: boolean;');
  const doc = src
    .slice(src.lastIndexOf('/**', field), field)
    .replace(/^\s*\/?\*+\/?\s?/gm, '')
    .replace(/\s+/g, ' ');
  assert.equal(doc.includes('ends at once, empty'), false, doc);
  assert.ok(
    doc.includes(
      'answered, without contacting the seller, with HTTP 200 and an SSE stream held open with nothing in it until the host closes it, or ended after `sse_idle_timeout_ms` (or at a graceful shutdown, or when another answer waits behind it on its connection) plainly after one event `id: <this token>`',
    ),
    doc,
  );
});
