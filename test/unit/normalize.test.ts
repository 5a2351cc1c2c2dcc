// normalizeToolResult (ARCHITECTURE §1.3 and §5): duplicated JSON text replaced by a summary,
// legacy text lifted into structuredContent, everything else left exactly as the seller sent it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeToolResult, type NormalizeOptions } from '../../src/mcp/normalize.js';
import { summarizeStructuredContent } from '../../src/mcp/summary.js';
import { extractAdcpResponse } from '../../src/mcp/extract.js';
import { jsonDeepEqual } from '../../src/mcp/deep-equal.js';

const LIMITS = { maxTextBytes: 4_194_304, maxDepth: 64, maxNodes: 100_000 };
const text = (t: string, extra: Record<string, unknown> = {}) => ({ type: 'text', text: t, ...extra });
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** Runs normalization and checks it did not touch its input. */
function run(result: unknown, limits: NormalizeOptions = LIMITS) {
  const before = structuredClone(result);
  const out = normalizeToolResult(result, limits);
  assert.deepStrictEqual(result, before, 'input mutated');
  if (!out.changed) {
    assert.equal(out.result, result, 'unchanged must return the same object');
    assert.equal(out.action, 'none');
    assert.equal(out.replacedItems, 0);
  }
  return out;
}

describe('dedupe (structuredContent present)', () => {
  test('a JSON copy is replaced by the summary; a different second text is kept byte for byte', () => {
    const structured = { status: 'completed', products: [{ id: 'p1', name: 'Ünïcode "q"' }], next_cursor: 'c2' };
    const copy = JSON.stringify({ next_cursor: 'c2', products: [{ name: 'Ünïcode "q"', id: 'p1' }], status: 'completed' }, null, 2);
    const other = 'Found 1 product.  {not json}';
    const annotations = { audience: ['assistant'] };
    const result = { content: [text(copy, { annotations, _meta: { k: 1 } }), text(other)], structuredContent: structured, _meta: { trace: 'x' } };

    const out = run(result);
    assert.equal(out.changed, true);
    assert.equal(out.action, 'deduped');
    assert.equal(out.replacedItems, 1);
    const r = out.result as typeof result;
    assert.deepEqual(Object.keys(r), ['content', 'structuredContent', '_meta']);
    assert.equal(r.structuredContent, structured, 'structuredContent is the seller object, untouched');
    assert.equal(r._meta, result._meta);
    assert.deepEqual(r.content[0], {
      type: 'text',
      text: summarizeStructuredContent(structured, bytes(copy)),
      annotations,
      _meta: { k: 1 },
    });
    assert.equal(r.content[0]!.text, `Result in structuredContent (${bytes(copy)} bytes): status=completed; products[1], next_cursor.`);
    assert.equal(r.content[1], result.content[1], 'the other item is the same object');
    assert.equal(r.content[1]!.text, other);
  });

  test('every copy is replaced, each with its own byte count', () => {
    const note = 'A note long enough that the summary is shorter than each copy.';
    const structured = { a: [1, 2], note };
    const compact = `{"a":[1,2],"note":"${note}"}`;
    const spaced = `{ "a" : [ 1 , 2 ] , "note" : "${note}" }`;
    const out = run({ content: [text(compact), text(spaced)], structuredContent: structured });
    assert.equal(out.replacedItems, 2);
    const content = (out.result as { content: { text: string }[] }).content;
    assert.equal(content[0]!.text, `Result in structuredContent (${bytes(compact)} bytes): a[2], note.`);
    assert.equal(content[1]!.text, `Result in structuredContent (${bytes(spaced)} bytes): a[2], note.`);
  });

  test('a copy no longer than its summary is kept as written (a dedupe never grows the answer); longer copies next to it are replaced', () => {
    const structured = { a: 1 };
    const short = '{"a":1}';
    const long = `{ "a" :${' '.repeat(60)}1 }`;
    // JSON strings: the summary's is 43 bytes, the short copy's 11.
    assert.equal(JSON.stringify(summarizeStructuredContent(structured, bytes(short))).length, 43);
    run({ content: [text(short), text(short)], structuredContent: structured });
    const result = { content: [text(short), text(long), text(short)], structuredContent: structured };
    const out = run(result);
    assert.equal(out.replacedItems, 1);
    const r = out.result as { content: unknown[] };
    assert.equal(r.content[0], result.content[0]);
    assert.deepEqual(r.content[1], text(`Result in structuredContent (${bytes(long)} bytes): a.`));
    assert.equal(r.content[2], result.content[2]);
    // The boundary: a copy whose JSON string is as long as the summary's is kept; one byte longer, replaced.
    const summaryOf = (t: string): number => JSON.stringify(summarizeStructuredContent(structured, bytes(t))).length;
    const padded = (n: number): string => `{"a":${' '.repeat(n)}1}`;
    let n = 0;
    while (JSON.stringify(padded(n)).length < summaryOf(padded(n))) n++;
    assert.equal(JSON.stringify(padded(n)).length, summaryOf(padded(n)));
    assert.equal(run({ content: [text(padded(n))], structuredContent: structured }).changed, false, 'as long: kept');
    assert.equal(run({ content: [text(padded(n + 1))], structuredContent: structured }).changed, true, 'one byte longer: replaced');
    // The seller's written length decides when given (its escapes count): the same text written longer is replaced.
    const written = JSON.stringify(short).length;
    assert.equal(normalizeToolResult({ content: [text(short)], structuredContent: structured }, { ...LIMITS, writtenTextBytes: () => written }).changed, false);
    assert.equal(normalizeToolResult({ content: [text(short)], structuredContent: structured }, { ...LIMITS, writtenTextBytes: () => 44 }).changed, true);
    // Without it, characters JSON escapes count as JSON.stringify writes them: a 40-byte text
    // (42 with quotes, under its 44-byte summary) written as 78 bytes is replaced.
    const quoted = { q: '"'.repeat(16) };
    assert.equal(bytes(JSON.stringify(quoted)), 40);
    assert.equal(JSON.stringify(JSON.stringify(quoted)).length, 78);
    assert.equal(JSON.stringify(summarizeStructuredContent(quoted, 40)).length, 44);
    assert.equal(run({ content: [text(JSON.stringify(quoted))], structuredContent: quoted }).changed, true);
  });

  test('text that differs from structuredContent (even slightly) is kept', () => {
    for (const t of ['{"a":[2,1]}', '{"a":[1,2],"b":null}', '{"a":[1,"2"]}', '[{"a":[1,2]}]', 'a[2]']) {
      run({ content: [text(t)], structuredContent: { a: [1, 2] } });
    }
  });

  test('structuredContent that is an array, primitive or null is left alone', () => {
    for (const structured of [[1], 'x', 1, null, true]) run({ content: [text(JSON.stringify(structured))], structuredContent: structured });
    // not lifted either, even with a liftable text
    run({ content: [text('{"a":1}')], structuredContent: null });
  });

  test('adcp_error-only structuredContent (an error missing isError) is left alone', () => {
    const structured = { adcp_error: { code: 'RATE_LIMITED' } };
    run({ content: [text(JSON.stringify(structured))], structuredContent: structured });
  });

  test('a copy over the bounds is kept', () => {
    // Long enough that its summary is shorter (a shorter copy is kept anyway).
    const structured = { a: { b: { c: 1 } }, n: 'x'.repeat(60) };
    const copy = JSON.stringify(structured);
    run({ content: [text(copy)], structuredContent: structured }, { ...LIMITS, maxDepth: 2 });
    run({ content: [text(copy)], structuredContent: structured }, { ...LIMITS, maxNodes: 3 });
    run({ content: [text(copy)], structuredContent: structured }, { ...LIMITS, maxTextBytes: bytes(copy) - 1 });
    assert.equal(run({ content: [text(copy)], structuredContent: structured }, { ...LIMITS, maxTextBytes: bytes(copy) }).changed, true);
  });
});

