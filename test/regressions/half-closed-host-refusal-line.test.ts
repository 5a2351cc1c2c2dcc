/**
 * Guard (a follow-up to hostile trial 43, F1, whose fix made an exchange line of a host that
 * half-closed and got nothing say `status` null: half-closed-host-logged-delivered.test.ts):
 * does a `refused` line for such a host (written by the app's refusal listener, src/app.ts)
 * claim a status the host never got? It does not, and this pins why: a refusal is made and
 * written as the request's last byte is parsed, in the same turn of the event loop, before
 * Node reads the host's FIN (a later read), so a host that half-closes after its request
 * (`nc -N`, `shutdown(SHUT_WR)`) gets the same bytes as one that keeps its side open, and the
 * line's status is the one it got; a refusal pipelined behind an answer the host did not wait
 * for is never written, and has no line (routing/closing-answers.ts whenWritten). No line
 * lied before any change (parse errors, unknown agents, header refusals, unrouted methods,
 * incomplete requests, 40 hosts at once were tried): the parse error, unknown agent and
 * pipelined cases passed on main; the Mcp-Session-Id case needs that header's refusal
 * (session-id-not-visible-ascii-forwarded.test.ts).
 *
 * Input: raw hosts writing a request that is refused, then a FIN at once; the same request on
 * a connection kept open (`Connection: close`, read until the gateway closes it).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { withoutDate } from '../helpers/draining.js';
import { until } from '../helpers/raw-stack.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';

function post(agent: string, body: string, extra: readonly string[] = []): string {
  const head = [`POST /agents/${agent}/mcp HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', 'Accept: application/json, text/event-stream', 'MCP-Protocol-Version: 2025-06-18'];
  return [...head, ...extra, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
}

/** `text` without its Date, Connection and Keep-Alive lines. */
const withoutConnection = (text: string): string => withoutDate(text).replace(/\r\n(Connection|Keep-Alive): [^\r]*/g, '');

const PING = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

/** Writes `raw` on a new connection, then a FIN at once (`halfClose`) or not; resolves with every byte received until the gateway closed it. */
function host(gateway: ObservedGateway, raw: string, halfClose: boolean): Promise<string> {
  return withTimeout(
    new Promise<string>((resolve) => {
      const s = connect(Number(new URL(gateway.baseUrl).port), '127.0.0.1');
      let got = '';
      s.setEncoding('latin1');
      s.on('data', (d: string) => (got += d));
      s.on('error', () => {});
      s.on('close', () => resolve(got));
      s.write(raw);
      if (halfClose) s.end();
    }),
    10_000,
    'the gateway closing the connection',
  );
}

describe('half-closed-host-refusal-line', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
    // The seller answers after 300 ms: the host that pipelines behind it has half-closed by then.
    () => startRawSeller((_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} })), 300)),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  /** The `refused` and `exchange` lines written since line `from`, the fields that say what the host got. */
  const linesSince = (from: number): Array<Partial<LogLine>> =>
    stack.gateway.lines
      .slice(from)
      .filter((l) => l.msg === 'refused' || l.msg === 'exchange')
      .map((l) => ({ msg: l.msg, reason: l.reason, status: l.status, ...(l.msg === 'exchange' ? { bytes_to_host: l.bytes_to_host } : {}) }));

  const cases: Array<[string, string, string, number]> = [
    ['a parse error', post('s', '{bad'), 'parse_error', 400],
    ['an unknown agent', post('nope', PING(2)), 'unknown_agent', 404],
    ['an Mcp-Session-Id that is no session ID', post('s', PING(3), ['Mcp-Session-Id: a b']), 'invalid_request', 400],
  ];
  for (const [label, raw, reason, status] of cases) {
    test(`${label}, then a FIN: the host gets the refusal, the line's status is the one it got`, async () => {
      const kept = await host(stack.gateway, raw.replace('Host: 127.0.0.1', 'Host: 127.0.0.1\r\nConnection: close'), false);
      const from = stack.gateway.lines.length;
      const got = await host(stack.gateway, raw, true);
      assert.ok(got.startsWith(`HTTP/1.1 ${status} `), JSON.stringify(got.slice(0, 40)));
      // The same bytes as the host that kept its side open (its Connection line aside).
      assert.equal(withoutConnection(got), withoutConnection(kept));
      await until('the refused line', () => linesSince(from).length > 0);
      assert.deepEqual(linesSince(from), [{ msg: 'refused', reason, status }]);
    });
  }

  test('a refusal pipelined behind an answer the host did not wait for: never written, no refused line', async () => {
    const from = stack.gateway.lines.length;
    const got = await host(stack.gateway, post('s', PING(1)) + post('nope', PING(2)), true);
    assert.equal(got, '');
    await until('the exchange line', () => linesSince(from).length > 0);
    await new Promise((r) => setTimeout(r, 400)); // past the seller's answer: a line written for the refusal would be here
    assert.deepEqual(linesSince(from), [{ msg: 'exchange', reason: null, status: null, bytes_to_host: 0 }]);
  });
});
