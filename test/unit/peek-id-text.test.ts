/**
 * peekJsonRpc's `idText` (src/request/peek.ts) and stringifyJsonRpc (src/errors/json-rpc-text.ts):
 * a numeric id JSON.stringify writes otherwise keeps the host's text, and minted messages carry
 * it. Reported failures: big numeric ids lost digits in minted errors; `1.0`, `1E2`, `-0`
 * came back `1`, `100`, `0` (a hostile new-user trial 13, L2).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peekJsonRpc } from '../../src/request/peek.js';
import { stringifyJsonRpc } from '../../src/errors/json-rpc-text.js';

/** The peek's idText for a request whose id member is written `key: idJson`; `params` pads the body (over 1 KiB: the scan reading). */
const idText = (idJson: string, key = '"id"', params = '{}'): string | undefined => {
  const r = peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0",${key}:${idJson},"method":"ping","params":${params}}`));
  assert.equal(r.ok, true);
  return r.ok ? r.peek.idText : undefined;
};

const LARGE = `{"pad":"${'x'.repeat(1100)}"}`;

for (const [reading, params] of [['JSON.parse', '{}'], ['scan (over 1 KiB)', LARGE]] as const) {
  test(`idText (${reading} reading): for a number JSON.stringify writes otherwise`, () => {
    assert.equal(idText('9007199254740993', '"id"', params), '9007199254740993');
    assert.equal(idText('-12345678901234567890', '"id"', params), '-12345678901234567890');
    assert.equal(idText('9007199254740992', '"id"', params), undefined); // exact as a double
    assert.equal(idText('42', '"id"', params), undefined);
    assert.equal(idText('-42', '"id"', params), undefined);
    assert.equal(idText('1.5', '"id"', params), undefined);
    assert.equal(idText('1e+21', '"id"', params), undefined); // JSON.stringify's own spelling
    // The same value spelled otherwise: kept, so a minted answer carries the host's bytes (a
    // hostile new-user trial 13, L2: test/regressions/minted-error-rewrites-host-id.test.ts).
    assert.equal(idText('1e3', '"id"', params), '1e3');
    assert.equal(idText('1.0', '"id"', params), '1.0');
    assert.equal(idText('1E2', '"id"', params), '1E2');
    assert.equal(idText('0.1e1', '"id"', params), '0.1e1');
    assert.equal(idText('-0', '"id"', params), '-0');
    assert.equal(idText('1.50', '"id"', params), '1.50');
    assert.equal(idText('"9007199254740993"', '"id"', params), undefined); // a string id is exact already
    // Read by JSON.parse as a safe integer it is not (test/regressions/response-id-compared-as-double.test.ts).
    assert.equal(idText('0.99999999999999999999', '"id"', params), '0.99999999999999999999');
    assert.equal(idText('1e-400', '"id"', params), '1e-400');
    // A key written with escapes is the id too (mcp/written-ids.ts).
    assert.equal(idText('9007199254740993', '"\\u0069d"', params), '9007199254740993');
    assert.equal(idText('0.99999999999999999999', '"\\u0069d"', params), '0.99999999999999999999');
    // An id written twice is ambiguous: refused for id null, no idText
    // (test/regressions/host-repeated-member-names-bypass-tool-limit.test.ts).
    for (const [first, last] of [['1', '9007199254740995'], ['1.00000000000000000001', '1'], ['1', '1.00000000000000000001']]) {
      const r = peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0","id":${first},"id":${last},"method":"ping","params":${params}}`));
      assert.deepEqual(r.ok ? undefined : [r.kind, r.id, r.idText, r.message], ['invalid_request', null, undefined, `Invalid Request: the member "id" is written twice ("id", "id"); send it once.`]);
    }
  });
}

test('idText of a safe integer id with other "id" members (nested, as a value) is read exactly', () => {
  const body = (id: string, params: string): string | undefined => {
    const r = peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0","method":"tools/call","params":${params},"id":${id}}`));
    assert.equal(r.ok, true);
    return r.ok ? r.peek.idText : undefined;
  };
  assert.equal(body('7', '{"name":"id","arguments":{"id":"c-1","items":[{"id":3}]}}'), undefined);
  assert.equal(body('7', '{"arguments":{"id":2.5}}'), undefined); // the walk finds the top-level id exact
  assert.equal(body('0.99999999999999999999', '{"arguments":{"id":3}}'), '0.99999999999999999999');
  assert.equal(body('1.00000000000000000001', '{"arguments":{"text":"\\u0041"}}'), '1.00000000000000000001');
});

test('idText of an invalid request is kept for its refusal', () => {
  const r = peekJsonRpc(Buffer.from('{"jsonrpc":"1.0","id":9007199254740993,"method":"ping"}'));
  assert.equal(r.ok, false);
  assert.equal(r.ok ? undefined : r.idText, '9007199254740993');
});

test('stringifyJsonRpc writes the id text in place of the parsed id, and only there', () => {
  const message = { jsonrpc: '2.0' as const, id: 9007199254740992, error: { code: -1, message: 'id 9007199254740992' } };
  assert.equal(stringifyJsonRpc(message, '9007199254740993'), '{"jsonrpc":"2.0","id":9007199254740993,"error":{"code":-1,"message":"id 9007199254740992"}}');
  assert.equal(stringifyJsonRpc(message, undefined), JSON.stringify(message));
});
