/**
 * Exchanges for the registry of requests in flight (src/routing/in-flight-requests.ts), made
 * as the handler makes them (src/exchange.ts createExchange), with no HTTP: agents `s` and `t`
 * share one seller url (so its sessions and ids), `o` has another. Used by
 * test/unit/in-flight-requests.test.ts and test/unit/cancellations.test.ts.
 */
import assert from 'node:assert/strict';
import { agentKeyOf } from '../../src/config/agent-url-key.js';
import { parseConfig } from '../../src/config/load.js';
import { resolveCallLimits } from '../../src/config/resolve.js';
import { createExchange, type Exchange, type RpcPeek } from '../../src/exchange.js';
import { peekJsonRpc } from '../../src/request/peek.js';
import type { IdRefusal, InFlightRequests } from '../../src/routing/in-flight-requests.js';
import type { WrittenRequestId } from '../../src/mcp/cancelled-id.js';

const yaml = ['log_level: silent', 'agents:', '  s:', '    url: http://127.0.0.1:9/mcp', '  t:', '    url: http://127.0.0.1:9/mcp', '  o:', '    url: http://127.0.0.1:9/other', ''].join('\n');
const agents = parseConfig(yaml, { env: {}, source: 'in-flight-exchanges' }).agents;

/** The seller endpoint of agents `s` and `t` (config/agent-url-key.ts agentKeyOf), as the handler names it to the registry. */
export const SELLER = agentKeyOf(agents.get('s')!);

/**
 * An exchange of agent `agentName` (`s`, `t` or `o`) for `rpc` in `session` (none when
 * undefined); a POST, or, with `opensStream`, a GET (a stream resumed with `Last-Event-ID`).
 */
export function exchangeOf(agentName: string, rpc: RpcPeek, session: string | undefined, opensStream = false): Exchange {
  const agent = agents.get(agentName)!;
  return createExchange({
    agent,
    rpc,
    limits: resolveCallLimits(agent, rpc.toolName, undefined),
    protocolVersion: '2025-03-26',
    normalize: true,
    stream: { startedAt: Date.now(), usedBytes: 0, resumeFrom: undefined },
    mintEventId: () => undefined,
    session,
    opensStream,
  });
}

/** The peek of a batch of `tools/call` requests with these ids (JSON texts, as the host writes them). */
export function batchOf(...idTexts: string[]): RpcPeek {
  const calls = idTexts.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"get_products","arguments":{}}}`);
  const peek = peekJsonRpc(Buffer.from(`[${calls.join(',')}]`));
  if (!peek.ok || peek.peek.kind !== 'batch') throw new Error(`the peek refused the batch ${idTexts.join(',')}: ${JSON.stringify(peek)}`);
  return peek.peek;
}

/** The slot InFlightRequests.open gave (a refusal fails the test, its message shown). */
export function slotOf(opened: number | IdRefusal): number {
  assert.equal(typeof opened, 'number', JSON.stringify(opened));
  return opened as number;
}

/**
 * A host's cancellation of `id` in `seller` and `session`, the seller accepting it, as the
 * handler runs it (src/routing/handler.ts): InFlightRequests.markCancelled when the
 * notification comes, PendingCancellation.settle(true) at the seller's 2xx head. How many
 * requests it marked.
 */
export function acceptedCancel(r: InFlightRequests, seller: string, session: string, id: WrittenRequestId): number {
  const pending = r.markCancelled(seller, session, id);
  pending?.settle(true);
  return pending?.count ?? 0;
}
