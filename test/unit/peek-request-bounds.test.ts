/**
 * request/peek.ts peekRequest: a host's request held to the structure bounds of its tool when
 * it is a single `tools/call` of a tool with bounds of its own, the agent's otherwise (a
 * hostile trial 22, F2: test/regressions/request-json-bounds-ignore-tool-limits.test.ts).
 *
 * The reference: peekJsonRpc under the bound that applies, the tool read from the parsed body
 * (a `tools/call` object whose `params.name` is a string; a batch, another method, a body that
 * is no JSON: the agent's); but a body that peekJsonRpc under the widest bound refuses as no
 * JSON, or for a member written twice, gets that refusal (which tool it calls cannot be told:
 * a hostile new-user trial 23, L6). peekRequest reads the body once under the widest bound and checks
 * the applied one after (from the scan's counts, or a bounded check); it must give exactly the
 * reference's answer (kind, message, id) for every body: by hand, then seeded random bodies
 * under and over 1 KiB (the parse and the scan readings), valid, invalid and cut.
 * Also requestJsonBounds (request/request-json-bounds.ts): which tools it lists, and the widest.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peekJsonRpc, peekRequest } from '../../src/request/peek.js';
import { requestJsonBounds, type RequestJsonBounds } from '../../src/request/request-json-bounds.js';
import { parseConfig } from '../../src/config/load.js';
import { rng } from '../helpers/json-fuzz.js';

const AGENT = { maxDepth: 4, maxNodes: 30 };
const TOOLS = new Map([
  ['wide', { maxDepth: 9, maxNodes: 400 }],
  ['narrow', { maxDepth: 3, maxNodes: 12 }],
  ['mixed', { maxDepth: 7, maxNodes: 20 }],
]);
const BOUNDS: RequestJsonBounds = { agent: AGENT, tools: TOOLS, widest: { maxDepth: 9, maxNodes: 400 } };

/**
 * The tool whose bounds apply to `body` by the reference's reading; none (the agent's) for a
 * body writing a member the gateway acts on twice (request/repeated-request-names.ts: which
 * copy a seller reads is unknown, so no tool is trusted) and over the widest bound (within it,
 * {@link same} takes the widest reading's refusal).
 */
