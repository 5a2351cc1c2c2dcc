/**
 * Regression (a hostile operator's trial 53, F2): every `exchange` line was written at info
 * (level 30), so at `log_level: warn` or `error` a failed exchange left no line at all: a call
 * to an agent whose seller was down (ECONNREFUSED) and calls over their size limit showed only
 * the `agent backing off` warning, and a shutdown's cut call only the exit's `exchanges_cut: 1`,
 * though README says such failures are told by the exchange line alone.
 *
 * Input: a real gateway (buildApp) on 127.0.0.1 with four agents: `json` on a raw seller that
 * answers by tool (a clean result, a result with `isError`, a JSON-RPC error, a 401, a body
 * over the agent's 1000-byte limit, or no answer at all), `down` on a port nothing listens on.
 * Expected, at `warn`: exactly the failed exchanges' lines, each `"level":40`
 * (`upstream_unreachable` with `upstream_error` `ECONNREFUSED`, `content_length`, and
 * `shutdown_cut` for the call held at the seller when the forced exit cuts it); no line for
 * the clean answers. At `info`: the clean answers' lines at 30 (ok, and the seller's own
 * `isError`, JSON-RPC error and 4xx, all outcome `ok`), the failures' at 40.
 * README (Logs, "Levels") has the table; test/unit/exchange-line-level.test.ts checks it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { captureLog, type LogEntry } from '../helpers/capture-log.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { closedPort } from '../helpers/ports.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, toolResponseOfSize, type RawSeller } from '../support/raw-seller.js';

const LIMIT = 1000;
let seller: RawSeller;
let downUrl: string;
/** Called with the seller's answer to a `hold` call once it holds it (never answered: the test ends it after the cut). */
let onHeld: (res: import('node:http').ServerResponse) => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
    const json = (status: number, body: string): void => void res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    switch (msg.params.name) {
      case 'clean':
        return json(200, toolResponse(msg.id, { content: [{ type: 'text', text: 'done' }] }));
      case 'tool_error':
        return json(200, toolResponse(msg.id, { content: [{ type: 'text', text: 'no such product' }], isError: true }));
      case 'rpc_error':
        return json(200, JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: 'Invalid params' } }));
      case 'unauthorized':
        return json(401, JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32001, message: 'Unauthorized' } }));
      case 'large':
        return json(200, toolResponseOfSize(msg.id, 2 * LIMIT));
      default:
        onHeld(res); // `hold`: no answer, not even the head
    }
  });
  downUrl = `http://127.0.0.1:${await closedPort()}/mcp`;
});

after(async () => {
  await seller.close();
});

async function gateway(level: 'warn' | 'info'): Promise<{ gw: RunningGateway; entries: LogEntry[] }> {
  const log = captureLog(level);
  const yaml = agentsYaml({ json: { url: seller.url, max_response_bytes: LIMIT }, down: { url: downUrl } }, [`log_level: ${level}`, 'defaults:', '  response_deadline_ms: 3600000']);
  return { gw: await startGateway(yaml, { logger: log.logger }), entries: log.entries };
}

/** The calls of the trial, one after another, then one held at the seller and cut as a shutdown's forced exit cuts it; the exchange lines once the gateway is closed. */
async function runCalls(gw: RunningGateway, entries: LogEntry[]): Promise<Array<Record<string, unknown>>> {
  for (const [id, name] of [[1, 'clean'], [2, 'tool_error'], [3, 'rpc_error'], [4, 'unauthorized'], [5, 'large']] as const) await rawPost(gw.agentUrl('json'), toolCall(id, name));
  await rawPost(gw.agentUrl('down'), toolCall(6, 'clean'));
  const held = new Promise<import('node:http').ServerResponse>((resolve) => (onHeld = resolve));
  const cut = rawPost(gw.agentUrl('json'), toolCall(7, 'hold')).catch(() => undefined);
  const res = await withTimeout(held, 10_000, 'the held call at the seller');
  assert.equal(gw.app.gateway.cutOpenExchanges(), 1);
  // The forced exit would close every connection: here the seller's and the host's.
  res.destroy();
  await gw.close();
  await cut;
  return entries
    .filter((e) => e.msg === 'exchange')
    .map((e) => ({ level: e.level, rpc_id: e.rpc_id, status: e.status, outcome: e.outcome, reason: e.reason, ...(e.upstream_error === undefined ? {} : { upstream_error: e.upstream_error }) }))
    .sort((a, b) => (a.rpc_id as number) - (b.rpc_id as number));
}

const FAILED = [
  { level: 40, rpc_id: 5, status: 200, outcome: 'local_error', reason: 'content_length' },
  { level: 40, rpc_id: 6, status: 200, outcome: 'local_error', reason: 'upstream_unreachable', upstream_error: 'ECONNREFUSED' },
  { level: 40, rpc_id: 7, status: null, outcome: 'shutdown_cut', reason: null },
];

describe('the exchange line level follows its outcome', () => {
  it('at log_level warn, each failed exchange writes its line at warn, a clean one none', async () => {
    const { gw, entries } = await gateway('warn');
    assert.deepEqual(await runCalls(gw, entries), FAILED);
  });

  it("at log_level info, a clean answer (the seller's own error results included) is info, a failed exchange warn", async () => {
    const { gw, entries } = await gateway('info');
    assert.deepEqual(await runCalls(gw, entries), [
      { level: 30, rpc_id: 1, status: 200, outcome: 'ok', reason: null },
      { level: 30, rpc_id: 2, status: 200, outcome: 'ok', reason: null },
      { level: 30, rpc_id: 3, status: 200, outcome: 'ok', reason: null },
      { level: 30, rpc_id: 4, status: 401, outcome: 'ok', reason: null },
      ...FAILED,
    ]);
  });
});
