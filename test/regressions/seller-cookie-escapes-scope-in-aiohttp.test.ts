/**
 * Regression (hostile trial 30, H1): one seller's cookie reached every other agent when the host
 * was aiohttp (3.14.3, the default ClientSession cookie jar). aiohttp reads Set-Cookie as
 * Python's `http.cookies.SimpleCookie` does: whitespace separates items as `;` does, `$Path`
 * sets the path, the last `Path` wins, and reading stops silently at an item it cannot read
 * (a lone `=`, `x=\`, a `Max-Age` with no value). The gateway kept the seller's pair and
 * attributes as sent and appended `; Path=/agents/<agent>/mcp` (src/response/headers.ts
 * scopeSetCookies), which aiohttp never read:
 *
 * - `sid=SECRET-D; $Path=/; x=\` went out `sid=SECRET-D; $Path=/; x=\; Path=/agents/cD/mcp`;
 * - `sid=SECRET-A Path=/ =` (the trick inside the name=value pair) and
 *   `sid=SECRET-A evil=1 Path=/ Domain` (which planted `evil=1` too) likewise;
 *
 * aiohttp stored each at `/` and sent it to every other agent.
 *
 * Now each cookie is rebuilt from a strict reading (src/response/set-cookie.ts): an RFC 6265
 * cookie-pair or nothing (the cookie dropped, counted on the exchange line as
 * `cookies_dropped`), then `Path=/agents/<agent>/mcp` first, then only Expires, Max-Age,
 * Secure, HttpOnly, SameSite and Partitioned with strictly valid values, written canonically.
 *
 * Input: a raw seller sending the trial's cookies and neighbours (JSON and SSE answers) through
 * agent `acme`. Expected: exactly the lines below, and each one, read by a model of aiohttp's
 * parser (a port of aiohttp 3.14.3 `_cookie_helpers.parse_set_cookie_headers`, SimpleCookie's
 * algorithm) and by a model of `http.cookiejar` (requests, httpx: first `path`, names and
 * values `str.strip()`ped), sets one cookie whose path is the agent's route; the dropped
 * cookies set none; the exchange line says `cookies_dropped: 5`.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/observability/logger.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startHeaderLinesSeller } from '../support/raw-seller.js';
import { cookiejarCookie } from '../helpers/python-cookiejar.js';

/** The seller's Set-Cookie values, one character per byte (latin1). */
const SENT = [
  // The trial's three.
  'sid=SECRET-D; $Path=/; x=\\',
  'sid=SECRET-A Path=/ =',
  'sid=SECRET-A evil=1 Path=/ Domain',
  // A Max-Age with no value stops aiohttp before the appended Path; $Path set it first.
  's4=v4; $Path=/; Max-Age',
  // Whitespace inside an extension attribute's value.
  's5=v5; Comment=x Path=/ =',
  // Odd pairs: a quoted value with a space, a `$` name, a non-ASCII byte.
  's6="a b"; Path=/',
  '$s7=v7',
  's8=caf\xe9',
  // Well-formed: kept, canonical, Path first.
  'sess=a-secret; path=/; Domain=seller.example; HttpOnly; SameSite=lax; Expires=Wed, 21 Oct 2037 07:28:00 GMT; max-age=60; Secure; Priority=High',
  'q="v1"; SameSite=None; Secure; Partitioned; Expires=Wed, 21-Oct-2037 07:28:00 GMT; Max-Age=1e3',
];
const SCOPED = [
  'sid=SECRET-D; Path=/agents/acme/mcp',
  's4=v4; Path=/agents/acme/mcp',
  's5=v5; Path=/agents/acme/mcp',
  'sess=a-secret; Path=/agents/acme/mcp; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Max-Age=60; HttpOnly; SameSite=Lax',
  'q="v1"; Path=/agents/acme/mcp; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Secure; SameSite=None; Partitioned',
];
/** What the host got for the trial's three, before (agent `cD` then; `acme` here). */
const BEFORE = ['sid=SECRET-D; $Path=/; x=\\; Path=/agents/acme/mcp', 'sid=SECRET-A Path=/ =; Path=/agents/acme/mcp', 'sid=SECRET-A evil=1 Path=/ Domain; Path=/agents/acme/mcp'];

