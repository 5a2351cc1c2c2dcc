/**
 * Regression (a new user's hostile trial, F1): the lift gave the host an answer over
 * `max_json_depth` and `max_json_nodes`, bytes the gateway refuses (`json_depth`,
 * `json_nodes`) when a seller sends them. The lift checked the text's own depth and node
 * count, and the lifted answer's byte size (rewrite-room.ts), but not the depth and node count
 * of the message it wrote: a text holding an object exactly `max_json_depth` deep reached the
 * host 2 levels deeper than the limit (the object now sits at `result.structuredContent`), and
 * a message of ~100,000 values with a text of 100,000 values reached it with ~200,000.
 *
 * Now a lift whose output message would be over either bound is skipped as one over
 * `max_response_bytes` is (rewrite-room.ts liftOverJsonBound): the host gets the seller's
 * bytes, outcome `ok`, and the exchange line's `text_not_lifted` names the bound
 * (`max_json_depth`, `max_json_nodes`), counted in `adcp_gateway_texts_not_lifted_total`.
 *
 * Input: a raw seller answering `tools/call` (host on 2025-06-18) with a legacy result (no
 * `structuredContent`) whose one text item holds a JSON object, as a JSON body and as a
 * one-event SSE stream; agent `t` has `max_json_depth: 16`, `max_json_nodes: 300`, agent `a`
 * the defaults (64, 100,000: the trial's). Paths: `scan` (lift-splice.ts, no parse), `parsed`
 * (a later text holding another object: the lift is made on the parse path, normalize.ts,
 * spliced), `task` (a completed task's `result.result` in a 2026-07-28 `tasks/get`: parsed and
 * re-serialized, the object one level deeper). Edges: the lifted message exactly at the bound
 * (lifted: the exact bytes, the host's message exactly that deep or that many values), one more
 * level or value (not lifted: the seller's bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { postCase, startCaseSeller } from '../helpers/task-or-tool.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { messageEvent } from '../helpers/tool-result-seller.js';
import { assertTextNotLifted } from '../helpers/text-not-lifted.js';
import { summarizeStructuredContent } from '../../src/mcp/summary.js';

const T_DEPTH = 16;
const T_NODES = 300;
const LIMITS = { t: { depth: T_DEPTH, nodes: T_NODES }, a: { depth: 64, nodes: 100_000 } } as const;

type Path = 'scan' | 'parsed' | 'task';
type Bound = 'depth' | 'nodes';

interface Case {
  readonly agent: 't' | 'a';
  readonly sse: boolean;
  readonly path: Path;
  readonly bound: Bound;
  /** The lifted message would be one level or one value over the bound: not lifted. */
  readonly over: boolean;
}

const CASES: Record<string, Case> = {};
for (const sse of [false, true]) {
  for (const path of ['scan', 'parsed', 'task'] as const) {
    for (const bound of ['depth', 'nodes'] as const) {
      for (const over of [false, true]) {
        const name = `${sse ? 'SSE' : 'JSON'}, ${path} path: the lifted message ${over ? 'one over' : 'exactly at'} max_json_${bound} (${over ? 'not lifted' : 'lifted'})`;
        CASES[name] = { agent: 't', sse, path, bound, over };
      }
    }
  }
  // The trial's numbers: the default bounds.
  for (const over of [false, true]) {
    CASES[`${sse ? 'SSE' : 'JSON'}, default bounds: a text ${over ? 63 : 62} deep (${over ? 'not lifted' : 'lifted'})`] = { agent: 'a', sse, path: 'scan', bound: 'depth', over };
  }
}

/** Nesting of arrays and objects (`{}` alone: 1), as the gateway counts it. */
function depthOf(v: unknown): number {
  return v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;
}
/** JSON values (keys not counted), as the gateway counts them. */
function nodesOf(v: unknown): number {
  return 1 + (v !== null && typeof v === 'object' ? Object.values(v).reduce((s: number, x) => s + nodesOf(x), 0) : 0);
}

const TASK = '"taskId":"t1","status":"completed","createdAt":"x","lastUpdatedAt":"x","ttlMs":1,"resultType":"complete"';

/** The seller's message: the case's tool result (a `_meta` array of `pad` values, then `content`) answering `id`. */
function message(c: Case, id: number, text: string, pad: number): string {
  const items = [{ type: 'text', text }, ...(c.path === 'parsed' ? [{ type: 'text', text: '{"n":1}' }] : [])];
  const meta = pad === 0 ? '' : `"_meta":{"pad":[${new Array<string>(pad).fill('0').join(',')}]},`;
  const result = `{${meta}"content":${JSON.stringify(items)}}`;
  return `{"jsonrpc":"2.0","id":${id},"result":${c.path === 'task' ? `{${TASK},"result":${result}}` : result}}`;
}

/** Levels above the lifted object in the host's message: `result` (2), or `result.result` (3). */
const liftLevels = (c: Case): number => (c.path === 'task' ? 3 : 2);

