/**
 * Config reload (src/reload.ts): a valid new file applies to new requests while in-flight
 * exchanges keep their limits; an invalid file is logged with its YAML paths and the old
 * config stays; editors that replace the file by rename are seen; restart-only keys are
 * named in a warning. Then the real process: SIGHUP reloads, a broken file does not.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfigFile } from '../../src/config/load.js';
import { createReloader, type Reloader } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponseOfSize, type RawSeller } from '../support/raw-seller.js';

const LIMIT_A = 8192;
const LIMIT_B = 4096;
const BODY_BYTES = 6000; // under A, over B

let seller: RawSeller;
/** Responses the seller holds until the test releases them, by JSON-RPC id. */
const held = new Map<unknown, () => void>();
const arrivals = new Map<unknown, () => void>();
const arrived = (id: unknown) => new Promise<void>((resolve) => arrivals.set(id, resolve));

before(async () => {
  seller = await startRawSeller((req, res: ServerResponse) => {
    const { id, params } = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
    const send = () => {
      const body = toolResponseOfSize(id, BODY_BYTES);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
    arrivals.get(id)?.();
    if (params.name === 'slow') held.set(id, send);
    else send();
  });
});
after(() => seller.close());

const yaml = (limit: number, extra = '') => `log_level: silent\n${extra}agents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${limit}\n`;

interface Setup {
  dir: string;
  file: string;
  gw: RunningGateway;
  reloader: Reloader;
  log: ReturnType<typeof captureLog>;
}

async function setup(text: string, watch = true): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-reload-'));
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, text);
  const gw = await startGateway(await loadConfigFile(file, { env: {} }));
  const log = captureLog();
  const reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: log.logger, debounceMs: 20, watch });
  return { dir, file, gw, reloader, log };
}

let swaps = 0;
/** Replaces `file` in one step (write a new file, rename it over), so no check can see it half written. */
async function replaceFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${++swaps}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

async function teardown(s: Setup): Promise<void> {
  s.reloader.close();
  await s.gw.close();
  await rm(s.dir, { recursive: true, force: true });
}

type ToolError = { result?: { isError?: boolean; structuredContent?: { adcp_error?: { code: string; details: { limit_bytes: number; reason: string } } } } };

