// measureDiscovery: the discovery-size targets of AdCP "Managing response size".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  beforeResponseText,
  CAPABILITIES_TARGET_BYTES,
  COUNTERPARTY_FIELD_TARGET_BYTES,
  COUNTERPARTY_FIELDS_TOTAL_TARGET_BYTES,
  DISCOVERY_TARGETS,
  measureDiscovery,
  TOOLS_LIST_PAGE_TARGET_BYTES,
} from '../../src/mcp/discovery-size.js';

const bytesOf = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), 'utf8');
const response = (result: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', id, result });
const capsCall = (message: unknown) => measureDiscovery({ method: 'tools/call', toolName: 'get_adcp_capabilities', message, bytes: bytesOf(message) });

/** A JSON array of domain strings whose serialization is exactly `bytes` long. */
function domainsOfSize(bytes: number): string[] {
  // ["d0.example", ...]; the last entry is padded to hit the size exactly.
  const out: string[] = [];
  while (bytesOf([...out, 'd.example']) + 12 < bytes) out.push(`d${out.length}.example`);
  const fill = bytes - bytesOf([...out, '']);
  out.push('x'.repeat(fill));
  assert.equal(bytesOf(out), bytes);
  return out;
}

/** A capabilities document padded (in `pad`) to serialize to exactly `bytes`. */
function capabilitiesOfSize(bytes: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base = { adcp: { major_versions: [3] }, supported_protocols: ['media_buy'], ...extra, pad: '' };
  const fill = bytes - bytesOf(base);
  assert.ok(fill >= 0);
  const doc = { ...base, pad: 'p'.repeat(fill) };
  assert.equal(bytesOf(doc), bytes);
  return doc;
}

describe('targets', () => {
  it('are the spec numbers', () => {
    assert.equal(TOOLS_LIST_PAGE_TARGET_BYTES, 131_072);
    assert.equal(CAPABILITIES_TARGET_BYTES, 65_536);
    assert.equal(COUNTERPARTY_FIELD_TARGET_BYTES, 8_192);
    assert.equal(COUNTERPARTY_FIELDS_TOTAL_TARGET_BYTES, 16_384);
    assert.deepEqual(DISCOVERY_TARGETS, {
      tools_list_page: 131_072,
      get_adcp_capabilities: 65_536,
      publisher_domains: 8_192,
      data_provider_domains: 8_192,
      counterparty_fields_total: 16_384,
    });
  });
});

describe('tools/list', () => {
  const page = response({ tools: [{ name: 'list_products', inputSchema: { type: 'object' } }] });

  it('measures the whole message with the bytes given (the wire bytes), at the target: within', () => {
    assert.deepEqual(measureDiscovery({ method: 'tools/list', toolName: undefined, message: page, bytes: 131_072 }), [
      { surface: 'tools_list_page', bytes: 131_072, target_bytes: 131_072, over: false },
    ]);
  });

  it('one byte past the target: over', () => {
    assert.deepEqual(measureDiscovery({ method: 'tools/list', toolName: undefined, message: page, bytes: 131_073 }), [
      { surface: 'tools_list_page', bytes: 131_073, target_bytes: 131_072, over: true },
    ]);
  });

  it('an SSE answer: what came before the response is kept beside the bytes (which count it), when it holds a byte; one text for probe and warning (hostile trial 57, F2)', () => {
    assert.deepEqual(measureDiscovery({ method: 'tools/list', toolName: undefined, message: page, bytes: 499_944, before: { events: 3000, bytes: 499_890 } }), [
      { surface: 'tools_list_page', bytes: 499_944, target_bytes: 131_072, over: true, before: { events: 3000, bytes: 499_890 } },
    ]);
    assert.deepEqual(measureDiscovery({ method: 'tools/list', toolName: undefined, message: page, bytes: 54, before: { events: 0, bytes: 0 } }), [
      { surface: 'tools_list_page', bytes: 54, target_bytes: 131_072, over: false },
    ]);
    assert.equal(beforeResponseText({ events: 3000, bytes: 499_890 }), '3,000 events before the response: 499,890 bytes');
    assert.equal(beforeResponseText({ events: 1, bytes: 9 }), '1 event before the response: 9 bytes');
    assert.equal(beforeResponseText({ events: 0, bytes: 11 }), '0 events before the response: 11 bytes');
  });

  it('a JSON-RPC error, a batch or a non-object measures nothing', () => {
    const error = { jsonrpc: '2.0', id: 1, error: { code: -32050, message: 'too large' } };
    for (const message of [error, [page], null, 'x', { jsonrpc: '2.0', id: 1, result: [] }]) {
      assert.deepEqual(measureDiscovery({ method: 'tools/list', toolName: undefined, message, bytes: 500_000 }), []);
    }
  });
});

describe('get_adcp_capabilities', () => {
  it('measures structuredContent, serialized; at 64 KiB within, one byte more over', () => {
    const at = capabilitiesOfSize(65_536);
    assert.deepEqual(capsCall(response({ content: [{ type: 'text', text: 'ok' }], structuredContent: at })), [
      { surface: 'get_adcp_capabilities', bytes: 65_536, target_bytes: 65_536, over: false },
    ]);
    const past = capabilitiesOfSize(65_537);
    assert.deepEqual(capsCall(response({ content: [], structuredContent: past })), [
      { surface: 'get_adcp_capabilities', bytes: 65_537, target_bytes: 65_536, over: true },
    ]);
  });

  it('what an SSE answer carried before its result goes beside the document, not on its fields', () => {
    const doc = capabilitiesOfSize(1_000, { media_buy: { portfolio: { publisher_domains: ['a.example'] } } });
    const message = response({ content: [], structuredContent: doc });
    const m = measureDiscovery({ method: 'tools/call', toolName: 'get_adcp_capabilities', message, bytes: 5_000, before: { events: 2, bytes: 3_900 } });
    assert.deepEqual(
      m.map((x) => [x.surface, x.bytes, x.before]),
      [
        ['get_adcp_capabilities', 1_000, { events: 2, bytes: 3_900 }],
        ['publisher_domains', bytesOf(['a.example']), undefined],
        ['counterparty_fields_total', bytesOf(['a.example']), undefined],
      ],
    );
  });

  it('measures the payload, not the envelope or the duplicated text', () => {
    const doc = capabilitiesOfSize(1_000);
    const message = response({ content: [{ type: 'text', text: JSON.stringify(doc) }], structuredContent: doc });
    const [m] = capsCall(message);
    assert.equal(m?.bytes, 1_000);
    assert.ok(bytesOf(message) > 2_000);
  });

  it('lifts a text-only result and measures it compact (whitespace in the text does not count)', () => {
    const doc = capabilitiesOfSize(2_000);
    const message = response({ content: [{ type: 'text', text: JSON.stringify(doc, null, 2) }] });
    assert.deepEqual(capsCall(message), [{ surface: 'get_adcp_capabilities', bytes: 2_000, target_bytes: 65_536, over: false }]);
  });

  it('measures each counterparty-asserted field and their total: at 8,192 within, 8,193 over', () => {
    const publisher = domainsOfSize(8_192);
    const provider = domainsOfSize(8_193);
    const doc = {
      media_buy: { portfolio: { publisher_domains: publisher, publisher_domains_complete: true } },
      signals: { data_provider_domains: provider },
    };
    assert.deepEqual(capsCall(response({ content: [], structuredContent: doc })), [
      { surface: 'get_adcp_capabilities', bytes: bytesOf(doc), target_bytes: 65_536, over: false },
      { surface: 'publisher_domains', bytes: 8_192, target_bytes: 8_192, over: false },
      { surface: 'data_provider_domains', bytes: 8_193, target_bytes: 8_192, over: true },
      { surface: 'counterparty_fields_total', bytes: 16_385, target_bytes: 16_384, over: true },
    ]);
  });

  it('the total: exactly 16,384 together is within', () => {
    const doc = {
      media_buy: { portfolio: { publisher_domains: domainsOfSize(8_192) } },
      signals: { data_provider_domains: domainsOfSize(8_192) },
    };
    const total = capsCall(response({ content: [], structuredContent: doc })).find((m) => m.surface === 'counterparty_fields_total');
    assert.deepEqual(total, { surface: 'counterparty_fields_total', bytes: 16_384, target_bytes: 16_384, over: false });
  });

  it('one field present: that field and the total; neither present: the document only', () => {
    const one = capsCall(response({ content: [], structuredContent: { signals: { data_provider_domains: ['a.example'] } } }));
    assert.deepEqual(
      one.map((m) => [m.surface, m.bytes]),
      [
        ['get_adcp_capabilities', bytesOf({ signals: { data_provider_domains: ['a.example'] } })],
        ['data_provider_domains', bytesOf(['a.example'])],
        ['counterparty_fields_total', bytesOf(['a.example'])],
      ],
    );
    const none = capsCall(response({ content: [], structuredContent: { media_buy: { portfolio: {} }, signals: 'x' } }));
    assert.deepEqual(
      none.map((m) => m.surface),
      ['get_adcp_capabilities'],
    );
  });

  it('reads own properties only: a field on a prototype does not count', () => {
    const message = JSON.parse('{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"__proto__":{"signals":{"data_provider_domains":["a"]}}}}}') as unknown;
    assert.deepEqual(
      capsCall(message).map((m) => m.surface),
      ['get_adcp_capabilities'],
    );
  });

  it('an error result, a JSON-RPC error, another tool or another method measures nothing', () => {
    const doc = capabilitiesOfSize(70_000);
    const isError = response({ isError: true, content: [{ type: 'text', text: '{"adcp_error":{"code":"X"}}' }], structuredContent: { adcp_error: { code: 'X' } } });
    assert.deepEqual(capsCall(isError), []);
    assert.deepEqual(capsCall({ jsonrpc: '2.0', id: 1, error: { code: -32050, message: 'm' } }), []);
    const ok = response({ content: [], structuredContent: doc });
    assert.deepEqual(measureDiscovery({ method: 'tools/call', toolName: 'list_products', message: ok, bytes: 70_100 }), []);
    assert.deepEqual(measureDiscovery({ method: 'tools/call', toolName: undefined, message: ok, bytes: 70_100 }), []);
    assert.deepEqual(measureDiscovery({ method: 'initialize', toolName: undefined, message: ok, bytes: 70_100 }), []);
    assert.deepEqual(measureDiscovery({ method: undefined, toolName: undefined, message: ok, bytes: 70_100 }), []);
    assert.deepEqual(capsCall(response({ content: [{ type: 'text', text: 'plain text' }] })), []);
  });
});
