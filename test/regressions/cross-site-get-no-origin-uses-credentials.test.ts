/**
 * Regression (a new user's trial, 2026-12-03): a cross-site GET from a web page, which carries
 * no `Origin`, was forwarded to the seller with the agent's configured credentials.
 *
 * What `<img src="http://127.0.0.1:18787/agents/x/mcp">` on another site sends: no `Origin`
 * (a no-cors GET has none), `Host: 127.0.0.1:18787` (a loopback name: `host_not_allowed` does
 * not apply), `Sec-Fetch-Site: cross-site`, `Sec-Fetch-Mode: no-cors`, `Sec-Fetch-Dest:
 * image`. The README promises "a page can never have its calls sent with the agents'
 * configured credentials". Browsers label every request with `Sec-Fetch-Site` (Fetch
 * Metadata: `cross-site`, `same-site`, `same-origin`, `none` for a typed URL); buyer agents
 * and SDK clients send none. A request without an allowed `Origin` whose `Sec-Fetch-Site` is
 * `cross-site` or `same-site` (a page of another site, or of another origin of this site) is
 * now refused as a disallowed `Origin` is: 403 `origin_not_allowed`, id null, before any
 * seller is contacted.
 *
 * Input: a gateway (agent `acme`, `headers: { authorization: "Bearer s3cret" }`) before a raw
 * seller that records what it gets; requests through node:http, `Host: 127.0.0.1:<port>`.
 * Expected:
 * - the image GET above, a `same-site` GET, and a `cross-site` POST without `Origin`: 403, the
 *   JSON-RPC error for id null (-32600, `origin_not_allowed`) byte for byte, the seller not
 *   contacted, one `refused` line;
 * - controls, forwarded with the credentials: `same-origin`, `none`, no `Sec-Fetch-*` at all
 *   (an SDK client). (`cross-site` with a loopback `Origin` was a control here too, until hostile
 *   trial 33 found such blind requests calling tools: loopback-page-blind-post-calls-tool.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { sendCallOrStream, type CallOrStreamAnswer } from '../helpers/call-or-stream.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const ANSWER = '{"jsonrpc":"2.0","id":7,"result":{"content":[]}}';

/** A GET (the SSE stream, accepting any type, as an image's) or a POSTed tools/call for id 7 to `url`, with `headers` and `Host: 127.0.0.1:<port>`. */
const send = (method: 'GET' | 'POST', url: string, headers: Record<string, string>): Promise<CallOrStreamAnswer> =>
  sendCallOrStream(method, url, { host: new URL(url).host, ...headers }, '*/*');

const refusedBody = (site: string): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: `A browser's request from another origin's page (Sec-Fetch-Site: ${site}, no Origin) is not allowed: the gateway serves buyer agents, not browsers (allowed_origins lists the browser origins it serves besides localhost).`,
      data: { reason: 'origin_not_allowed' },
    },
  });

const IMAGE = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' };

describe('a browser request from another site without Origin never reaches a seller', () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER)),
    (s) => startObservedGateway(agentsYaml({ acme: { url: s.url, headers: '{ authorization: "Bearer s3cret" }' } })),
  );

  const refused: Array<[string, 'GET' | 'POST', Record<string, string>, string]> = [
    ['an <img> on another site (cross-site, no-cors GET)', 'GET', IMAGE, 'cross-site'],
    ['a same-site GET (another origin of the same site)', 'GET', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors' }, 'same-site'],
    ['a cross-site POST without Origin', 'POST', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' }, 'cross-site'],
  ];
  for (const [label, method, headers, site] of refused) {
    test(`${label}: 403 origin_not_allowed for id null, the seller not contacted, one refused line`, OPTIONS, async () => {
      const before = stack.seller.requests.length;
      const linesBefore = stack.gateway.lines.length;
      const res = await send(method, stack.gateway.agentUrl('acme'), headers);
      assert.deepEqual(res, { status: 403, text: refusedBody(site) });
      assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
      await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= linesBefore, 5000);
      const lines = stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'refused');
      assert.deepEqual(
        lines.map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method })),
        [{ reason: 'origin_not_allowed', status: 403, agent: 'acme', http_method: method }],
      );
    });
  }

  const served: Array<[string, Record<string, string>]> = [
    ['same-origin', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors' }],
    ['none (a typed URL)', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' }],
    ['no Sec-Fetch-* (a buyer agent, an SDK client)', {}],
  ];
  for (const [label, headers] of served) {
    test(`control, ${label}: forwarded with the credentials`, OPTIONS, async () => {
      const before = stack.seller.requests.length;
      const res = await send('POST', stack.gateway.agentUrl('acme'), headers);
      assert.deepEqual(res, { status: 200, text: ANSWER });
      assert.equal(stack.seller.requests.length, before + 1);
      assert.equal(stack.seller.requests.at(-1)!.headers.authorization, 'Bearer s3cret');
    });
  }
});