describe('lift (no structuredContent)', () => {
  test('a legacy text-only result gets structuredContent and a summary', () => {
    const t = '{"status":"completed","products":[{"product_id":"ctv_premium"}]}';
    const result = { content: [text(t)], _meta: { x: 1 } };
    const out = run(result);
    assert.equal(out.action, 'lifted');
    assert.equal(out.replacedItems, 1);
    assert.deepStrictEqual(out.result, {
      content: [text(`Result in structuredContent (${bytes(t)} bytes): status=completed; products[1].`)],
      _meta: { x: 1 },
      structuredContent: { status: 'completed', products: [{ product_id: 'ctv_premium' }] },
    });
    assert.deepEqual(Object.keys(out.result as object), ['content', '_meta', 'structuredContent'], 'structuredContent appended last');
    assert.deepStrictEqual(extractAdcpResponse(out.result), extractAdcpResponse(result));
  });

  test('the first liftable item is lifted; earlier plain text and other items are untouched; later copies summarized', () => {
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' };
    const spaced = `{ "a": 1${' '.repeat(60)}}`;
    const result = {
      content: [text('Here you go:'), image, text('[1,2]'), text('{"a":1}'), text(spaced), text('{"a":2}'), text('{ "a": 1 }')],
    };
    const out = run(result);
    assert.equal(out.action, 'lifted');
    assert.equal(out.replacedItems, 2);
    const r = out.result as { content: unknown[]; structuredContent: unknown };
    assert.deepEqual(r.structuredContent, { a: 1 });
    assert.equal(r.content.length, 7);
    assert.equal(r.content[0], result.content[0]);
    assert.equal(r.content[1], image);
    assert.equal(r.content[2], result.content[2]);
    // The lifted item always becomes the summary, even when longer (the lift's rule); a later copy only when shorter.
    assert.deepEqual(r.content[3], text('Result in structuredContent (7 bytes): a.'));
    assert.deepEqual(r.content[4], text(`Result in structuredContent (${bytes(spaced)} bytes): a.`));
    assert.equal(r.content[5], result.content[5]);
    assert.equal(r.content[6], result.content[6], 'a later copy shorter than its summary is kept');
  });

  test('arrays, primitives, adcp_error-only objects and invalid JSON are not lifted', () => {
    for (const t of ['[{"a":1}]', '"str"', '42', 'null', 'true', '{"adcp_error":{"code":"X"}}', '{"a":', 'plain words']) {
      run({ content: [text(t)] });
    }
  });

  test('isError results are never touched (the error JSON stays)', () => {
    run({ isError: true, content: [text('{"adcp_error":{"code":"RATE_LIMITED"}}')] });
    run({ isError: true, content: [text('{"a":1}')] });
    const structured = { a: 1 };
    run({ isError: true, content: [text('{"a":1}')], structuredContent: structured });
  });

  test('text over maxTextBytes, depth or nodes is simply not lifted; exactly at the limits it is', () => {
    const t = '{"a":[[1]],"é":2}';
    const n = bytes(t);
    run({ content: [text(t)] }, { ...LIMITS, maxTextBytes: n - 1 });
    run({ content: [text(t)] }, { ...LIMITS, maxDepth: 2 });
    run({ content: [text(t)] }, { ...LIMITS, maxNodes: 4 });
    assert.equal(run({ content: [text(t)] }, { maxTextBytes: n, maxDepth: 3, maxNodes: 5 }).action, 'lifted');
    // plain text that starts with [[[ is not an error either
    run({ content: [text('[[[[[[[[[[ not json')] }, { ...LIMITS, maxDepth: 3 });
  });

  test('textNotLifted: nothing lifted, and the first text that may have held the object was over a bound', () => {
    // A reviewer: "a text over the bounds was silently not lifted".
    const t = '{"a":[[1]],"é":2}';
    const n = bytes(t);
    for (const [limits, reason] of [
      [{ ...LIMITS, maxTextBytes: n - 1 }, 'text_bytes'],
      [{ ...LIMITS, maxDepth: 2 }, 'json_depth'],
      [{ ...LIMITS, maxNodes: 4 }, 'json_nodes'],
    ] as const) {
      const result = { content: [text('Found 1.'), text(t), text('{"adcp_error":{"code":"X"}}')] };
      const out = run(result, limits);
      assert.equal(out.changed, false);
      assert.equal(out.result, result);
      assert.equal(out.textNotLifted, reason);
    }
    // The first such text decides.
    assert.equal(run({ content: [text(t), text('{"a":[[[1]]]}')] }, { ...LIMITS, maxDepth: 2, maxNodes: 4 }).textNotLifted, 'json_depth');
  });

  test('no textNotLifted: lifted (texts that are no object before it skipped), exactly at the bounds, not JSON, structuredContent, isError', () => {
    const deep = '{"a":[[1]]}';
    const limits = { ...LIMITS, maxDepth: 2 };
    const lifted = run({ content: [text('plain'), text('{bad'), text('{"ok":true}')] }, limits);
    assert.equal(lifted.action, 'lifted');
    assert.equal('textNotLifted' in lifted, false);
    assert.equal('textNotLifted' in run({ content: [text(deep)] }, { ...LIMITS, maxDepth: 3 }), false);
    for (const result of [
      { content: [text('plain'), text('{bad'), text(`{"a": oops ${'['.repeat(9)}`)] },
      { content: [text(deep)], structuredContent: { ok: true } },
      { content: [text(deep)], isError: true },
      { content: [] },
    ]) {
      const out = run(result, limits);
      assert.equal(out.changed, false);
      assert.equal('textNotLifted' in out, false, JSON.stringify(result));
    }
  });

  test('a text to lift holding a number a double cannot carry: nothing lifted, textNotLifted lossy_number (hostile trial 39, item 2: it was silent)', () => {
    for (const t of ['{"n":12345678901234567890}', '{"a":[{"x":1e400}]}']) {
      const out = run({ content: [text(t), text('{"ok":true}')] }, LIMITS);
      assert.equal(out.changed, false);
      assert.equal(out.textNotLifted, 'lossy_number', t);
    }
  });

  test('a text over the depth bound before a liftable one: nothing lifted, textNotLifted json_depth (hostile trial 38, F1)', () => {
    const out = run({ content: [text('{"a":[[1]]}'), text('{"ok":true}')] }, { ...LIMITS, maxDepth: 2 });
    assert.equal(out.changed, false);
    assert.equal(out.action, 'none');
    assert.equal(out.textNotLifted, 'json_depth');
  });

  test('a text holding a __proto__ member at any depth is not lifted: textNotLifted proto_key; no prototype changes (trial 24, L1)', () => {
    for (const json of [
      '{"__proto__":{"polluted":1},"status":"completed"}',
      '{"a":{"b":[{"__proto__":{"polluted":1}}]},"status":"completed"}',
      '{"\\u005f_proto__":{"polluted":1}}',
      '{"__pro\\u0074o__":1}',
    ]) {
      const out = run({ content: [text(json), text('{"a":1}')] });
      assert.deepEqual([out.changed, out.textNotLifted], [false, 'proto_key'], json);
    }
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    // A `__proto__` value, a key near it, an escaped key of another character: lifted.
    for (const json of ['{"note":"__proto__"}', '{"__proto_":1,"___proto__":2}', '{"\\u0061":1,"caf\\u00e9":2}']) {
      const out = run({ content: [text(json)] });
      assert.deepEqual([out.action, out.textNotLifted], ['lifted', undefined], json);
    }
  });

  test('a copy holding a __proto__ member is kept, a byte copy or not (trial 24, L1)', () => {
    const sc = '{"__proto__":{"polluted":1},"a":1}';
    const structured = JSON.parse(sc) as Record<string, unknown>;
    // A byte copy (structuredContentText) and a reordered one (parsed, deep-equal).
    for (const copy of [sc, '{"a":1,"__proto__":{"polluted":1}}']) {
      const out = run({ content: [text(copy)], structuredContent: structured }, { ...LIMITS, structuredContentText: sc });
      assert.equal(out.changed, false, copy);
    }
    // Control: the same without the member is deduped.
    const plain = '{"a":1,"b":"' + 'x'.repeat(300) + '"}';
    assert.equal(run({ content: [text(plain)], structuredContent: JSON.parse(plain) as object }).action, 'deduped');
  });

  test('own __proto__ keys on the result and on items are copied as data', () => {
    const result = JSON.parse('{"__proto__":{"x":1},"content":[{"type":"text","__proto__":{"y":2},"text":"{\\"a\\":1}"}]}') as object;
    const out = run(result);
    assert.equal(out.action, 'lifted');
    const r = out.result as Record<string, unknown> & { content: Record<string, unknown>[] };
    assert.deepEqual(Object.keys(r), ['__proto__', 'content', 'structuredContent']);
    assert.equal(Object.getPrototypeOf(r), Object.prototype);
    assert.deepEqual(Object.keys(r.content[0]!), ['type', '__proto__', 'text']);
    assert.equal(Object.getPrototypeOf(r.content[0]), Object.prototype);
    assert.equal(JSON.stringify(r.content[0]), '{"type":"text","__proto__":{"y":2},"text":"Result in structuredContent (7 bytes): a."}');
  });
});

