/**
 * Reported failure (a new user's hostile trial 12, L6): "a seller's 503 with `Retry-After: 120`
 * loses the retry hint". The gateway answers a seller's 5xx with its own SERVICE_UNAVAILABLE
 * `upstream_status` error, `transient`; it had no `retry_after`, so a host retried at once.
 * Now the seller's `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP-date) becomes the
 * error's `retry_after`, at most 3,600 s; a wait of 0, a past date or an unreadable value
 * gives none (src/response/retry-after.ts; docs/errors.md).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe("a seller's Retry-After on a 5xx", { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const value = decodeURIComponent(String(req.headers['x-retry-after']));
        const status = Number(req.headers['x-status'] ?? 503);
        res.writeHead(status, { 'content-type': 'text/plain', ...(value === 'none' ? {} : { 'retry-after': value }) }).end('busy');
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  const call = async (retryAfter: string, status = 503): Promise<string> => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(5, 'get_products'), { 'mcp-protocol-version': '2025-06-18', 'x-retry-after': encodeURIComponent(retryAfter), 'x-status': String(status) }));
    assert.equal(r.status, 200);
    return r.text();
  };
  const expected = (retryAfterS: number | undefined, status = 503): string =>
    expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'upstream_status', upstreamStatus: status, ...(retryAfterS !== undefined ? { retryAfterS } : {}) });

  test('seconds become retry_after', async () => {
    const text = await call('120');
    assert.equal(text, expected(120));
    assert.match(text, /"retry_after":120/);
    assert.equal(await call('7', 500), expected(7, 500));
  });

  test('an HTTP-date becomes the seconds until it', async () => {
    const text = await call(new Date(Date.now() + 90_000).toUTCString());
    const m = /"retry_after":(\d+)/.exec(text);
    assert.ok(m !== null, text);
    const s = Number(m[1]);
    assert.ok(s >= 85 && s <= 91, `retry_after ${s}`);
    assert.equal(text, expected(s));
  });

  test('a longer wait is clamped to 3600', async () => {
    assert.equal(await call('86400'), expected(3600));
  });

  test('no wait, a past date, or an unreadable value: no retry_after', async () => {
    for (const value of ['none', '0', 'soon', '-5', '1.5', new Date(Date.now() - 60_000).toUTCString()]) {
      assert.equal(await call(value), expected(undefined), value);
    }
  });
});
