/**
 * Regression (a new user's trial): beside some `upstream_unreachable` and
 * `deadline_exceeded` exchange lines the log had a `"msg":"response errored"` warning with a
 * full error stack: @fastify/reply-from logs every failed upstream request so
 * (`this.request.log.warn(err, 'response errored')`, whatever its options say), although the
 * gateway reports the failure in the exchange line, and for a deadline the error is the
 * gateway's own abort.
 *
 * Input: a real gateway app logging into a capture; a seller that resets the connection, one
 * that never answers (response_deadline_ms 300), one whose response head has two different
 * Content-Length values (a later trial: undici's length-mismatch error got a warning with
 * its stack), a port nothing listens on, and an https
 * agent URL on the seller's plain HTTP port (a TLS failure: a cause the exchange line cannot
 * name). After each failing request, a request the seller answers at once marks the end of
 * what the first one logged.
 * Expected: a reset, a deadline, an unreadable head and an unreachable seller write exactly one line each, the
 * exchange line with its reason; no `response errored` line at all. The TLS failure writes its
 * exchange line and one warning of the gateway's own naming the agent and the error's code,
 * so an unexpected cause stays visible.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { captureLog, type LogEntry } from '../helpers/capture-log.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
/** A complete final answer, written raw after an interim one. */
const FINAL_ANSWER = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
const log = captureLog('trace');
/** Answers nobody: a request the seller holds until the connection is cut. */
const held: ServerResponse[] = [];

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const name = (JSON.parse(req.body.toString('utf8')) as { params: { name: string } }).params.name;
      if (name === 'reset') res.socket?.resetAndDestroy();
      else if (name === 'two_lengths') res.socket?.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}');
      else if (name === 'interim_body') res.socket?.end(`HTTP/1.1 199 Interim\r\nContent-Length: 5\r\n\r\nhello${FINAL_ANSWER}`);
      else if (name === 'hang') held.push(res);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(1, { content: [{ type: 'text', text: 'ok' }] }));
    }),
  async (seller) => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    return startGateway(
      agentsYaml(
        {
          s: { url: seller.url, response_deadline_ms: 300 },
          down: `http://127.0.0.1:${closedPort}/mcp`,
          tls: seller.url.replace('http:', 'https:'),
        },
        ['log_level: trace'],
      ),
      { logger: log.logger },
    );
  },
);

/**
 * The lines logged for one request to `agent` calling `tool`: from its start to the exchange
 * line of a request the seller answers at once, sent once the first one's line is out (that
 * line excluded): what the failure logs late (reply-from's warning comes from undici's error
 * callback) lands before it.
 */
async function linesOf(agent: string, tool: string, id: number): Promise<LogEntry[]> {
  const from = log.entries.length;
  const res = await rawPost(stack.gateway.agentUrl(agent), toolCall(id, tool));
  assert.equal(res.status, 200);
  await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === id, `exchange ${id}`);
  const markerId = id + 1000;
  assert.equal((await rawPost(stack.gateway.agentUrl('s'), toolCall(markerId, 'quick'))).status, 200);
  const marker = await log.waitUntil((e) => e.msg === 'exchange' && e.rpc_id === markerId, `exchange ${markerId}`);
  return log.entries.slice(from, log.entries.indexOf(marker));
}

/** The fields of a line a test can state exactly. */
const brief = (e: LogEntry) => ({ msg: e.msg, level: e.level, agent: e.agent, rpc_id: e.rpc_id, outcome: e.outcome, reason: e.reason });

describe('a failed upstream request is logged once, in its exchange line', () => {
  for (const [agent, tool, id, reason] of [
    ['s', 'reset', 1, 'upstream_reset'],
    ['s', 'hang', 2, 'deadline_exceeded'],
    ['down', 'any', 3, 'upstream_unreachable'],
    // A new user's trial: a head with two Content-Length values logged a warning with undici's
    // stack (ResponseContentLengthMismatchError, UND_ERR_RES_CONTENT_LENGTH_MISMATCH): a
    // response that cannot be read, which upstream_reset says.
    ['s', 'two_lengths', 5, 'upstream_reset'],
    // Hostile trial 28 (seen): an interim 1xx answer with a body (`199` then `Content-Length: 5`
    // and five bytes; RFC 9110 §15.2: a 1xx ends at its head) made undici's parser fail with an
    // HTTPParserError that carries no `code`, which the gateway logged as "upstream request
    // failed with an unexpected error" with undici's stack: an unreadable answer, which
    // upstream_reset says.
    ['s', 'interim_body', 6, 'upstream_reset'],
  ] as const) {
    test(`${reason}: the exchange line and nothing else`, OPTIONS, async () => {
      const lines = await linesOf(agent, tool, id);
      assert.deepEqual(lines.map(brief), [{ msg: 'exchange', level: 40, agent, rpc_id: id, outcome: 'local_error', reason }]);
    });
  }

  test('a TLS failure (not a plain transport failure): the exchange line and one warning of the gateway naming the error', OPTIONS, async () => {
    const lines = await linesOf('tls', 'any', 4);
    // The exchange line is a warning too (a failed exchange: hostile trial 53, F2).
    const warnings = lines.filter((e) => e.level === 40 && e.msg !== 'exchange');
    assert.equal(warnings.length, 1, JSON.stringify(lines));
    const [warning] = warnings;
    assert.equal(warning!.msg, 'upstream request failed with an unexpected error');
    assert.equal(warning!.agent, 'tls');
    assert.equal(warning!.reason, 'upstream_unreachable');
    assert.equal(typeof (warning!.err as { code?: unknown }).code, 'string');
    assert.deepEqual(
      lines.filter((e) => e.msg === 'exchange').map(brief),
      [{ msg: 'exchange', level: 40, agent: 'tls', rpc_id: 4, outcome: 'local_error', reason: 'upstream_unreachable' }],
    );
    assert.equal(lines.length, 2, JSON.stringify(lines));
  });

  test("no line of the run is reply-from's 'response errored'", () => {
    assert.deepEqual(log.entries.filter((e) => e.msg === 'response errored'), []);
    for (const res of held) res.destroy();
  });
});
