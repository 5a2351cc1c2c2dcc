/**
 * Why the probe's in-process gateway refused a seller's answer as `upstream_not_mcp`, when the
 * reason is one the host's error does not tell: the answer came in an SSE event named other
 * than `message` (response/sse-event-judge.ts `namedEvent`). The gateway keeps that name on the
 * exchange (`Exchange.answerEvent`); this reads it from each exchange as it ends
 * (`GatewayControl.onExchangeEnd`), by JSON-RPC id, so the report can say what the seller did.
 *
 * Reported failure (a hostile new user's trial): a seller answering in `event: x-custom` got
 * `SERVICE_UNAVAILABLE (upstream_not_mcp)` and nothing more, while its answer looked right on
 * the wire; the MCP TypeScript SDK client reads only unnamed and `message` events, so a host
 * on it would have waited until its own timeout
 * (test/regressions/probe-named-event-answer-ignored.test.ts).
 */
import type { GatewayControl } from '../app.js';

/** A probe report's explanation of an answer in an SSE event named `name` (the seller's text, at most 65 characters as the gateway keeps it). */
export function namedEventAnswer(name: string): string {
  return `the answer came in an SSE event named ${JSON.stringify(name)}; MCP clients read only unnamed or \`message\` events`;
}

/** A JSON-RPC request id as the gateway's peek reads it (`RpcPeek.id`). */
type RpcId = string | number;

/**
 * The `event:` name of the answer the gateway refused, for the probe's requests (one at a
 * time). Holds the last ended exchange's id and name only: the probe asks about a request
 * right after its reply, before it sends another.
 */
export class AnswerEvents {
  private ended: { readonly id: RpcId; readonly name: string | undefined } | undefined;
  private waiter: { readonly id: RpcId; readonly resolve: (name: string | undefined) => void } | undefined;

  constructor(control: Pick<GatewayControl, 'onExchangeEnd'>) {
    control.onExchangeEnd((exchange) => {
      const id = exchange.rpc.id;
      if (id === null) return;
      const waiter = this.waiter;
      if (waiter !== undefined && waiter.id === id) {
        this.waiter = undefined;
        waiter.resolve(exchange.answerEvent);
        return;
      }
      this.ended = { id, name: exchange.answerEvent };
    });
  }

  /**
   * The name for request `id` once its exchange has ended (undefined when its answer was
   * refused for another reason), or undefined when it has not ended within `waitMs` (the host
   * has its answer, so the gateway's end of it is at most a few ticks away).
   */
  nameFor(id: RpcId, waitMs: number): Promise<string | undefined> {
    if (this.ended?.id === id) return Promise.resolve(this.ended.name);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve(undefined);
      }, waitMs);
      this.waiter = {
        id,
        resolve: (name) => {
          clearTimeout(timer);
          resolve(name);
        },
      };
    });
  }
}
