// extractAdcpResponse / extractAdcpError beyond the AdCP vectors: size bound in UTF-8 bytes,
// structure bounds, prototype safety, envelopes, validation limits.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  extractAdcpError,
  extractAdcpResponse,
  findLiftableTextItem,
  findLiftableTextOrBound,
  parseTextObject,
  readTextObject,
  utf8LengthExceeds,
  validateAdcpError,
} from '../../src/mcp/extract.js';

const text = (t: string) => ({ type: 'text', text: t });

describe('extractAdcpResponse', () => {
  test('returns the seller structuredContent object itself', () => {
    const structured = { status: 'completed', products: [] };
    assert.equal(extractAdcpResponse({ content: [], structuredContent: structured }), structured);
  });

  test('array structuredContent falls through to the text fallback (spec step 2 takes non-array objects only)', () => {
    const result = { content: [text('{"a":1}')], structuredContent: [{ a: 2 }] };
    assert.deepEqual(extractAdcpResponse(result), { a: 1 });
  });

  test('non-objects and results without content give null', () => {
    for (const value of [null, undefined, 1, 'x', [], {}, { content: 'x' }]) assert.equal(extractAdcpResponse(value), null);
  });

  test('isError truthy (not only true) gives null', () => {
    assert.equal(extractAdcpResponse({ isError: 1, content: [text('{"a":1}')] }), null);
  });

  test('text over maxTextBytes is skipped; the bound is UTF-8 bytes, exactly at the limit passes', () => {
    const t = '{"name":"éééé"}'; // 15 chars, 19 bytes
    const bytes = Buffer.byteLength(t);
    assert.equal(bytes, 19);
    assert.deepEqual(extractAdcpResponse({ content: [text(t)] }, { maxTextBytes: bytes }), { name: 'éééé' });
    assert.equal(extractAdcpResponse({ content: [text(t)] }, { maxTextBytes: bytes - 1 }), null);
  });

  test('an over-limit item is skipped and the next one is used', () => {
    const result = { content: [text(`{"big":"${'x'.repeat(100)}"}`), text('{"small":1}')] };
    assert.deepEqual(extractAdcpResponse(result, { maxTextBytes: 50 }), { small: 1 });
  });

  test('structure bounds, when given, skip over-deep or over-large text', () => {
    const deep = { content: [text('{"a":{"b":{"c":1}}}')] };
    assert.deepEqual(extractAdcpResponse(deep, { maxDepth: 3 }), { a: { b: { c: 1 } } });
    assert.equal(extractAdcpResponse(deep, { maxDepth: 2 }), null);
    assert.equal(extractAdcpResponse(deep, { maxNodes: 3 }), null);
    assert.deepEqual(extractAdcpResponse(deep, { maxNodes: 4 }), { a: { b: { c: 1 } } });
  });

  test('non-text items and non-string text are ignored', () => {
    const result = { content: [{ type: 'image', data: '{"a":1}' }, { type: 'text', text: 5 }, null, text(' \n{"ok":true}')] };
    assert.deepEqual(extractAdcpResponse(result), { ok: true });
  });

  test('a __proto__ key in text stays own data and pollutes no prototype', () => {
    const data = extractAdcpResponse({ content: [text('{"__proto__":{"polluted":1},"a":1}')] });
    assert.ok(data);
    assert.ok(Object.hasOwn(data, '__proto__'));
    assert.deepEqual(Object.keys(data), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(data), Object.prototype);
    assert.equal((data as { polluted?: unknown }).polluted, undefined);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });
});

describe('findLiftableTextItem / parseTextObject', () => {
  test('returns the index of the first liftable item, skipping arrays, primitives and adcp_error-only', () => {
    const result = {
      content: [text('plain'), text('[1]'), text('"s"'), text('{"adcp_error":{"code":"X"}}'), { type: 'image' }, text('{"a":1}'), text('{"b":2}')],
    };
    assert.deepEqual(findLiftableTextItem(result), { index: 5, value: { a: 1 } });
  });

  test('parseTextObject rejects what JSON.parse cannot make an object', () => {
    assert.equal(parseTextObject(''), undefined);
    assert.equal(parseTextObject('   '), undefined);
    assert.equal(parseTextObject('\uFEFF{}'), undefined);
    assert.equal(parseTextObject('{bad'), undefined);
    assert.equal(parseTextObject('null'), undefined);
    assert.deepEqual(parseTextObject('\t{}\n'), {});
  });

  test('utf8LengthExceeds measures bytes only in the ambiguous band', () => {
    assert.equal(utf8LengthExceeds('aaaa', 12), false);
    assert.equal(utf8LengthExceeds('aaaa', 3), true);
    assert.equal(utf8LengthExceeds('éé', 4), false);
    assert.equal(utf8LengthExceeds('éé', 3), true);
    assert.equal(utf8LengthExceeds('😀', 4), false);
    assert.equal(utf8LengthExceeds('😀', 3), true);
  });
});

