/**
 * Regression (a review of the request side, session 29: L2's note): a host may spell the
 * gateway's own headers with `_` (`Mcp_Session_Id`, `Last_Event_ID`, `X_Api_Key`: CGI, WSGI,
 * PHP and Rack servers read `_` as `-`), and the gateway strips those twins before the seller
 * (request/headers.ts), but its logger redacted only the dash spellings: a logged header object
 * holding a twin showed the session id, resume token or key in clear.
 *
 * Input: the gateway's logger (createLogger), lines captured; one object of headers with each
 * secret header in both spellings, at the paths the logger redacts (`headers`, `*.headers`;
 * `req` and `res` go through their serializers). Expected: every value `[redacted]`, the other headers as given.
 *
 * Review 31, finding 6 (Low): only the all-underscore spellings were redacted; the mixed ones
 * (`x-api_key`, `mcp_session-id`, `last-event_id`), which such servers read alike and the
 * gateway withholds from the seller too, were logged in clear. Now every `_`/`-` spelling.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, REDACTED } from '../../src/observability/logger.js';
import { lineSink } from '../helpers/capture-log.js';

const TWINS = { mcp_session_id: 'twin-session-0001', last_event_id: 'twin-token-0002', x_api_key: 'twin-key-0003', proxy_authorization: 'twin-proxy-0004', set_cookie: 'twin-cookie-0005' };
const DASHES = { 'mcp-session-id': 'dash-session-0006', 'last-event-id': 'dash-token-0007', 'x-api-key': 'dash-key-0008' };
const MIXED = {
  'x-api_key': 'mixed-key-0009',
  'x_api-key': 'mixed-key-0010',
  'mcp_session-id': 'mixed-session-0011',
  'mcp-session_id': 'mixed-session-0012',
  'last-event_id': 'mixed-token-0013',
  'last_event-id': 'mixed-token-0014',
};
const PUBLIC = { 'content-type': 'application/json', mcp_protocol_version: '2025-06-18' };

test('underscore twins of the secret headers are redacted in every logged headers object, as the dash spellings are', () => {
  const { lines, sink } = lineSink();
  const logger = createLogger('info', { destination: sink });
  const headers = { ...TWINS, ...DASHES, ...PUBLIC };
  logger.info({ headers, upstream: { headers } }, 'headers seen');
  const line = JSON.parse(lines.join('').trim()) as Record<string, { headers: Record<string, string> } | Record<string, string>>;
  const redacted = Object.fromEntries([...Object.keys(TWINS), ...Object.keys(DASHES)].map((k) => [k, REDACTED]));
  const expected = { ...redacted, ...PUBLIC };
  assert.deepEqual(line.headers, expected);
  assert.deepEqual((line.upstream as { headers: Record<string, string> }).headers, expected);
});

test('mixed `_`/`-` spellings of the secret headers are redacted too (was: x-api_key, mcp_session-id, last-event_id in clear)', () => {
  const { lines, sink } = lineSink();
  const logger = createLogger('info', { destination: sink });
  const headers = { ...MIXED, ...PUBLIC };
  logger.info({ headers, upstream: { headers } }, 'headers seen');
  const line = JSON.parse(lines.join('').trim()) as { headers: Record<string, string>; upstream: { headers: Record<string, string> } };
  const expected = { ...Object.fromEntries(Object.keys(MIXED).map((k) => [k, REDACTED])), ...PUBLIC };
  assert.deepEqual(line.headers, expected);
  assert.deepEqual(line.upstream.headers, expected);
});
