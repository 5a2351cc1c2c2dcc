/**
 * spliceLegacyLift (src/response/lift-splice.ts): the lift of a legacy text-only result from
 * the scan, without JSON.parse of the message or the text, must send exactly the bytes the
 * parse path sends (json-stage.ts: rewriteResponse, then spliceRewrite or JSON.stringify)
 * whenever it answers, and must answer the common legacy shapes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { scanJson } from '../../src/mcp/json-scan.js';
import { spliceLegacyLift } from '../../src/response/lift-splice.js';
import { LIMITS, ParsePathComparison, RESULT_EXTRAS, exchange, generator, parsePath, typeVariantItem } from '../helpers/tool-result-fuzz.js';

function fastPath(ex: Exchange, body: Buffer): Buffer | undefined {
  const scan = scanJson(body, { maxDepth: ex.limits.max_json_depth, maxNodes: ex.limits.max_json_nodes });
  assert.ok(scan.ok);
  return spliceLegacyLift(ex, body, scan);
}

const message = (content: string, extra = ''): Buffer => Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[${content}]${extra}}}`, 'utf8');
const textItem = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;

test('a legacy text is lifted from the scan: the parse path bytes exactly', () => {
  const data = { status: 'completed', products: [{ id: 'p1', name: 'caf\u00e9 \ud83d\ude00', price: 12.5 }, { id: 'p2' }], message: 'Found 2 products.' };
  const text = JSON.stringify(data, null, 2);
  const body = message(`${textItem(text)},{"type":"text","text":"Found 2 products."}`, ',"isError":false');
  const fast = fastPath(exchange(), body);
  assert.ok(fast, 'the common legacy shape is handled');
  assert.equal(
    fast.toString('utf8'),
    // The pretty-printed text's LFs as spaces (src/response/lift-line-breaks.ts), the rest as written.
    `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Result in structuredContent (${Buffer.byteLength(text)} bytes): status=completed; products[2], message."},{"type":"text","text":"Found 2 products."}],"isError":false,"structuredContent":${text.replaceAll('\n', ' ')}}}`,
  );
  assert.deepEqual(fast, parsePath(exchange(), body));
});

test('the summary reads the keys as JSON.parse makes them: duplicates (no value shown), integer keys first, escaped keys, status', () => {
  const texts = [
    '{"b":1,"2":[],"a":2,"b":[1,2],"1":{},"st\\u0061tus":"done"}',
    '{"status":"in-progress","status":"x y"}',
    '{"status":"rejected","status":"approved","items":[1],"items":[1,2],"x":[3]}',
    '{"status":["completed"],"items":[[1],[2],[3]]}',
    `{"status":"${'s'.repeat(33)}","k":1}`,
    '{"adcp_error":{"code":"X"},"adcp_error":{"code":"Y"},"other":1}',
    '{}',
    `{${Array.from({ length: 40 }, (_, k) => `"key_${k}":[${k}]`).join(',')}}`,
  ];
  for (const text of texts) {
    for (const items of [[textItem(text)], ['{"type":"text","text":"Found 2."}', textItem(text), textItem('[]'), '"odd item"']]) {
      const body = message(items.join(','));
      const fast = fastPath(exchange(), body);
      assert.ok(fast, text);
      assert.equal(fast.toString('utf8'), parsePath(exchange(), body)?.toString('utf8'));
    }
  }
});

test('numbers the scan flags but that round-trip (an exponent, 17 digits) are lifted; the exact check decides', () => {
  for (const text of ['{"n":1.25e3,"m":0.30000000000000004}', '{"big":9007199254740992,"neg":-0}']) {
    const body = message(textItem(text));
    const fast = fastPath(exchange(), body);
    assert.ok(fast, text);
    assert.equal(fast.toString('utf8'), parsePath(exchange(), body)?.toString('utf8'));
  }
});

test('a result of more items than the 16 the scan locates is left to the parse path, which lifts it', () => {
  const body = message([textItem('{"a":1}'), ...Array<string>(16).fill('{"type":"image","data":"eA=="}'), textItem('Found 1 product.')].join(','));
  assert.equal(fastPath(exchange(), body), undefined);
  assert.ok(parsePath(exchange(), body), 'the parse path lifts it');
  // 16 items in all: the fast path's, the parse path's bytes.
  const sixteen = message([textItem('{"a":1}'), ...Array<string>(14).fill('{"type":"image","data":"eA=="}'), textItem('Found 1 product.')].join(','));
  const fast = fastPath(exchange(), sixteen);
  assert.ok(fast);
  assert.deepEqual(fast, parsePath(exchange(), sixteen));
});

test('a long text (the scan path of parseTextObject, >= 16 Ki characters): the parse path bytes exactly', () => {
  const products = Array.from({ length: 400 }, (_, k) => ({ id: `p${k}`, name: `Caf\u00e9 \ud83d\ude00 "${k}"\n`, price: k / 4, tags: ['a/b', '\\'] }));
  const text = JSON.stringify({ status: 'completed', products, message: 'x'.repeat(1000) });
  assert.ok(text.length > 16 * 1024);
  const body = message(`${textItem(text)},{"type":"text","text":"Found 400 products."}`);
  const fast = fastPath(exchange(), body);
  assert.ok(fast);
  assert.deepEqual(fast, parsePath(exchange(), body));
});

test('declined (parse path decides): lone surrogate, lossy number, a later copy, task handle, error result, seller structuredContent', () => {
  const long = (obj: object): string => JSON.stringify({ ...obj, pad: 'x'.repeat(80) });
  const cases: Buffer[] = [
    message(`{"type":"text","text":"{\\"s\\":\\"\\ud800\\", \\"pad\\": \\"${'x'.repeat(80)}\\"}"}`),
    message(textItem(long({ n: 0 }).replace('"n":0', '"n":12345678901234567890'))),
    message(textItem(long({ n: 0 }).replace('"n":0', '"n":1e400'))),
    message(`${textItem(long({ a: 1 }))},${textItem(long({ a: 1 }))}`),
    message(`${textItem(long({ a: 1 }))},${textItem('{"a":1}')}`),
    message(textItem(long({ a: 1 })), ',"resultType":"task"'),
    message(textItem(long({ a: 1 })), ',"isError":true'),
    message(textItem(long({ a: 1 })), ',"structuredContent":{"a":1}'),
    message(textItem(long({ a: 1 })), ',"structuredContent":null'),
    // A member `__proto__` (at any depth, or spelled with an escape): not lifted, the parse path says so (trial 24, L1).
    message(textItem(long({ a: 1 }).replace('"a":1', '"__proto__":{"x":1}'))),
    message(textItem(long({ a: 1 }).replace('"a":1', '"a":{"b":{"c":[{"__proto__":1}]}}'))),
    message(textItem(long({ a: 1 }).replace('"a":1', '"\\u005f_proto__":1'))),
    // A text past the items the scan locates, which may be a copy: parsed, it is an object.
    message([textItem(long({ a: 1 })), ...Array<string>(16).fill(textItem('x')), textItem('{}')].join(',')),
  ];
  for (const body of cases) assert.equal(fastPath(exchange(), body), undefined, body.toString());
  assert.equal(fastPath(exchange(LIMITS, 'tools/call', 8), message(textItem(long({ a: 1 })))), undefined, 'another id');
  assert.equal(fastPath(exchange(LIMITS, 'tools/list'), message(textItem(long({ a: 1 })))), undefined, 'not a tool result');
});

test('skipped texts (not an object, invalid, adcp_error-only, an array over a bound) leave the lift to the next one, as the parse path', () => {
  const pad = 'x'.repeat(80);
  const next = textItem(JSON.stringify({ ok: true, pad }));
  const skipped = [
    textItem(`[1,2,"${pad}"]`),
    textItem(`{"a": "${pad}"`),
    textItem(JSON.stringify({ adcp_error: { code: 'X', pad } })),
    textItem(JSON.stringify([[[[[[[[pad]]]]]]]])),
    textItem(`not json ${pad}`),
  ];
  const limits = { ...LIMITS, max_json_depth: 6 };
  for (const first of skipped) {
    const body = message(`${first},${next}`);
    const fast = fastPath(exchange(limits), body);
    assert.ok(fast, first);
    assert.deepEqual(fast, parsePath(exchange(limits), body));
  }
});

test('no liftable text: declined whatever the texts hold; the parse path decides, and records the first text over a bound', () => {
  // A reviewer: "a text over the bounds was silently not lifted" (rewrite.ts records it, for the JSON and SSE paths).
  const limits = { ...LIMITS, max_json_depth: 6, max_json_nodes: 40 };
  const deep = '{"a":'.repeat(7) + '1' + '}'.repeat(7);
  const wide = `{"a":[${Array<string>(39).fill('0').join(',')}]}`;
  const cases: [string[], string | undefined][] = [
    [[textItem(deep)], 'json_depth'],
    [[textItem('Found 2.'), textItem(wide), textItem(deep)], 'json_nodes'],
    [[textItem(deep), textItem('{"adcp_error":{"code":"X"}}')], 'json_depth'],
    [[textItem('{bad'), textItem('[1]'), textItem(`{"a": oops ${'['.repeat(9)}`)], undefined],
  ];
  for (const [items, reason] of cases) {
    const body = message(items.join(','));
    const fast = exchange(limits);
    assert.equal(fastPath(fast, body), undefined, items.join());
    assert.equal(fast.textNotLifted, undefined, 'the fast path records nothing');
    const parsed = exchange(limits);
    assert.equal(parsePath(parsed, body), undefined);
    assert.equal(parsed.textNotLifted, reason, items.join());
    // Normalization off for the host: nothing is decided, nothing recorded.
    const off = { ...exchange(limits), normalize: false } as Exchange;
    assert.equal(parsePath(off, body), undefined);
    assert.equal(off.textNotLifted, undefined);
  }
  // An object over a structure bound, then a liftable text: nothing lifted, the bound recorded (the
  // spec's algorithm, which bounds neither, returns the first text's object: hostile trial 38, F1).
  for (const [first, reason] of [[deep, 'json_depth'], [wide, 'json_nodes'], [JSON.stringify({ deep: [[[[[[[['x']]]]]]]] }), 'json_depth']] as const) {
    const body = message(`${textItem(first)},${textItem(JSON.stringify({ ok: true, pad: 'x'.repeat(80) }))}`);
    const fast = exchange(limits);
    assert.equal(fastPath(fast, body), undefined, 'declined to the parse path');
    assert.equal(fast.textNotLifted, undefined);
    const parsed = exchange(limits);
    assert.equal(parsePath(parsed, body), undefined, 'not lifted');
    assert.equal(parsed.textNotLifted, reason);
  }
  // Invalid UTF-8 (the fast path declines it): 300 bytes that decode to 900, over a 500-byte text bound.
  const invalid = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\\"a\\":\\"'), Buffer.alloc(300, 0xff), Buffer.from('\\"}"}]}}')]);
  const small = { ...limits, max_response_bytes: 500 };
  assert.equal(fastPath(exchange(small), invalid), undefined);
  const ex = exchange(small);
  assert.equal(parsePath(ex, invalid), undefined);
  assert.equal(ex.textNotLifted, 'text_bytes');
});

// ---------------------------------------------------------------------------------------
// Randomized: generated legacy results, the fast path's bytes against the parse path's.

test('randomized legacy results: whenever the fast path answers, the parse path bytes exactly', () => {
  const comparison = new ParsePathComparison();
  let notLifted = 0;
  let loneSurrogate = 0; // of them, `lone_surrogate` (the generator's lone surrogates)
  for (let seed = 1; seed <= 1500; seed++) {
    const g = generator(seed);
    const items: string[] = [];
    const count = 1 + g.int(3);
    for (let k = 0; k < count; k++) {
      items.push(
        g.pick([
          () => `{"type":"text","text":${g.string(g.text())}}`,
          () => `{"type":"text","text":${g.string(g.text())}}`,
          () => `{"type":"text","text":${g.string(g.text() + 'x'.repeat(70))}}`,
          () => '{"type":"text","text":"Found 2 products."}',
          () => '{"type":"image","data":"eA==","mimeType":"image/png"}',
          () => `{"type":"resource","text":${g.string(g.text())}}`,
          () => `{"text":${g.string(g.text())},"type":"text","text":${g.string(g.text())}}`,
          () => typeVariantItem(g, g.string(g.text() + 'x'.repeat(70))),
        ])(),
      );
    }
    const extra = g.pick([...RESULT_EXTRAS, ',"structuredContent":null']);
    const body = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[${items.join(',')}]${extra}}}`, 'utf8');
    const limits = g.pick([LIMITS, { ...LIMITS, max_json_nodes: 12 }, { ...LIMITS, max_json_depth: 3 }, { ...LIMITS, max_response_bytes: 120 }]);
    comparison.check(exchange(limits), body, fastPath, `seed ${seed}`);
    // A result the parse path leaves unlifted for a text bound is one the fast path declines; one
    // whose lifted message would be over max_json_depth / max_json_nodes (rewrite-room.ts
    // liftOverJsonBound), one it declines or also leaves unchanged, recording the same bound.
    const parsed = exchange(limits);
    if (scanJson(body, { maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes }).ok) parsePath(parsed, body);
    if (parsed.textNotLifted !== undefined) {
      notLifted++;
      if (parsed.textNotLifted === 'lone_surrogate') loneSurrogate++;
      const ex = exchange(limits);
      const fast = fastPath(ex, body);
      if (parsed.textNotLifted === 'max_json_depth' || parsed.textNotLifted === 'max_json_nodes') {
        if (fast !== undefined) assert.deepEqual([fast === body, ex.textNotLifted], [true, parsed.textNotLifted], `seed ${seed}: ${body.toString()}`);
      } else assert.equal(fast, undefined, `seed ${seed}: ${body.toString()}`);
    }
  }
  assert.ok(notLifted > 20 && loneSurrogate > 20, `${notLifted} results not lifted for a bound, ${loneSurrogate} for a lone surrogate`);
  // Declined: no long text, a lossy number, `structuredContent: null`, a later text holding an object...
  const { total, answered, rewritten } = comparison;
  assert.ok(total > 800 && answered > rewritten / 2, `answered ${answered} of ${total}, the parse path lifted ${rewritten}`);
});
