// The shapes of the gateway's own answers (ARCHITECTURE §3): minted AdCP errors, the
// JSON-RPC message carrying them, refusals; and the round trip through extractAdcpError.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildAdcpError,
  buildAdcpErrorOfForm,
  localErrorFormOf,
  localErrorMessage,
  localErrorMessageOfForm,
  mayBeMutation,
  NOT_MCP_CAUSES,
  requestRefusal,
  toolErrorResult,
} from '../../src/mcp/local-error.js';
import type { BuildAdcpErrorInput, LocalErrorForm, NotMcpCause } from '../../src/mcp/local-error.js';
import { extractAdcpError } from '../../src/mcp/extract.js';
import { REASONS, REFUSALS } from '../../src/errors/codes.js';
import type { AdcpErrorReason, RefusalReason } from '../../src/errors/codes.js';
import { SDK_ID } from '../../src/version.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const reasons = Object.keys(REASONS) as AdcpErrorReason[];

describe('buildAdcpError', () => {
  test('a byte bound on a read-only tool call', () => {
    assert.deepStrictEqual(
      buildAdcpError({ reason: 'raw_bytes', method: 'tools/call', toolName: 'get_products', limitBytes: 4194304, observedBytes: 4194305 }),
      {
        code: 'RESPONSE_TOO_LARGE',
        message: "The seller's response exceeded the 4194304-byte limit; narrow the request with fields, max_results or a cursor.",
        recovery: 'correctable',
        source: 'sdk',
        sdk_id: SDK_ID,
        details: { reason: 'raw_bytes', limit_bytes: 4194304, observed_bytes: 4194305 },
      },
    );
  });

  test('a mutating tool gets the re-read warning', () => {
    const err = buildAdcpError({ reason: 'sse_cumulative', method: 'tools/call', toolName: 'create_media_buy', limitBytes: 100, observedBytes: 101 });
    assert.equal(
      err.message,
      "The seller's SSE stream exceeded the 100-byte limit in total; the seller may have completed the operation, so re-read its state before retrying.",
    );
    assert.equal(err.recovery, 'correctable');
  });

  test('recovery: RESPONSE_TOO_LARGE correctable on tools/call and tasks/result, terminal elsewhere; SERVICE_UNAVAILABLE transient', () => {
    for (const method of ['tools/call', 'tasks/result']) {
      assert.equal(buildAdcpError({ reason: 'decoded_bytes', method }).recovery, 'correctable');
      assert.equal(buildAdcpError({ reason: 'sse_idle', method }).recovery, 'transient');
    }
    for (const method of ['tools/list', 'initialize', 'tasks/get', '']) {
      assert.equal(buildAdcpError({ reason: 'json_nodes', method }).recovery, 'terminal');
      assert.equal(buildAdcpError({ reason: 'upstream_status', method }).recovery, 'transient');
    }
  });

  test('which calls may have changed state', () => {
    for (const tool of ['get_products', 'list_creatives', 'search_signals', 'preview_creative', 'check_governance']) {
      assert.equal(mayBeMutation('tools/call', tool), false, tool);
    }
    assert.equal(mayBeMutation('tools/call', 'create_media_buy'), true);
    assert.equal(mayBeMutation('tools/call', 'sync_creatives'), true);
    assert.equal(mayBeMutation('tools/call', undefined), true, 'unknown tool: assume it may have');
    assert.equal(mayBeMutation('tasks/result', undefined), true, 'the task may be a mutation');
    assert.equal(mayBeMutation('tools/list', 'create_media_buy'), false);
    assert.equal(mayBeMutation('initialize', undefined), false);
  });

  test('no re-read warning when the request never reached the seller', () => {
    const err = buildAdcpError({ reason: 'upstream_unreachable', method: 'tools/call', toolName: 'create_media_buy' });
    assert.equal(err.message, 'The seller could not be reached.');
    const reset = buildAdcpError({ reason: 'upstream_reset', method: 'tools/call', toolName: 'create_media_buy' });
    assert.match(reset.message, /may have completed the operation/);
  });

  test('details per reason', () => {
    const all: Omit<BuildAdcpErrorInput, 'reason' | 'method'> = {
      limitBytes: 10,
      observedBytes: 11,
      limit: 64,
      observed: 65,
      limitMs: 30000,
      observedMs: 30001,
      upstreamStatus: 503,
    };
    const details = (reason: AdcpErrorReason) => buildAdcpError({ reason, method: 'tools/list', ...all }).details;
    assert.deepEqual(details('content_length'), { reason: 'content_length', limit_bytes: 10, observed_bytes: 11 });
    assert.deepEqual(details('json_depth'), { reason: 'json_depth', limit_depth: 64, observed_depth: 65, limit_bytes: 10, observed_bytes: 11 });
    assert.deepEqual(details('json_nodes'), { reason: 'json_nodes', limit_nodes: 64, observed_nodes: 65, limit_bytes: 10, observed_bytes: 11 });
    assert.deepEqual(details('deadline_exceeded'), { reason: 'deadline_exceeded', limit_ms: 30000, observed_ms: 30001 });
    assert.deepEqual(details('sse_idle'), { reason: 'sse_idle', limit_ms: 30000, observed_ms: 30001 });
    assert.deepEqual(details('upstream_status'), { reason: 'upstream_status', upstream_status: 503 });
    assert.deepEqual(details('upstream_reset'), { reason: 'upstream_reset' });
    // absent or non-finite numbers are left out
    assert.deepEqual(buildAdcpError({ reason: 'deadline_exceeded', method: 'x', limitMs: 5, observedMs: Number.NaN }).details, {
      reason: 'deadline_exceeded',
      limit_ms: 5,
    });
  });

  test('messages name the limit and read well without numbers', () => {
    assert.equal(
      buildAdcpError({ reason: 'json_depth', method: 'tools/list', limit: 64, observed: 65 }).message,
      "The seller's response nests JSON deeper than the 64-level limit.",
    );
    assert.equal(buildAdcpError({ reason: 'raw_bytes', method: 'tools/list' }).message, "The seller's response exceeded the byte limit.");
    assert.equal(
      buildAdcpError({ reason: 'content_length', method: 'initialize', limitBytes: 5, observedBytes: 9 }).message,
      'The seller announced a 9-byte response (Content-Length), over the 5-byte limit.',
    );
    assert.equal(buildAdcpError({ reason: 'upstream_status', method: 'tools/list', upstreamStatus: 502 }).message, 'The seller answered with HTTP status 502.');
  });

  test('every reason, every method shape: message under 256 bytes, details under 500 bytes', () => {
    const big = Number.MAX_SAFE_INTEGER;
    for (const reason of reasons) {
      for (const [method, toolName] of [['tools/call', 'create_media_buy'], ['tools/call', 'get_products'], ['tasks/result', undefined], ['tools/list', undefined]] as const) {
        const err = buildAdcpError({ reason, method, toolName, limitBytes: big, observedBytes: big, limit: big, observed: big, limitMs: big, observedMs: big, upstreamStatus: 599 });
        assert.ok(bytes(err.message) < 256, `${reason}: ${bytes(err.message)} bytes`);
        assert.ok(bytes(JSON.stringify(err.details)) < 500, reason);
        assert.equal(err.code, REASONS[reason].code);
        assert.equal(err.details.reason, reason);
        assert.match(err.message, /^(The|An) [^.]*\.$/, 'one sentence');
      }
    }
  });

  test('an upstream_not_mcp cause names why in the message, one sentence under 256 bytes; code, recovery and details unchanged; other reasons ignore it', () => {
    for (const cause of Object.keys(NOT_MCP_CAUSES) as NotMcpCause[]) {
      for (const [method, toolName] of [['tools/call', 'create_media_buy'], ['tools/call', 'get_products'], ['tools/list', undefined]] as const) {
        const plain = buildAdcpError({ reason: 'upstream_not_mcp', method, toolName, upstreamStatus: 200 });
        const err = buildAdcpError({ reason: 'upstream_not_mcp', method, toolName, upstreamStatus: 200, cause });
        assert.ok(err.message.startsWith(NOT_MCP_CAUSES[cause]), err.message);
        assert.equal(err.message.slice(NOT_MCP_CAUSES[cause].length), plain.message.slice(plain.message.indexOf(plain.message.includes(';') ? ';' : '.')));
        assert.ok(bytes(err.message) < 256, `${cause}: ${bytes(err.message)} bytes`);
        assert.match(err.message, /^The [^.]*\.$/, 'one sentence');
        assert.deepEqual({ ...err, message: '' }, { ...plain, message: '' });
      }
      const other = buildAdcpError({ reason: 'upstream_reset', method: 'tools/list', cause });
      assert.equal(other.message, buildAdcpError({ reason: 'upstream_reset', method: 'tools/list' }).message);
    }
    assert.equal(
      buildAdcpError({ reason: 'upstream_not_mcp', method: 'tools/call', toolName: 'get_products', upstreamStatus: 200, cause: 'batch_removed' }).message,
      "The seller answered with a JSON-RPC batch (an array), which the host's MCP revision does not have: batches were removed in 2025-06-18.",
    );
  });

  test('an unknown reason is a programming error', () => {
    assert.throws(() => buildAdcpError({ reason: 'nope' as AdcpErrorReason, method: 'x' }), TypeError);
    assert.throws(() => buildAdcpError({ reason: '__proto__' as AdcpErrorReason, method: 'x' }), TypeError);
  });
});