describe('readTextObject / findLiftableTextOrBound: which bound kept a text from being read', () => {
  // A reviewer: "a text over the bounds was silently not lifted"
  // (test/regressions/text-over-bounds-not-lifted-silently.test.ts).
  const deep = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  const wide = (nodes: number) => `{"a":[${Array<string>(nodes - 2).fill('0').join(',')}]}`;
  const BOUNDS = { maxTextBytes: 1000, maxDepth: 4, maxNodes: 10 };
  /** Long enough for the WebAssembly scan's branch of the bound check (>= 16 Ki characters). */
  const pad = `"pad":"${'x'.repeat(17_000)}",`;
  const LONG = { ...BOUNDS, maxTextBytes: 100_000 };

  test('over a bound: text_bytes, json_depth, json_nodes; exactly at each bound: the object', () => {
    assert.equal(readTextObject(`{"a":"${'x'.repeat(993)}"}`, BOUNDS), 'text_bytes', '1001 bytes');
    assert.deepEqual(readTextObject(`{"a":"${'x'.repeat(992)}"}`, BOUNDS), { a: 'x'.repeat(992) }, '1000 bytes');
    assert.equal(readTextObject(`{"a":"${'é'.repeat(497)}"}`, BOUNDS), 'text_bytes', 'UTF-8 bytes, not characters');
    assert.equal(readTextObject(deep(5), BOUNDS), 'json_depth');
    assert.deepEqual(readTextObject(deep(4), BOUNDS), { a: { a: { a: { a: 1 } } } });
    assert.equal(readTextObject(wide(11), BOUNDS), 'json_nodes');
    assert.deepEqual(readTextObject(wide(10), BOUNDS), { a: Array<number>(8).fill(0) });
    // Long texts: the same reasons from the scan that bounds them.
    assert.equal(readTextObject(`{${pad}"d":${'['.repeat(4)}${']'.repeat(4)}}`, LONG), 'json_depth');
    assert.equal(readTextObject(`{${pad}"n":[0,0,0,0,0,0,0,0,0]}`, LONG), 'json_nodes');
    assert.deepEqual(Object.keys(readTextObject(`{${pad}"n":[0,0,0,0,0,0,0]}`, LONG) as object), ['pad', 'n']);
  });

  test('the size is named first; at one bracket over both structure bounds, json_depth', () => {
    assert.equal(readTextObject(`{"a":${'['.repeat(10)}"${'x'.repeat(1000)}"${']'.repeat(10)}}`, BOUNDS), 'text_bytes');
    // The 5th level's bracket is the 11th value.
    assert.equal(readTextObject('{"a":[0,0,0,0,0,0,[[[0]]]]}', { maxDepth: 4, maxNodes: 10 }), 'json_depth');
    assert.equal(readTextObject('{"a":[0,0,0,0,0,0,0,[[[0]]]]}', { maxDepth: 4, maxNodes: 10 }), 'json_nodes');
  });

  test('only a text that may hold an object has a reason: one not starting with {, or not JSON, has none', () => {
    for (const t of [`[${'['.repeat(10)}`, `"${'x'.repeat(2000)}"`, `plain ${'x'.repeat(2000)}`, '[[[[[[[[ not json', '']) {
      assert.equal(readTextObject(t, BOUNDS), undefined, t.slice(0, 30));
    }
    // Short and long: a count that skips the syntax error would call these too deep (checkJsonBounds).
    assert.equal(readTextObject(`{"a": oops ${'['.repeat(10)}`, BOUNDS), undefined);
    assert.equal(readTextObject(`{${pad}"a": oops ${'['.repeat(10)}`, LONG), undefined);
    assert.equal(readTextObject('{"a":1} [[[[[[[[[[', BOUNDS), undefined, 'a complete object, then trailing brackets');
    // Invalid past the bound: no JSON, no reason (hostile trial 40, F2: it had one, and ended the lift's walk).
    assert.equal(readTextObject(`${deep(5)} oops`, BOUNDS), undefined);
    // Over the size nothing is read: a text starting with { is named whatever follows.
    assert.equal(readTextObject(`{${'x'.repeat(2000)}`, BOUNDS), 'text_bytes');
    assert.equal(readTextObject(5, BOUNDS), undefined);
  });

  test('structure bounds not given: never json_depth or json_nodes', () => {
    assert.deepEqual(readTextObject(deep(100), { maxTextBytes: 10_000 }), JSON.parse(deep(100)));
    assert.equal(readTextObject(`{"a":"${'x'.repeat(100)}"}`, { maxTextBytes: 50 }), 'text_bytes');
  });

  test('parseTextObject is readTextObject without the reason', () => {
    const texts = [deep(5), deep(4), wide(11), wide(10), `{"a":"${'x'.repeat(993)}"}`, '{bad', '[1]', `{"a": oops ${'['.repeat(10)}`, '{"adcp_error":{"code":"X"}}'];
    for (const t of texts) {
      const read = readTextObject(t, BOUNDS);
      assert.deepEqual(parseTextObject(t, BOUNDS), typeof read === 'string' ? undefined : read, t.slice(0, 30));
    }
  });

  test('findLiftableTextOrBound: the match; a text over a structure bound before it ends the walk; else the first item skipped for a bound; else null', () => {
    const liftable = text('{"ok":true}');
    // The match carries its text's depth and values as the bounds check counted them (the lift's output check).
    assert.deepEqual(findLiftableTextOrBound({ content: [text('plain'), text('{bad'), liftable] }, BOUNDS), { index: 2, value: { ok: true }, json: { depth: 1, nodes: 2 } });
    // Hostile trial 38, F1: the spec's algorithm returns the over-bound text's object; nothing is found, no later item.
    assert.equal(findLiftableTextOrBound({ content: [text(deep(5)), liftable] }, BOUNDS), 'json_depth');
    assert.equal(findLiftableTextOrBound({ content: [text(wide(11)), liftable] }, BOUNDS), 'json_nodes');
    assert.equal(findLiftableTextItem({ content: [text(deep(5)), liftable] }, BOUNDS), null);
    assert.equal(extractAdcpResponse({ content: [text(wide(11)), liftable] }, BOUNDS), null);
    // Over a bound but no JSON (invalid past where it breaks the bound): no object, passed over (hostile trial 40, F2).
    assert.equal(readTextObject(`${deep(5)} trailing`, BOUNDS), undefined);
    assert.equal(readTextObject(`{"a":[${Array<string>(20).fill('0').join(',')}]`, BOUNDS), undefined);
    assert.equal(readTextObject(`{"a":[[[[[1]]]]],}`, BOUNDS), undefined);
    assert.equal(readTextObject(`{"a":${'['.repeat(3000)}1${']'.repeat(3000)}} x`, LONG), undefined, 'a long text: the scan path');
    assert.equal(readTextObject(`{"a":${'['.repeat(3000)}1${']'.repeat(3000)}}${' '.repeat(20_000)}`, LONG), 'json_depth', 'a long valid text over the bound');
    assert.deepEqual(findLiftableTextOrBound({ content: [text(`${deep(5)} trailing`), liftable] }, BOUNDS), { index: 1, value: { ok: true }, json: { depth: 1, nodes: 2 } });
    // The size bound is the spec's own per-item skip: a later match wins.
    assert.deepEqual(findLiftableTextOrBound({ content: [text(`{"a":"${'x'.repeat(994)}"}`), liftable] }, BOUNDS), { index: 1, value: { ok: true }, json: { depth: 1, nodes: 2 } });
    assert.deepEqual(findLiftableTextOrBound({ content: [liftable] }, {}), { index: 0, value: { ok: true } }, 'no structure bounds: not counted');
    assert.equal(findLiftableTextOrBound({ content: [text('plain'), text(wide(11)), text(deep(5))] }, BOUNDS), 'json_nodes');
    assert.equal(findLiftableTextOrBound({ content: [text(deep(5)), text('{"adcp_error":{"code":"X"}}')] }, BOUNDS), 'json_depth', 'nothing liftable after it');
    // Not text items, non-string text: never a reason.
    assert.equal(findLiftableTextOrBound({ content: [{ type: 'image', data: deep(5) }, { type: 'text', text: 5 }, text('{bad')] }, BOUNDS), null);
    assert.equal(findLiftableTextOrBound({ content: 'x' }, BOUNDS), null);
    assert.equal(findLiftableTextOrBound(null, BOUNDS), null);
    // findLiftableTextItem and the extraction: the same walk, no reason.
    assert.equal(findLiftableTextItem({ content: [text(deep(5))] }, BOUNDS), null);
    assert.equal(extractAdcpResponse({ content: [text(deep(5))] }, BOUNDS), null);
    assert.equal(extractAdcpError({ isError: true, content: [text(deep(5))] }, BOUNDS), null);
  });
});

