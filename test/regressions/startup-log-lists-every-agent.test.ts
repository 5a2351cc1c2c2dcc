/**
 * Regression (a hostile new operator's trial 45, Info): the `gateway started` and `config
 * reloaded` log lines listed every agent's name: ~97 KB with 12,000 agents, which Docker's
 * json-file driver splits into 16 KB pieces (so a log shipper no longer sees one JSON line).
 *
 * Now (src/observability/listed-names.ts) `agents`, `added` and `removed` list the first 50
 * names (file order), and `agents_more`, `added_more`, `removed_more` say how many more there
 * are, when there are.
 *
 * Input: the real gateway process with 3,000 agents; the file then rewritten (SIGHUP) with 10
 * agents more, then with 60 others.
 * Expected: the lines below, each under 16 KB.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess, type LogEntry } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { replaceFile } from '../helpers/config-reload.js';

const names = (prefix: string, from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `${prefix}${String(from + i).padStart(5, '0')}`);
const yaml = (agents: string[]): string => `listen: { host: 127.0.0.1, port: 0 }\nagents:\n${agents.map((a) => `  ${a}: { url: "http://127.0.0.1:9/mcp" }\n`).join('')}`;

/** The first `config reloaded` line after the first `from` lines (15 s at most). */
function reloaded(gw: GatewayProcess, from: number): Promise<LogEntry> {
  return withTimeout(
    (async () => {
      for (;;) {
        const found = gw.logs.slice(from).find((e) => e.msg === 'config reloaded' || e.msg?.startsWith('config reload failed') === true);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
    15_000,
    'config reloaded',
  );
}

const fields = (e: LogEntry, keys: string[]): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, e[k]]));

test('gateway started and config reloaded list 50 agent names and count the rest (was: every name, ~97 KB)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gw-many-agents-'));
  const file = join(dir, 'gateway.yaml');
  const first = names('agent-', 0, 3000);
  await writeFile(file, yaml(first));
  let gw: GatewayProcess | undefined;
  try {
    gw = await startGatewayProcess(file);
    const started = await gw.waitForLog('gateway started');
    assert.deepEqual(fields(started, ['agents', 'agents_more']), { agents: first.slice(0, 50), agents_more: 2950 });
    assert.ok(JSON.stringify(started).length < 16_384);

    let from = gw.logs.length;
    const more = [...first, ...names('agent-', 3000, 3010)];
    await replaceFile(file, yaml(more));
    gw.child.kill('SIGHUP');
    const grown = await reloaded(gw, from);
    assert.deepEqual(fields(grown, ['msg', 'agents', 'agents_more', 'added', 'added_more', 'removed', 'removed_more']), {
      msg: 'config reloaded',
      agents: first.slice(0, 50),
      agents_more: 2960,
      added: names('agent-', 3000, 3010),
      added_more: undefined,
      removed: [],
      removed_more: undefined,
    });

    from = gw.logs.length;
    const others = names('other-', 0, 60);
    await replaceFile(file, yaml(others));
    gw.child.kill('SIGHUP');
    const swapped = await reloaded(gw, from);
    assert.deepEqual(fields(swapped, ['agents', 'agents_more', 'added', 'added_more', 'removed', 'removed_more']), {
      agents: others.slice(0, 50),
      agents_more: 10,
      added: others.slice(0, 50),
      added_more: 10,
      removed: first.slice(0, 50),
      removed_more: 2960,
    });
    assert.ok(JSON.stringify(swapped).length < 16_384);
  } finally {
    gw?.kill();
    await rm(dir, { recursive: true, force: true });
  }
});
