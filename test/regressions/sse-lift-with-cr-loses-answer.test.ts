/**
 * Reported failure (a read-only review, H1): a lift over SSE lost the answer when the
 * lifted text held a lone CR. The lift wrote the text's JSON bytes into `structuredContent`
 * as written (src/response/lift-splice.ts, the scan path; splice.ts, the parse path), where a
 * pretty-printed text's line breaks are raw CR / LF bytes (JSON whitespace). In a JSON body
 * that is harmless; in an SSE event it is not: the encoder (sse-encode.ts) splits data into
 * `data:` lines on LF only, so a CR stayed inside a `data:` line, and the host's parser
 * (WHATWG: CR, LF and CR LF each end a line) cut the line there, the rest of the JSON read as
 * a field line of no known name. An MCP SDK tool answering `{\r"status":"completed",…}` (valid
 * JSON) to a 2025-06-18 host over SSE: the host got `…"structuredContent":{<CR>"status"…`, the
 * SDK client failed "MCP error -32001: Request timed out", the exchange line said
 * `rewritten`. Over the JSON transport it worked.
 *
 * Now the lift writes each raw CR and LF of the text as a space (0x20): outside a JSON string
 * they can only be whitespace (inside one a raw control character is invalid JSON, and such
 * a text is never lifted), so `structuredContent` holds the same value, on both paths and
 * both transports.
 *
 * Input: a real SDK seller (McpServer + StreamableHTTPServerTransport, over SSE and over
 * JSON) whose tools answer texts with a lone CR, CR LF and LF line breaks (alone, for the
 * scan path, and before a second JSON text, for the parse path, short and long); the real gateway;
 * a real SDK client on MCP 2025-06-18 through it over 127.0.0.1. Expectation: the client gets
 * `structuredContent` equal to the text's JSON (and the text's summary), the exchange line
 * says `rewritten`; the exact event bytes for the lone CR; the same message over JSON.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { connectClient } from '../helpers/client.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { startSdkTextToolSeller } from '../helpers/sdk-text-tool-seller.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** The review's text: one lone CR after the `{`. */
const CR_TEXT = '{\r"status":"completed","products":[{"id":"p1"}],"note":"x"}';
/** Windows line endings, indented. */
const CRLF_TEXT = '{\r\n  "status": "completed",\r\n  "products": [\r\n    {"id": "p1"}\r\n  ],\r\n  "note": "x"\r\n}';
/** JSON.stringify(…, null, 2), as most sellers pretty-print. */
const LF_TEXT = JSON.stringify({ status: 'completed', products: [{ id: 'p1' }], note: 'x' }, null, 2);
/** Line breaks between every token, a CR before a LF, a lone LF, a CR at the very end. */
const MIXED_TEXT = '\r\n{\n"status"\r:\n\r"completed"\n,"products":[\r{"id":"p1"}\n\n]\r\r,"note":"x"}\r';
/** Over 16 Ki characters: the parse path writes the bytes its scan made of the text (mcp/extract.ts readTextObject). */
const LONG_TEXT = `{\r\n"status":"completed",\r"products":[{"id":"p1"}],\n"note":"${'x'.repeat(17_000)}"\r}`;
/** A second text holding an object after the lifted one (it might be a copy): the scan path declines, the parse path lifts. */
const PAGE_TEXT = '{"page":2}';
const TEXTS: Record<string, readonly string[]> = {
  lone_cr: [CR_TEXT],
  crlf: [CRLF_TEXT],
  lf: [LF_TEXT],
  mixed: [MIXED_TEXT],
  parse_path: [CR_TEXT, PAGE_TEXT],
  parse_path_long: [LONG_TEXT, PAGE_TEXT],
};

const SUMMARY = (text: string): string => `Result in structuredContent (${Buffer.byteLength(text)} bytes): status=completed; products[1], note.`;
const item = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;
/** The lifted message the SDK seller's answer becomes: the first text's summary, its JSON with each CR and LF a space. */
const lifted = (id: number, texts: readonly string[]): string =>
  `{"result":{"content":[${[item(SUMMARY(texts[0]!)), ...texts.slice(1).map(item)].join(',')}],"structuredContent":${texts[0]!.replace(/[\r\n]/g, ' ')}},"jsonrpc":"2.0","id":${id}}`;

const stack = useSellerAndGateway(
  () => startSdkTextToolSeller(TEXTS),
  (seller) => startObservedGateway(agentsYaml({ sse: seller.url(false), json: seller.url(true) })),
);

const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };

describe('a lifted text holding CR or LF line breaks reaches an SDK host over SSE', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the exact SSE event for the lone CR: one data line, the CR written as a space; the exchange line says rewritten', async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('sse'), toolCall(11, 'lone_cr'), PROTOCOL));
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    assert.equal(r.text(), `event: message\ndata: ${lifted(11, [CR_TEXT])}\n\n`);
    assert.equal(r.body.includes(0x0d), false, 'no CR on the host stream');
    const line = await stack.gateway.exchangeLine('sse', 11);
    assert.deepEqual([line.outcome, line.reason, line.bytes_to_host], ['rewritten', null, r.bytes]);
  });

  for (const [name, texts] of Object.entries(TEXTS)) {
    test(`${name}: the SDK client gets structuredContent equal to the text's JSON, over SSE as over JSON`, async () => {
      const text = texts[0]!;
      const clients: Client[] = [];
      try {
        for (const agent of ['sse', 'json']) {
          const client = await connectClient(stack.gateway.agentUrl(agent), { protocolVersion: '2025-06-18' });
          clients.push(client);
          const got = await withTimeout(client.callTool({ name, arguments: {} }, undefined, { timeout: 3_000 }), 5_000, `${agent} ${name}`);
          assert.deepEqual(got.structuredContent, JSON.parse(text), `${agent} ${name}`);
          assert.deepEqual(got.content, [SUMMARY(text), ...texts.slice(1)].map((t) => ({ type: 'text', text: t })), `${agent} ${name}`);
        }
      } finally {
        await Promise.allSettled(clients.map((c) => c.close()));
      }
    });
  }

  test('JSON and SSE carry the same lifted message, byte for byte', async () => {
    for (const [k, [name, texts]] of Object.entries(TEXTS).entries()) {
      const id = 20 + k;
      const sse = await withTimeout(rawPost(stack.gateway.agentUrl('sse'), toolCall(id, name), PROTOCOL));
      const json = await withTimeout(rawPost(stack.gateway.agentUrl('json'), toolCall(id, name), PROTOCOL));
      assert.equal(json.text(), lifted(id, texts), name);
      assert.equal(sse.text(), `event: message\ndata: ${lifted(id, texts)}\n\n`, name);
    }
  });
});
