/**
 * Regression (a new user's trial 50, finding 3): a seller answering 308 with `Location:
 * https://new.example/mcp` gave the host `upstream_not_mcp` (upstream_status 308, as
 * documented: redirects are never followed), but the new URL appeared nowhere: the operator
 * could not see where the seller had moved.
 *
 * Input: a real gateway logging into a capture; a raw seller answering 308 with a Location
 * (plain; with a query holding a key; with userinfo and a fragment; 300 characters long; with
 * bytes a terminal acts on), and 200 for comparison.
 * Expected: the host's answer exactly as before (the documented `upstream_not_mcp` message
 * with upstream_status 308); the exchange line's `upstream_location` is the Location, its
 * query as `?[redacted]` (as the logs show an agent URL's query), its userinfo and fragment
 * `[redacted]` too, its first 256 characters, any character outside printable ASCII
 * percent-encoded; no such field on a 200.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { captureLog } from '../helpers/capture-log.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const log = captureLog('trace');
let gateway: RunningGateway;
let seller: RawSeller;

const LONG = `https://new.example/${'a'.repeat(300)}`;
/** The Location the seller sends for each tool name (raw bytes, latin1). */
const LOCATIONS: Record<string, string> = {
  plain: 'https://new.example/mcp',
  query: 'https://new.example/mcp?api_key=sk-live-SECRET123&x=1',
  userinfo: 'https://user:hunter2@new.example/mcp#frag-secret',
  relative: '/v2/mcp?token=abc',
  long: LONG,
  controls: 'https://new.example/\x9b31m\xe2\x80\xaemcp',
};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const name = (JSON.parse(req.body.toString('utf8')) as { params: { name: string } }).params.name;
    const location = LOCATIONS[name];
    if (location === undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(0, { content: [{ type: 'text', text: 'ok' }] }));
      return;
    }
    res.socket?.end(`HTTP/1.1 308 Permanent Redirect\r\nLocation: ${location}\r\nContent-Length: 0\r\n\r\n`, 'latin1');
  });
  gateway = await startGateway(agentsYaml({ s: seller.url }, ['log_level: trace']), { logger: log.logger });
});
after(async () => {
  await gateway?.close();
  await seller?.close();
});

describe('a 3xx answer: the exchange line shows its Location', () => {
  for (const [tool, id, shown] of [
    ['plain', 1, 'https://new.example/mcp'],
    ['query', 2, 'https://new.example/mcp?[redacted]'],
    ['userinfo', 3, 'https://[redacted]@new.example/mcp#[redacted]'],
    ['relative', 4, '/v2/mcp?[redacted]'],
    ['long', 5, LONG.slice(0, 256)],
    ['controls', 6, 'https://new.example/%9B31m%E2%80%AEmcp'],
  ] as const) {
    test(`${tool}: upstream_not_mcp to the host as before, upstream_location ${shown.slice(0, 40)}`, OPTIONS, async () => {
      const res = await rawPost(gateway.agentUrl('s'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' });
      const line = await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === id, `exchange ${id}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('location'), null);
      const limitBytes = gateway.config.agents.get('s')!.limits.max_response_bytes;
      assert.equal(res.text(), expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', limitBytes, observedBytes: 0, upstreamStatus: 308 }));
      assert.equal(line.reason, 'upstream_not_mcp');
      assert.equal(line.upstream_status, 308);
      assert.equal(line.upstream_location, shown);
    });
  }

  test('a 200: no upstream_location', OPTIONS, async () => {
    await rawPost(gateway.agentUrl('s'), toolCall(7, 'ok'), { 'mcp-protocol-version': '2025-06-18' });
    const line = await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === 7, 'exchange 7');
    assert.equal('upstream_location' in line, false);
  });
});