describe('config reload', () => {
  it('a file change applies to new requests; the exchange in flight finishes under its own limit', async () => {
    const s = await setup(yaml(LIMIT_A));
    try {
      const inFlightArrived = arrived(1);
      const inFlight = rawPost(s.gw.agentUrl('s'), toolCall(1, 'slow'));
      await inFlightArrived;

      await writeFile(s.file, yaml(LIMIT_B));
      const reloaded = await s.log.waitFor('config reloaded');
      assert.equal(reloaded.trigger, 'file');
      assert.deepEqual(reloaded.agents, ['s']);
      assert.equal(s.gw.app.gateway.config.agents.get('s')?.limits.max_response_bytes, LIMIT_B);

      // Started under A: 6000 bytes pass although the config now says 4096.
      held.get(1)!();
      const first = await inFlight;
      assert.equal(first.status, 200);
      assert.equal(first.bytes, BODY_BYTES);

      // Started under B: the same answer is too large.
      const second = await rawPost(s.gw.agentUrl('s'), toolCall(2, 'fast'));
      const err = (second.json() as ToolError).result?.structuredContent?.adcp_error;
      assert.equal(err?.code, 'RESPONSE_TOO_LARGE');
      assert.equal(err?.details.limit_bytes, LIMIT_B);
      assert.equal(err?.details.reason, 'content_length');
    } finally {
      await teardown(s);
    }
  });

  it('an invalid file is logged with its YAML paths at error level; the running config stays', async () => {
    const s = await setup(yaml(LIMIT_A));
    try {
      const running = s.gw.app.gateway.config;
      await replaceFile(s.file, `log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_respons_bytes: 1\n    max_json_depth: 0\n`);
      const failed = await s.log.waitFor('config reload failed');
      assert.equal(failed.level, 50);
      assert.equal(failed.trigger, 'file');
      assert.deepEqual(failed.problems, [
        { path: 'agents.s.max_respons_bytes', line: 5, column: 5, message: 'unknown key `max_respons_bytes` (did you mean `max_response_bytes`?)' },
        { path: 'agents.s.max_json_depth', line: 6, column: 21, message: 'expected an integer >= 1 and <= 10000, got 0' },
      ]);
      assert.equal(s.gw.app.gateway.config, running);
      const ok = await rawPost(s.gw.agentUrl('s'), toolCall(3, 'fast'));
      assert.equal(ok.status, 200);
      assert.equal(ok.bytes, BODY_BYTES);

      // Fixed again: applies.
      await writeFile(s.file, yaml(LIMIT_B));
      await s.log.waitFor('config reloaded');
      assert.equal(s.gw.app.gateway.config.agents.get('s')?.limits.max_response_bytes, LIMIT_B);
    } finally {
      await teardown(s);
    }
  });

  it('an editor that writes a new file and renames it over the old one is seen', async () => {
    const s = await setup(yaml(LIMIT_A));
    try {
      for (const [n, limit] of [[1, LIMIT_B], [2, 5000]] as const) {
        const tmp = join(s.dir, `.gateway.yaml.swp${n}`);
        await writeFile(tmp, yaml(limit));
        await rename(tmp, s.file);
        // Waits for the value, not for the nth 'config reloaded' line: a file event left over
        // from writing the first file can add a reload of the same bytes (flaky under load).
        const applied = (): boolean => s.gw.app.gateway.config.agents.get('s')?.limits.max_response_bytes === limit;
        for (let i = 0; i < 1_000 && !applied(); i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(s.gw.app.gateway.config.agents.get('s')?.limits.max_response_bytes, limit);
      }
    } finally {
      await teardown(s);
    }
  });

  it('restart-only keys are named in a warning; the rest applies', async () => {
    const s = await setup(yaml(LIMIT_A, 'listen: { host: 127.0.0.1, port: 8787 }\n'), false);
    try {
      const result = await s.reloader.reload('manual');
      assert.equal(result.ok, true);
      assert.equal(s.log.entries.some((e) => e.level === 40), false, 'an unchanged file warns about nothing');

      await writeFile(s.file, yaml(LIMIT_B, 'listen: { host: 127.0.0.1, port: 9999 }\nresume:\n  ttl_ms: 1000\n'));
      const next = await s.reloader.reload('manual');
      assert.equal(next.ok, true);
      assert.deepEqual(next.ok && next.restartNeeded, ['listen', 'resume']);
      const warnings = s.log.entries.filter((e) => e.level === 40).map((e) => e.key);
      assert.deepEqual(warnings, ['listen', 'resume']);
      assert.equal(s.gw.app.gateway.config.agents.get('s')?.limits.max_response_bytes, LIMIT_B);
    } finally {
      await teardown(s);
    }
  });

  it('reload() reports an unreadable file and keeps the config', async () => {
    const s = await setup(yaml(LIMIT_A), false);
    try {
      const running = s.gw.app.gateway.config;
      await rm(s.file);
      const result = await s.reloader.reload('sighup');
      assert.equal(result.ok, false);
      assert.match(!result.ok ? (result.problems[0]?.message ?? '') : '', /cannot read .*gateway\.yaml: file not found/);
      assert.equal(s.gw.app.gateway.config, running);
    } finally {
      await teardown(s);
    }
  });
});

describe('reload in the real process', () => {
  it('SIGHUP reloads (and does not stop the process; the unchanged file is logged as such); a broken file on disk is refused; SIGTERM still exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-reload-proc-'));
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT_A}\n`);
    let gw: GatewayProcess | undefined;
    try {
      gw = await startGatewayProcess(file);
      const url = `${gw.address}/agents/s/mcp`;

      // The file is the one the gateway started with: nothing to apply, and the log says so.
      const unchanged = gw.waitForLog('config unchanged');
      gw.child.kill('SIGHUP');
      assert.equal((await unchanged).trigger, 'sighup');
      assert.equal(gw.logs.some((e) => e.msg === 'config reloaded'), false);
      // Counted as such, not as `ok` (a hostile trial 21, L1).
      const metrics = await (await fetch(`${gw.address}/metrics`)).text();
      assert.deepEqual(metrics.match(/^adcp_gateway_config_reloads_total\{.*$/gm), [
        'adcp_gateway_config_reloads_total{result="ok"} 0',
        'adcp_gateway_config_reloads_total{result="error"} 0',
        'adcp_gateway_config_reloads_total{result="unchanged"} 1',
      ]);

      const failed = gw.waitForLog('config reload failed');
      await replaceFile(file, 'agents:\n  s:\n    url: ftp://nope\n');
      const problem = await failed;
      assert.deepEqual(
        (problem.problems as Array<{ path: string }>).map((p) => p.path),
        ['agents.s.url'],
      );
      // Still serving on the old config.
      const ok = await rawPost(url, toolCall(4, 'fast'));
      assert.equal(ok.status, 200);
      assert.equal(ok.bytes, BODY_BYTES);

      gw.child.kill('SIGTERM');
      assert.equal(await withTimeout(gw.exited, 30_000, 'exit'), 0);
    } finally {
      gw?.kill();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