function toolOf(body: Buffer): string | undefined {
  const unbounded = peekJsonRpc(body);
  if (!unbounded.ok && unbounded.message.startsWith('Invalid Request: the member ')) return undefined;
  let m: unknown;
  try {
    m = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return undefined;
  const o = m as { method?: unknown; params?: { name?: unknown } };
  return o.method === 'tools/call' && o.params !== null && typeof o.params === 'object' && typeof o.params.name === 'string' ? o.params.name : undefined;
}

function same(text: string | Buffer, label = String(text).slice(0, 160)): void {
  const body = typeof text === 'string' ? Buffer.from(text) : text;
  const widest = peekJsonRpc(body, BOUNDS.widest);
  if (!widest.ok && (widest.kind === 'parse_error' || widest.message.startsWith('Invalid Request: the member '))) {
    assert.deepEqual(peekRequest(body, BOUNDS), widest, label);
    return;
  }
  const name = toolOf(body);
  const applied = (name === undefined ? undefined : TOOLS.get(name)) ?? AGENT;
  assert.deepEqual(peekRequest(body, BOUNDS), peekJsonRpc(body, applied), label);
}

const call = (name: string, args: string, id = '1'): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
const PAD = `"${'p'.repeat(1100)}"`;

test('by hand: each tool its own bound, every other body the agent\'s; the message names the bound applied', () => {
  const nodes = (n: number): string => `[${Array.from({ length: n }, () => '0').join(',')}]`;
  const deep = (d: number): string => '['.repeat(d) + ']'.repeat(d);
  for (const pad of ['', `,"pad":${PAD}`]) {
    const args = (inner: string): string => `{"v":${inner}${pad}}`;
    for (const body of [
      call('wide', args(nodes(100))), // within wide, over the agent
      call('wide', args(nodes(500))), // over wide: max_json_nodes (400)
      call('wide', args(deep(5))), // depth 8: within wide
      call('wide', args(deep(7))), // depth 10: over wide
      call('narrow', args(nodes(3))), // over narrow's 12 values with the pad, or its depth 3
      call('narrow', '{}'),
      call('mixed', args(deep(3))), // depth 6: within mixed, over the agent
      call('mixed', args(nodes(25))), // over mixed's 20 values, within the agent's 30? no: over both
      call('other', args(nodes(100))), // the agent's
      call('other', '{}'),
      `{"jsonrpc":"2.0","id":"s","method":"ping","params":{"v":${nodes(100)}}}`,
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"wide","arguments":{"v":${nodes(100)}}}}`, // a notification: its tool's
      `[${call('wide', args(nodes(40)))}]`, // a batch: the agent's
      `{"jsonrpc":"1.0","id":2,"method":"tools/call","params":{"name":"wide","arguments":{"v":${nodes(100)}}}}`, // no message: the bound first (wide's: within), then why
      `{"jsonrpc":"1.0","id":2,"method":"tools/call","params":{"name":"other","arguments":{"v":${nodes(100)}}}}`, // the agent's: over
      `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wide","arguments":{"v":${nodes(100)}}`, // cut, 100 values: within wide, so the parse error
      `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wide","arguments":{"v":${nodes(100)}}},"id":5}`, // a member written twice, within wide: its refusal
      `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wide","Name":"narrow","arguments":{"v":${nodes(10)}}}}`,
    ]) {
      same(body);
    }
  }
  // The exact refusals, naming the bound applied, for the request's id.
  const over = (id: unknown, bound: string): unknown => ({ ok: false, kind: 'invalid_request', message: `Invalid Request: the request body is over ${bound}.`, id, idText: undefined });
  assert.deepEqual(peekRequest(Buffer.from(call('wide', `[${'0,'.repeat(500)}0]`, '"w"')), BOUNDS), over('w', 'max_json_nodes (400)'));
  assert.deepEqual(peekRequest(Buffer.from(call('narrow', '{"a":{"b":1}}', '7')), BOUNDS), over(7, 'max_json_depth (3)'));
  assert.deepEqual(peekRequest(Buffer.from(call('other', '{"a":{"b":{"c":1}}}', '8')), BOUNDS), over(8, 'max_json_depth (4)'));
  // Cut, or naming its tool twice, within wide (over the agent's 30 values): the refusal an agent without tools gives (trial 23, L6).
  for (const pad of ['', `,"pad":${PAD}`]) {
    assert.deepEqual(peekRequest(Buffer.from(call('wide', `[${'0,'.repeat(50)}0]${pad}`, '10').slice(0, -3)), BOUNDS), { ok: false, kind: 'parse_error', message: 'Parse error: the request body is not valid JSON.', id: null, idText: undefined });
    assert.deepEqual(peekRequest(Buffer.from(call('wide', `[${'0,'.repeat(50)}0]${pad}`, '11').replace('"name":"wide"', '"name":"wide","name":"narrow"')), BOUNDS), {
      ok: false,
      kind: 'invalid_request',
      message: 'Invalid Request: the member "name" of "params" is written twice ("name", "name"); send it once.',
      id: 11,
      idText: undefined,
    });
  }
  const wide = peekRequest(Buffer.from(call('wide', `{"a":{"b":{"c":[${'1,'.repeat(100)}1]}},"pad":${PAD}}`, '9')), BOUNDS);
  assert.deepEqual(wide.ok && wide.peek, { kind: 'request', id: 9, idText: undefined, method: 'tools/call', toolName: 'wide', taskId: undefined, idWritten: undefined, cancelledRequestId: undefined });
});

