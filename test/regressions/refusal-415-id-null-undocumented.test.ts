/**
 * Regression (a new user's trial): the 415 `unsupported_content_encoding` refusal always
 * carries id `null`, even when the body holds a readable id, since a compressed body is
 * never read; docs/errors.md did not say so, while the refusals answered with id null for
 * the same kind of reason say it in their row (`request_header_too_large`,
 * `request_timeout`, `malformed_http`: "id null").
 *
 * Input: a POST whose body is plain JSON with id 7, sent with `Content-Encoding: br`.
 * Expected: 415 with id null; the refusal's row in docs/errors.md (its catalog text in
 * src/errors/codes.ts, kept equal to the doc by test/unit/errors-docs.test.ts) says id null
 * and why.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { REFUSALS } from '../../src/errors/codes.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { REPO } from '../helpers/repo.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const ID_NULL = /id null \(a body with a Content-Encoding is never read, so its id is unknown\)/;

describe('unsupported_content_encoding: id null, and documented so', () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":7,"result":{}}')),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  test('a readable id in a body with a Content-Encoding is not echoed: id null', OPTIONS, async () => {
    const res = await withTimeout(
      fetch(stack.gateway.agentUrl('acme'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-encoding': 'br', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(toolCall(7, 'get_products')),
      }),
    );
    assert.equal(res.status, 415);
    const body = (await res.json()) as { id: unknown; error: { data: { reason: string } } };
    assert.deepEqual([body.id, body.error.data.reason], [null, 'unsupported_content_encoding']);
  });

  test("the refusal's row says id null and why, in the catalog and in docs/errors.md", () => {
    const { description } = REFUSALS.unsupported_content_encoding;
    assert.match(description, ID_NULL);
    const doc = readFileSync(join(REPO, 'docs/errors.md'), 'utf8');
    const row = doc.split('\n').find((line) => line.startsWith('| `unsupported_content_encoding` |'));
    assert.ok(row, 'the row');
    assert.match(row, ID_NULL);
  });
});
