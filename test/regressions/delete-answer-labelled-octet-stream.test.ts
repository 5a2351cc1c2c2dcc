/**
 * Regression (a carried defect, "a DELETE's 2xx body with no Content-Type is labelled
 * application/octet-stream"): a host ending its session with `DELETE /agents/<agent>/mcp` whose
 * seller answered 200 with a body and no Content-Type got `Content-Type: application/octet-stream`,
 * a label the seller never sent: Fastify's default for a Buffer (`reply.send`), where the
 * answer is passed through (response/json-stage.ts handlePassThroughBody). A seller's 4xx with
 * a body and no Content-Type (a 404 for a session already gone), passed through "as it is"
 * (docs/errors.md), got the same label.
 *
 * Now such an answer goes to the host with no Content-Type, as the seller sent it
 * (json-stage.ts sendUnlabelled).
 *
 * Input: a raw seller (node:http) on 127.0.0.1 -> gateway (agent `s`) -> raw host (node:net),
 * `DELETE /agents/s/mcp` with `connection: close`; the seller answers it 200 `session ended`
 * or 404 `no such session` with only a Content-Length (Node adds Date, Connection, Keep-Alive);
 * controls: 200 with no body; 404 labelled `text/plain`.
 * Expected: exactly the head lines below (the Date left out), then the seller's body.
 * Before the fix: a `content-type: application/octet-stream` line in the first two.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { deleteAnswer as deleteAnswerOf } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

/** Per session id: the seller's answer to its DELETE (status, headers, body). */
const ANSWERS: Record<string, [status: number, headers: Record<string, string>, body: string]> = {
  ended: [200, { 'content-length': '13' }, 'session ended'],
  gone: [404, { 'content-length': '15' }, 'no such session'],
  empty: [200, { 'content-length': '0' }, ''],
  plain: [404, { 'content-type': 'text/plain', 'content-length': '15' }, 'no such session'],
};

const stack = useSellerAndGateway<RawSeller, RunningGateway>(
  () =>
    startRawSeller((req, res) => {
      const [status, headers, body] = ANSWERS[String(req.headers['mcp-session-id'])] ?? [500, {}, ''];
      res.writeHead(status, headers).end(body);
    }),
  (seller) => startGateway(agentsYaml({ s: seller.url }, ['log_level: silent'])),
);

/** The gateway's whole answer to a DELETE of session `session` (test/helpers/http-wire.ts). */
const deleteAnswer = (session: string): Promise<{ head: string[]; body: string }> => deleteAnswerOf(stack.gateway.baseUrl, session);

describe('a DELETE answered with a body and no Content-Type', { timeout: TEST_TIMEOUT_MS }, () => {
  test('200 with a body: the host gets it with no Content-Type', async () => {
    assert.deepEqual(await deleteAnswer('ended'), { head: ['HTTP/1.1 200 OK', 'content-length: 13', 'Connection: close'], body: 'session ended' });
  });

  test('404 with a body (a session already gone): the same', async () => {
    assert.deepEqual(await deleteAnswer('gone'), { head: ['HTTP/1.1 404 Not Found', 'content-length: 15', 'Connection: close'], body: 'no such session' });
  });

  test('control: 200 with no body: no Content-Type, as before', async () => {
    assert.deepEqual(await deleteAnswer('empty'), { head: ['HTTP/1.1 200 OK', 'content-length: 0', 'Connection: close'], body: '' });
  });

  test("control: 404 labelled text/plain: the seller's label, as before", async () => {
    assert.deepEqual(await deleteAnswer('plain'), {
      head: ['HTTP/1.1 404 Not Found', 'content-type: text/plain', 'content-length: 15', 'Connection: close'],
      body: 'no such session',
    });
  });
});
