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
import { rewriteResponse, toolResultLocation } from '../../src/response/rewrite.js';
import { spliceRewrite } from '../../src/response/splice.js';
import { rng } from '../helpers/json-fuzz.js';

interface Limits {
  max_response_bytes: number;
  max_json_depth: number;
  max_json_nodes: number;
}
const LIMITS: Limits = { max_response_bytes: 1 << 22, max_json_depth: 64, max_json_nodes: 100_000 };

function exchange(limits: Limits = LIMITS, method = 'tools/call', id: unknown = 7): Exchange {
  return { rpc: { kind: 'request', id, method, toolName: undefined }, protocolVersion: '2025-06-18', normalize: true, limits } as unknown as Exchange;
}

/** What the JSON stage's parse path sends: the rewritten bytes, or undefined for the seller's own. */
function parsePath(ex: Exchange, body: Buffer): Buffer | undefined {
  const scan = scanJson(body, { maxDepth: ex.limits.max_json_depth, maxNodes: ex.limits.max_json_nodes });
  assert.ok(scan.ok);
  const message: unknown = JSON.parse(body.toString('utf8'));
  const sc = scan.members?.plainKeys ? scan.members.structuredContent : undefined;
  const rewritten = rewriteResponse(ex, message, body, { numbersRoundTrip: !scan.numberMayBeLossy, structuredContentText: sc && body.toString('utf8', sc[0], sc[1]) });
  if (!rewritten.changed) return undefined;
  const spliced = scan.members !== undefined && toolResultLocation(ex.rpc.method!, ex.protocolVersion) === 'result' ? spliceRewrite(body, scan.members, message, rewritten.message) : undefined;
  return spliced ?? Buffer.from(JSON.stringify(rewritten.message), 'utf8');
}

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
    `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Result in structuredContent (${Buffer.byteLength(text)} bytes): status=completed; products[2], message."},{"type":"text","text":"Found 2 products."}],"isError":false,"structuredContent":${text}}}`,
  );
  assert.deepEqual(fast, parsePath(exchange(), body));
});

