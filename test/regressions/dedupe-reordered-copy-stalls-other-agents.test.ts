/**
 * Reported failure (a new user's hostile trial 12, M3): "deduping a text copy whose keys are
 * reordered takes about 6 times the CPU and slows other agents". A 3.84 MB answer whose text
 * held `structuredContent`'s 80,000 keys in reverse order went through the dedupe's parse
 * path: besides the two parses and the deep-equal walk, the repeated-key check walked the
 * parsed text and `structuredContent` again to count their values, and scanned the text once
 * more in JavaScript (~350 ms of CPU per call, another agent's calls waiting up to ~530 ms).
 * Now the deep-equal walk counts the values (src/mcp/deep-equal.ts jsonDeepEqualCount) and the
 * text's count comes from its bounds check (extract.ts readTextObject `counted`): ~217 ms per
 * call on the same answer (CPU profiles of the trial's repro; timings are not asserted here).
 *
 * What this test holds: the counts those checks now take from the walk are right, so a
 * reordered copy is still deduped (a count too small would keep it), a reordered text that
 * repeats a key deep inside is still kept (too large would drop its extra value), and so is a
 * reordered copy of a `structuredContent` whose own bytes repeat a name; and while the large
 * answers are rewritten another agent is answered.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const KEYS = 4_000;
/** Members `k0000` ... with nested objects and arrays, so the count walks every container kind. */
const members = Array.from({ length: KEYS }, (_, i) => {
  const key = `k${String(i).padStart(4, '0')}`;
  const value = i % 3 === 0 ? { n: i, tags: ['a', i, null, true, { x: [i] }] } : i % 3 === 1 ? [i, `s${i}`, [false]] : `v${i}`;
  return [key, value] as const;
});
const STRUCTURED = Object.fromEntries(members);
/** The members as written, in the given order. */
const written = (list: readonly (readonly [string, unknown])[]): string => `{${list.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
/** A deep-equal copy that is no byte copy: the members in reverse order (the parse path). */
const REORDERED_TEXT = written([...members].reverse());
/** REORDERED_TEXT whose member k0000 writes `n` twice (`JSON.parse` keeps the last, 0): it holds a value more. */
const REPEATED_DEEP_TEXT = REORDERED_TEXT.replace('"k0000":{"n":0,', '"k0000":{"n":"first","n":0,');
/** STRUCTURED as the seller writes it, with a repeated member at the end (parses to STRUCTURED). */
const STRUCTURED_REPEATING = `${written(members).slice(0, -1)},"k0001":${JSON.stringify(STRUCTURED.k0001)}}`;

/** The summary (summary.ts): the first 18 keys, arrays with their lengths, then how many more. */
const SUMMARY = (text: string): string =>
  `Result in structuredContent (${Buffer.byteLength(text)} bytes): k0000, k0001[3], k0002, k0003, k0004[3], k0005, k0006, k0007[3], k0008, k0009, k0010[3], k0011, k0012, k0013[3], k0014, k0015, k0016[3], k0017, +3982 more.`;

describe('dedupe of a reordered copy (the counts of the repeated-key checks)', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const call = JSON.parse(req.body.toString()) as { id: number; method: string; params: { name: string } };
        if (call.method === 'ping') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${call.id},"result":{}}`);
        const name = call.params.name;
        const text = name === 'repeated_deep' ? REPEATED_DEEP_TEXT : REORDERED_TEXT;
        const structured = name === 'structured_repeats' ? STRUCTURED_REPEATING : written(members);
        const body = `{"jsonrpc":"2.0","id":${call.id},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${structured}}}`;
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url, other: seller.url }, ['log_level: silent'])),
  );

  const call = async (tool: string): Promise<{ content: { text: string }[]; structuredContent: unknown }> => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-06-18' }));
    assert.equal(r.status, 200);
    const message = r.json() as { id: number; result: { content: { text: string }[]; structuredContent: unknown } };
    assert.equal(message.id, 7);
    return message.result;
  };

  test('a reordered copy is replaced by its summary', async () => {
    const got = await call('reordered');
    assert.equal(got.content[0]!.text, SUMMARY(REORDERED_TEXT));
    assert.deepEqual(got.structuredContent, STRUCTURED);
  });

  test('a reordered text repeating a key deep inside reaches the host as written', async () => {
    const got = await call('repeated_deep');
    assert.equal(got.content[0]!.text, REPEATED_DEEP_TEXT);
  });

  test('a reordered copy of a structuredContent whose bytes repeat a name reaches the host as written', async () => {
    const got = await call('structured_repeats');
    assert.equal(got.content[0]!.text, REORDERED_TEXT);
    assert.deepEqual(got.structuredContent, STRUCTURED);
  });

  test('another agent is answered while reordered copies are deduped', async () => {
    const hostile = Array.from({ length: 4 }, () => call('reordered'));
    const ping = await withTimeout(rawPost(stack.gateway.agentUrl('other'), '{"jsonrpc":"2.0","id":3,"method":"ping"}', { 'mcp-protocol-version': '2025-06-18' }));
    assert.equal(ping.status, 200);
    assert.equal(ping.text(), '{"jsonrpc":"2.0","id":3,"result":{}}');
    for (const got of await Promise.all(hostile)) assert.equal(got.content[0]!.text, SUMMARY(REORDERED_TEXT));
  });
});
