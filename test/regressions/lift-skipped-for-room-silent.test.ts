/**
 * Regression (a reviewer): a lift skipped for room was silent. When lifting a legacy
 * text-only tool result (its JSON text into `structuredContent`) would take the answer over
 * its limit, the gateway sends the seller's answer unchanged (response/rewrite-room.ts,
 * test/regressions/lift-grows-past-limit.test.ts), which is right, but the exchange line said
 * `outcome: ok` with nothing about the skipped lift, and no metric counted it, while a result
 * left unlifted for a text bound says so (`text_not_lifted`,
 * test/regressions/text-over-bounds-not-lifted-silently.test.ts).
 *
 * Now (rewrite-room.ts recordLiftSkippedForRoom) the exchange line's `text_not_lifted` names
 * the limit the lifted answer would have gone over, and
 * `adcp_gateway_texts_not_lifted_total{agent,reason}` counts it: `max_response_bytes` (the JSON
 * body; on SSE, the stream's count with what the lift adds), `max_sse_event_bytes` (SSE: the
 * lifted event data, when the stream's bound had room).
 *
 * Input: a raw seller answering `tools/call` (host on 2025-06-18) with a legacy result (no
 * `structuredContent`, one text item holding a JSON object), as one JSON body and as a
 * one-event SSE stream, sized exactly at the agent's limit: agent `b` has `max_response_bytes:
 * 2000` (the JSON body, and the whole SSE stream, are 2000 bytes); agent `e` has
 * `max_sse_event_bytes: 2000` and the default response limit (the event's data is 2000 bytes).
 * Expectation: the host gets the seller's bytes unchanged, outcome `ok`, `reason` null, and
 * `text_not_lifted` the limit; the metric counts each by reason. Controls, no field and no
 * count: the same result with room (agent `big`: lifted, `rewritten`); a result with
 * `structuredContent` and a text copy of it at the same exact limit (deduped: a dedupe never
 * grows an answer, so it is made, `rewritten`); a host on 2025-03-26 (no normalization: `ok`).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { assertTextNotLifted } from '../helpers/text-not-lifted.js';

const LIMIT = 2000;
/** `event: message\ndata: ` and the blank line's `\n\n` around an SSE event's data. */
const FRAME_BYTES = Buffer.byteLength('event: message\ndata: \n\n');

type Reason = 'max_response_bytes' | 'max_sse_event_bytes';
type Shape = 'legacy' | 'legacy-parsed' | 'copy';

interface Case {
  readonly agent: 'b' | 'e' | 'big';
  readonly sse: boolean;
  readonly shape: Shape;
  /** The expected `text_not_lifted`; undefined: no such field. */
  readonly reason?: Reason;
  /** Rewritten (lifted or deduped: outcome `rewritten`); else the seller's bytes go out (outcome `ok`). */
  readonly rewritten?: boolean;
  /** The host's revision (default 2025-06-18). */
  readonly protocol?: string;
  /** The seller's JSON-RPC message's size in bytes; by default it fills the limit (see `sellerMessage`). */
  readonly bytes?: number;
}

const CASES: Record<string, Case> = {
  'JSON: a legacy result exactly at max_response_bytes': { agent: 'b', sse: false, shape: 'legacy', reason: 'max_response_bytes' },
  'SSE: a one-event stream exactly at max_response_bytes': { agent: 'b', sse: true, shape: 'legacy', reason: 'max_response_bytes' },
  'SSE: event data exactly at max_sse_event_bytes (the stream has room)': { agent: 'e', sse: true, shape: 'legacy', reason: 'max_sse_event_bytes' },
  // A later text holding another object: lifted on the parse path, not from the scan.
  'JSON, parse path: a legacy result exactly at max_response_bytes': { agent: 'b', sse: false, shape: 'legacy-parsed', reason: 'max_response_bytes' },
  'SSE, parse path: a one-event stream exactly at max_response_bytes': { agent: 'b', sse: true, shape: 'legacy-parsed', reason: 'max_response_bytes' },
  'SSE, parse path: event data exactly at max_sse_event_bytes': { agent: 'e', sse: true, shape: 'legacy-parsed', reason: 'max_sse_event_bytes' },
  // Controls.
  'control, JSON: room for the lift (lifted)': { agent: 'big', sse: false, shape: 'legacy', rewritten: true, bytes: LIMIT },
  'control, SSE: room for the lift (lifted)': { agent: 'big', sse: true, shape: 'legacy', rewritten: true, bytes: LIMIT },
  'control, JSON: a text copy of structuredContent at max_response_bytes (deduped)': { agent: 'b', sse: false, shape: 'copy', rewritten: true },
  'control, SSE: a text copy of structuredContent at max_response_bytes (deduped)': { agent: 'b', sse: true, shape: 'copy', rewritten: true },
  'control, SSE: a text copy at max_sse_event_bytes (deduped)': { agent: 'e', sse: true, shape: 'copy', rewritten: true },
  'control, JSON: a host on 2025-03-26 (no normalization)': { agent: 'b', sse: false, shape: 'legacy', protocol: '2025-03-26' },
};

