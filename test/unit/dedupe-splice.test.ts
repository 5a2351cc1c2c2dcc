/**
 * spliceDedupe (src/response/dedupe-splice.ts): the dedupe of a text copy of
 * `structuredContent` from the scan, without JSON.parse of the message or the text, must send
 * exactly the bytes the parse path sends (json-stage.ts: rewriteResponse, then spliceRewrite
 * or JSON.stringify) whenever it answers, and must answer the common shape: a seller's
 * `JSON.stringify(structuredContent)` in `content[0].text` (the bench's (b) case).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { scanJson } from '../../src/mcp/json-scan.js';
import { spliceDedupe } from '../../src/response/dedupe-splice.js';
import { LIMITS, ParsePathComparison, RESULT_EXTRAS, exchange, generator, parsePath, typeVariantItem } from '../helpers/tool-result-fuzz.js';

function fastPath(ex: Exchange, body: Buffer): Buffer | undefined {
  const scan = scanJson(body, { maxDepth: ex.limits.max_json_depth, maxNodes: ex.limits.max_json_nodes });
  assert.ok(scan.ok);
  return spliceDedupe(ex, body, scan);
}

const message = (content: string, sc: string, extra = ''): Buffer =>
  Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[${content}],"structuredContent":${sc}${extra}}}`, 'utf8');
const textItem = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;
const summary = (text: string, fields: string): string => JSON.stringify(`Result in structuredContent (${Buffer.byteLength(text)} bytes): ${fields}.`);

test('a JSON.stringify copy of structuredContent is deduped from the scan: the parse path bytes exactly', () => {
  const data = { status: 'completed', products: [{ id: 'p1', name: 'caf\u00e9 \ud83d\ude00 "q" \\ /\n', price: 12.5 }, { id: 'p2' }], message: 'Found 2 products.' };
  const sc = JSON.stringify(data);
  const body = message(`${textItem(sc)},${textItem('Found 2 products.')}`, sc, ',"isError":false');
  const fast = fastPath(exchange(), body);
  assert.ok(fast, 'the common shape is handled');
  assert.equal(
    fast.toString('utf8'),
    `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":${summary(sc, 'status=completed; products[2], message')}},${textItem('Found 2 products.')}],"structuredContent":${sc},"isError":false}}`,
  );
  assert.deepEqual(fast, parsePath(exchange(), body));
});

test('every copy is replaced, other items kept; structuredContent before content; escapes the seller chose in the text', () => {
  const sc = '{"a":[1,2,3],"b":"x\\u00e9\\/y","c":{"d":null}}';
  // The text's string holds the structuredContent bytes exactly, its characters written with other escapes.
  const written = `"${sc.replace(/\\/g, '\\\\').replace(/"/g, '\\u0022').replace('a', '\\u0061')}"`;
  assert.equal(JSON.parse(written), sc);
  const items = [`{"type":"text","text":${written}}`, '{"type":"image","data":"eA==","mimeType":"image/png"}', textItem('Found it.'), `{"text":${JSON.stringify(sc)},"type":"text"}`, textItem(sc)];
  const body = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"structuredContent":${sc},"content":[${items.join(',')}]}}`, 'utf8');
  const fast = fastPath(exchange(), body);
  assert.ok(fast);
  const s = summary(sc, 'a[3], b, c');
  assert.equal(
    fast.toString('utf8'),
    `{"jsonrpc":"2.0","id":7,"result":{"structuredContent":${sc},"content":[{"type":"text","text":${s}},${items[1]},${items[2]},{"text":${s},"type":"text"},{"type":"text","text":${s}}]}}`,
  );
  assert.deepEqual(fast, parsePath(exchange(), body));
});

test('a long result (4 MiB class, the text scanned in WebAssembly): the parse path bytes exactly', () => {
  const products = Array.from({ length: 400 }, (_, k) => ({ id: `p${k}`, name: `Caf\u00e9 \ud83d\ude00 "${k}"\n`, price: k / 4, tags: ['a/b', '\\'] }));
  const sc = JSON.stringify({ status: 'completed', products, message: 'x'.repeat(1000) });
  const body = message(`${textItem(sc)},${textItem('Found 400 products.')}`, sc);
  const fast = fastPath(exchange(), body);
  assert.ok(fast);
  assert.deepEqual(fast, parsePath(exchange(), body));
});

test('declined (the parse path decides): deep-equal but not byte-equal copies, odd results, numbers, surrogates, more items than the scan locates, no copy', () => {
  const sc = '{"a":1,"b":[true]}';
  const cases: [string, Buffer][] = [
    ['another key order', message(textItem('{"b":[true],"a":1}'), sc)],
    ['spaces', message(textItem('{"a": 1, "b": [true]}'), sc)],
    ['another number spelling', message(textItem('{"a":1.0,"b":[true]}'), sc)],
    ['a copy after a deep-equal one', message(`${textItem('{"b":[true],"a":1}')},${textItem(sc)}`, sc)],
    ['an error result', message(textItem(sc), sc, ',"isError":true')],
    ['a task handle', message(textItem(sc), sc, ',"resultType":"task"')],
    ['structuredContent an array', message(textItem('[1]'), '[1]')],
    ['structuredContent null', message(textItem(sc), 'null')],
    ['adcp_error-only structuredContent', message(textItem('{"adcp_error":{"code":"X"}}'), '{"adcp_error":{"code":"X"}}')],
    ['a lossy number', message(textItem('{"n":12345678901234567890}'), '{"n":12345678901234567890}')],
    // The text's own escape decodes to a lone surrogate (deep-equal to structuredContent, no byte copy of it).
    ['a lone surrogate', message('{"type":"text","text":"{\\"s\\":\\"\\ud800\\"}"}', '{"s":"\\ud800"}')],
    ['more items than the 16 the scan locates (a copy among them)', message([...Array<string>(16).fill(textItem('x')), textItem(sc)].join(','), sc)],
    ['no copy', message(textItem('Found 1.'), sc)],
    ['no located text', message('{"type":"image","data":"eA=="}', sc)],
  ];
  for (const [name, body] of cases) assert.equal(fastPath(exchange(), body), undefined, name);
  assert.equal(fastPath(exchange(LIMITS, 'tools/call', 8), message(textItem(sc), sc)), undefined, 'another id');
  assert.equal(fastPath(exchange(LIMITS, 'tools/list'), message(textItem(sc), sc)), undefined, 'not a tool result');
  const head = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[${textItem(sc)}],"structuredContent":${sc},"note":"`, 'utf8');
  assert.equal(fastPath(exchange(), Buffer.concat([head, Buffer.from([0xff]), Buffer.from('"}}')])), undefined, 'invalid UTF-8');
  // The parse path dedupes the deep-equal ones: declining them loses nothing. (Copies longer
  // than their summary here: a shorter copy is kept as written, by both paths.)
  const pad = 'p'.repeat(60);
  assert.ok(parsePath(exchange(), message(textItem(`{"b":[true],"a":1,"pad":"${pad}"}`), `{"a":1,"b":[true],"pad":"${pad}"}`)));
  assert.equal(parsePath(exchange(), message(textItem('{"b":[true],"a":1}'), sc)), undefined, 'a deep-equal copy shorter than its summary is kept');
  assert.ok(parsePath(exchange(), message(`{"type":"text","text":"{\\"s\\":\\"\\ud800\\",\\"pad\\":\\"${pad}\\"}"}`, `{"s":"\\ud800","pad":"${pad}"}`)));
  // An escape written inside the copied JSON (the text holds `\ud800` as six characters) is plain bytes: a copy.
  const escaped = message(`{"type":"text","text":"{\\"s\\":\\"\\\\ud800\\",\\"pad\\":\\"${pad}\\"}"}`, `{"s":"\\ud800","pad":"${pad}"}`);
  assert.deepEqual(fastPath(exchange(), escaped), parsePath(exchange(), escaped));
  assert.ok(fastPath(exchange(), escaped));
});

test('a dedupe the parse path would re-serialize (invalid UTF-8 elsewhere) sends the seller bytes, longer or not (review 38: re-serialized, structuredContent was re-spelled)', () => {
  const sc = JSON.stringify({ a: 1, message: 'm'.repeat(100) });
  const head = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"structuredContent":${sc},"content":[${textItem(sc)},{"type":"text","text":"`, 'utf8');
  const invalid = (n: number): Buffer => Buffer.concat([head, Buffer.alloc(n, 0xff), Buffer.from('"}]}}')]);
  assert.equal(fastPath(exchange(), invalid(1000)), undefined, 'not valid UTF-8: the parse path decides');
  assert.equal(parsePath(exchange(), invalid(1000)), undefined, '1,000 invalid bytes would become 3,000: unchanged');
  assert.equal(parsePath(exchange(), invalid(10)), undefined, 'a few: the re-serialized dedupe would be shorter, but is not made either');
});

test('texts that hold no object are left (as the parse path leaves them); other objects are left to the parse path, long ones told apart by their first bytes', () => {
  const pad = 'x'.repeat(80);
  const sc = JSON.stringify({ ok: true, pad });
  const long = 'y'.repeat(5000); // past the 4 KiB under which texts skip the prefix check
  const plain = [
    textItem(`[1,2,"${pad}"]`),
    textItem(`not json ${pad}`),
    textItem(''),
    textItem(' \n\t '),
    textItem(`  [{"ok":true}] ${pad}`),
    '{"type":"text","text":"\\n Found it."}',
    textItem(`not json ${long}`),
    textItem(`  [{"ok":true}] ${long}`),
    textItem(' '.repeat(5000)),
  ];
  for (const other of plain) {
    const body = message(`${other},${textItem(sc)}`, sc);
    const fast = fastPath(exchange(), body);
    assert.ok(fast, other);
    assert.deepEqual(fast, parsePath(exchange(), body));
  }
  // Objects that are no byte copy, whatever the parse path then makes of them (invalid, over a
  // bound, adcp_error-only, pretty-printed, another key order, leading whitespace, a copy
  // differing only past the first 64 bytes, a shorter text).
  const objectsWith = (pad: string, sc: string): string[] => [
    textItem(`{"a": "${pad}"`),
    textItem(JSON.stringify({ adcp_error: { code: 'X', pad } })),
    textItem(JSON.stringify({ deep: [[[[[[[[pad]]]]]]]] })),
    textItem(JSON.stringify({ ok: true, pad }, null, 2)),
    textItem(JSON.stringify({ pad, ok: true })),
    textItem(` ${sc}`),
    '{"type":"text","text":"\\n' + JSON.stringify(sc).slice(1) + '}',
    textItem(sc.replace(/x"}$/, 'y"}')),
    textItem('{"ok":true}'),
  ];
  const limits = { ...LIMITS, max_json_depth: 8 };
  // Over 4 KiB: the first bytes tell each one apart, and the fast path declines.
  const longPad = 'x'.repeat(5000);
  const longSc = JSON.stringify({ ok: true, pad: longPad });
  for (const other of objectsWith(longPad, longSc)) {
    const body = message(`${other},${textItem(longSc)}`, longSc);
    assert.equal(fastPath(exchange(limits), body), undefined, other.slice(0, 80));
  }
  // Shorter ones are judged whole: declined, or (an object the parse path passes over too:
  // invalid, over a bound, adcp_error-only) passed over, and the copy after it deduped as the parse path does.
  let passedOver = 0;
  for (const other of objectsWith(pad, sc)) {
    const body = message(`${other},${textItem(sc)}`, sc);
    const fast = fastPath(exchange(limits), body);
    if (fast === undefined) continue;
    passedOver++;
    assert.deepEqual(fast, parsePath(exchange(limits), body), other);
  }
  assert.equal(passedOver, 3, 'the invalid, the adcp_error-only and the too-deep object');
  // The pretty-printed copy is deduped by the parse path.
  assert.ok(parsePath(exchange(), message(`${textItem(JSON.stringify({ ok: true, pad }, null, 2))},${textItem(sc)}`, sc)));
});

test('randomized results with structuredContent: whenever the fast path answers, the parse path bytes exactly', () => {
  const comparison = new ParsePathComparison();
  for (let seed = 1; seed <= 1500; seed++) {
    const g = generator(seed);
    // The seller's structuredContent as written, and texts: its exact bytes (as string literals
    // with varied escapes), another object, or plain text.
    const sc = g.text().trim();
    const items: string[] = [];
    const count = 1 + g.int(3);
    for (let k = 0; k < count; k++) {
      items.push(
        g.pick([
          () => `{"type":"text","text":${g.string(sc)}}`,
          () => `{"type":"text","text":${g.string(sc)}}`,
          () => `{"type":"text","text":${g.string(g.text())}}`,
          () => '{"type":"text","text":"Found 2 products."}',
          () => '{"type":"image","data":"eA==","mimeType":"image/png"}',
          () => `{"type":"resource","text":${g.string(sc)}}`,
          () => `{"text":${g.string(g.text())},"type":"text","text":${g.string(sc)}}`,
          () => typeVariantItem(g, g.string(sc)),
        ])(),
      );
    }
    const extra = g.pick(RESULT_EXTRAS);
    const result = g.chance(0.5) ? `"content":[${items.join(',')}],"structuredContent":${sc}${extra}` : `"structuredContent":${sc},"content":[${items.join(',')}]${extra}`;
    const body = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{${result}}}`, 'utf8');
    const limits = g.pick([LIMITS, { ...LIMITS, max_json_nodes: 40 }, { ...LIMITS, max_json_depth: 5 }]);
    comparison.check(exchange(limits), body, fastPath, `seed ${seed}`);
  }
  // Declined: a lossy number, an error result, a later text holding another object...
  const { total, answered, rewritten } = comparison;
  assert.ok(total > 800 && answered > rewritten / 2, `answered ${answered} of ${total}, the parse path deduped ${rewritten}`);
});
