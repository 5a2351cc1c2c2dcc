/**
 * What a stream resumed with `Last-Event-ID` takes from its verified token (routing/handler.ts):
 * its JSON-RPC facts, the count it starts from, and what a batch's tokens carry of its levels.
 */
import type { AgentConfig } from '../config/types.js';
import type { RpcPeek } from '../exchange.js';
import { NO_BODY } from '../request/peek.js';
import type { ResumeState } from '../resume/token.js';
import type { ResumeTailLedger } from '../resume/tail-ledger.js';
import { idsOfAwaitedKeys } from '../response/batch-answers.js';

/** Marks a batch's stream in a resume token (a batch has no single method or id). */
export const BATCH_METHOD = '';

/**
 * What a batch's resume tokens carry in `t` (resume/token.ts `toolName`), so that a stream
 * resumed with `Last-Event-ID` gets the batch's limits again ({@link limitsOf}), as a single
 * request's gets its tool's from its token: the batch's tools that have a `tools:` entry
 * (`toolNames`: RpcPeek.batchToolNames, one per request: a notification or a host's response
 * takes no part, as in resolveBatchLimits), each once, in order, joined by `,` (a configured
 * tool name has none: `^[A-Za-z0-9_.-]{1,128}$`, config/schema.ts), after an empty name when
 * any request is at the agent's level (another method, a tool without an entry):
 * `,get_products` is the agent's level and get_products', `get_products` get_products' alone.
 * Undefined when every request is at the agent's level, or there is none (as on tokens minted
 * before: the agent's level). A replica older than this ignores `t` on a batch's token
 * (agent's level). Read back by {@link rpcOfResumedStream}. Names are those configured when
 * the stream started; the resumed stream resolves them against the config then in force.
 */
export function batchLevelsText(agent: AgentConfig, toolNames: readonly (string | undefined)[] | undefined): string | undefined {
  let agentLevel = false;
  const tools = new Set<string>();
  for (const name of toolNames ?? []) {
    if (name !== undefined && Object.hasOwn(agent.tools, name)) tools.add(name);
    else agentLevel = true;
  }
  if (tools.size === 0) return undefined;
  return `${agentLevel ? ',' : ''}${[...tools].join(',')}`;
}

/**
 * The count a stream resumed from `token` (the `Last-Event-ID` text, verified) starts from:
 * the token's count plus what the token itself added to the host's stream, its length
 * (ASCII) over the UTF-8 length of the seller id it replaced (as sse-event-ids.ts chargeToken
 * charged it after minting). A token cannot carry a count that includes itself, and the
 * resume used to restore the count without it: a seller answering every resume with one
 * id-only block and closing made each resume add its ~7 bytes while the host received a new
 * ~230-byte token, some 29 times `max_response_bytes` in all (reported failure, a new user's
 * hostile trial F6: test/regressions/resume-loop-exceeds-cumulative-bound.test.ts). A token
 * the host got was charged within the bound, so the sum is at most the limit. `bounded`
 * false (the standalone GET stream, long-lived streams): their tokens count nothing, 0.
 *
 * When this process noted that the stream the token came from went on past it (`tails`:
 * resume/tail-ledger.ts; events without an id, then an end or a break), the larger count, at
 * most the limit: what the host received after the token is in no token, and a seller
 * resending it on every resume had an SDK host's one call receive 18x `max_response_bytes`
 * (hostile trial 24, F1:
 * test/regressions/resume-untokenized-bytes-escape-cumulative-bound.test.ts). Another
 * replica, or this one after a restart, has no note: the token's count.
 */
export function resumedCount(state: ResumeState, token: string, bounded: boolean, tails: ResumeTailLedger): number {
  if (!bounded) return state.usedBytes;
  const own = state.usedBytes + Math.max(0, token.length - Buffer.byteLength(state.upstreamId));
  const noted = tails.usedBytesFor(token);
  return noted === undefined ? own : Math.max(own, noted);
}

/**
 * The JSON-RPC facts of the stream a verified token resumes: a request's stream, a POSTed
 * notification's or response's (`notification`: bounded, errors for id null), a batch's
 * (its levels from `t`: {@link batchLevelsText}; its requests still awaited from `w`, so that
 * the stream ends once they are answered, as the first one would have: sse-stage.ts; a token
 * without `w` gives none, and the stream then ends as an unanswered batch's), or the
 * standalone GET stream. Reported failure (a reviewer: a resumed batch stream did not know
 * its request ids): test/regressions/sse-batch-resumed-stream-never-ends-cleanly.test.ts.
 */
export function rpcOfResumedStream(state: ResumeState): RpcPeek {
  if (state.answersNoRequest === true) return { kind: 'notification', id: state.rpcId, idText: state.rpcIdText, method: state.method, toolName: state.toolName, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined };
  if (state.method === undefined) return NO_BODY;
  if (state.method === BATCH_METHOD) {
    const batchToolNames = state.toolName?.split(',').map((name) => (name === '' ? undefined : name));
    // The requests still awaited when the token was minted (resume/token.ts `w`), when it carries them.
    const batchRequestIds = state.awaited === undefined ? undefined : idsOfAwaitedKeys(state.awaited);
    return {
      kind: 'batch',
      id: null,
      idText: undefined,
      method: undefined,
      toolName: undefined,
      taskId: undefined,
      ...(batchRequestIds !== undefined ? { batchRequestIds } : {}),
      ...(batchToolNames !== undefined ? { batchToolNames } : {}),
    };
  }
  // The id as the host wrote it when a double cannot carry it (resume/token.ts `x`): the
  // seller's response is matched to it exactly, and errors carry it. A token carries no
  // taskId (RpcPeek.taskId): an error minted on a resumed `tasks/result` stream has no
  // `_meta` naming its task.
  return { kind: 'request', id: state.rpcId, idText: state.rpcIdText, method: state.method, toolName: state.toolName, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined };
}
