/**
 * The incremental JSON scan (src/mcp/json-scan.ts) against the references it must agree with:
 * `JSON.parse` for validity, `checkJsonBounds` for depth and node counts, the parsed message
 * for the top-level members, `hasLossyNumber` for numbers. Fuzzed (seeded, deterministic) and
 * fed in random chunk splits, which must not change any answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonScanner, scanJson, type JsonScanResult } from '../../src/mcp/json-scan.js';
import { checkJsonBounds } from '../../src/mcp/json-bounds.js';
import { hasLossyNumber } from '../../src/mcp/json-numbers.js';
import { parses, rng, textMembersHoldObject } from '../helpers/json-fuzz.js';

const NO_LIMITS = { maxDepth: Infinity, maxNodes: Infinity };


const STRINGS = ['', 'text', 'id', 'jsonrpc', 'result', '{"a":1}', ' {"b":[2]}', 'é ☃ 😀', 'q"uote', 'back\\slash', 'tab\there', '\u0000', 'ünïcode'];
const KEYS = ['text', 'id', 'jsonrpc', 'result', 'error', 'type', 'content', 'structuredContent', '__proto__', 't\u0065xt', 'a', ''];
const NUMBERS = ['0', '-0', '1', '-12.5', '3.0e10', '1E-3', '123456789012345', '9007199254740993', '0.1000000000000000055', '1e400', '42'];

function genValue(r: () => number, depth: number): string {
  const k = r();
  if (depth > 5 || k < 0.45) {
    const s = r();
    if (s < 0.4) return JSON.stringify(STRINGS[Math.floor(r() * STRINGS.length)]);
    if (s < 0.75) return NUMBERS[Math.floor(r() * NUMBERS.length)]!;
    return ['true', 'false', 'null'][Math.floor(r() * 3)]!;
  }
  const ws = (): string => [' ', '', '\n', '\t', '\r\n  '][Math.floor(r() * 5)]!;
  const count = Math.floor(r() * 4);
  if (k < 0.7) {
    const items = Array.from({ length: count }, () => ws() + genValue(r, depth + 1) + ws());
    return `[${items.join(',')}]`;
  }
  const members = Array.from({ length: count }, () => {
    const key = KEYS[Math.floor(r() * KEYS.length)]!;
    const written = r() < 0.1 ? `"${[...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"` : JSON.stringify(key);
    return `${ws()}${written}${ws()}:${ws()}${genValue(r, depth + 1)}${ws()}`;
  });
  return `{${members.join(',')}}`;
}

const MUTATIONS = ['{', '}', '[', ']', '"', ',', ':', '\\', 'u', '0', '-', '.', 'e', '+', 't', 'n', ' ', '\n', '\u0001', '\u00ff', 'x'];

function mutate(r: () => number, s: string): string {
  const at = Math.floor(r() * (s.length + 1));
  const op = r();
  const ch = MUTATIONS[Math.floor(r() * MUTATIONS.length)]!;
  if (op < 0.4) return s.slice(0, at) + ch + s.slice(at);
  if (op < 0.8) return s.slice(0, at) + s.slice(at + 1);
  return s.slice(0, at);
}

function scanInChunks(bytes: Buffer, cuts: number[], limits = NO_LIMITS): JsonScanResult {
  const scanner = new JsonScanner(limits);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (scanner.feed(bytes.subarray(from, cut)) !== undefined) break;
    from = cut;
  }
  return scanner.end();
}

test('agrees with JSON.parse, checkJsonBounds and hasLossyNumber on 20,000 fuzzed texts, whatever the chunk split', () => {
  const r = rng(20261130);
  let valid = 0;
  let contentChecked = 0;
  for (let n = 0; n < 20_000; n++) {
    let text = genValue(r, 0);
    if (n % 2 === 1) text = mutate(r, text);
    const bytes = Buffer.from(text, 'utf8');
    const whole = scanJson(bytes, NO_LIMITS);
    const ref = parses(bytes);
    assert.equal(whole.ok, ref.ok, `validity of ${JSON.stringify(text)}`);
    const cuts = [Math.floor(r() * bytes.length), Math.floor(r() * bytes.length)].sort((a, b) => a - b);
    assert.deepEqual(scanInChunks(bytes, cuts), whole, `split at ${cuts.join(',')} of ${JSON.stringify(text)}`);
    if (!whole.ok || !ref.ok) continue;
    valid++;
    const bounds = checkJsonBounds(bytes, NO_LIMITS);
    assert.ok(bounds.ok);
    assert.equal(whole.nodes, bounds.nodes, text);
    assert.equal(whole.depth, bounds.depth, text);
    const value = ref.value;
    if (textMembersHoldObject(value)) assert.equal(whole.textMayHoldObject, true, text);
    if (hasLossyNumber(bytes)) assert.equal(whole.numberMayBeLossy, true, text);
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
    assert.equal(whole.top, isObject ? 'object' : Array.isArray(value) ? 'array' : 'scalar');
    if (isObject && whole.members!.plainKeys) {
      const m = whole.members!;
      const o = value as Record<string, unknown>;
      const slice = (range: readonly [number, number] | undefined): unknown =>
        range === undefined ? undefined : JSON.parse(bytes.subarray(range[0], range[1]).toString('utf8'));
      assert.deepEqual(slice(m.jsonrpc), Object.hasOwn(o, 'jsonrpc') ? o.jsonrpc : undefined, text);
      assert.deepEqual(slice(m.id), Object.hasOwn(o, 'id') ? o.id : undefined, text);
      assert.equal(m.hasResult, Object.hasOwn(o, 'result'), text);
      assert.equal(m.hasError, Object.hasOwn(o, 'error'), text);
      if (m.plainKeys) assert.equal(m.hasMethod, Object.hasOwn(o, 'method'), text);
      assert.deepEqual(slice(m.method), Object.hasOwn(o, 'method') ? o.method : undefined, text);
      const result = o.result;
      if (m.resultPlainKeys && m.content !== undefined && m.content.plainKeys) {
        const content = (result as Record<string, unknown>).content;
        assert.ok(Array.isArray(content), text);
        assert.equal(m.content.count, content.length, text);
        m.content.texts.forEach((range, k) => {
          const item = content[k] as Record<string, unknown> | null;
          const own = item !== null && typeof item === 'object' && !Array.isArray(item) && typeof item.text === 'string' ? item.text : undefined;
          assert.deepEqual(slice(range), own, text);
        });
        contentChecked++;
      }
      if (m.structuredContent !== undefined) {
        assert.ok(result !== null && typeof result === 'object' && Object.hasOwn(result, 'structuredContent'), text);
        assert.deepEqual(slice(m.structuredContent), (result as Record<string, unknown>).structuredContent, text);
      }
    }
  }
  assert.ok(valid > 9_000, `valid cases: ${valid}`);
  assert.ok(contentChecked > 0, `cases with result.content items: ${contentChecked}`);
});

test('bounds: stops at the first byte over max depth or max nodes, with that byte offset', () => {
  const deep = Buffer.from('['.repeat(4 * 1024 * 1024));
  const scanner = new JsonScanner({ maxDepth: 64, maxNodes: 100_000 });
  assert.deepEqual(scanner.feed(deep), { ok: false, reason: 'json_depth', limit: 64, observed: 65, offset: 64 });
  assert.equal(scanner.feed(Buffer.from('[')), scanner.end(), 'later feeds return the same failure');
  const flat = Buffer.from(`[${'1,'.repeat(200)}1]`);
  assert.deepEqual(scanJson(flat, { maxDepth: 64, maxNodes: 100 }), { ok: false, reason: 'json_nodes', limit: 100, observed: 101, offset: 1 + 99 * 2 });
  assert.deepEqual(scanJson(Buffer.from('{"a":[[]]}'), { maxDepth: 2, maxNodes: 10 }), { ok: false, reason: 'json_depth', limit: 2, observed: 3, offset: 6 });
});

test('syntax: the offset of the first bad byte, or the length when the text ends early', () => {
  assert.deepEqual(scanJson(Buffer.from('{"a":1}}'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 7 });
  assert.deepEqual(scanJson(Buffer.from('{"a":'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 5 });
  assert.deepEqual(scanJson(Buffer.from(''), NO_LIMITS), { ok: false, reason: 'syntax', offset: 0 });
  assert.deepEqual(scanJson(Buffer.from('\ufeff{}'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 0 }, 'a BOM is not JSON whitespace');
  // A raw control character inside a string, as JSON.parse rejects it (was not checked before the WebAssembly core).
  assert.deepEqual(scanJson(Buffer.from('["a\nb"]'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 3 });
  assert.deepEqual(scanJson(Buffer.from(`["${'x'.repeat(40)}\u001f"]`), NO_LIMITS), { ok: false, reason: 'syntax', offset: 42 });
  assert.equal(scanJson(Buffer.from('["\u007f\u00ff"]'), NO_LIMITS).ok, true, 'DEL and bytes >= 0x80 are not control characters to JSON');
  assert.deepEqual(scanJson(Buffer.from('[01]'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 2 });
  assert.deepEqual(scanJson(Buffer.from('[1.]'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 3 });
  assert.deepEqual(scanJson(Buffer.from('"\\x"'), NO_LIMITS), { ok: false, reason: 'syntax', offset: 2 });
  assert.equal(scanJson(Buffer.from(' -0.5e+3 '), NO_LIMITS).ok, true);
});

test('members of a JSON-RPC message: ranges of jsonrpc and id, result and error seen, escaped keys flagged', () => {
  const body = Buffer.from('{"jsonrpc":"2.0","id":35,"id":"other","result":{"id":1}}');
  const s = scanJson(body, NO_LIMITS);
  assert.ok(s.ok);
  assert.deepEqual(s.members, {
    jsonrpc: [11, 16],
    id: [30, 37],
    hasResult: true,
    hasError: false,
    hasMethod: false,
    method: undefined,
    params: undefined,
    plainKeys: true,
    structuredContent: undefined,
    resultPlainKeys: true,
    resultEnd: body.length - 2,
    isError: undefined,
    resultType: undefined,
    content: undefined,
  });
  const twice = '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"a":1},"content":[],"structuredContent":{"b":[2]}}}';
  const sc = scanJson(Buffer.from(twice), NO_LIMITS);
  assert.ok(sc.ok);
  const last = twice.lastIndexOf('{"b"');
  assert.deepEqual(sc.members!.structuredContent, [last, last + '{"b":[2]}'.length], 'the last one, as JSON.parse keeps');
  const escapedInResult = scanJson(Buffer.from('{"result":{"structuredContent":{"a":1},"structured\\u0043ontent":{}}}'), NO_LIMITS);
  assert.ok(escapedInResult.ok);
  assert.equal(escapedInResult.members!.structuredContent, undefined);
  const escaped = scanJson(Buffer.from('{"jsonrpc":"2.0","\\u0069d":1,"result":{}}'), NO_LIMITS);
  assert.ok(escaped.ok);
  assert.equal(escaped.members!.plainKeys, false);
  assert.equal(escaped.members!.id, undefined);
  // `method` (a new user's trial, 2026-12-03: a message with it is no response), a key cut by a chunk's end included.
  const withMethod = '{"jsonrpc":"2.0","id":1,"method":"x","result":{"method":1}}';
  const top = scanJson(Buffer.from(withMethod), NO_LIMITS);
  assert.ok(top.ok);
  assert.equal(top.members!.hasMethod, true);
  assert.deepEqual(top.members!.method, [withMethod.indexOf('"x"'), withMethod.indexOf('"x"') + 3]);
  const nested = scanJson(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"method":1},"methods":2}'), NO_LIMITS);
  assert.ok(nested.ok);
  assert.equal(nested.members!.hasMethod, false, 'only a top-level `method` key counts');
  const scanner = new JsonScanner(NO_LIMITS);
  scanner.feed(Buffer.from('{"jsonrpc":"2.0","id":1,"met'));
  scanner.feed(Buffer.from('hod":"x","result":{}}'));
  const cut = scanner.end();
  assert.ok(cut.ok);
  assert.equal(cut.members!.hasMethod, true);
  assert.deepEqual(cut.members!.method, [33, 36]);
  // The last `method` value, whatever it is: an empty string, null, an object (a review: the
  // MCP Go SDK reads an empty or null method as none).
  for (const [text, value] of [
    ['{"method":"x","jsonrpc":"2.0","method":""}', '""'],
    ['{"jsonrpc":"2.0","id":9,"method":null}', 'null'],
    ['{"method" : {"a":[1]} ,"id":2}', '{"a":[1]}'],
  ] as const) {
    const scan = scanJson(Buffer.from(text), NO_LIMITS);
    assert.ok(scan.ok);
    const range = scan.members!.method!;
    assert.equal(text.slice(range[0], range[1]), value, text);
  }
});

test('textMayHoldObject: only text members that may start with an object', () => {
  const flag = (s: string): boolean => {
    const r = scanJson(Buffer.from(s), NO_LIMITS);
    assert.ok(r.ok, s);
    return r.textMayHoldObject;
  };
  assert.equal(flag('{"content":[{"type":"text","text":"Found 3 products."}],"structuredContent":{"text":"{x"}}'), true);
  assert.equal(flag('{"content":[{"type":"text","text":"Found 3 products."}]}'), false);
  assert.equal(flag('{"content":[{"type":"text","text":"{\\"a\\":1}"}]}'), true);
  assert.equal(flag('{"text":" {"}'), true);
  assert.equal(flag('{"text":"\\n{"}'), true);
  assert.equal(flag('{"te\\u0078t":"{}"}'), true, 'an escaped key may be text');
  assert.equal(flag('{"texts":"{}","tex":"{}","note":"{}"}'), false);
  assert.equal(flag('{"text":["{}"]}'), false, 'an array is not text');
});

test('long strings, every 16-byte alignment of quote, backslash and control character, fed whole and byte by byte', () => {
  for (let len = 0; len < 40; len++) {
    for (const special of ['"', '\\\\', '\\u0041', '\u0001']) {
      const text = `{"k":"${'a'.repeat(len)}${special}${'b'.repeat(len % 7)}"}`;
      const bytes = Buffer.from(text);
      const ref = parses(bytes);
      const whole = scanJson(bytes, NO_LIMITS);
      assert.equal(whole.ok, ref.ok, JSON.stringify(text));
      const bytewise = new JsonScanner(NO_LIMITS);
      for (let i = 0; i < bytes.length; i++) if (bytewise.feed(bytes.subarray(i, i + 1)) !== undefined) break;
      assert.deepEqual(bytewise.end(), whole, JSON.stringify(text));
    }
  }
});

test('chunks larger than the core buffer (64 KiB) and a 1,000,000-deep stack with no depth bound', () => {
  const big = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, result: { structuredContent: { s: 'x'.repeat(300_000), n: [1, 2, 3] } } }));
  const s = scanJson(big, { maxDepth: 64, maxNodes: 100 });
  assert.ok(s.ok);
  assert.deepEqual(s.members!.id, [22, 23]);
  assert.equal(s.nodes, 10);
  const depth = 1_000_000;
  const deep = Buffer.from('['.repeat(depth) + ']'.repeat(depth));
  const d = scanJson(deep, NO_LIMITS);
  assert.ok(d.ok);
  assert.equal(d.depth, depth);
  const nested = '{"a":['.repeat(50_000);
  assert.equal(scanJson(Buffer.from(nested + ']}'.repeat(50_000)), NO_LIMITS).ok, true);
  const crossed = Buffer.from(nested + ']}'.repeat(49_999) + '}]');
  assert.deepEqual(scanJson(crossed, NO_LIMITS), { ok: false, reason: 'syntax', offset: 300_000 + 49_999 * 2 }, 'the stack remembers which bracket each level opened');
});

test('scanners interleaved on the one core keep their own state', () => {
  const a = Buffer.from('{"jsonrpc":"2.0","id":"a","result":{"structuredContent":{"x":[1,2]}}}');
  const b = Buffer.from('[[[[{"text":"{"}]]]]');
  const sa = new JsonScanner(NO_LIMITS);
  const sb = new JsonScanner({ maxDepth: 5, maxNodes: 100 });
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    sa.feed(a.subarray(i, i + 1));
    sb.feed(b.subarray(i, i + 1));
  }
  assert.deepEqual(sa.end(), scanJson(a, NO_LIMITS));
  assert.deepEqual(sb.end(), scanJson(b, { maxDepth: 5, maxNodes: 100 }));
});

test('result.content items: the range of each item text string (last text key wins), the end of result', () => {
  const items = ['{"type":"text","text":"a\\"b"}', '{"type":"image","data":"eA=="}', '"x"', '{"text":1}', '{"text":"p","meta":{"text":"deep"},"text":"q"}', '{"text":"r","text":2}'];
  const body = `{"jsonrpc":"2.0","id":1,"result":{"content":[${items.join(',')}],"isError":false}}`;
  const s = scanJson(Buffer.from(body), NO_LIMITS);
  assert.ok(s.ok);
  const at = (needle: string, from = 0): [number, number] => {
    const i = body.indexOf(needle, from);
    return [i, i + needle.length];
  };
  assert.deepEqual(s.members!.content, {
    count: 6,
    plainKeys: true,
    texts: [at('"a\\"b"'), undefined, undefined, undefined, at('"q"'), undefined],
    types: [at('"text"'), at('"image"'), undefined, undefined, undefined, undefined],
  });
  assert.deepEqual(s.members!.isError, at('false'));
  assert.equal(s.members!.resultEnd, body.length - 2);
  assert.equal(s.members!.resultPlainKeys, true);
  // The last `content` wins; one that is not an array has no items.
  const twiceBody = '{"result":{"content":[{"text":"a"}],"content":[{"text":"b"},{"text":"c"}]}}';
  const twice = scanJson(Buffer.from(twiceBody), NO_LIMITS);
  assert.ok(twice.ok);
  const b = twiceBody.indexOf('"b"');
  const c = twiceBody.indexOf('"c"');
  assert.deepEqual(twice.members!.content, { count: 2, plainKeys: true, texts: [[b, b + 3], [c, c + 3]], types: [undefined, undefined] });
  const notArray = scanJson(Buffer.from('{"result":{"content":[{"text":"a"}],"content":{"text":"b"}}}'), NO_LIMITS);
  assert.ok(notArray.ok);
  assert.equal(notArray.members!.content, undefined);
  const escaped = scanJson(Buffer.from('{"result":{"content":[{"t\\u0065xt":"a","text":"b"}]}}'), NO_LIMITS);
  assert.ok(escaped.ok);
  assert.equal(escaped.members!.content!.plainKeys, false);
  const escapedResultKey = scanJson(Buffer.from('{"result":{"c\\u006fntent":[],"content":[]}}'), NO_LIMITS);
  assert.ok(escapedResultKey.ok);
  assert.equal(escapedResultKey.members!.resultPlainKeys, false);
  const many = `{"result":{"content":[${Array.from({ length: 20 }, (_, i) => `{"text":"t${i}"}`).join(',')}]}}`;
  const m = scanJson(Buffer.from(many), NO_LIMITS);
  assert.ok(m.ok);
  assert.equal(m.members!.content!.count, 20);
  assert.equal(m.members!.content!.texts.length, 16);
  assert.deepEqual(m.members!.content!.texts[15], [many.indexOf('"t15"'), many.indexOf('"t15"') + 5]);
  const laterResult = scanJson(Buffer.from('{"result":{"content":[{"text":"a"}]},"result":{"x":1}}'), NO_LIMITS);
  assert.ok(laterResult.ok);
  assert.equal(laterResult.members!.content, undefined, 'a later result replaces the earlier one');
  assert.equal(laterResult.members!.resultEnd, 52);
});

test('result.isError, result.resultType and each item type: the range of the last one written, as JSON.parse keeps', () => {
  const body =
    '{"id":1,"isError":true,"result":{"isError":{"isError":true},"resultType":"task","content":[' +
    '{"type":"image","type":"t\\u0065xt"},{"type":"text","type":7},{"type":"text","x":{"type":"y"}},{"y":{"type":"z"}},["type"]' +
    '],"structuredContent":{"isError":true,"resultType":"x"},"isError":0,"resultType":"complete"}}';
  const s = scanJson(Buffer.from(body), NO_LIMITS);
  assert.ok(s.ok);
  const at = (needle: string, from = 0): [number, number] => {
    const i = body.indexOf(needle, from);
    return [i, i + needle.length];
  };
  assert.deepEqual(s.members!.isError, at('0', body.indexOf('"isError":0') + 10), 'the last isError of result, not the top-level or a nested one');
  assert.deepEqual(s.members!.resultType, at('"complete"'));
  // Item 0: the last type (escaped value: its range all the same); 1: a number last (none);
  // 2: its own type, not the nested one; 3: only a nested type; 4: not an object.
  assert.deepEqual(s.members!.content!.types, [at('"t\\u0065xt"'), undefined, at('"text"', body.indexOf('{"type":"text","x"')), undefined, undefined]);
  const cut = Buffer.from(body);
  for (let k = 1; k < cut.length; k++) {
    const scanner = new JsonScanner(NO_LIMITS);
    scanner.feed(cut.subarray(0, k));
    scanner.feed(cut.subarray(k));
    assert.deepEqual(scanner.end(), s, `cut at ${k}`);
  }
  // A later result forgets them; a result that is no object has none.
  const later = scanJson(Buffer.from('{"result":{"isError":true,"resultType":"task","content":[{"type":"text"}]},"result":{"content":[{}]}}'), NO_LIMITS);
  assert.ok(later.ok);
  assert.equal(later.members!.isError, undefined);
  assert.equal(later.members!.resultType, undefined);
  assert.deepEqual(later.members!.content!.types, [undefined]);
  const scalar = scanJson(Buffer.from('{"result":"isError"}'), NO_LIMITS);
  assert.ok(scalar.ok);
  assert.equal(scalar.members!.isError, undefined);
});