describe('extractAdcpError', () => {
  const adcpError = { code: 'RATE_LIMITED', message: 'Request rate exceeded', retry_after: 99999, recovery: 'transient' };

  test('unwraps a JSON-RPC result envelope', () => {
    const message = { jsonrpc: '2.0', id: 1, result: { isError: true, content: [], structuredContent: { adcp_error: adcpError } } };
    assert.equal(extractAdcpError(message), adcpError);
  });

  test('reads JSON-RPC error.data.adcp_error, raw values kept', () => {
    const message = { jsonrpc: '2.0', id: 1, error: { code: -32029, message: 'x', data: { adcp_error: adcpError } } };
    assert.deepEqual(extractAdcpError(message), adcpError);
  });

  test('text fallback only when isError is true, and only objects with adcp_error', () => {
    const t = JSON.stringify({ adcp_error: adcpError });
    assert.deepEqual(extractAdcpError({ isError: true, content: [text('Oops.'), text('{"x":1}'), text(t)] }), adcpError);
    assert.equal(extractAdcpError({ isError: 'true', content: [text(t)] }), null);
    assert.equal(extractAdcpError({ content: [text(t)] }), null);
  });

  test('the first candidate found decides: an invalid structured error is not replaced by the text one', () => {
    const message = { isError: true, content: [text(JSON.stringify({ adcp_error: adcpError }))], structuredContent: { adcp_error: { code: 7 } } };
    assert.equal(extractAdcpError(message), null);
  });

  test('code must be a string of 1 to 64 characters', () => {
    assert.ok(validateAdcpError({ code: 'X'.repeat(64) }));
    assert.equal(validateAdcpError({ code: 'X'.repeat(65) }), null);
    assert.equal(validateAdcpError({ code: '' }), null);
    assert.equal(validateAdcpError({ code: 1 }), null);
    assert.equal(validateAdcpError(['X']), null);
  });

  test('serialized size: exactly 4096 UTF-8 bytes passes, 4097 fails (bytes, not characters)', () => {
    // {"code":"X","message":""} is 25 bytes; 2035 × é (2 bytes) + "a" fills 4071 more.
    const at = { code: 'X', message: `${'é'.repeat(2035)}a` };
    assert.equal(Buffer.byteLength(JSON.stringify(at)), 4096);
    assert.equal(validateAdcpError(at), at);
    const over = { code: 'X', message: `${'é'.repeat(2035)}aa` };
    assert.equal(Buffer.byteLength(JSON.stringify(over)), 4097);
    assert.ok(JSON.stringify(over).length < 4096, 'fewer characters than bytes');
    assert.equal(validateAdcpError(over), null);
  });

  test('non-JSON values (cycles, BigInt) are not a structured error', () => {
    const cyclic: Record<string, unknown> = { code: 'X' };
    cyclic.self = cyclic;
    assert.equal(validateAdcpError(cyclic), null);
    assert.equal(validateAdcpError({ code: 'X', n: 1n }), null);
  });

  test('non-objects give null', () => {
    for (const value of [null, undefined, 'x', 1, []]) assert.equal(extractAdcpError(value), null);
  });
});
