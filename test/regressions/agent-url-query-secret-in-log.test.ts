/**
 * Regression (a new user's trial): a secret in an agent URL's query string
 * (`url: https://seller.example/mcp?api_key=...`) was scrubbed from log lines only where the
 * whole query string appeared exactly as configured (`configSecrets` held `api_key=...&x=1`
 * as one value). The same URL with its parameters in another order, or as the gateway sends
 * it after a reload changed another parameter, or one `name=value` pair of it, went out as
 * is; and a value under 8 characters was never scrubbed on its own.
 *
 * The gateway's own lines carry no agent URL with its query (the TLS warning has the origin
 * only); these checks are for any line that does (an error message with the URL, a future
 * log call), as test/unit/log-redaction.test.ts does for headers.
 *
 * Input: a real gateway app (src/app.ts) with the gateway's logger (`createLogger`, level
 * trace) and a config file whose agent URL is `<seller>/mcp?token=s3cr3t&x=1&k=<long value>`;
 * a request with a query of the host's; a reload that changes `x`; lines carrying that URL
 * the ways a log line could: as configured, as sent (the host's parameters merged), with its
 * parameters in another order, the URL of before the reload, a `name=value` pair alone, and
 * a long value alone (raw and decoded).
 * Expected: `s3cr3t` (and the long value) in no line; each URL logged with `?[redacted]` as
 * its query, as `--check-config` shows it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createLogger, REDACTED } from '../../src/observability/logger.js';
import { createReloader, type Reloader } from '../../src/reload.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { lineSink } from '../helpers/capture-log.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const SECRET = 's3cr3t';
/** A value long enough to be scrubbed wherever it appears, percent-encoded in the URL. */
const LONG_DECODED = 'long/secret value 42';
const LONG_RAW = 'long%2Fsecret%20value%2042';

let seller: RawSeller;
let dir: string;
let file: string;
let app: FastifyInstance;
let logger: Logger;
let reloader: Reloader;
const { lines, sink } = lineSink();
const yaml = (x: number) => `log_level: trace\nagents:\n  s:\n    url: ${seller.url}?token=${SECRET}&x=${x}&k=${LONG_RAW}\n`;

before(async () => {
  seller = await startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(1, { content: [{ type: 'text', text: 'ok' }] })));
  dir = await mkdtemp(join(tmpdir(), 'gw-url-query-log-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, yaml(1));
  logger = createLogger('trace', { destination: sink });
  app = await buildApp(await loadConfigFile(file, { env: {} }), { logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  reloader = createReloader({ path: file, env: {}, control: app.gateway, log: logger, watch: false });
});
after(async () => {
  reloader.close();
  await withTimeout(app.close(), 5_000, 'close');
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

describe('an agent URL query secret never reaches the log', () => {
  test('a request, a reload, and the URL logged every way: no secret, each URL with ?[redacted]', OPTIONS, async () => {
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const before = app.gateway.config.agents.get('s')!.url.href;

    const res = await rawPost(`${base}/agents/s/mcp?trace=1`, toolCall(1, 'list_products'));
    assert.equal(res.status, 200);
    assert.equal(seller.requests.at(-1)?.url, `/mcp?token=${SECRET}&x=1&k=${LONG_RAW}&trace=1`, 'the seller got the secret');

    await writeFile(file, yaml(2));
    const reloaded = await reloader.reload('sighup');
    assert.equal(reloaded.ok, true);

    const url = app.gateway.config.agents.get('s')!.url;
    const path = `${url.origin}${url.pathname}`;
    logger.info({ url: url.href }, 'the agent URL');
    logger.warn({ err: new Error(`request to ${path}?token=${SECRET}&x=2&k=${LONG_RAW}&trace=1 failed`) }, 'the URL as sent');
    logger.info({ target: `${path}?x=2&token=${SECRET}` }, 'parameters in another order');
    logger.info({ target: before }, 'the URL of before the reload');
    logger.info({ note: `query part token=${SECRET} seen` }, 'one pair alone');
    logger.info({ raw: LONG_RAW, decoded: LONG_DECODED }, 'a long value alone');
    await new Promise<void>((resolve) => logger.flush(() => resolve()));

    const text = lines.join('');
    for (const secret of [SECRET, LONG_RAW, LONG_DECODED]) {
      const found = text.split('\n').filter((l) => l.includes(secret));
      assert.deepEqual(found, [], `${secret} is in the log`);
    }
    const logged = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const by = (msg: string) => logged.find((l) => l.msg === msg)!;
    assert.ok(logged.some((l) => l.msg === 'exchange' && l.agent === 's'));
    assert.ok(logged.some((l) => l.msg === 'config reloaded'));
    assert.equal(by('the agent URL').url, `${path}?${REDACTED}`);
    assert.equal((by('the URL as sent').err as { message: string }).message, `request to ${path}?${REDACTED} failed`);
    assert.equal(by('parameters in another order').target, `${path}?${REDACTED}`);
    assert.equal(by('the URL of before the reload').target, `${path}?${REDACTED}`);
    assert.equal(by('one pair alone').note, `query part ${REDACTED} seen`);
    assert.deepEqual([by('a long value alone').raw, by('a long value alone').decoded], [REDACTED, REDACTED]);
  });
});
