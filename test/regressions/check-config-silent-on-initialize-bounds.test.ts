/**
 * Regression (a hostile new-user trial 23, L2, Low): `--check-config` notes a `max_json_depth`
 * or `max_json_nodes` that refuses every answer, tool result or `tools/call`
 * (config/table.ts structureNotes), but said nothing of one that refuses every `initialize`
 * the host sends: agent `e` with `max_json_nodes: 8` was "valid" with no note, and the
 * smallest initialize an MCP client can send, 10 JSON values, was refused 400
 * `invalid_request` "over max_json_nodes (8)", so no session could ever start. A host's
 * `initialize` is held to its agent's bounds (request/request-json-bounds.ts: every request
 * but a `tools/call` of a tool with bounds of its own).
 *
 * Input: a config with `defaults.max_json_nodes: 9` (agent `d` inherits it), agent `e` at 8 and
 * agent `ok` at 10, checked with the CLI's `--check-config` (in process: helpers/check-config.ts); then the same config served
 * by the real gateway in front of a raw seller on 127.0.0.1, and the smallest initialize
 * (MCP: `protocolVersion`, `capabilities`, `clientInfo` with `name` and `version`) POSTed to each.
 * Expected: exit 0, and one note per agent below 10 values, naming the smallest initialize and
 * its count (json-bounds.ts counting: 10 values, depth 3); none for `ok`, whose bound is just
 * large enough. The gateway agrees: `d` and `e` refuse that initialize for the bound, `ok`
 * forwards it and returns the seller's answer.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

const INITIALIZE = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}';
const ANSWER = '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}';

const config = (url: string): string =>
  ['log_level: silent', 'defaults:', '  max_json_nodes: 9', 'agents:', '  d:', `    url: ${url}`, '  e:', `    url: ${url}`, '    max_json_nodes: 8', '  ok:', `    url: ${url}`, '    max_json_nodes: 10', ''].join('\n');

const note = (agent: string, bound: number): string => `note: ${agent}: max_json_nodes ${bound} refuses every initialize request: the smallest, ${INITIALIZE}, has 10 values`;

test('--check-config notes a max_json_nodes below the smallest initialize, and only that', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'check-config-initialize-'));
  try {
    const file = join(dir, 'g.yaml');
    await writeFile(file, config('http://127.0.0.1:9/mcp'));
    const { code, stdout, stderr } = await checkConfigRun(file);
    assert.equal(stderr, '');
    assert.deepEqual(
      stdout.split('\n').filter((line) => line.startsWith('note: ')),
      [note('d', 9), note('e', 8)],
    );
    assert.equal(code, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the gateway agrees: that initialize is refused at 8 and 9 values, forwarded at 10', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const seller = await startRawSeller((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
  });
  const gateway = await startGateway(config(seller.url));
  try {
    const post = async (agent: string): Promise<{ status: number; text: string }> => {
      const r = await withTimeout(
        fetch(gateway.agentUrl(agent), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: INITIALIZE }),
      );
      return { status: r.status, text: await withTimeout(r.text()) };
    };
    const refused = (bound: number): string =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32600, message: `Invalid Request: the request body is over max_json_nodes (${bound}).`, data: { reason: 'invalid_request' } } });
    assert.deepEqual(await post('d'), { status: 400, text: refused(9) });
    assert.deepEqual(await post('e'), { status: 400, text: refused(8) });
    assert.equal(seller.requests.length, 0, 'the seller gets no refused initialize');
    assert.deepEqual(await post('ok'), { status: 200, text: ANSWER });
    assert.equal(seller.requests[0]?.body.toString('utf8'), INITIALIZE);
  } finally {
    await gateway.close();
    await seller.close();
  }
});
