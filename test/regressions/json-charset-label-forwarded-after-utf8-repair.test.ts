/**
 * Regression: a JSON answer's `charset` label was forwarded unchanged after its bytes were
 * re-encoded as UTF-8.
 *
 * Failure (a hostile trial, F10): a seller answered `Content-Type: application/json;
 * charset=iso-8859-1` with a Latin-1 `é` (E9). The gateway reads JSON as UTF-8 (RFC 8259 §8.1),
 * replaced the ill-formed byte with U+FFFD (EF BF BD: json-stage.ts wellFormedUtf8), and sent
 * the same `charset=iso-8859-1` label: a host honouring it (Python `requests`) read `cafï¿½`, on
 * 2025-03-26 too. `charset=utf-16` and a label naming `charset` twice went out as they were.
 *
 * Now (json-stage.ts sendJsonAnswer, content-type.ts keepsJsonLabel): the host gets the
 * seller's Content-Type only with the seller's bytes, and only when it names no charset or
 * `charset=utf-8` once; other bytes (a repair, a dropped BOM, a rewrite), or the seller's well-formed UTF-8
 * under another charset, go out as `application/json`. The seller's bytes that are not UTF-8
 * (their repair would not fit `max_response_bytes`) keep the seller's label, as does a 4xx body.
 *
 * Input: a raw HTTP seller on 127.0.0.1 answering each tools/call (by tool name) with the
 * Content-Type and exact body bytes below, through the real gateway, hosts on 2025-03-26 and
 * 2025-06-18. Expected: the exact status, Content-Type, body bytes and exchange outcome below.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LATIN1 = 'application/json; charset=iso-8859-1';

/** A tools/call result holding `text`, as JSON text (the caller chooses its encoding). */
const result = (id: number, text: string): string => `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${text}"}]}}`;

