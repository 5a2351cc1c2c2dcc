/**
 * Regression (a new user's trial 9, F2): `tls_insecure_skip_verify: true` on one agent turned
 * off certificate verification for every agent at the same origin (scheme, host, port). The
 * gateway's one undici Agent pooled connections by origin and picked the TLS connector per
 * origin ("any agent at this origin skips verification"), so a seller with a self-signed
 * certificate answered the `strict` agent, which verifies, and received its Authorization
 * header, whether or not the insecure agent had been called first. And after a config reload
 * turned the flag off, the keep-alive connections made without verification went on serving
 * both agents. docs/configuration.md recommends two agents with the same `url` in some setups
 * ("Tasks: a tool's limits do not follow its task"), so a shared origin is a documented setup.
 *
 * Input: a real HTTPS seller on 127.0.0.1 with a self-signed certificate made at test time
 * (test/helpers/self-signed-cert.ts), which records each request's path and Authorization and
 * keeps idle connections open for 30 s (so a pooled connection is there to be reused); a real
 * gateway with `strict` (verifies, sends `Authorization: Bearer strict-secret`) and `lab`
 * (`tls_insecure_skip_verify: true`), both on that origin (paths /strict and /lab).
 * Expected: every call of `strict` fails with the documented TLS failure, `SERVICE_UNAVAILABLE`
 * `upstream_unreachable` (docs/errors.md: "No connection to the seller (DNS, connect or TLS
 * failure)"), in either order and right after `lab` made (and left idle) a connection;
 * `lab`'s calls are answered. After a reload that turns `lab`'s flag off, its new calls fail
 * the same way, while its call in flight at the reload finishes with its answer. The seller
 * never receives a request for /strict (nor `strict`'s credential).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { createReloader } from '../../src/reload.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { selfSignedCert } from '../helpers/self-signed-cert.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const SECRET = 'Bearer strict-secret';

/** What the seller received: path and Authorization (absent: null). */
const seen: Array<{ path: string; authorization: string | null }> = [];
/** Calls to the tool `held`, answered only when the test says so. */
const held: Array<() => void> = [];
let seller: https.Server;
let origin: string;

before(async () => {
  const { cert, key } = selfSignedCert();
  seller = https.createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization ?? null });
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; params: { name: string } };
      const answer = (): void => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: { content: [{ type: 'text', text: `answer via ${req.url}` }] } }));
      };
      if (call.params.name === 'held') held.push(answer);
      else answer();
    });
  });
  seller.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
  origin = `https://127.0.0.1:${(seller.address() as AddressInfo).port}`;
});

after(async () => {
  for (const answer of held.splice(0)) answer();
  seller.closeAllConnections();
  await new Promise((r) => seller.close(r));
});

/** The config: `strict` (verifies) and `lab` (skip-verify as given), one origin. */
function yaml(labSkipsVerify: boolean): string {
  return agentsYaml(
    {
      strict: { url: `${origin}/strict`, headers: `{ authorization: "${SECRET}" }` },
      lab: { url: `${origin}/lab`, tls_insecure_skip_verify: String(labSkipsVerify) },
    },
    ['log_level: silent'],
  );
}

/** What the host got for a tools/call: the answer's text, or the error's code, recovery and details. */
async function call(gw: RunningGateway, agent: string, id: number, tool = 'get_products'): Promise<unknown> {
  const res = await rawPost(gw.agentUrl(agent), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(res.status, 200, res.text());
  const m = res.json() as { id: number; result: { content?: Array<{ text: string }>; structuredContent?: { adcp_error?: { code: string; recovery: string; details: unknown } } } };
  assert.equal(m.id, id);
  const error = m.result.structuredContent?.adcp_error;
  return error === undefined ? m.result.content?.[0]?.text : { code: error.code, recovery: error.recovery, details: error.details };
}

const ANSWER_LAB = 'answer via /lab';
/** docs/errors.md `upstream_unreachable`: no connection (a TLS failure); no details beside the reason. */
const TLS_REFUSED = { code: 'SERVICE_UNAVAILABLE', recovery: 'transient', details: { reason: 'upstream_unreachable' } };

async function withGateway(config: string, run: (gw: RunningGateway) => Promise<void>): Promise<void> {
  seen.length = 0;
  const gw = await startGateway(config);
  try {
    await run(gw);
  } finally {
    for (const answer of held.splice(0)) answer();
    await gw.close();
  }
}

describe('tls_insecure_skip_verify on one agent does not reach another agent at the same origin', () => {
  test('the insecure agent first (its connection left idle in the pool), then the strict one: upstream_unreachable', OPTIONS, async () => {
    await withGateway(yaml(true), async (gw) => {
      assert.equal(await call(gw, 'lab', 1), ANSWER_LAB);
      assert.deepEqual(await call(gw, 'strict', 2), TLS_REFUSED);
      assert.deepEqual(await call(gw, 'strict', 3), TLS_REFUSED);
      assert.equal(await call(gw, 'lab', 4), ANSWER_LAB);
      assert.deepEqual(await call(gw, 'strict', 5), TLS_REFUSED);
      assert.deepEqual(seen, [
        { path: '/lab', authorization: null },
        { path: '/lab', authorization: null },
      ]);
    });
  });

  test('the strict agent first, before the insecure one is ever used, then after it: upstream_unreachable', OPTIONS, async () => {
    await withGateway(yaml(true), async (gw) => {
      assert.deepEqual(await call(gw, 'strict', 1), TLS_REFUSED);
      assert.equal(await call(gw, 'lab', 2), ANSWER_LAB);
      assert.deepEqual(await call(gw, 'strict', 3), TLS_REFUSED);
      assert.deepEqual(seen, [{ path: '/lab', authorization: null }]);
    });
  });

  test("a reload that turns the insecure agent's flag off: its new calls fail upstream_unreachable, its call in flight finishes", OPTIONS, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-tls-pool-'));
    try {
      const file = join(dir, 'gateway.yaml');
      await writeFile(file, yaml(true));
      await withGateway(yaml(true), async (gw) => {
        // One insecure connection busy (the held call), one idle in the pool (call 2's).
        const inFlight = call(gw, 'lab', 1, 'held');
        // Awaited below; a failure before then (the gateway closed on a failed assertion) is not an unhandled rejection.
        inFlight.catch(() => {});
        for (let i = 0; i < 500 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(held.length, 1, 'the held call reached the seller');
        assert.equal(await call(gw, 'lab', 2), ANSWER_LAB);

        await writeFile(file, yaml(false));
        const reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: pino({ level: 'silent' }), watch: false });
        const result = await reloader.reload('manual');
        reloader.close();
        assert.equal(result.ok, true);
        assert.equal(gw.app.gateway.config.agents.get('lab')?.tls_insecure_skip_verify, false);

        assert.deepEqual(await call(gw, 'lab', 3), TLS_REFUSED);
        assert.deepEqual(await call(gw, 'strict', 4), TLS_REFUSED);
        // The call in flight at the reload was made under the old settings: it may finish.
        held.splice(0).forEach((answer) => answer());
        assert.equal(await inFlight, ANSWER_LAB);
        assert.deepEqual(await call(gw, 'lab', 5), TLS_REFUSED);
        assert.deepEqual(seen, [
          { path: '/lab', authorization: null },
          { path: '/lab', authorization: null },
        ]);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
