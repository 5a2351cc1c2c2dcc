/**
 * Regression (a reviewer, carried for several sessions): a `content[].text` holding a JSON
 * object over the text bounds was silently not lifted. The host got the legacy text, which is
 * right (mcp-response-extraction §Extraction Algorithm step 3: the item is skipped), but no log
 * field and no metric said why the result was not normalized: an operator could not tell "the
 * seller sent no JSON" from "the seller's JSON was over our bounds".
 *
 * Input: a raw seller answering `tools/call` with a legacy result (no `structuredContent`), as
 * one JSON body and as a one-event SSE stream, host on 2025-06-18; the agent's bounds
 * `max_json_depth: 8`, `max_json_nodes: 50`, `max_response_bytes: 2000` (the text byte bound of
 * the lift is the response limit). The texts: an object 9 deep (`json_depth`); one of 51 values
 * (`json_nodes`); one whose 1,000 invalid UTF-8 bytes decode to 3,000 bytes of U+FFFD, a
 * 3,008-byte text in a 1,071-byte answer (`text_bytes`; JSON only: an SSE event's data is
 * decoded before its own byte bound, over which it is `sse_event`).
 *
 * Expectation: the host still gets the seller's bytes (not lifted, no error, outcome `ok`);
 * the exchange line has `text_not_lifted` with the bound's reason, and
 * `adcp_gateway_texts_not_lifted_total{agent,reason}` counts it. Controls, no field and no
 * count: a plain text; a text that is not JSON (one that only a non-validating count would call
 * too deep included); the largest texts whose lifted message is within the bounds (lifted);
 * a result with `structuredContent`; an `isError` result; a host on 2025-03-26 (no
 * normalization). (A text over the byte bound followed by a liftable one lifts that one: the
 * spec skips a text over the size limit; test/unit/extract.test.ts.) A text over the depth or node bound followed by a liftable
 * one lifts nothing and is reported (the spec's algorithm, bounding neither, returns the first
 * text's object: hostile trial 38, F1, test/regressions/over-bound-text-passed-over-for-later-text.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const DEPTH = 8;
const NODES = 50;
const LIMIT = 2000;

const textItem = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;
/** An object `depth` deep: `{"a":{"a":…1…}}`. */
const deep = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
/** An object of `nodes` values: itself, an array, `nodes - 2` zeros. */
const wide = (nodes: number): string => `{"a":[${Array<string>(nodes - 2).fill('0').join(',')}]}`;
/** A text item `{"a":"<1000 bytes 0xFF>"}`: 1,000 invalid bytes in the seller's answer, 3,000 bytes of U+FFFD once decoded. */
const INVALID_UTF8_ITEM = Buffer.concat([Buffer.from('{"type":"text","text":"{\\"a\\":\\"'), Buffer.alloc(1000, 0xff), Buffer.from('\\"}"}')]);

type Reason = 'json_depth' | 'json_nodes' | 'text_bytes';

interface Case {
  readonly items: readonly (string | Buffer)[];
  /** `result` members after `content`. */
  readonly extra?: string;
  /** The expected `text_not_lifted`; undefined: no such field. */
  readonly reason?: Reason;
  /** The result is lifted (outcome `rewritten`); else the seller's bytes go out (outcome `ok`). */
  readonly lifted?: boolean;
  /** The host's revision (default 2025-06-18). */
  readonly protocol?: string;
  /** JSON only (the SSE stage refuses its decoded data first). */
  readonly jsonOnly?: boolean;
}

const CASES: Record<string, Case> = {
  'over the depth bound': { items: [textItem(deep(DEPTH + 1))], reason: 'json_depth' },
  'over the node bound': { items: [textItem(wide(NODES + 1))], reason: 'json_nodes' },
  'over the text byte bound (invalid UTF-8 decoded to U+FFFD)': { items: [INVALID_UTF8_ITEM], reason: 'text_bytes', jsonOnly: true },
  'the first over a bound decides: depth, then nodes, then plain text': {
    items: [textItem('Found 2 products.'), textItem(deep(DEPTH + 1)), textItem(wide(NODES + 1))],
    reason: 'json_depth',
  },
  'an over-bound text then an adcp_error-only one (nothing lifted)': {
    items: [textItem(wide(NODES + 1)), textItem('{"adcp_error":{"code":"X"}}')],
    reason: 'json_nodes',
  },
  // Controls.
  'control: plain text': { items: [textItem('Found 2 products.')] },
  'control: not JSON': { items: [textItem('{not json}')] },
  'control: not JSON, too deep only to a count that skips the syntax error': { items: [textItem(`{"a": oops ${'['.repeat(DEPTH + 4)}`)] },
  // The largest texts whose lifted message is within the bounds: 2 levels below the message's
  // top, its values added to the message's 8 (a text exactly at its own bound makes a message
  // over them, not lifted: test/regressions/lift-exceeds-json-depth-and-nodes.test.ts).
  'control: the lifted message exactly at the depth bound (lifted)': { items: [textItem(deep(DEPTH - 2))], lifted: true },
  'control: the lifted message exactly at the node bound (lifted)': { items: [textItem(wide(NODES - 8))], lifted: true },
  'over the depth bound, then a liftable text (nothing lifted: trial 38, F1)': {
    items: [textItem(deep(DEPTH + 1)), textItem('{"status":"completed"}')],
    reason: 'json_depth',
  },
  'control: structuredContent present': { items: [textItem(deep(DEPTH + 1))], extra: ',"structuredContent":{"status":"completed"}' },
  'control: an isError result': { items: [textItem(deep(DEPTH + 1))], extra: ',"isError":true' },
  'control: a host on 2025-03-26 (no normalization)': { items: [textItem(deep(DEPTH + 1))], protocol: '2025-03-26' },
};

