/**
 * locateToolResult (src/mcp/tool-result-ranges.ts): the ranges a walk of the seller's bytes
 * finds for the splice (response/splice.ts spliceTarget) where the JSON scan records none
 * (content items past its first 16, a 2026-07-28 `tasks/get`'s `result.result`: review 38).
 * Checked on seeded messages (whitespace between tokens, escapes in strings, repeated and
 * escaped keys, items of every kind): where the scan records them, the walk's ranges are the
 * scan's exactly; for every item, each range's JSON text is what `JSON.parse` reads as that
 * item's `text` / `type` (the last key winning), and no range where the parsed item has no
 * string there; the same tool result inside a `tasks/get` envelope gives the same ranges
 * moved by the envelope's prefix.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SCAN_CONTENT_ITEMS, scanJson, type ByteRange } from '../../src/mcp/json-scan.js';
import { locateToolResult } from '../../src/mcp/tool-result-ranges.js';
import { generator, typeVariantItem } from '../helpers/tool-result-fuzz.js';

const LIMITS = { maxDepth: 64, maxNodes: 1_000_000 };
const CASES = 400;

/** A seeded tool result (JSON text) with up to 40 items of many kinds. */
function toolResult(seed: number): string {
  const g = generator(seed);
  const ws = (): string => (g.chance(0.3) ? g.pick([' ', '\n', '\t', '\r\n  ']) : '');
  const sc = g.text().trim();
  const items = Array.from({ length: g.int(41) }, () => {
    const text = g.string(g.chance(0.5) ? sc : g.text());
    return g.pick([
      () => `{${ws()}"type"${ws()}:${ws()}"text"${ws()},${ws()}"text"${ws()}:${ws()}${text}${ws()}}`,
      () => typeVariantItem(g, text),
      () => `{"type":"image","data":"eA==","mimeType":"image/png","_meta":{"text":"x","type":"y"}}`,
      () => `{"text":${text},"text":{"a":[1,"}"]},"type":"text"}`,
      () => `{"text":1,"text":${text}}`,
      () => g.pick(['1', '"text"', '[{"text":"x"}]', 'null', '{}']),
    ])();
  });
  // An item key written with an escape (the ranges are then not to be used).
  if (g.chance(0.15)) items.splice(g.int(items.length + 1), 0, `{"t\\u0065xt":"{}","type":"text"}`);
  const members = [`"content":${ws()}[${ws()}${items.join(`${ws()},${ws()}`)}${ws()}]`];
  if (g.chance(0.7)) members.splice(g.int(2), 0, `"structuredContent":${ws()}${sc}`);
  if (g.chance(0.3)) members.push(`"_meta":{"content":[],"n":1e2,"2026":"a","2025":"b"}`);
  if (g.chance(0.1)) members.unshift(`"content":[{"type":"text","text":"earlier"}]`);
  return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
}

const shifted = (range: ByteRange | undefined, by: number): ByteRange | undefined => range && [range[0] + by, range[1] + by];

test('the walk finds the scan ranges, and every item past them as JSON.parse reads it; inside a tasks/get result, the same ranges moved', () => {
  let beyond = 0;
  let compared = 0;
  for (let seed = 1; seed <= CASES; seed++) {
    const result = toolResult(seed);
    const head = `{"jsonrpc":"2.0","id":${seed},"result":`;
    const body = Buffer.from(`${head}${result}}`, 'utf8');
    const scan = scanJson(body, LIMITS);
    assert.ok(scan.ok && scan.members, `seed ${seed}: ${result}`);
    const located = locateToolResult(body, 'result', scan.members.structuredContent);
    assert.ok(located?.content, `seed ${seed}`);
    const items = located.content;
    const scanned = scan.members.content!;
    assert.equal(items.count, scanned.count, `seed ${seed}`);
    assert.equal(located.end, scan.members.resultEnd, `seed ${seed}`);
    assert.deepEqual(located.structuredContent, scan.members.structuredContent, `seed ${seed}`);
    assert.equal(located.plainKeys, scan.members.plainKeys && scan.members.resultPlainKeys && scanned.plainKeys, `seed ${seed}`);
    if (!located.plainKeys) continue;
    compared++;
    assert.deepEqual(items.texts.slice(0, SCAN_CONTENT_ITEMS), scanned.texts, `seed ${seed}: texts`);
    assert.deepEqual(items.types.slice(0, SCAN_CONTENT_ITEMS), scanned.types, `seed ${seed}: types`);
    const parsed = (JSON.parse(body.toString('utf8')) as { result: { content: unknown[] } }).result.content;
    for (let k = 0; k < parsed.length; k++) {
      if (k >= SCAN_CONTENT_ITEMS) beyond++;
      const item = parsed[k] as Record<string, unknown> | null;
      const isObject = item !== null && typeof item === 'object' && !Array.isArray(item);
      for (const [key, ranges] of [['text', items.texts], ['type', items.types]] as const) {
        const range = ranges[k];
        const value = isObject ? item[key] : undefined;
        if (typeof value !== 'string') assert.equal(range, undefined, `seed ${seed} item ${k} ${key}`);
        else assert.equal(JSON.parse(body.toString('utf8', range![0], range![1])), value, `seed ${seed} item ${k} ${key}`);
      }
    }
    // The same tool result as a completed task's result (2026-07-28 tasks/get).
    const taskHead = `{"jsonrpc":"2.0","id":${seed},"result":{"taskId":"t","status":"completed", "result" :`;
    const task = Buffer.from(`${taskHead}${result},"_meta":{"n":1}} , "x":[{"result":{}}]}`, 'utf8');
    const inTask = locateToolResult(task, 'result.result');
    const by = taskHead.length - head.length;
    assert.ok(inTask?.content && inTask.plainKeys, `seed ${seed}: task`);
    assert.equal(inTask.end, located.end + by);
    assert.deepEqual(inTask.structuredContent, shifted(located.structuredContent, by));
    assert.deepEqual(inTask.content.texts, items.texts.map((r) => shifted(r, by)));
    assert.deepEqual(inTask.content.types, items.types.map((r) => shifted(r, by)));
  }
  assert.ok(compared > CASES / 4 && beyond > 1000, `compared ${compared}, items past the scan's ${beyond}`);
});

test('not placed: no object at the location, an escaped key on the way', () => {
  assert.equal(locateToolResult(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[1]}'), 'result'), undefined);
  assert.equal(locateToolResult(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"status":"working"}}'), 'result.result'), undefined);
  // The last `result` is the one JSON.parse keeps: an earlier object does not count.
  assert.equal(locateToolResult(Buffer.from('{"result":{"content":[]},"result":1}'), 'result'), undefined);
  assert.equal(locateToolResult(Buffer.from('{"result":{"result":{"content":[]}} ,"id":1, "result":{"result":1}}'), 'result.result'), undefined);
  assert.equal(locateToolResult(Buffer.from('{"result":{"result":{"content":[]},"result":"x"}}'), 'result.result'), undefined);
  assert.equal(locateToolResult(Buffer.from('{"result":{"result":{"content":[]}},"id":1,"result":{"result":{"content":[1,2]}}}'), 'result.result')?.content?.count, 2);
  const escapedOuter = locateToolResult(Buffer.from('{"result":{"st\\u0061tus":"completed","result":{"content":[]}}}'), 'result.result');
  assert.equal(escapedOuter?.plainKeys, false);
  const escapedTop = locateToolResult(Buffer.from('{"\\u0069d":1,"result":{"content":[]}}'), 'result');
  assert.equal(escapedTop?.plainKeys, false);
});
