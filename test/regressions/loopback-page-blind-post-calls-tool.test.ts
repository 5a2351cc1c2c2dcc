/**
 * Regression (hostile trial 33, F1, with Debian's Chromium 150 driven by playwright-core): a web
 * page served on another loopback port (`http://127.0.0.1:9101`, `http://[::1]:9102`: a dev
 * server, `python -m http.server` over a downloaded folder, an XSS in another local tool) had
 * the gateway call a seller's `create_media_buy` with the agent's configured credentials:
 * `fetch(url, { mode: 'no-cors', method: 'POST', body })` with `Content-Type: text/plain`, a
 * `<form enctype="text/plain">` POST and `navigator.sendBeacon` need no CORS preflight, carry a
 * loopback `Origin` (served by default, for the MCP conformance suite's
 * `dns-rebinding-protection` scenario), and the gateway reads any body as JSON-RPC whatever its
 * label. The page could not read the answer, but the call ran (a seller that checks no
 * Content-Type: the MCP SDK's own seller refused them 415). The README promised "a page can
 * never have its calls sent with the agents' configured credentials".
 *
 * Now (request/head-refusal.ts): a request a browser labels `Sec-Fetch-Site: cross-site` or
 * `same-site` is refused whatever its `Origin` (before: only without one), a POST with a
 * served `Origin` must be labelled `Content-Type: application/json` (what no page can send
 * without the preflight the gateway never answers: browsers without Fetch Metadata), and a GET
 * with an `Origin` not in `allowed_origins` is refused (hostile trial 35, F1: Chromium's
 * WebSocket handshake carries an Origin and no Sec-Fetch-*; it reached the seller).
 *
 * Input: a gateway (agent `acme`, `headers: { authorization: "Bearer s3cret" }`,
 * `allowed_origins: [https://console.example.com]`) before a raw seller that records what it
 * gets; raw requests with the headers Chromium sent in the trial (its `Origin`,
 * `Sec-Fetch-*`, `Content-Type`), `Host: 127.0.0.1:<port>`.
 * Expected: each page request 403 with the JSON-RPC error for id null (-32600,
 * `origin_not_allowed`) byte for byte, the seller not contacted; controls (the conformance
 * suite's request, a listed origin's same-origin JSON POST, a buyer agent without `Origin`
 * whatever its label) forwarded with the credentials.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { sendCallOrStream } from '../helpers/call-or-stream.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const ANSWER = '{"jsonrpc":"2.0","id":7,"result":{"content":[]}}';
const SERVED = 'the gateway serves buyer agents, not browsers (allowed_origins lists the browser origins it serves besides localhost).';

const refusedBody = (message: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `${message} ${SERVED}`, data: { reason: 'origin_not_allowed' } } });
const otherOrigin = (site: string, origin: string): string =>
  `A browser's request from another origin's page (Sec-Fetch-Site: ${site}, Origin "${origin}") is not allowed:`;
const notJson = (origin: string): string =>
  `A POST with an Origin ("${origin}") must be labelled Content-Type: application/json: a page's request without CORS is not allowed:`;

const getWithOrigin = (origin: string): string => `A GET with an Origin ("${origin}") is not allowed: a page's WebSocket or EventSource request:`;

const PAGE = 'http://127.0.0.1:9101';
const PAGE6 = 'http://[::1]:9102';
const LISTED = 'https://console.example.com';

/** A POST to the gateway at `url` whose request target is `target` in absolute form (RFC 9112 §3.2.2); resolves with the status. */
function absoluteFormPost(url: string, target: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return withTimeout(
    new Promise<number>((resolve, reject) => {
      const req = http.request({ hostname, port, path: target, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end('{}');
    }),
  );
}

describe('a page on another loopback origin cannot have a tool called', () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER)),
    (s) => startObservedGateway(agentsYaml({ acme: { url: s.url, headers: '{ authorization: "Bearer s3cret" }' } }, [`allowed_origins: ["${LISTED}"]`])),
  );

  const refused: Array<[string, 'GET' | 'POST', Record<string, string | undefined>, string]> = [
    [
      "fetch no-cors from 127.0.0.1:9101, text/plain hiding 'application/json' in a parameter",
      'POST',
      { origin: PAGE, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty', 'content-type': 'text/plain; x=application/json' },
      otherOrigin('same-site', PAGE),
    ],
    [
      'a CORS text/plain fetch from [::1]:9102 (cross-site to Chromium)',
      'POST',
      { origin: PAGE6, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', 'content-type': 'text/plain;charset=UTF-8' },
      otherOrigin('cross-site', PAGE6),
    ],
    [
      'sendBeacon',
      'POST',
      { origin: PAGE, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty', 'content-type': 'text/plain;charset=UTF-8' },
      otherOrigin('same-site', PAGE),
    ],
    [
      'a text/plain form posted into an iframe',
      'POST',
      { origin: PAGE, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe', 'content-type': 'text/plain' },
      otherOrigin('same-site', PAGE),
    ],
    [
      'EventSource from the page (a CORS GET)',
      'GET',
      { origin: PAGE, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' },
      otherOrigin('same-site', PAGE),
    ],
    [
      'a listed origin, but another origin to the browser',
      'POST',
      { origin: LISTED, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'content-type': 'text/plain' },
      otherOrigin('cross-site', LISTED),
    ],
    // Hostile trial 35, F1: Chromium sends a WebSocket handshake with an Origin and no Sec-Fetch-*.
    [
      'a WebSocket handshake from the page (a GET with an Origin, Upgrade, no Sec-Fetch-*)',
      'GET',
      { origin: PAGE, upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
      getWithOrigin(PAGE),
    ],
    ['an EventSource GET from a browser without Fetch Metadata', 'GET', { origin: 'http://localhost:3000', accept: 'text/event-stream' }, getWithOrigin('http://localhost:3000')],
    // A browser without Fetch Metadata: only the label tells.
    ['no Sec-Fetch-*, text/plain', 'POST', { origin: 'http://localhost:3000', 'content-type': 'text/plain' }, notJson('http://localhost:3000')],
    ['no Sec-Fetch-*, a urlencoded form', 'POST', { origin: PAGE, 'content-type': 'application/x-www-form-urlencoded' }, notJson(PAGE)],
    ['no Sec-Fetch-*, multipart', 'POST', { origin: PAGE, 'content-type': 'multipart/form-data; boundary=x' }, notJson(PAGE)],
    ['no Sec-Fetch-*, no Content-Type (an ArrayBuffer body)', 'POST', { origin: PAGE, 'content-type': undefined }, notJson(PAGE)],
    ['no Sec-Fetch-*, application/jsonx', 'POST', { origin: PAGE, 'content-type': 'application/jsonx' }, notJson(PAGE)],
    ['no Sec-Fetch-*, a listed origin, text/plain', 'POST', { origin: LISTED, 'content-type': 'text/plain' }, notJson(LISTED)],
  ];
  for (const [label, method, headers, message] of refused) {
    test(`${label}: 403 origin_not_allowed for id null, the seller not contacted`, OPTIONS, async () => {
      const before = stack.seller.requests.length;
      const res = await sendCallOrStream(method, stack.gateway.agentUrl('acme'), { host: new URL(stack.gateway.agentUrl('acme')).host, ...headers }, '*/*');
      assert.deepEqual(res, { status: 403, text: refusedBody(message) });
      assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
    });
  }

  // Hostile trial 33, F3: the refused line said origin_not_allowed but not which origin.
  test("refused-line-names-no-origin: the refused line names the page's Origin, Sec-Fetch-Site and Host (64 characters each)", OPTIONS, async () => {
    const linesBefore = stack.gateway.lines.length;
    const url = stack.gateway.agentUrl('acme');
    const longOrigin = `http://localhost:${'9'.repeat(80)}`;
    await sendCallOrStream('POST', url, { host: new URL(url).host, origin: PAGE, 'sec-fetch-site': 'same-site', 'content-type': 'text/plain' });
    await sendCallOrStream('POST', url, { host: new URL(url).host, origin: longOrigin });
    await sendCallOrStream('POST', url, { host: 'rebind.evil.example' });
    // Hostile trial 35, F2: an absolute-form target's authority is what was checked, not Host.
    await absoluteFormPost(url, 'http://evil.example/agents/acme/mcp');
    await stack.gateway.waitForLine((l) => l.msg === 'refused' && l.host === 'evil.example', 5000);
    const lines = stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'refused');
    assert.deepEqual(
      lines.map((l) => ({ reason: l.reason, origin: l.origin, sec_fetch_site: l.sec_fetch_site, host: l.host })),
      [
        { reason: 'origin_not_allowed', origin: PAGE, sec_fetch_site: 'same-site', host: new URL(url).host },
        { reason: 'origin_not_allowed', origin: longOrigin.slice(0, 64), sec_fetch_site: null, host: new URL(url).host },
        { reason: 'host_not_allowed', origin: null, sec_fetch_site: null, host: 'rebind.evil.example' },
        { reason: 'host_not_allowed', origin: null, sec_fetch_site: null, host: 'evil.example' },
      ],
    );
  });

  const served: Array<[string, Record<string, string | undefined>]> = [
    ["the MCP conformance suite's request (a loopback Origin, JSON, no Sec-Fetch-*)", { origin: 'http://localhost:8080' }],
    ['a loopback Origin, JSON in any letter case with a parameter', { origin: PAGE, 'content-type': 'Application/JSON ; charset=utf-8' }],
    ["a listed origin's own page (same-origin, JSON)", { origin: LISTED, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' }],
    ['a buyer agent without Origin, text/plain (served as before)', { 'content-type': 'text/plain' }],
    ['a buyer agent without Origin or Content-Type (served as before)', { 'content-type': undefined }],
  ];
  for (const [label, headers] of served) {
    test(`control, ${label}: forwarded with the credentials`, OPTIONS, async () => {
      const before = stack.seller.requests.length;
      const res = await sendCallOrStream('POST', stack.gateway.agentUrl('acme'), { host: new URL(stack.gateway.agentUrl('acme')).host, ...headers });
      assert.deepEqual(res, { status: 200, text: ANSWER });
      assert.equal(stack.seller.requests.length, before + 1);
      assert.equal(stack.seller.requests.at(-1)!.headers.authorization, 'Bearer s3cret');
    });
  }
});