/** The seller's JSON-RPC message for `name` answering `id`. */
function sellerMessage(name: string, id: number): Buffer {
  const c = CASES[name]!;
  const parts: Buffer[] = [Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":{"content":[`)];
  c.items.forEach((item, k) => parts.push(Buffer.from(k === 0 ? '' : ','), Buffer.from(item)));
  parts.push(Buffer.from(`]${c.extra ?? ''}}}`));
  return Buffer.concat(parts);
}

const frame = (data: Buffer): Buffer => Buffer.concat([Buffer.from('event: message\ndata: '), data, Buffer.from('\n\n')]);

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const call = JSON.parse(req.body.toString('utf8')) as { id: number; params: { arguments: { case: string; sse: boolean } } };
      const { case: name, sse } = call.params.arguments;
      const message = sellerMessage(name, call.id);
      res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
      res.end(sse ? frame(message) : message);
    }),
  (seller) =>
    startObservedGateway(
      agentsYaml({ b: { url: seller.url, max_json_depth: DEPTH, max_json_nodes: NODES, max_response_bytes: LIMIT } }),
    ),
);

/** The counts the metric must show at the end, by reason. */
const counted = new Map<Reason, number>();
let nextId = 1;

/** Calls case `name` through the gateway and checks the answer and the exchange line. */
async function check(name: string, sse: boolean): Promise<void> {
  const c = CASES[name]!;
  const id = nextId++;
  const r = await rawPost(stack.gateway.agentUrl('b'), toolCall(id, 'get_products', { case: name, sse }), {
    'mcp-protocol-version': c.protocol ?? '2025-06-18',
  });
  assert.equal(r.status, 200);
  const seller = sellerMessage(name, id);
  if (c.lifted) assert.notDeepEqual(r.body, sse ? frame(seller) : seller, 'lifted');
  else assert.deepEqual(r.body, sse ? frame(seller) : seller, "the seller's bytes");
  const line = await stack.gateway.exchangeLine('b', id);
  assert.equal(line.outcome, c.lifted ? 'rewritten' : 'ok');
  assert.equal(line.reason, null);
  if (c.reason === undefined) assert.equal(Object.hasOwn(line, 'text_not_lifted'), false, `no text_not_lifted: ${JSON.stringify(line)}`);
  else {
    assert.equal(line.text_not_lifted, c.reason);
    counted.set(c.reason, (counted.get(c.reason) ?? 0) + 1);
  }
}

describe('a text over the bounds is not lifted, and the exchange says why', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const sse of [false, true]) {
    for (const [name, c] of Object.entries(CASES)) {
      if (sse && c.jsonOnly) continue;
      test(`${sse ? 'SSE' : 'JSON'}: ${name}`, () => check(name, sse));
    }
  }

  test('SSE: the text byte case never reaches the lift: its decoded data is over the event bound (sse_event)', async () => {
    const id = nextId++;
    const r = await rawPost(stack.gateway.agentUrl('b'), toolCall(id, 'get_products', { case: 'over the text byte bound (invalid UTF-8 decoded to U+FFFD)', sse: true }), {
      'mcp-protocol-version': '2025-06-18',
    });
    assert.equal(r.status, 200);
    const line = await stack.gateway.exchangeLine('b', id);
    assert.equal(line.outcome, 'local_error');
    assert.equal(line.reason, 'sse_event');
    assert.equal(Object.hasOwn(line, 'text_not_lifted'), false);
  });

  test('/metrics: adcp_gateway_texts_not_lifted_total counts each by agent and reason, the controls not at all', async () => {
    const res = await fetch(`${stack.gateway.baseUrl}/metrics`);
    const text = await res.text();
    const got = text
      .split('\n')
      .filter((l) => l.startsWith('adcp_gateway_texts_not_lifted_total{'))
      .sort();
    const want = [...counted]
      .map(([reason, n]) => `adcp_gateway_texts_not_lifted_total{agent="b",reason="${reason}"} ${n}`)
      .sort();
    assert.deepEqual(got, want);
    // JSON: depth 3 (one of them first of three, one before a liftable text), nodes 2; SSE the same; text_bytes once (JSON).
    assert.deepEqual(Object.fromEntries(counted), { json_depth: 6, json_nodes: 4, text_bytes: 1 });
  });
});
