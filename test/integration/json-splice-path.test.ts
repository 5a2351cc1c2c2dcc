/**
 * The JSON stage lifts a legacy text-only result (src/response/lift-splice.ts) and dedupes a
 * text copy of structuredContent (src/response/dedupe-splice.ts) from its scan (issue 5) and
 * sends exactly what the parse path sends; answers it cannot decide (a lone surrogate in the
 * text's string, a later text item that may be a copy, a copy with other spacing) still get
 * the parse path's decision. Each case: what the seller sends, what the host gets (exact bytes). Real
 * gateway, raw seller on 127.0.0.1.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

let body = '';
const stack = useSellerAndGateway(
  () => startRawSeller((_req: SeenRequest, res: ServerResponse) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body)),
  (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n`),
);

const call = (id: number) => rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
const item = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;
const summary = (text: string, fields: string): string => JSON.stringify(`Result in structuredContent (${Buffer.byteLength(text)} bytes): ${fields}.`);

describe('JSON stage: the legacy lift from the scan', () => {
  test('the text becomes structuredContent as written (escapes decoded), the item a summary; the rest the seller bytes', async () => {
    const text = '{ "status": "completed", "products": [ {"id": "p1", "name": "caf\u00e9 \ud83d\ude00", "price": 12.50} ], "note": "a\\"b" }';
    // The seller writes some characters of the text as escapes (`\u00e9`, a surrogate pair).
    const written = JSON.stringify(text).replace('\u00e9', '\\u00e9').replace('\ud83d\ude00', '\\ud83d\\ude00');
    body = `{"jsonrpc":"2.0", "id":1, "result":{"content":[{"type":"text","text":${written}}, ${item('Found 1 product.')}], "isError":false}}`;
    const r = await call(1);
    assert.equal(r.text(), `{"jsonrpc":"2.0", "id":1, "result":{"content":[{"type":"text","text":${summary(text, 'status=completed; products[1], note')}}, ${item('Found 1 product.')}], "isError":false,"structuredContent":${text}}}`);
  });

  test('undecided from the scan, decided by the parse path: a lone surrogate (not lifted), a pair split across two escapes, a later text that may be a copy', async () => {
    // A lone surrogate in the text: not lifted (lone_surrogate; a hostile trial 29, M1), the seller bytes.
    body = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\\"s\\":\\"\\ud800\\"}"}]}}`;
    assert.equal((await call(2)).text(), body);
    // The message's `\ud800` and the text's own `\udc00`: one character once the text is parsed, lifted re-serialized.
    body = `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"{\\"s\\":\\"\\ud800\\\\udc00\\"}"}]}}`;
    assert.equal((await call(6)).text(), `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":${summary('{"s":"\ud800\\udc00"}', 's')}}],"structuredContent":{"s":"\u{10000}"}}}`);
    const text = '{"a":1}';
    body = `{"jsonrpc":"2.0","id":3,"result":{"content":[${item(text)},${item(text)}]}}`;
    // The lifted item becomes the summary; the later copy, shorter than its summary, stays as written.
    assert.equal((await call(3)).text(), `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":${summary(text, 'a')}},${item(text)}],"structuredContent":${text}}}`);
  });
});

describe('JSON stage: the dedupe from the scan', () => {
  test("a seller's JSON.stringify(structuredContent) text becomes the summary; everything else the seller bytes", async () => {
    const sc = JSON.stringify({ status: 'completed', products: [{ id: 'p1', name: 'caf\u00e9 "q"\n' }], next_cursor: null });
    body = `{"jsonrpc":"2.0","id":4,"result":{"content":[${item(sc)}, ${item('Found 1 product.')}],"structuredContent":${sc}, "isError":false}}`;
    const r = await call(4);
    assert.equal(r.status, 200);
    assert.equal(r.text(), `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":${summary(sc, 'status=completed; products[1], next_cursor')}}, ${item('Found 1 product.')}],"structuredContent":${sc}, "isError":false}}`);
    assert.equal(r.headers.get('content-length'), String(Buffer.byteLength(r.text())));
  });

  test('a copy with other spacing is deduped by the parse path, the same way', async () => {
    // Longer than its summary (a shorter copy is kept as written).
    const note = 'A note long enough that the summary is the shorter text.';
    const sc = `{"a":1,"b":[true],"note":"${note}"}`;
    const copy = `{ "b": [true], "note": "${note}", "a": 1 }`;
    body = `{"jsonrpc":"2.0","id":5,"result":{"content":[${item(copy)}],"structuredContent":${sc}}}`;
    assert.equal((await call(5)).text(), `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":${summary(copy, 'a, b[1], note')}}],"structuredContent":${sc}}}`);
  });
});