test('no tool with bounds of its own: exactly peekJsonRpc under the agent\'s', () => {
  const bounds: RequestJsonBounds = { agent: AGENT, tools: new Map(), widest: AGENT };
  for (const body of [call('wide', `[${'0,'.repeat(50)}0]`), call('x', '{}'), '[1]', '{', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"pad":${PAD}}}}`]) {
    assert.deepEqual(peekRequest(Buffer.from(body), bounds), peekJsonRpc(Buffer.from(body), AGENT), body.slice(0, 80));
  }
});

/** A random JSON value `depth` levels at most below here. */
function value(r: () => number, depth: number): string {
  const k = r();
  if (depth <= 0 || k < 0.35) return ['0', '"s"', 'true', 'null', '-1.5', '"a\\"]{"'][Math.floor(r() * 6)]!;
  const n = Math.floor(r() * 10);
  const items = Array.from({ length: n }, (_, i) => (k < 0.65 ? value(r, depth - 1) : `"k${i}":${value(r, depth - 1)}`));
  return k < 0.65 ? `[${items.join(',')}]` : `{${items.join(',')}}`;
}

test('random requests, single and batched, under and over 1 KiB, valid and cut: the reference\'s answer', () => {
  const r = rng(22);
  const names = ['wide', 'narrow', 'mixed', 'other'];
  for (let i = 0; i < 3000; i++) {
    const name = names[Math.floor(r() * names.length)]!;
    const pad = r() < 0.4 ? `,"pad":${PAD}` : '';
    const args = `{"v":${value(r, Math.floor(r() * 9))}${pad}}`;
    const k = r();
    let body =
      k < 0.6
        ? call(name, args, String(i))
        : k < 0.7
          ? `{"jsonrpc":"2.0","id":${i},"method":"tools/list","params":${args}}`
          : k < 0.8
            ? `[${call(name, args, String(i))}]`
            : k < 0.9
              ? `{"jsonrpc":"1.0","id":${i},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`
              : `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
    if (r() < 0.1) body = body.slice(0, Math.floor(r() * body.length));
    // Bodies over 64 KiB (123 of the 3,000, 16 of their 27 MB: the generator's nesting has no
    // size bound) are drawn but not checked: each holds thousands of values, over the widest
    // bound (400) as 260 smaller ones are, and they were the most of this test's CPU.
    if (body.length > 64 * 1024) continue;
    same(body, `#${i}: ${body.slice(0, 120)}`);
  }
});

test('requestJsonBounds: the tools whose resolved bounds differ from the agent\'s, and the widest per bound', () => {
  const config = parseConfig(
    [
      'agents:',
      '  acme:',
      '    url: http://127.0.0.1:9/mcp',
      '    max_json_nodes: 2000',
      '    max_json_depth: 10',
      '    tools:',
      '      sync_creatives: { max_json_nodes: 200000 }',
      '      deep: { max_json_depth: 64 }',
      '      same: { max_json_nodes: 2000, max_response_bytes: 1000 }',
      '      only_bytes: { max_response_bytes: 1000 }',
      '  plain:',
      '    url: http://127.0.0.1:9/mcp',
      '    tools:',
      '      t: { max_response_bytes: 1000 }',
      '',
    ].join('\n'),
  );
  const acme = requestJsonBounds(config.agents.get('acme')!);
  assert.deepEqual(
    { agent: acme.agent, tools: [...acme.tools], widest: acme.widest },
    {
      agent: { maxDepth: 10, maxNodes: 2000 },
      tools: [
        ['sync_creatives', { maxDepth: 10, maxNodes: 200000 }],
        ['deep', { maxDepth: 64, maxNodes: 2000 }],
      ],
      widest: { maxDepth: 64, maxNodes: 200000 },
    },
  );
  assert.equal(requestJsonBounds(config.agents.get('acme')!), acme, 'made once per agent');
  const plain = requestJsonBounds(config.agents.get('plain')!);
  assert.deepEqual({ tools: plain.tools.size, widest: plain.widest }, { tools: 0, widest: { maxDepth: 64, maxNodes: 100000 } });
});
