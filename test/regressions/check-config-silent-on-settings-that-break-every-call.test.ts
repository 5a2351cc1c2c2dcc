/**
 * Regression (a hostile new operator's trial 45, L7, Low): `--check-config` passed with no note
 * settings that break every call or do nothing, while it notes `max_json_depth` and
 * `max_json_nodes` below the smallest message (config/table.ts structureNotes):
 * - `max_response_bytes: 30` and `max_request_bytes: 20`: every ping was refused (413);
 * - `resume.ttl_ms: 10`, though the docs say keep it at 1000 or more (a seller's `retry:`
 *   goes out as the 500 ms floor, more than half a token's life);
 * - `shutdown_grace_ms: 10`: every exchange in flight at a SIGTERM is cut;
 * - `tls_insecure_skip_verify: true` on an `http:` url warned "verification is OFF", never
 *   that it has no effect;
 * - a bearer token in `headers` over plain `http:` to a host that is not loopback: nothing.
 *
 * Input: configs with those settings, checked with the CLI's `--check-config` (in process: helpers/check-config.ts); then agents at the byte
 * bounds, served by the real gateway in front of a raw seller on 127.0.0.1.
 * Expected: exit 0 and exactly the notes and warnings below (derived: the smallest answer,
 * `{"jsonrpc":"2.0","id":1,"result":{}}`, is 36 bytes; the smallest tool result 48; the
 * smallest request, a ping, 40; the smallest initialize 146), none for agents at or above
 * them. The gateway agrees: a ping is refused at 39 request bytes and served at 40; its
 * answer is refused at 35 response bytes and served at 36.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":{}}';
const TOOL_RESULT = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}';
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const INITIALIZE = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}';

/** The warning and note lines `--check-config` prints for `text`, after asserting exit 0 and an empty stderr. */
async function notesOf(text: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'check-config-breaks-'));
  try {
    const file = join(dir, 'g.yaml');
    await writeFile(file, text);
    const { code, stdout, stderr } = await checkConfigRun(file);
    assert.deepEqual({ code, stderr }, { code: 0, stderr: '' });
    return stdout.split('\n').filter((line) => line.startsWith('note: ') || line.startsWith('WARNING: '));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const bytesConfig = (url: string): string =>
  [
    'log_level: silent',
    'agents:',
    `  small: { url: "${url}", max_response_bytes: 35, max_request_bytes: 39 }`,
    `  raised: { url: "${url}", max_response_bytes: 35, max_call_response_bytes: 5000 }`,
    `  mid: { url: "${url}", max_response_bytes: 36, max_request_bytes: 145, max_sse_event_bytes: 35 }`,
    `  fits: { url: "${url}", max_response_bytes: 48, max_request_bytes: 146 }`,
    `  req40: { url: "${url}", max_request_bytes: 40 }`,
    '',
  ].join('\n');

describe('--check-config notes settings that break every call or do nothing', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('byte limits below the smallest message (was: no note)', async () => {
    assert.deepEqual(await notesOf(bytesConfig('http://127.0.0.1:9/mcp')), [
      `note: small: max_response_bytes 35 refuses every answer: the smallest, ${ANSWER}, is 36 bytes`,
      `note: small: max_request_bytes 39 refuses every request: the smallest, ${PING}, is 40 bytes`,
      `note: raised: max_response_bytes 35 refuses every answer (unless a call raises its limit with X-Max-Response-Bytes, up to max_call_response_bytes 5000): the smallest, ${ANSWER}, is 36 bytes`,
      `note: mid: max_response_bytes 36 refuses every result of a tool without limits of its own: the smallest, ${TOOL_RESULT}, is 48 bytes`,
      `note: mid: max_sse_event_bytes 35 refuses every answer sent as an SSE event: the smallest, ${ANSWER}, is 36 bytes of data`,
      `note: mid: max_request_bytes 145 refuses every initialize request: the smallest, ${INITIALIZE}, is 146 bytes`,
      `note: req40: max_request_bytes 40 refuses every initialize request: the smallest, ${INITIALIZE}, is 146 bytes`,
    ]);
  });

  it("the trial's tiny.yaml: resume.ttl_ms 10, shutdown_grace_ms 10 (was: no note)", async () => {
    const notes = await notesOf('shutdown_grace_ms: 10\nresume: {ttl_ms: 10}\nagents:\n  a:\n    url: http://127.0.0.1:3001/mcp\n');
    assert.deepEqual(notes, [
      "note: resume.ttl_ms 10 is below 1000: a seller's retry: goes out as 500 ms (the floor), more than half a resume token's life, so a host that waits as told may resume with an expired token",
      'note: shutdown_grace_ms 10 is below 1000: on SIGTERM, SIGINT or SIGQUIT, the JSON exchanges in flight get 10 ms to finish before the process exits 1 and cuts them',
    ]);
    // At the bounds: nothing.
    assert.deepEqual(await notesOf('shutdown_grace_ms: 1000\nresume: {ttl_ms: 1000}\nagents:\n  a:\n    url: http://127.0.0.1:3001/mcp\n'), []);
  });

  it("the trial's s1.yaml: a bearer token over plain http:, tls_insecure_skip_verify on http: (was: no warning; 'verification is OFF')", async () => {
    const notes = await notesOf(
      [
        'agents:',
        '  a:',
        '    url: http://sales.example.com/mcp',
        '    headers: {authorization: "Bearer abcdefghijkl", X-Api-Key: "k"}',
        '  b:',
        '    url: https://sales.example.com/mcp',
        '    tls_insecure_skip_verify: true',
        '  c:',
        '    url: http://sales.example.com/mcp',
        '    tls_insecure_skip_verify: true',
        '  d:',
        '    url: http://sales.example.com/mcp?api_key=abcdefghijkl',
        '  local:',
        '    url: http://localhost:3001/mcp?api_key=abcdefghijkl',
        '    headers: {authorization: "Bearer abcdefghijkl"}',
        '',
      ].join('\n'),
    );
    assert.deepEqual(notes, [
      'WARNING: agent a: its headers (authorization, x-api-key) go in clear text: its url is http: to a host that is not loopback, so anyone on the way can read them (use https:)',
      'WARNING: agent b: TLS certificate verification is OFF (tls_insecure_skip_verify)',
      'WARNING: agent d: its url query goes in clear text: its url is http: to a host that is not loopback, so anyone on the way can read it (use https:)',
      'note: agent c: tls_insecure_skip_verify has no effect: its url is http:, which has no TLS',
    ]);
  });

  it('the gateway agrees: a ping is refused at 39 request bytes, served at 40; its answer refused at 35 response bytes, served at 36', async () => {
    const seller = await startRawSeller((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
    });
    const gateway = await startGateway(bytesConfig(seller.url).replace('mid: {', 'resp36: {'));
    try {
      /** Status and what came back: the seller's answer, else the error's reason (or its AdCP code, for a refused answer). */
      const ping = async (agent: string): Promise<[number, string]> => {
        const r = await withTimeout(fetch(gateway.agentUrl(agent), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: PING }));
        const text = await withTimeout(r.text());
        if (text === ANSWER) return [r.status, text];
        const data = (JSON.parse(text) as { error?: { data?: { reason?: string; adcp_error?: { code?: string } } } }).error?.data;
        return [r.status, data?.reason ?? data?.adcp_error?.code ?? text];
      };
      assert.deepEqual(await ping('small'), [413, 'request_too_large']);
      assert.deepEqual(await ping('req40'), [200, ANSWER]);
      assert.deepEqual(await ping('raised'), [200, 'RESPONSE_TOO_LARGE']);
      assert.deepEqual(await ping('resp36'), [200, ANSWER]);
    } finally {
      await gateway.close();
      await seller.close();
    }
  });
});
