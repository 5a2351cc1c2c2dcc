// formatLimitsTable: one row per agent and per configured tool, resolved numbers, aligned.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { formatLimitsTable, LIMITS_TABLE_COLUMNS } from '../../src/config/table.js';

const YAML = `agents:
  acme:
    url: https://sales.acme.example/mcp
    max_response_bytes: 8388608
    max_call_response_bytes: 16777216
    accept_encoding: [identity]
    tools:
      list_products: { max_response_bytes: 1048576, dedupe_text: "off" }
  b:
    url: http://127.0.0.1:3001/mcp
`;

describe('formatLimitsTable', () => {
  it('prints the exact, aligned table', () => {
    const expected = [
      'agent/tool          url                             max_response_bytes  max_sse_event_bytes  max_json_depth  max_json_nodes  response_deadline_ms  sse_idle_timeout_ms  sse_deadline_ms  dedupe_text  max_request_bytes  max_call_response_bytes  accept_encoding',
      '------------------  ------------------------------  ------------------  -------------------  --------------  --------------  --------------------  -------------------  ---------------  -----------  -----------------  -----------------------  ---------------',
      'acme                https://sales.acme.example/mcp  8388608             8388608              64              100000          30000                 300000               3600000          summary      4194304            16777216                 identity',
      'acme/list_products                                  1048576             1048576              64              100000          30000                 300000               3600000          off          4194304            16777216                 identity',
      'b                   http://127.0.0.1:3001/mcp       4194304             4194304              64              100000          30000                 300000               3600000          summary      4194304            4194304                  gzip,deflate,br',
    ].join('\n');
    assert.equal(formatLimitsTable(parseConfig(YAML, { env: {} })), expected);
  });

  it('is stable, has no trailing spaces and no color codes', () => {
    const config = parseConfig(YAML, { env: {} });
    const text = formatLimitsTable(config);
    assert.equal(formatLimitsTable(config), text);
    for (const line of text.split('\n')) assert.equal(line, line.trimEnd());
    assert.ok(!text.includes('\u001b'), 'no ANSI escapes');
    assert.deepEqual(text.split('\n')[0]?.split(/ {2,}/), [...LIMITS_TABLE_COLUMNS]);
  });
});