/**
 * The seller's JSON-RPC message for case `name` answering `id`, exactly `bytes` long: the
 * limit (a JSON body on `b`; an SSE stream on `b`, the frame around it included; the event's
 * data on `e`) unless the case says. `legacy`: one text item holding `{"status":"completed",
 * "note":"xx…"}`, no `structuredContent`; `legacy-parsed`: the same, then a text holding
 * `{"n":1}` (the lift is then made on the parse path); `copy`: that object in `structuredContent` and its
 * JSON text as the text item (padding counts twice there: an odd byte is a space after
 * `"result":`, JSON whitespace).
 */
function sellerMessage(name: string, id: number): Buffer {
  const c = CASES[name]!;
  const bytes = c.bytes ?? (c.agent === 'b' && c.sse ? LIMIT - FRAME_BYTES : LIMIT);
  const build = (pad: number, space: string): string => {
    const object = JSON.stringify({ status: 'completed', note: 'x'.repeat(pad) });
    const items = [{ type: 'text', text: object }, ...(c.shape === 'legacy-parsed' ? [{ type: 'text', text: '{"n":1}' }] : [])];
    const content = JSON.stringify(items);
    const result = c.shape === 'copy' ? `{"content":${content},"structuredContent":${object}}` : `{"content":${content}}`;
    return `{"jsonrpc":"2.0","id":${id},"result":${space}${result}}`;
  };
  const perPad = c.shape === 'copy' ? 2 : 1;
  const rest = bytes - Buffer.byteLength(build(0, ''));
  const out = build(Math.floor(rest / perPad), rest % perPad === 0 ? '' : ' ');
  assert.equal(Buffer.byteLength(out), bytes, `${name}: the seller's message is ${bytes} bytes`);
  return Buffer.from(out);
}

const frame = (data: Buffer): Buffer => Buffer.concat([Buffer.from('event: message\ndata: '), data, Buffer.from('\n\n')]);
const sellerBody = (name: string, id: number): Buffer => (CASES[name]!.sse ? frame(sellerMessage(name, id)) : sellerMessage(name, id));

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const call = JSON.parse(req.body.toString('utf8')) as { id: number; params: { arguments: { case: string } } };
      const name = call.params.arguments.case;
      res.writeHead(200, { 'content-type': CASES[name]!.sse ? 'text/event-stream' : 'application/json' });
      res.end(sellerBody(name, call.id));
    }),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        b: { url: seller.url, max_response_bytes: LIMIT },
        e: { url: seller.url, max_sse_event_bytes: LIMIT },
        big: seller.url,
      }),
    ),
);

/** The counts the metric must show at the end, by agent and reason. */
const counted = new Map<string, number>();
// Ids of three digits: the same sizes for every call.
let nextId = 100;

describe('a lift skipped for room is reported: text_not_lifted names the limit', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(name, async () => {
      const id = nextId++;
      const r = await rawPost(stack.gateway.agentUrl(c.agent), toolCall(id, 'get_products', { case: name }), {
        'mcp-protocol-version': c.protocol ?? '2025-06-18',
      });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', c.sse ? /^text\/event-stream/ : /^application\/json/);
      const seller = sellerBody(name, id);
      if (c.rewritten) assert.notDeepEqual(r.body, seller, 'rewritten');
      else assert.deepEqual(r.body, seller, "the seller's bytes, unchanged");
      if (c.agent === 'b') assert.ok(r.bytes <= LIMIT, `the host got ${r.bytes} bytes, over the limit`);
      const line = await stack.gateway.exchangeLine(c.agent, id);
      assertTextNotLifted(line, c.agent, { outcome: c.rewritten ? 'rewritten' : 'ok', bytes: r.bytes, reason: c.reason }, counted);
    });
  }

  test('/metrics: adcp_gateway_texts_not_lifted_total counts each by agent and reason, the controls not at all', async () => {
    const res = await fetch(`${stack.gateway.baseUrl}/metrics`);
    const got = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('adcp_gateway_texts_not_lifted_total{'))
      .sort();
    assert.deepEqual(got, [
      'adcp_gateway_texts_not_lifted_total{agent="b",reason="max_response_bytes"} 4',
      'adcp_gateway_texts_not_lifted_total{agent="e",reason="max_sse_event_bytes"} 2',
    ]);
    assert.deepEqual(Object.fromEntries(counted), { 'agent="b",reason="max_response_bytes"': 4, 'agent="e",reason="max_sse_event_bytes"': 2 });
  });
});