/** The case's text and `_meta` padding: the lifted message exactly at its bound, or one over it. */
function parts(c: Case, id: number): { text: string; pad: number } {
  const { depth, nodes } = LIMITS[c.agent];
  if (c.bound === 'depth') {
    const d = depth - liftLevels(c) + (c.over ? 1 : 0);
    return { text: '{"a":'.repeat(d) + '1' + '}'.repeat(d), pad: 0 };
  }
  const text = `{"a":[${new Array<string>(100).fill('1').join(',')}]}`; // 102 values
  const base = nodesOf(JSON.parse(message(c, id, text, 1))) - 1;
  return { text, pad: nodes - 102 - base + (c.over ? 1 : 0) };
}

function sellerMessage(name: string, id: number): string {
  const c = CASES[name]!;
  const { text, pad } = parts(c, id);
  const out = message(c, id, text, pad);
  // The seller's own message is within both bounds (the gateway refuses it otherwise), and so is the text.
  const parsed = JSON.parse(out) as unknown;
  const { depth, nodes } = LIMITS[c.agent];
  assert.ok(depthOf(parsed) <= depth && nodesOf(parsed) <= nodes, `${name}: the seller's message is within the bounds`);
  const object = JSON.parse(text) as unknown;
  assert.ok(depthOf(object) <= depth && nodesOf(object) <= nodes, `${name}: the text is within the bounds`);
  return out;
}

/** The message the lift writes: the text replaced by its summary, `structuredContent` appended to the tool result. */
function liftedMessage(name: string, id: number): string {
  const c = CASES[name]!;
  const seller = sellerMessage(name, id);
  const { text } = parts(c, id);
  const object = JSON.parse(text) as Record<string, unknown>;
  const summary = summarizeStructuredContent(object, Buffer.byteLength(text));
  if (c.path === 'task') {
    // Re-serialized (rewrite.ts: no splice for `result.result`).
    const m = JSON.parse(seller) as { result: { result: { content: { type: string; text: string }[] } } };
    m.result.result = { ...m.result.result, content: m.result.result.content.map((item, i) => (i === 0 ? { ...item, text: summary } : item)) };
    Object.assign(m.result.result, { structuredContent: object });
    return JSON.stringify(m);
  }
  // Spliced: the seller's bytes, the text's bytes as `structuredContent` before `result`'s `}`.
  const written = JSON.stringify(text);
  assert.equal(seller.indexOf(written), seller.lastIndexOf(written));
  const spliced = seller.replace(written, JSON.stringify(summary));
  return `${spliced.slice(0, -2)},"structuredContent":${text}}}`;
}

const stack = useSellerAndGateway(
  () => startCaseSeller((name, id) => ({ body: sellerMessage(name, id), sse: CASES[name]!.sse })),
  (seller) => startObservedGateway(agentsYaml({ t: { url: seller.url, max_json_depth: T_DEPTH, max_json_nodes: T_NODES }, a: seller.url })),
);

const counted = new Map<string, number>();
// Ids of three digits: the same sizes for every call.
let nextId = 100;

describe('a lift whose output would be over max_json_depth or max_json_nodes is skipped', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(name, async () => {
      const id = nextId++;
      const r = await postCase(stack.gateway.agentUrl(c.agent), c.path === 'task', id, name);
      assert.equal(r.status, 200);
      const expected = c.over ? sellerMessage(name, id) : liftedMessage(name, id);
      assert.equal(r.text(), c.sse ? messageEvent(expected) : expected, c.over ? "the seller's bytes" : 'the lifted message');
      if (!c.over) {
        // The edge is exact: the host's message is at the bound.
        const host = JSON.parse(expected) as unknown;
        const { depth, nodes } = LIMITS[c.agent];
        assert.equal(c.bound === 'depth' ? depthOf(host) : nodesOf(host), c.bound === 'depth' ? depth : nodes);
      }
      const reason = c.over ? `max_json_${c.bound}` : undefined;
      const line = await stack.gateway.exchangeLine(c.agent, id);
      assertTextNotLifted(line, c.agent, { outcome: c.over ? 'ok' : 'rewritten', bytes: r.bytes, reason }, counted);
    });
  }

  test('/metrics: adcp_gateway_texts_not_lifted_total counts each skipped lift by agent and bound', async () => {
    const res = await fetch(`${stack.gateway.baseUrl}/metrics`);
    const got = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('adcp_gateway_texts_not_lifted_total{'))
      .sort();
    assert.deepEqual(got, [
      'adcp_gateway_texts_not_lifted_total{agent="a",reason="max_json_depth"} 2',
      'adcp_gateway_texts_not_lifted_total{agent="t",reason="max_json_depth"} 6',
      'adcp_gateway_texts_not_lifted_total{agent="t",reason="max_json_nodes"} 6',
    ]);
    assert.deepEqual(Object.fromEntries(counted), {
      'agent="t",reason="max_json_depth"': 6,
      'agent="t",reason="max_json_nodes"': 6,
      'agent="a",reason="max_json_depth"': 2,
    });
  });
});