describe('message shapes', () => {
  const err = buildAdcpError({ reason: 'raw_bytes', method: 'tools/call', toolName: 'get_products', limitBytes: 100, observedBytes: 101 });

  test('toolErrorResult: error JSON first, one sentence second, structuredContent.adcp_error', () => {
    assert.deepStrictEqual(toolErrorResult(err), {
      content: [
        { type: 'text', text: JSON.stringify({ adcp_error: err }) },
        { type: 'text', text: err.message },
      ],
      isError: true,
      structuredContent: { adcp_error: err },
    });
  });

  test('tools/call and tasks/result answer with a tool result', () => {
    for (const method of ['tools/call', 'tasks/result']) {
      assert.deepStrictEqual(localErrorMessage(7, method, err), { jsonrpc: '2.0', id: 7, result: toolErrorResult(err) });
    }
  });

  test("a tasks/result's tool error names its task in _meta, after structuredContent, before resultType (tasks-result-minted-error-drops-related-task)", () => {
    const meta = { 'io.modelcontextprotocol/related-task': { taskId: 't-1' } };
    const message = localErrorMessage(7, 'tasks/result', err, '2025-11-25', 't-1');
    assert.deepStrictEqual(message, { jsonrpc: '2.0', id: 7, result: { ...toolErrorResult(err), _meta: meta } });
    assert.deepEqual(Object.keys((message as { result: object }).result), ['content', 'isError', 'structuredContent', '_meta']);
    const stateless = localErrorMessageOfForm(7, 'tool_result_may_have_run', err, '2026-07-28', 't-1');
    assert.deepEqual(Object.keys((stateless as { result: object }).result), ['content', 'isError', 'structuredContent', '_meta', 'resultType']);
    // No taskId known: no _meta. A JSON-RPC error form carries none either.
    assert.deepStrictEqual(localErrorMessage(7, 'tasks/result', err, '2025-11-25'), { jsonrpc: '2.0', id: 7, result: toolErrorResult(err) });
    assert.equal('result' in localErrorMessageOfForm(7, 'rpc_error', err, '2025-11-25', 't-1'), false);
  });

  test('other methods answer with a JSON-RPC error: -32050 / -32027', () => {
    const tooLarge = buildAdcpError({ reason: 'json_nodes', method: 'tools/list', limit: 10, observed: 11 });
    assert.deepStrictEqual(localErrorMessage('a', 'tools/list', tooLarge), {
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32050, message: tooLarge.message, data: { adcp_error: tooLarge } },
    });
    const unavailable = buildAdcpError({ reason: 'deadline_exceeded', method: 'initialize', limitMs: 1000 });
    const message = localErrorMessage(null, 'initialize', unavailable);
    assert.ok('error' in message);
    assert.equal(message.error.code, -32027);
    assert.equal(message.id, null);
  });

  test('round trip: extractAdcpError reads the minted error back from both shapes, also after serialization', () => {
    for (const reason of reasons) {
      for (const method of ['tools/call', 'tasks/result', 'tools/list', 'resources/read']) {
        const minted = buildAdcpError({ reason, method, toolName: 'create_media_buy', limitBytes: 1, observedBytes: 2, limit: 3, observed: 4, limitMs: 5, upstreamStatus: 500 });
        const message = localErrorMessage(1, method, minted);
        assert.equal(extractAdcpError(message), minted);
        assert.deepStrictEqual(extractAdcpError(JSON.parse(JSON.stringify(message))), minted);
        if ('result' in message) {
          // hosts that read only the text item get it too
          const textOnly = { isError: true, content: message.result.content };
          assert.deepStrictEqual(extractAdcpError(JSON.parse(JSON.stringify(textOnly))), minted);
        }
      }
    }
  });
});

