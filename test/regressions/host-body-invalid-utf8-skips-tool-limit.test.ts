/**
 * Regression (a hostile new-user trial 14, L2): a host request whose body is not well-formed
 * UTF-8 was forwarded byte for byte, while the gateway read it with U+FFFD in place of each
 * ill-formed sequence. `"name":"small_tool<0xFF>"` matched no configured tool for the gateway
 * (`small_tool\uFFFD`), so the agent's 4 MiB applied instead of small_tool's 500 bytes; a
 * seller decoding leniently (Python `body.decode('utf-8', 'ignore')`, any decoder that drops
 * bad bytes) read `small_tool` and ran the tool whose limit was skipped: the host got 2,073
 * bytes of a 500-byte tool.
 *
 * Input: a raw seller on 127.0.0.1 that decodes leniently (drops every byte of an ill-formed
 * sequence, as `decode('utf-8', 'ignore')` does) and answers a `tools/call` with `size` bytes
 * of text, behind the real gateway, agent `s` with `tools: { small_tool: { max_response_bytes:
 * 500 } }`; real POSTs of raw bytes.
 * Expected: a body that is not well-formed UTF-8 (RFC 8259 §8.1: JSON exchanged between
 * systems MUST be UTF-8) is refused before anything reaches the seller: HTTP 400, JSON-RPC
 * -32700 `parse_error` (it is no JSON text at all: JSON-RPC 2.0 §5.1, "Invalid JSON was
 * received"), id null, the message naming UTF-8; one `refused` line. Whatever the body's form
 * (a single request, a batch, over 1 KiB: the peek's scan reading) and label
 * (`application/json`, `text/plain`, none, `charset=iso-8859-1`), and whatever the ill-formed
 * sequence (a stray 0xFF, a Latin-1 `é`, an overlong `C0 AF`, an encoded surrogate
 * `ED A0 80`, a sequence cut at the end of the body).
 * Controls: well-formed multi-byte UTF-8 (`é`, `😀`, U+FFFD itself) is forwarded byte for byte;
 * the plain `small_tool` call gets its 500-byte limit.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

/** What a lenient seller reads: the body decoded with every byte of an ill-formed sequence dropped. */
function lenientText(body: Buffer): string {
  return new TextDecoder('utf-8').decode(body).replaceAll('\uFFFD', '');
}

/** The seller's answer to request `id`: `size` bytes of text. */
const sellerAnswer = (id: unknown, size: number): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(size) }] } });

const REFUSAL =
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the request body is not well-formed UTF-8, which JSON exchanged between systems must be (RFC 8259 §8.1); send it as UTF-8.","data":{"reason":"parse_error"}}}';

/** `text` with each `<XX>` (two hex digits) replaced by that byte. */
const bytes = (text: string): Buffer => Buffer.concat(text.split(/(<[0-9A-F]{2}>)/).map((part) => (/^<[0-9A-F]{2}>$/.test(part) ? Buffer.from([parseInt(part.slice(1, 3), 16)]) : Buffer.from(part, 'utf8'))));

const call = (id: number, name: string, extra = ''): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"size":2000${extra}}}}`;
const PAD = `,"pad":"${'p'.repeat(1500)}"`;

const REFUSED: ReadonlyArray<readonly [label: string, body: Buffer, contentType: string | undefined, protocolVersion?: string]> = [
  ['a stray 0xFF in the tool name (the trial)', bytes(call(1, 'small_tool<FF>')), 'application/json'],
  ['over 1 KiB (the scan reading)', bytes(call(2, 'small_tool<FF>', PAD)), 'application/json'],
  ['labelled text/plain', bytes(call(3, 'small_tool<FF>')), 'text/plain'],
  ['with no Content-Type', bytes(call(4, 'small_tool<FF>')), undefined],
  ['a Latin-1 é labelled charset=iso-8859-1', bytes(call(5, 'small_tool', ',"note":"caf<E9>"')), 'application/json; charset=iso-8859-1'],
  ['an overlong encoding of "/" (C0 AF)', bytes(call(6, 'small<C0><AF>tool')), 'application/json'],
  ['an encoded surrogate (ED A0 80)', bytes(call(7, 'small_tool', ',"s":"<ED><A0><80>"')), 'application/json'],
  ['a sequence cut at the end of the body', bytes(`${call(8, 'small_tool')}<E2><82>`), 'application/json'],
  ['a batch (2025-03-26) whose second element holds 0xFF', bytes(`[{"jsonrpc":"2.0","id":9,"method":"ping"},${call(10, 'small_tool<FF>')}]`), 'application/json', '2025-03-26'],
];

describe('host-body-invalid-utf8-skips-tool-limit', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        type Call = { id: unknown; params?: { arguments?: { size?: number } } };
        const msg = JSON.parse(lenientText(req.body)) as Call | Call[];
        const answer = (m: Call): string => sellerAnswer(m.id, m.params?.arguments?.size ?? 0);
        res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(msg) ? `[${msg.map(answer).join(',')}]` : answer(msg));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, tools: '{ small_tool: { max_response_bytes: 500 } }' } })),
  );

  async function post(body: Buffer, contentType: string | undefined, protocolVersion = '2025-06-18'): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': protocolVersion };
    if (contentType !== undefined) headers['content-type'] = contentType;
    const r = await fetch(stack.gateway.agentUrl('s'), { method: 'POST', headers, body });
    return { status: r.status, text: await r.text() };
  }

  for (const [label, body, contentType, protocolVersion] of REFUSED) {
    test(`${label}: 400 parse_error, id null, the seller not contacted`, async () => {
      const seen = stack.seller.requests.length;
      const lines = stack.gateway.lines.length;
      assert.deepEqual(await post(body, contentType, protocolVersion), { status: 400, text: REFUSAL });
      assert.equal(stack.seller.requests.length, seen, 'the seller was contacted');
      const refused = await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= lines);
      assert.deepEqual({ reason: refused.reason, status: refused.status }, { reason: 'parse_error', status: 400 });
    });
  }

  test('control: well-formed multi-byte UTF-8 (é, 😀, U+FFFD) is forwarded byte for byte', async () => {
    const body = Buffer.from(call(11, 'big_tool', ',"note":"café 😀 \uFFFD"'), 'utf8');
    const seen = stack.seller.requests.length;
    assert.deepEqual(await post(body, 'application/json'), { status: 200, text: sellerAnswer(11, 2000) });
    assert.equal(stack.seller.requests.length, seen + 1);
    assert.ok(stack.seller.requests[seen]!.body.equals(body));
  });

  test('control: a plain small_tool call gets its 500-byte limit', async () => {
    const r = await post(Buffer.from(call(12, 'small_tool')), 'application/json');
    assert.equal(r.status, 200);
    const m = JSON.parse(r.text) as { id: unknown; result: { isError: boolean; structuredContent: { adcp_error: { code: string; details: unknown } } } };
    const error = m.result.structuredContent.adcp_error;
    assert.deepEqual(
      { id: m.id, isError: m.result.isError, code: error.code, details: error.details },
      { id: 12, isError: true, code: 'RESPONSE_TOO_LARGE', details: { reason: 'raw_bytes', limit_bytes: 500, observed_bytes: Buffer.byteLength(sellerAnswer(12, 2000)) } },
    );
  });
});