describe('left alone', () => {
  test('non-objects, missing or non-array content', () => {
    for (const value of [null, undefined, 'x', 1, [text('{"a":1}')], {}, { content: 'x' }, { content: { 0: text('{"a":1}') } }]) run(value);
  });

  test('empty content stays empty and unchanged', () => {
    run({ content: [] });
    run({ content: [], structuredContent: { a: 1 } });
  });

  test('a summary-only result with structuredContent', () => {
    run({ content: [text('Found 3 products.')], structuredContent: { products: [1, 2, 3] } });
  });
});

describe('jsonDeepEqual', () => {
  test('key order independent, arrays ordered, types strict', () => {
    assert.equal(jsonDeepEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }), true);
    assert.equal(jsonDeepEqual([1, 2], [2, 1]), false);
    assert.equal(jsonDeepEqual({ a: 1 }, { a: '1' }), false);
    assert.equal(jsonDeepEqual({ a: 1 }, { a: 1, b: 2 }), false);
    assert.equal(jsonDeepEqual({ 0: 'x' }, ['x']), false);
    assert.equal(jsonDeepEqual(null, {}), false);
    assert.equal(jsonDeepEqual(0, -0), true);
    assert.equal(jsonDeepEqual('a', 'a'), true);
  });

  test('own keys only; an own __proto__ key compares as data', () => {
    const inherited = Object.create({ a: 1 }) as object;
    assert.equal(jsonDeepEqual(inherited, {}), true);
    assert.equal(jsonDeepEqual({}, { a: 1 }), false);
    const withProto = JSON.parse('{"__proto__":{"x":1}}') as object;
    assert.equal(jsonDeepEqual(withProto, JSON.parse('{"__proto__":{"x":1}}')), true);
    assert.equal(jsonDeepEqual(withProto, JSON.parse('{"__proto__":{"x":2}}')), false);
    assert.equal(jsonDeepEqual(withProto, {}), false);
  });

  test('deep nesting does not overflow the stack', () => {
    const deep = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n));
    assert.equal(jsonDeepEqual(deep(100_000), deep(100_000)), true);
    assert.equal(jsonDeepEqual(deep(100_000), deep(99_999)), false);
  });
});

