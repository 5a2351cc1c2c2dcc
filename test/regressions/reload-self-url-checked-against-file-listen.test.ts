/**
 * Regression (a hostile new operator's trial 45, L4, Low): a reload checked "the agent url
 * points at the gateway itself" against the `listen` the new file writes, not the one the
 * gateway runs on (a change of `listen` applies only after a restart). Running on 4100, a
 * reload with `listen: {port: 4199}` and an agent url `http://127.0.0.1:4100/agents/a/mcp`
 * logged `config reloaded` (and a warning that `listen` needs a restart), and every call of
 * that agent then looped through the gateway; the same file was a config error at start-up.
 * A gateway started with `listen.port: 0` was never checked at all (its port was unknown).
 *
 * Input: the real gateway process on 127.0.0.1, `listen.port: 0` (it gets port P); the file
 * then rewritten (1) with another `listen.port` and an agent url naming P, (2) keeping port 0
 * and an agent url naming P; (3) control: an agent url elsewhere.
 * Expected: (1) and (2) `config reload failed: keeping the running config`, one problem at
 * the agent's url naming the running listen address; (3) `config reloaded`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess, type LogEntry } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const FAILED = 'config reload failed: keeping the running config';
const running = (port: number): string =>
  "is the gateway's own listen address, so each call would come back to the gateway and be forwarded to it again, in a loop, until connections run out: " +
  `its port is the running listen.port (${port}; a change of listen applies only after a restart) and its host is the running listen.host; ` +
  "set the seller's MCP endpoint here, not the gateway's";

let dir: string;
let file: string;
let gw: GatewayProcess;
let port: number;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-reload-self-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, 'listen: { host: 127.0.0.1, port: 0 }\nagents:\n  a: { url: "http://127.0.0.1:9/mcp" }\n');
  gw = await startGatewayProcess(file);
  port = Number(new URL(gw.address).port);
});

after(async () => {
  gw?.kill();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Writes `text` and sends SIGHUP; resolves with the first reload outcome (15 s at most) about
 * this text: one naming agent `agent` (a file change and the SIGHUP may each log one, so an
 * outcome of the text before could come after the write).
 */
async function reloadWith(text: string, agent: string): Promise<LogEntry> {
  const from = gw.logs.length;
  await writeFile(file, text);
  gw.child.kill('SIGHUP');
  const about = (e: LogEntry): boolean =>
    (e.msg === FAILED && JSON.stringify(e.problems).includes(`"agents.${agent}.`)) || (e.msg === 'config reloaded' && Array.isArray(e.agents) && e.agents.includes(agent));
  return withTimeout(
    (async () => {
      for (;;) {
        const found = gw.logs.slice(from).find(about);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
    15_000,
    `a reload's outcome about ${agent}; lines: ${JSON.stringify(gw.logs.map((e) => e.msg))}`,
  );
}

describe('a reload checks agent urls against the listen address the gateway runs on', OPTIONS, () => {
  it('the file moves listen.port; agent c names the running port: refused (was: config reloaded)', async () => {
    const other = port === 4199 ? 4198 : 4199;
    const line = await reloadWith(`listen: { host: 127.0.0.1, port: ${other} }\nagents:\n  a: { url: "http://127.0.0.1:9/mcp" }\n  c:\n    url: http://127.0.0.1:${port}/agents/a/mcp\n`, 'c');
    assert.equal(line.msg, FAILED);
    assert.deepEqual(line.problems, [{ path: 'agents.c.url', line: 5, column: 10, message: running(port) }]);
    assert.equal(gw.logs.some((e) => e.msg?.startsWith('config reload: `listen`') === true), false);
  });

  it('the file keeps listen.port 0; agent c names the port it got: refused (was: not checked)', async () => {
    const line = await reloadWith(`listen: { host: 127.0.0.1, port: 0 }\nagents:\n  a: { url: "http://127.0.0.1:9/mcp" }\n  zero:\n    url: http://localhost:${port}/agents/a/mcp\n`, 'zero');
    assert.equal(line.msg, FAILED);
    assert.deepEqual(line.problems, [
      {
        path: 'agents.zero.url',
        line: 5,
        column: 10,
        message: running(port).replace(
          'its host is the running listen.host',
          'its host takes the same address as the running listen.host (localhost is 127.0.0.1 and ::1; an IPv4-mapped IPv6 address ::ffff:a.b.c.d is a.b.c.d)',
        ),
      },
    ]);
  });

  it('control: agent c at another address reloads', async () => {
    const line = await reloadWith(`listen: { host: 127.0.0.1, port: 0 }\nagents:\n  a: { url: "http://127.0.0.1:9/mcp" }\n  elsewhere:\n    url: http://127.0.0.1:9/agents/a/mcp\n`, 'elsewhere');
    assert.equal(line.msg, 'config reloaded');
    assert.deepEqual(line.agents, ['a', 'elsewhere']);
  });
});