const KNOWN_ATTRS = new Set(['path', 'domain', 'max-age', 'expires', 'secure', 'httponly', 'samesite', 'partitioned', 'version', 'comment']);
const BOOL_ATTRS = new Set(['secure', 'httponly', 'partitioned']);
const NAME = /^[!#$%&'()*+\-./0-9:<=>?@A-Z[\]^_`a-z{|}~]+$/;
// aiohttp's _COOKIE_PATTERN (re.ASCII: \s is [ \t\n\r\f\v], \w is [A-Za-z0-9_]).
const S = '[ \\t\\n\\r\\f\\v]';
const KEY = "[\\w!#%&'~`><@,:/$*+\\-.^|)(?}{\\[\\]]+";
const VAL = [
  '"(?:[^\\\\"]|\\\\.)*"',
  '"[^";]*',
  `(?:\\w{3,6}day|\\w{3}),${S}[\\w${S.slice(1, -1)}-]{9,11}${S}[\\d:]{8}${S}(?:GMT|[+-]\\d{4})`,
  `\\w{3}${S}+\\w{3}${S}+[ \\t\\n\\r\\f\\v\\d]\\d${S}+\\d{2}:\\d{2}:\\d{2}${S}+\\d{4}`,
  "[\\w!#%&'~`><@,:/$*+\\-.^|)(?}{=\\[\\]]*",
].join('|');
const PATTERN = new RegExp(`${S}*(?<key>${KEY})(${S}*=${S}*(?<val>${VAL}))?${S}*(?:${S}+|;|$)`, 'y');

/** The cookies aiohttp's parse_set_cookie_headers reads from one line: name, value, path ('' when unset). */
function aiohttpCookies(line: string): Array<{ name: string; value: string; path: string }> {
  const cookies: Array<{ name: string; value: string; path: string }> = [];
  let current: { name: string; value: string; path: string } | undefined;
  let seen = false;
  for (let i = 0, n = 0; i < line.length && n < 1000; n++) {
    PATTERN.lastIndex = i;
    const m = PATTERN.exec(line);
    if (m === null) break;
    const key = m.groups!.key!;
    const value = m.groups!.val;
    i = PATTERN.lastIndex;
    const lower = key.toLowerCase();
    if (key.startsWith('$')) {
      if (!seen) continue;
      if (current !== undefined && lower.slice(1) === 'path') current.path = value ?? '';
    } else if (KNOWN_ATTRS.has(lower)) {
      if (!seen) break;
      if (BOOL_ATTRS.has(lower)) continue;
      if (value === undefined) break;
      if (current !== undefined && lower === 'path') current.path = value;
    } else if (value !== undefined) {
      if (KNOWN_ATTRS.has(key) || !NAME.test(key)) current = undefined;
      else {
        current = { name: key, value, path: '' };
        cookies.push(current);
        seen = true;
      }
    } else break;
  }
  return cookies;
}

describe("a seller's cookie whose Path a SimpleCookie-style parser never reads", () => {
  const lines: string[] = [];
  const stack = useSellerAndGateway(
    () => startHeaderLinesSeller([...SENT.map((c) => `Set-Cookie: ${c}`), 'Connection: close']),
    (seller) => startGateway(agentsYaml({ acme: seller.url }), { logger: createLogger('info', { destination: sink(lines) }) }),
  );

  test('the aiohttp model reads what the host got before as the trial saw it: path /, evil=1 planted', () => {
    assert.deepEqual(BEFORE.map(aiohttpCookies), [
      [{ name: 'sid', value: 'SECRET-D', path: '/' }],
      [{ name: 'sid', value: 'SECRET-A', path: '/' }],
      [
        { name: 'sid', value: 'SECRET-A', path: '' },
        { name: 'evil', value: '1', path: '/' },
      ],
    ]);
  });

  for (const tool of ['json', 'sse']) {
    test(`${tool}: each cookie rebuilt with the agent's Path first, or dropped`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-11-25' }));
      assert.equal(res.status, 200);
      // fetch reads header bytes as latin1, one character per byte: these are the bytes sent.
      const got = res.headers.getSetCookie();
      assert.deepEqual(got, SCOPED);
      const names = ['sid', 's4', 's5', 'sess', 'q'];
      assert.deepEqual(
        got.map((line) => aiohttpCookies(line).map((c) => [c.name, c.path])),
        names.map((name) => [[name, '/agents/acme/mcp']]),
      );
      assert.deepEqual(
        got.map(cookiejarCookie),
        names.map((name) => ({ name, path: '/agents/acme/mcp' })),
      );
      const exchange = await withTimeout(waitForExchange(lines));
      assert.equal(exchange.cookies_dropped, 5);
    });
  }
});

/** A log destination pushing each line written into `lines`. */
function sink(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(line);
      cb();
    },
  });
}

/** The next exchange line logged (removed from `lines`), polled for a bounded while. */
async function waitForExchange(lines: string[]): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const at = lines.findIndex((line) => line.includes('"msg":"exchange"'));
    if (at !== -1) return JSON.parse(lines.splice(at, 1)[0]!) as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no exchange line');
}