describe('long texts (>= 16 Ki chars: bounds and number checks by the WebAssembly scan, extract.ts)', () => {
  const OPTS = { maxTextBytes: 4 * 1024 * 1024, maxDepth: 8, maxNodes: 100_000 };
  const pad = 'x'.repeat(20_000);
  const lift = (text: string) => normalizeToolResult({ content: [{ type: 'text', text }] }, OPTS);

  test('a long legacy text is lifted, as a short one is', () => {
    const out = lift(JSON.stringify({ note: pad, n: 12.5, rows: [1, 2] }));
    assert.equal(out.action, 'lifted');
    assert.deepEqual((out.result as { structuredContent: unknown }).structuredContent, { note: pad, n: 12.5, rows: [1, 2] });
  });

  test('a long text with a number a double cannot hold is not lifted (the scan flags it, the exact check decides)', () => {
    assert.equal(lift(`{"note":"${pad}","id":12345678901234567890}`).changed, false);
    assert.equal(lift(`{"note":"${pad}","id":1234567890123456,"e":1e2}`).action, 'lifted', '16 digits and an exponent that do round-trip');
  });

  test('a long text over the depth bound, or not JSON, is not lifted', () => {
    assert.equal(lift(`{"note":"${pad}","deep":${'['.repeat(8)}${']'.repeat(8)}}`).changed, false);
    assert.equal(lift(`{"note":"${pad}","deep":${'['.repeat(8)}${']'.repeat(8)}}`).textNotLifted, 'json_depth');
    assert.equal(lift(`{"note":"${pad}","bad":[1,]}`).textNotLifted, undefined);
    assert.equal(lift(`{"note":"${pad}","bad":[1,]}`).changed, false);
    assert.equal(lift(`{"note":"${pad}\u0001"}`).changed, false, 'a raw control character (JSON.parse refuses it too)');
  });
});

test('structuredContentText given as a function: asked once, only for a dedupe, and read as its string is', () => {
  const sc = '{"a":1,"b":"' + 'x'.repeat(300) + '"}';
  const structured = JSON.parse(sc) as Record<string, unknown>;
  let asked = 0;
  const lazy = { ...LIMITS, structuredContentText: () => (asked++, sc) };
  const deduped = normalizeToolResult({ content: [text(sc), text(sc)], structuredContent: structured }, lazy);
  assert.deepEqual(deduped, normalizeToolResult({ content: [text(sc), text(sc)], structuredContent: structured }, { ...LIMITS, structuredContentText: sc }));
  assert.equal(deduped.action, 'deduped');
  assert.equal(asked, 1);
  // A lift, an isError result, an adcp_error-only structuredContent: never asked.
  assert.equal(normalizeToolResult({ content: [text(sc)] }, lazy).action, 'lifted');
  assert.equal(normalizeToolResult({ content: [text(sc)], structuredContent: structured, isError: true }, lazy).changed, false);
  assert.equal(normalizeToolResult({ content: [text('{"adcp_error":{"code":"X"}}')], structuredContent: { adcp_error: { code: 'X' } } }, lazy).changed, false);
  assert.equal(asked, 1);
});