/** Tool name -> [status, Content-Type, body bytes for the id]. */
const ANSWERS: Record<string, [number, string, (id: number) => Buffer]> = {
  latin1_byte: [200, LATIN1, (id) => Buffer.from(result(id, 'caf\u00e9'), 'latin1')],
  utf8_label_latin1_byte: [200, 'application/json; charset=utf-8', (id) => Buffer.from(result(id, 'caf\u00e9'), 'latin1')],
  bom_utf8_label: [200, 'application/json; charset=utf-8', (id) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(result(id, 'caf\u00e9'), 'utf8')])],
  latin1_label_ascii: [200, LATIN1, (id) => Buffer.from(result(id, 'cafe'), 'utf8')],
  latin1_label_utf8: [200, LATIN1, (id) => Buffer.from(result(id, 'caf\u00e9'), 'utf8')],
  utf16_label: [200, 'application/json; charset=utf-16', (id) => Buffer.from(result(id, 'cafe'), 'utf8')],
  charset_twice: [200, 'application/json;charset=utf-8;charset=latin1', (id) => Buffer.from(result(id, 'cafe'), 'utf8')],
  lifted_latin1_label: [200, LATIN1, (id) => Buffer.from(result(id, '{\\"name\\":\\"caf\u00e9\\"}'), 'utf8')],
  utf8_label: [200, 'application/json; charset="UTF-8"', (id) => Buffer.from(result(id, 'caf\u00e9'), 'utf8')],
  no_charset: [200, 'application/json', (id) => Buffer.from(result(id, 'caf\u00e9'), 'utf8')],
  latin1_4xx: [400, LATIN1, (id) => Buffer.from(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32602,"message":"caf\u00e9"}}`, 'latin1')],
  /** 60 Latin-1 bytes: their repair (3 bytes each) does not fit the `small` agent's 200 bytes. */
  latin1_repair_over_limit: [200, LATIN1, (id) => Buffer.from(result(id, '\u00e9'.repeat(60)), 'latin1')],
};

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const parsed = JSON.parse(req.body.toString('utf8')) as unknown;
      if (Array.isArray(parsed)) {
        // A batch (MCP 2025-03-26): each request answered with an ASCII result, under charset=iso-8859-1.
        const body = Buffer.from(`[${(parsed as Array<{ id: number }>).map((m) => result(m.id, 'cafe')).join(',')}]`, 'utf8');
        return void res.writeHead(200, { 'content-type': LATIN1, 'content-length': body.length }).end(body);
      }
      const msg = parsed as { id: number; params?: { name?: string } };
      const answer = ANSWERS[msg.params?.name ?? ''];
      if (answer === undefined) return void res.writeHead(500).end();
      const [status, type, body] = answer;
      const bytes = body(msg.id);
      res.writeHead(status, { 'content-type': type, 'content-length': bytes.length }).end(bytes);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url, small: { url: seller.url, max_response_bytes: 200 } })),
);

const post = (agent: string, id: number, tool: string, revision: string) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, tool), { 'mcp-protocol-version': revision });

/** `id`'s body as the seller wrote it, with U+FFFD (EF BF BD) in place of each E9. */
const repaired = (bytes: Buffer): Buffer => Buffer.from(bytes.toString('utf8'), 'utf8');

async function expectAnswer(agent: string, id: number, tool: string, revision: string, want: { status?: number; type: string; body: Buffer; outcome: string }): Promise<void> {
  const r = await post(agent, id, tool, revision);
  assert.deepEqual([r.status, r.headers.get('content-type'), r.body.toString('hex')], [want.status ?? 200, want.type, want.body.toString('hex')]);
  const line = await stack.gateway.exchangeLine(agent, id);
  assert.equal(line.outcome, want.outcome);
}

describe('a JSON answer labelled with a charset the gateway does not read it as', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller sends the Latin-1 byte under its label', async () => {
    const r = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify(toolCall(90, 'latin1_byte')) });
    assert.equal(r.headers.get('content-type'), LATIN1);
    assert.equal(Buffer.from(await r.arrayBuffer()).toString('hex'), ANSWERS.latin1_byte![2](90).toString('hex'));
  });

  for (const [id, revision] of [
    [1, '2025-03-26'],
    [2, '2025-06-18'],
  ] as const) {
    test(`${revision}: a repaired Latin-1 byte goes out as UTF-8 labelled application/json (was EF BF BD under charset=iso-8859-1)`, async () => {
      const seller = ANSWERS.latin1_byte![2](id);
      assert.equal(seller.includes(0xe9), true);
      await expectAnswer('s', id, 'latin1_byte', revision, { type: 'application/json', body: repaired(seller), outcome: 'ok' });
    });
  }

  test('a repair under charset=utf-8: application/json too (the bytes are not the seller\'s)', async () => {
    await expectAnswer('s', 3, 'utf8_label_latin1_byte', '2025-03-26', { type: 'application/json', body: repaired(ANSWERS.utf8_label_latin1_byte![2](3)), outcome: 'ok' });
  });

  test("a leading BOM dropped under charset=utf-8: application/json too (the bytes are not the seller's)", async () => {
    await expectAnswer('s', 15, 'bom_utf8_label', '2025-03-26', { type: 'application/json', body: ANSWERS.bom_utf8_label![2](15).subarray(3), outcome: 'ok' });
  });

  const relabelled: Array<[number, string]> = [
    [4, 'latin1_label_ascii'],
    [5, 'latin1_label_utf8'],
    [6, 'utf16_label'],
    [7, 'charset_twice'],
  ];
  for (const [id, tool] of relabelled) {
    test(`${tool}: the seller's bytes, unchanged, labelled application/json (was ${JSON.stringify(ANSWERS[tool]![1])})`, async () => {
      await expectAnswer('s', id, tool, '2025-03-26', { type: 'application/json', body: ANSWERS[tool]![2](id), outcome: 'ok' });
    });
  }

  test("a batch's answer (2025-03-26): the seller's bytes, unchanged, labelled application/json (was charset=iso-8859-1)", async () => {
    const r = await rawPost(stack.gateway.agentUrl('s'), [toolCall(13, 'any'), toolCall(14, 'any')], { 'mcp-protocol-version': '2025-03-26' });
    assert.deepEqual([r.status, r.headers.get('content-type'), r.text()], [200, 'application/json', `[${result(13, 'cafe')},${result(14, 'cafe')}]`]);
  });

  test('control: a lift (2025-06-18) under charset=iso-8859-1 goes out application/json, as every rewrite did', async () => {
    const r = await post('s', 8, 'lifted_latin1_label', '2025-06-18');
    assert.deepEqual([r.status, r.headers.get('content-type')], [200, 'application/json']);
    assert.deepEqual((r.json() as { result: { structuredContent: unknown } }).result.structuredContent, { name: 'caf\u00e9' });
    assert.equal((await stack.gateway.exchangeLine('s', 8)).outcome, 'rewritten');
  });

  const kept: Array<[number, string]> = [
    [9, 'utf8_label'],
    [10, 'no_charset'],
  ];
  for (const [id, tool] of kept) {
    test(`control: ${tool}: the seller's bytes under the seller's label ${JSON.stringify(ANSWERS[tool]![1])}`, async () => {
      await expectAnswer('s', id, tool, '2025-03-26', { type: ANSWERS[tool]![1], body: ANSWERS[tool]![2](id), outcome: 'ok' });
    });
  }

  test("control: a 4xx body passes as it is, the seller's label included", async () => {
    await expectAnswer('s', 11, 'latin1_4xx', '2025-03-26', { status: 400, type: LATIN1, body: ANSWERS.latin1_4xx![2](11), outcome: 'ok' });
  });

  test("control: the seller's Latin-1 bytes whose repair would not fit max_response_bytes keep the seller's label", async () => {
    const seller = ANSWERS.latin1_repair_over_limit![2](12);
    assert.ok(seller.length <= 200 && repaired(seller).length > 200, 'the seller fits 200 bytes, its repair does not');
    await expectAnswer('small', 12, 'latin1_repair_over_limit', '2025-03-26', { type: LATIN1, body: seller, outcome: 'ok' });
  });
});
