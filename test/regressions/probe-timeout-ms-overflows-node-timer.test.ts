/**
 * Regression: `probe --timeout-ms` took values a Node timer cannot hold.
 *
 * Failure (a hostile trial, F6): from 2^31 (2147483648) to 2^32 - 1 Node turned the timer into
 * 1 ms (`TimeoutOverflowWarning`), so a healthy seller was reported `no answer within
 * 2147483648 ms`, exit 1; from 2^32 up the command failed with an internal error (`The value of
 * "delay" is out of range`), exit 1, where a bad command line is documented as exit 2 (and `0`
 * or `1.5` already were).
 *
 * Now (src/cli.ts parseTimeout): the value is an integer from 1 to 86400000 ms (24 h, the
 * config's own bound on every `*_ms` key: config/defaults.ts BOUNDS.ms), else a usage error that
 * names the option, the value and the range, exit 2, nothing on stdout.
 *
 * Input: the real CLI (`node dist/main.js probe raw --config <file> --timeout-ms
 * <v>`) against a healthy raw seller on 127.0.0.1 (one tool, no get_adcp_capabilities).
 * Expected: 86400000 probes the seller, exit 0; 86400001, 2147483647, 2147483648 and
 * 4294967296 are refused with the exact stderr line below, exit 2.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';
import type { RawSeller } from '../support/raw-seller.js';
import { initializeResult, METHOD_NOT_FOUND, startProbeSeller } from '../helpers/probe-seller.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

let raw: RawSeller;
let dir: string;
let config: string;

before(async () => {
  raw = await startProbeSeller((method) =>
    method === 'initialize' ? initializeResult() : method === 'tools/list' ? { result: { tools: [{ name: 'list_products', inputSchema: { type: 'object' } }] } } : METHOD_NOT_FOUND,
  );
  dir = await mkdtemp(join(tmpdir(), 'probe-timeout-'));
  config = join(dir, 'gateway.yaml');
  await writeFile(config, ['agents:', '  raw:', `    url: ${raw.url}`, ''].join('\n'));
});

after(async () => {
  await raw.close();
  await rm(dir, { recursive: true, force: true });
});

const probe = (timeoutMs: string) => runCli(['probe', 'raw', '--config', config, '--timeout-ms', timeoutMs]);

const refusal = (value: string): string =>
  `error: option '--timeout-ms <ms>' argument '${value}' is invalid. expected an integer number of milliseconds >= 1 and <= 86400000 (24 h)\n`;

describe('probe --timeout-ms is bounded by the config `*_ms` bound (1 ms .. 24 h)', { concurrency: true }, () => {
  test('control: 86400000 (24 h, the largest) probes the healthy seller, exit 0', OPTIONS, async () => {
    const run = await probe('86400000');
    assert.deepEqual([run.code, run.stderr], [0, '']);
    assert.match(run.stdout, /\nresult: all within target\n$/);
  });

  for (const value of ['86400001', '2147483647', '2147483648', '4294967296']) {
    test(`${value}: a usage error naming the option and the range, exit 2 (was: accepted; from 2^31 a 1 ms timer or an internal error, exit 1)`, OPTIONS, async () => {
      assert.deepEqual(await probe(value), { code: 2, stdout: '', stderr: refusal(value) });
    });
  }
});