test('the summary reads the keys as JSON.parse makes them: duplicates, integer keys first, an own __proto__, escaped keys, status', () => {
  const texts = [
    '{"b":1,"2":[],"a":2,"b":[1,2],"__proto__":[1],"1":{},"st\\u0061tus":"done"}',
    '{"status":"in-progress","status":"x y"}',
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

test('texts past the 16 items the scan locates are parsed: one that holds no object does not stop the lift', () => {
  const body = message([textItem('{"a":1}'), ...Array<string>(16).fill('{"type":"image","data":"eA=="}'), textItem('Found 1 product.')].join(','));
  const fast = fastPath(exchange(), body);
  assert.ok(fast);
  assert.deepEqual(fast, parsePath(exchange(), body));
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
    // A text past the items the scan locates, which may be a copy: parsed, it is an object.
    message([textItem(long({ a: 1 })), ...Array<string>(16).fill(textItem('x')), textItem('{}')].join(',')),
  ];
  for (const body of cases) assert.equal(fastPath(exchange(), body), undefined, body.toString());
  assert.equal(fastPath(exchange(LIMITS, 'tools/call', 8), message(textItem(long({ a: 1 })))), undefined, 'another id');
  assert.equal(fastPath(exchange(LIMITS, 'tools/list'), message(textItem(long({ a: 1 })))), undefined, 'not a tool result');
});

test('skipped texts (not an object, invalid, over a bound, adcp_error-only) leave the lift to the next one, as the parse path', () => {
  const pad = 'x'.repeat(80);
  const next = textItem(JSON.stringify({ ok: true, pad }));
  const skipped = [
    textItem(`[1,2,"${pad}"]`),
    textItem(`{"a": "${pad}"`),
    textItem(JSON.stringify({ adcp_error: { code: 'X', pad } })),
    textItem(JSON.stringify({ deep: [[[[[[[[pad]]]]]]]] })),
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

// ---------------------------------------------------------------------------------------
// Randomized: generated legacy results, the fast path's bytes against the parse path's.

const KEYS = ['status', 'products', 'message', 'adcp_error', '__proto__', '0', '7', '4294967295', 'caf\u00e9', 'a b', 'x'.repeat(70), 'next_cursor', 'errors', 'k\ud83d\ude00'];

function generator(seed: number): { text: () => string; string: (s: string) => string; pick: <T>(a: readonly T[]) => T; chance: (p: number) => boolean; int: (n: number) => number } {
  const r = rng(seed);
  const chance = (p: number): boolean => r() < p;
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const ws = (): string => (chance(0.3) ? pick([' ', '\n', '\t', '\r\n  ']) : '');
  /** A JSON string literal of `s`, some characters written as escapes. */
  const string = (s: string): string => {
    let out = '"';
    for (const ch of s) {
      const cp = ch.codePointAt(0)!;
      if (ch === '"' || ch === '\\' || cp < 0x20) out += JSON.stringify(ch).slice(1, -1);
      else if (chance(0.05)) out += ch.length === 2 ? `\\u${ch.charCodeAt(0).toString(16)}\\u${ch.charCodeAt(1).toString(16).toUpperCase()}` : `\\u${cp.toString(16).padStart(4, '0')}`;
      else if (ch === '/' && chance(0.5)) out += '\\/';
      else out += ch;
    }
    return `${out}"`;
  };
  const scalar = (): string =>
    pick([
      () => String(Math.floor(r() * 1000)),
      () => '-0',
      () => (chance(0.1) ? '1.25e3' : '1.25'),
      () => (chance(0.1) ? '12345678901234567890' : '-17'),
      () => 'true',
      () => 'null',
      () => string(pick(['completed', 'input-required', 'caf\u00e9', 'a"b\\c\n', '\ud83d\ude00', 'x'.repeat(40), '', '</script>'])),
    ])();
  const value = (depth: number): string => {
    if (depth > 3 || chance(0.5)) return scalar();
    if (chance(0.5)) {
      const n = Math.floor(r() * 4);
      return `[${ws()}${Array.from({ length: n }, () => value(depth + 1)).join(`,${ws()}`)}${ws()}]`;
    }
    const n = Math.floor(r() * 3);
    return `{${Array.from({ length: n }, () => `${string(pick(KEYS))}:${ws()}${value(depth + 1)}`).join(',')}}`;
  };
  const text = (): string => {
    const n = Math.floor(r() * 5);
    const members = Array.from({ length: n }, () => `${ws()}${string(pick(KEYS))}${ws()}:${ws()}${value(1)}`);
    if (chance(0.7)) members.splice(Math.floor(r() * (n + 1)), 0, `"pad":${string('x'.repeat(Math.floor(r() * 100)))}`);
    return `${ws()}{${members.join(',')}${ws()}}${ws()}`;
  };
  return { text, string, pick, chance, int: (n) => Math.floor(r() * n) };
}

test('randomized legacy results: whenever the fast path answers, the parse path bytes exactly', () => {
  let answered = 0;
  let lifted = 0;
  let total = 0;
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
        ])(),
      );
    }
    const extra = g.pick(['', ',"isError":false', ',"isError":true', ',"resultType":"complete"', ',"_meta":{"k":1}', ',"structuredContent":null']);
    const body = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[${items.join(',')}]${extra}}}`, 'utf8');
    const limits = g.pick([LIMITS, { ...LIMITS, max_json_nodes: 12 }, { ...LIMITS, max_json_depth: 3 }, { ...LIMITS, max_response_bytes: 120 }]);
    if (!scanJson(body, { maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes }).ok) continue;
    total++;
    const fast = fastPath(exchange(limits), body);
    if (parsePath(exchange(limits), body) !== undefined) lifted++;
    if (fast === undefined) continue;
    answered++;
    assert.deepEqual(fast.toString('utf8'), parsePath(exchange(limits), body)?.toString('utf8'), `seed ${seed}: ${body.toString()}`);
  }
  // Declined: no long text, a lossy number, `structuredContent: null`, a later text holding an object...
  assert.ok(total > 800 && answered > lifted / 2, `answered ${answered} of ${total}, the parse path lifted ${lifted}`);
});