describe('requestRefusal', () => {
  test('each refusal has its status and JSON-RPC code, data.reason, and the request id', () => {
    for (const kind of Object.keys(REFUSALS) as RefusalReason[]) {
      const { statusCode, body } = requestRefusal(kind, 'req-1', 'Nope.');
      assert.equal(statusCode, REFUSALS[kind].statusCode);
      assert.deepStrictEqual(body, { jsonrpc: '2.0', id: 'req-1', error: { code: REFUSALS[kind].jsonRpcCode, message: 'Nope.', data: { reason: kind } } });
    }
  });

  test('exact values of the ARCHITECTURE §3 refusals', () => {
    const expected: [RefusalReason, number, number][] = [
      ['unknown_agent', 404, -32600],
      ['request_too_large', 413, -32600],
      ['parse_error', 400, -32700],
      ['invalid_request', 400, -32600],
      ['method_not_allowed', 405, -32600],
      ['resume_token_invalid', 400, -32600],
      ['resume_token_expired', 400, -32600],
    ];
    for (const [kind, status, code] of expected) {
      const { statusCode, body } = requestRefusal(kind, null, 'x');
      assert.deepEqual([kind, statusCode, body.error.code], [kind, status, code]);
    }
  });

  test('id defaults to null; extra fields are copied as own data, reason cannot be overridden', () => {
    const extra = JSON.parse('{"limit_bytes":1048576,"reason":"spoofed","__proto__":{"polluted":1}}') as Record<string, unknown>;
    const { body } = requestRefusal('request_too_large', undefined, 'Too large.', extra);
    assert.equal(body.id, null);
    assert.deepEqual(Object.keys(body.error.data), ['reason', 'limit_bytes', '__proto__']);
    assert.equal(body.error.data.reason, 'request_too_large');
    assert.equal(Object.getPrototypeOf(body.error.data), Object.prototype);
    assert.equal((body.error.data as { polluted?: unknown }).polluted, undefined);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  test('an unknown kind is a programming error', () => {
    assert.throws(() => requestRefusal('nope' as RefusalReason, null, 'x'), TypeError);
  });
});

describe('retry_after', () => {
  test('retry_after (whole seconds >= 1) follows details when given; anything else is left out', () => {
    const err = buildAdcpError({ reason: 'agent_backoff', method: 'tools/call', toolName: 'get_products', retryAfterS: 3 });
    assert.deepEqual(Object.keys(err), ['code', 'message', 'recovery', 'source', 'sdk_id', 'details', 'retry_after']);
    assert.equal(err.retry_after, 3);
    assert.deepEqual(err.details, { reason: 'agent_backoff' });
    for (const bad of [0, 1.5, -1, Number.NaN]) {
      assert.equal('retry_after' in buildAdcpError({ reason: 'agent_backoff', method: 'tools/call', retryAfterS: bad }), false, String(bad));
    }
  });
});

test('upstream_reset names both causes: a closed connection or an unreadable response (a new user: an oversized seller header read as "the connection closed")', () => {
  const err = buildAdcpError({ reason: 'upstream_reset', method: 'tools/call' });
  assert.match(err.message, /^The seller's connection closed, or its response could not be read, before the response was complete/);
});

describe('error forms (a batch answers each request as it would be answered alone: batch-error-loses-tool-warning)', () => {
  const cases: readonly [string | undefined, string | undefined, LocalErrorForm][] = [
    ['tools/call', 'get_products', 'tool_result'],
    ['tools/call', 'check_status', 'tool_result'],
    ['tasks/result', 'list_x', 'tool_result'],
    ['tools/call', 'create_media_buy', 'tool_result_may_have_run'],
    ['tools/call', undefined, 'tool_result_may_have_run'],
    ['tasks/result', undefined, 'tool_result_may_have_run'],
    ['ping', undefined, 'rpc_error'],
    ['tools/list', 'get_x', 'rpc_error'],
    [undefined, undefined, 'rpc_error'],
    ['', undefined, 'rpc_error'],
  ];
  test('localErrorFormOf: from the method and tool name', () => {
    for (const [method, toolName, form] of cases) assert.equal(localErrorFormOf(method, toolName), form, `${method} ${toolName}`);
  });
  test('the error and the message of a form are those of a request of that form, for every reason', () => {
    for (const reason of Object.keys(REASONS) as AdcpErrorReason[]) {
      for (const [method, toolName, form] of cases) {
        const input = { reason, limitBytes: 100, observedBytes: 101, limitMs: 5, upstreamStatus: 502 };
        const alone = buildAdcpError({ ...input, method: method ?? '', ...(toolName !== undefined ? { toolName } : {}) });
        assert.deepEqual(buildAdcpErrorOfForm(input, form), alone, `${reason} ${method} ${toolName}`);
        for (const version of ['2025-03-26', '2026-07-28']) {
          assert.deepEqual(localErrorMessageOfForm(7, form, alone, version), localErrorMessage(7, method ?? '', alone, version), `${reason} ${method} ${version}`);
        }
      }
    }
  });
});
