/**
 * The message shapes of the rewrite regressions that drive one tool result two ways: as a
 * `tools/call`'s `result` (a host on 2025-06-18, or 2025-11-25 where the answer is an SSE
 * stream) and as a completed task's `result.result` answering a `tasks/get` (a host on
 * 2026-07-28; spliced as a `tools/call` result is since review 38: mcp/tool-result-ranges.ts).
 * Each case is named by its tool name or task id, and the raw seller answers by that name.
 * One copy of what test/regressions/dedupe-past-sixteen-items-respells-structured-content,
 * tasks-get-lift-loses-repeated-key-and-negative-zero,
 * reserialized-rewrite-drops-repeated-key-and-negative-zero,
 * reserialized-lift-skipped-silently-for-value-outside-text,
 * reserialized-answer-respells-seller-id and lift-exceeds-json-depth-and-nodes each wrote
 * (`duplicates`).
 */
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from './gateway.js';
import { rawPost, type RawResponse } from './raw.js';
import { useSellerAndGateway, type SellerAndGateway } from './stack.js';
import { withTimeout } from './timeout.js';
import { messageEvent, resultMessageText } from './tool-result-seller.js';

/** The MCP version a host asking `tasks/get` speaks (tasks are 2026-07-28's). */
export const TASKS_VERSION = '2026-07-28';

/** The MCP version a host calling a tool speaks unless a case says otherwise. */
export const TOOLS_VERSION = '2025-06-18';

/** A `text` content item holding `text` (JSON.stringify's spelling of it). */
export const textItem = (text: string): string => `{"type":"text","text":${JSON.stringify(text)}}`;

/**
 * The seller's message for call `id` (its JSON text) carrying the tool result `result` (raw JSON
 * text): `{"jsonrpc":"2.0","id":<id>,"result":<result>}`, or, for a task, `result` inside the
 * completed task `{"taskId":"t1","status":"completed","result":<result>}`.
 */
export function resultMessage(task: boolean, id: number | string, result: string): string {
  return task ? resultMessageText(id, `{"taskId":"t1","status":"completed","result":${result}}`) : resultMessageText(id, result);
}

/**
 * The host's request for case `name`, its id written `id` (JSON text): a `tasks/get` of task
 * `name`, or a `tools/call` of tool `name` with no arguments. For a number, the bytes
 * `JSON.stringify` writes for the same request.
 */
export function caseCall(task: boolean, id: number | string, name: string): string {
  const params = task ? `{"taskId":${JSON.stringify(name)}}` : `{"name":${JSON.stringify(name)},"arguments":{}}`;
  return `{"jsonrpc":"2.0","id":${id},"method":"${task ? 'tasks/get' : 'tools/call'}","params":${params}}`;
}

/**
 * POSTs {@link caseCall} to `agentUrl` with the MCP-Protocol-Version a host sends it on:
 * {@link TASKS_VERSION} for a task, else `toolsVersion`. Hang guard: 10 s.
 */
export function postCase(agentUrl: string, task: boolean, id: number | string, name: string, toolsVersion = TOOLS_VERSION): Promise<RawResponse> {
  return withTimeout(rawPost(agentUrl, caseCall(task, id, name), { 'mcp-protocol-version': task ? TASKS_VERSION : toolsVersion }));
}

/** What the seller sends for one case: `body`, as the JSON body or, when `sse`, as one `message` SSE event. */
export interface CaseAnswer {
  readonly body: string;
  readonly sse?: boolean;
}

/**
 * A raw seller answering each `tools/call` or `tasks/get` by its case name (the tool name, else
 * the task id) with `answer(name, id)`, `id` the request's JSON-RPC id: HTTP 200, the body as
 * application/json or text/event-stream ({@link messageEvent}).
 */
export function startCaseSeller(answer: (name: string, id: number) => CaseAnswer): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const call = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name?: string; taskId?: string } };
    const { body, sse = false } = answer(call.params.name ?? call.params.taskId!, call.id);
    res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' }).end(sse ? messageEvent(body) : body);
  });
}

/** {@link startCaseSeller} behind an observed gateway with one agent `s` (default settings), for the suite (useSellerAndGateway). */
export function useCaseStack(answer: (name: string, id: number) => CaseAnswer): SellerAndGateway<RawSeller, ObservedGateway> {
  return useSellerAndGateway(
    () => startCaseSeller(answer),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );
}
