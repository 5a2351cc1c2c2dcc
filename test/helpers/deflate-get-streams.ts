/**
 * A raw seller on 127.0.0.1 answering each agent's standalone GET stream with a fixed SSE body,
 * deflate-coded, behind the real gateway (one agent per body, each with `max_response_bytes`),
 * and a host reading a stream whole with fetch. Shared by the undelivered-bytes regressions
 * of streams without a total (get-stream-tiny-comments-reset-undelivered,
 * get-stream-empty-events-reset-undelivered).
 */
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { agentsYaml } from './gateway.js';
import { useSellerAndGateway } from './stack.js';
import { withTimeout } from './timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine } from '../support/hostile-seller.js';

export interface DeflateGetStreams<Case extends string> {
  /** The host's GET stream of agent `agent`, read to its end (at most 10 s). */
  readStream(agent: Case): Promise<string>;
  /** The exchange line of agent `agent`'s stream (at most 5 s). */
  exchangeLine(agent: Case): Promise<LogLine>;
}

/** Starts the seller and the gateway for the test file (before/after hooks: helpers/stack.ts). */
export function useDeflateGetStreams<Case extends string>(bodies: Readonly<Record<Case, string>>, maxResponseBytes: number): DeflateGetStreams<Case> {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const kind = new URL(req.url, 'http://x').searchParams.get('case') as Case;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'deflate' });
        res.end(deflateSync(bodies[kind]));
      }),
    (seller) =>
      startObservedGateway(agentsYaml(Object.fromEntries(Object.keys(bodies).map((kind) => [kind, { url: `${seller.url}?case=${kind}`, max_response_bytes: maxResponseBytes }])))),
  );
  return {
    async readStream(agent) {
      const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream' } });
      assert.equal(res.status, 200);
      return withTimeout(res.text(), 10_000, `the ${agent} stream`);
    },
    exchangeLine: (agent) => stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent, 5_000),
  };
}
