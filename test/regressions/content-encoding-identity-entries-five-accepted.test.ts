/**
 * Reported (a new user's hostile trial, F8): README said a Content-Encoding "stack of 5 or
 * more, is refused before any decoder is made" and docs/errors.md `unsupported_encoding` "a
 * list of 5 or more is refused", yet `identity ×6, gzip ×4` (10 entries) decoded and answered
 * normally, and so did `identity ×5`. The code is right: `identity` is no coding (RFC 9110
 * §8.4.1: "the identity function (i.e., no encoding)"; src/response/decode.ts
 * canonicalCodings drops it, and empty list elements), so no more than 4 decoders are ever
 * made (`MAX_STACKED_CODINGS`). The docs now say "5 or more codings other than `identity`".
 * This test pins the edge on the wire.
 *
 * Input: a raw seller on 127.0.0.1 answers a tools/call with a small JSON result, gzipped as
 * many times as the list has `gzip` entries, under each Content-Encoding list below.
 * Expectation: `identity ×6, gzip ×4`, `identity ×5` (not gzipped) and
 * `gzip, identity, gzip, , gzip, identity, gzip` decode: the host gets the result byte for
 * byte, without Content-Encoding. `identity, gzip ×5` (5 real codings) is refused: exactly the
 * SERVICE_UNAVAILABLE `unsupported_encoding` answer for the request's id.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n`),
);

/** POSTs tools/call `id`, answered with its result gzipped once per `gzip` in `codings`, under `Content-Encoding: codings`. */
async function call(id: number, codings: string): Promise<{ status: number; encoding: string | null; text: string; result: string }> {
  const result = toolResponse(id, { content: [{ type: 'text', text: 'done' }] });
  let body = Buffer.from(result);
  for (const c of codings.split(',')) if (c.trim() === 'gzip') body = gzipSync(body);
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': codings, 'content-length': body.length });
    res.end(body);
  };
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'get_products'), HEADERS), undefined, 'the POST');
  return { status: r.status, encoding: r.headers.get('content-encoding'), text: r.text(), result };
}

const times = (coding: string, n: number): string[] => Array<string>(n).fill(coding);

describe('identity entries in a Content-Encoding list are not codings', { timeout: TEST_TIMEOUT_MS }, () => {
  const decoded: Array<[number, string]> = [
    [1, [...times('identity', 6), ...times('gzip', 4)].join(', ')],
    [2, times('identity', 5).join(', ')],
    [3, 'gzip, identity, gzip, , gzip, identity, gzip'],
  ];
  for (const [id, codings] of decoded) {
    test(`${codings}: decoded (at most 4 codings other than identity)`, async () => {
      const r = await call(id, codings);
      assert.equal(r.status, 200);
      assert.equal(r.encoding, null);
      assert.equal(r.text, r.result);
    });
  }

  test('identity, gzip x5: 5 codings, unsupported_encoding', async () => {
    const r = await call(4, ['identity', ...times('gzip', 5)].join(', '));
    assert.equal(r.status, 200);
    assert.equal(r.text, expectedErrorJson({ id: 4, method: 'tools/call', toolName: 'get_products', reason: 'unsupported_encoding' }));
  });
});
