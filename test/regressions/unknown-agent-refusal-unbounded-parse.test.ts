/**
 * Regression (a review of the request side, M1): the refusals made before a request is
 * otherwise judged (`unknown_agent`, `draining`, `pipeline_too_deep`) read the body's id with
 * no depth or node bound (request/peek.ts `requestIdOf`), and when the scan found the body
 * invalid, or could not tell, the peek fell back to `JSON.parse` of the whole body. 4 MiB of
 * `[` POSTed to `/agents/nope/mcp` were answered 404 after 2,010 ms, and a ping to a good
 * agent meanwhile took 1,842 ms (10 ms otherwise); a known agent refused the same body in
 * 107 ms (its peek is bounded). Now the id is read under the built-in `max_json_depth` /
 * `max_json_nodes` (64, 100,000): a body over them is read by the scan only (no JavaScript
 * value, no `JSON.parse`), as a known agent's over-bound refusal reads it.
 *
 * Input: a gateway with one agent `h`; `JSON.parse` wrapped for the test, counting calls on
 * a text of 1 MiB or more.
 * - `refusalIdOf('POST', body)` (the three refusals' id) of: 4 MiB - 16 of `[`; a `tools/call`
 *   whose `params` has more members than the scan records and whose `arguments` nest 100,000
 *   arrays; a request with id 7 whose `params` nest 600,000 arrays;
 * - the first body POSTed to `/agents/nope/mcp`.
 * Expected: id null for the first (no JSON text: no id can be read), id 7 for the other two
 * (read by the scan; the `params` of more members than the scan's table records walked for the
 * members the peek reads, request/message-members.ts, since a hostile trial 54: before, id null),
 * as a known agent's over-bound refusal gives them; no `JSON.parse` of the body; the 404's
 * exact bytes. No timing asserted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { refusalIdOf } from '../../src/request/peek.js';
import { SCAN_TEXT_MEMBERS } from '../../src/mcp/json-scan.js';
import { countBigParses } from '../helpers/big-parses.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const BIG = 1024 * 1024;
const OPEN_BRACKETS = Buffer.from('['.repeat(4 * BIG - 16));
const members = Array.from({ length: SCAN_TEXT_MEMBERS + 1 }, (_, i) => `"m${i}":0`).join(',');
const MANY_MEMBERS_DEEP = Buffer.from(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{${members},"name":"t","arguments":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`);
const DEEP_ID_7 = Buffer.from(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":${'['.repeat(600_000)}${']'.repeat(600_000)}}}`);

/** The id and its exact text of a refusal of the POST `body` made before it is judged. */
function idOf(body: Buffer): { id: unknown; idText: unknown } {
  const ref = refusalIdOf('POST', body);
  return { id: ref?.id, idText: ref?.idText };
}

describe('the id of a refusal made before the request is judged', { timeout: TEST_TIMEOUT_MS }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(agentsYaml({ h: 'http://127.0.0.1:9/mcp' }, ['log_level: silent']));
  });
  after(async () => {
    await gw?.close();
  });
  /** Calls of `JSON.parse` on a text of 1 MiB or more. */
  const bigParses = countBigParses(BIG);

  test('is read without JSON.parse for a body over the built-in bounds', () => {
    bigParses.reset();
    assert.deepEqual(idOf(OPEN_BRACKETS), { id: null, idText: undefined });
    assert.deepEqual(idOf(MANY_MEMBERS_DEEP), { id: 7, idText: undefined });
    assert.deepEqual(idOf(DEEP_ID_7), { id: 7, idText: undefined });
    assert.equal(bigParses.count, 0, 'no JSON.parse of the body');
  });

  test('4 MiB of `[` to an unknown agent: the exact 404 for id null, without JSON.parse', async () => {
    bigParses.reset();
    const res = await withTimeout(fetch(gw.agentUrl('nope'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: OPEN_BRACKETS }));
    assert.equal(res.status, 404);
    assert.equal(
      await res.text(),
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Unknown agent \\"nope\\": no such agent in the gateway config.","data":{"reason":"unknown_agent","agent":"nope"}}}',
    );
    assert.equal(bigParses.count, 0, 'no JSON.parse of the body');
  });
});
