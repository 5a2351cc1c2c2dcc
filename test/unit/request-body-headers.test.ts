/**
 * request/headers.ts applyRequestHeaderPolicy `withBody`: a request forwarded without a body
 * (a GET, a DELETE) carries none of the host's headers that describe one (BODY_HEADERS:
 * Content-Length, Content-Type, Content-Encoding; Transfer-Encoding is hop-by-hop, always
 * stripped); one forwarded with its body keeps them. An agent's configured `content-type` is
 * still sent. Source: a hostile new-user trial 16, L2
 * (test/regressions/delete-body-forwarded-escapes-limits.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentConfig } from '../../src/config/types.js';
import { applyRequestHeaderPolicy, BODY_HEADERS } from '../../src/request/headers.js';

const VIA = '1.1 adcp-gw-0123456789abcdef';

/** A host's DELETE head as @fastify/reply-from hands it over (its own content-length included). */
function hostHeaders(): Record<string, string | string[] | undefined> {
  return {
    host: 'seller.example',
    'content-length': '7',
    'content-type': 'application/json',
    'content-encoding': 'identity',
    'transfer-encoding': 'chunked',
    'mcp-session-id': 's-1',
    authorization: 'Bearer host',
  };
}

function agent(headers: Record<string, string> = {}): AgentConfig {
  return { headers } as unknown as AgentConfig;
}

test('BODY_HEADERS names exactly the three body-describing headers', () => {
  assert.deepEqual([...BODY_HEADERS], ['content-length', 'content-type', 'content-encoding']);
});

test('without a body: no Content-Length, Content-Type, Content-Encoding or Transfer-Encoding; the rest as before', () => {
  const out = applyRequestHeaderPolicy(hostHeaders(), agent(), 'gzip', undefined, VIA, false);
  assert.deepEqual(
    Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)),
    { host: 'seller.example', 'mcp-session-id': 's-1', authorization: 'Bearer host', 'accept-encoding': 'gzip', via: VIA },
  );
});

test('with a body: the body headers stay (Transfer-Encoding aside, hop-by-hop)', () => {
  const out = applyRequestHeaderPolicy(hostHeaders(), agent(), 'gzip', undefined, VIA, true);
  assert.equal(out['content-length'], '7');
  assert.equal(out['content-type'], 'application/json');
  assert.equal(out['content-encoding'], 'identity');
  assert.equal(out['transfer-encoding'], undefined);
});

test("without a body, an agent's configured content-type is still sent", () => {
  const out = applyRequestHeaderPolicy(hostHeaders(), agent({ 'content-type': 'application/x-configured' }), 'identity', undefined, VIA, false);
  assert.equal(out['content-type'], 'application/x-configured');
  assert.equal(out['content-length'], undefined);
});
