/**
 * Regression (hostile trial 28, M1): one seller's cookie reached every other agent when the
 * host was Python (requests, httpx: `http.cookiejar`). The seller sent, as raw bytes,
 * `Set-Cookie: sellerA_session=SECRET-A; \x85Path=/` and `Set-Cookie: sellerA_two=T2; Path\x85=/`
 * (0x85, obs-text; undici reads header bytes as latin1, so U+0085). The gateway's scoping
 * (src/response/headers.ts scopeSetCookies) trimmed attribute names with JS `trim()`, which does
 * not strip U+0085, so it did not see `path`, kept the attribute and appended
 * `; Path=/agents/<agent>/mcp`. `http.cookiejar` `str.strip()`s names and values (U+0085,
 * U+00A0, \x0b, \x0c, \x1c-\x1f count), read the first `Path=/`, and sent the cookie to every
 * agent: the promise of the neighbouring test (seller-cookie-reaches-other-sellers) broken.
 *
 * Now an attribute holding any control or non-ASCII byte, or whose name (SP and HTAB trimmed)
 * is not an RFC 9110 token, is dropped: what is left reads the same to every client's trim.
 * Since hostile trial 30, H1 (test/regressions/seller-cookie-escapes-scope-in-aiohttp.test.ts),
 * each cookie is rebuilt (src/response/set-cookie.ts): the agent's `Path` right after the
 * pair, then only the attributes the gateway understands (so `Priority` and `Comment` go too),
 * and a pair that is no RFC 6265 cookie-pair (a non-ASCII value) drops the cookie.
 *
 * Input: a raw seller writing those bytes (and Domain, other whitespace bytes, non-token names,
 * a non-ASCII value) on the socket, through agent `acme`, JSON and SSE answers.
 * Expected: the host gets exactly the cookies below, each one's only `Path` the agent's route,
 * as `http.cookiejar` reads it too (modelled here: its first `path`, names `str.strip()`ped).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startHeaderLinesSeller } from '../support/raw-seller.js';
import { cookiejarCookie } from '../helpers/python-cookiejar.js';

/** The seller's Set-Cookie values, one character per byte (latin1). */
const SENT = [
  'sellerA_session=SECRET-A; \x85Path=/',
  'sellerA_two=T2; Path\x85=/; HttpOnly',
  // U+00A0 (JS trims it; Python too), U+0085 before Domain, a value attribute kept.
  'c3=v3; \xa0Path=/; \x85Domain=127.0.0.1; Max-Age=60',
  'c4=v4; Domain\x85=localhost; SameSite=Lax',
  // Names that are no token: dropped; an extension attribute dropped too (since trial 30).
  'c5=v5; Pa th=/; Path"=/; Priority=High',
  // A non-ASCII byte in an attribute's value: that attribute dropped.
  'c6=v6; Comment=caf\xe9; Partitioned',
  // A non-ASCII byte in the pair: no cookie-pair, the cookie dropped (since trial 30).
  'c7=caf\xe9; Path=/',
];
const SCOPED = [
  'sellerA_session=SECRET-A; Path=/agents/acme/mcp',
  'sellerA_two=T2; Path=/agents/acme/mcp; HttpOnly',
  'c3=v3; Path=/agents/acme/mcp; Max-Age=60',
  'c4=v4; Path=/agents/acme/mcp; SameSite=Lax',
  'c5=v5; Path=/agents/acme/mcp',
  'c6=v6; Path=/agents/acme/mcp; Partitioned',
];

/** The cookie's path as `http.cookiejar` reads it (the first `path` wins), or undefined. */
const pythonPath = (cookie: string): string | undefined => cookiejarCookie(cookie).path;

describe("a seller's cookie attribute hidden behind a byte a lenient client strips", () => {
  const stack = useSellerAndGateway(
    () => startHeaderLinesSeller([...SENT.map((c) => `Set-Cookie: ${c}`), 'Connection: close']),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  test('the model reads the seller bytes as the trial saw them: Path=/', () => {
    assert.deepEqual(SENT.map(pythonPath), ['/', '/', '/', undefined, undefined, undefined, '/']);
  });

  for (const tool of ['json', 'sse']) {
    test(`${tool}: every such attribute is dropped; each cookie's only Path is the agent's route`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-11-25' }));
      assert.equal(res.status, 200);
      // fetch reads header bytes as latin1, one character per byte: these are the bytes sent.
      const got = res.headers.getSetCookie();
      assert.deepEqual(got, SCOPED);
      assert.deepEqual(got.map(pythonPath), SCOPED.map(() => '/agents/acme/mcp'));
    });
  }
});
