/**
 * `--check-config` notes for limits that the smallest message they must let through cannot
 * meet, so that every such call fails (config/table.ts `configNotes`): `max_json_depth` and
 * `max_json_nodes` (counted as request/request-json-bounds.ts and mcp/json-bounds.ts count),
 * `max_response_bytes`, `max_sse_event_bytes` and `max_request_bytes` (bytes of the message as
 * sent). Each bound gets one note, for the first message of its list (smallest first) it is
 * below. The messages are the smallest the protocol allows, not guesses: a JSON-RPC response
 * needs `jsonrpc`, `id` and `result` (`{}` at least); an MCP CallToolResult needs `content`; a
 * request a `method` (`ping` is the shortest MCP has); an `initialize` its `protocolVersion`,
 * `capabilities` and `clientInfo` with `name` and `version`.
 *
 * Reported failures: a new user's hostile trial 12, L5 (`max_json_depth: 1`, `max_json_nodes:
 * 3`: no note, every call failed); trial 23, L2 (`max_json_nodes: 8` refused every
 * initialize); a hostile new operator's trial 45, L7 (`max_response_bytes: 30`,
 * `max_request_bytes: 20`: no note, every ping refused 413:
 * test/regressions/check-config-silent-on-settings-that-break-every-call.test.ts).
 */
import { resolveCallLimits } from './resolve.js';
import type { AgentConfig, Limits } from './types.js';

/** The smallest message a limits row must let through, with its nesting and JSON values (json-bounds.ts counts). */
interface SmallestMessage {
  readonly what: string;
  readonly text: string;
  readonly depth: number;
  readonly nodes: number;
}

/** The smallest JSON-RPC response: every answer of an agent is at least this (36 bytes). */
const SMALLEST_RESPONSE: SmallestMessage = { what: 'every answer', text: '{"jsonrpc":"2.0","id":1,"result":{}}', depth: 2, nodes: 4 };
/** The smallest `tools/call` result (MCP CallToolResult: `content` is required; 48 bytes). */
const SMALLEST_TOOL_RESULT: SmallestMessage = { what: 'every tool result', text: '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', depth: 3, nodes: 5 };
/** The smallest request a host sends: a `ping` (40 bytes). */
const SMALLEST_REQUEST: SmallestMessage = { what: 'every request', text: '{"jsonrpc":"2.0","id":1,"method":"ping"}', depth: 1, nodes: 4 };

/**
 * The smallest `initialize` request a host sends (MCP, every revision the gateway serves:
 * `params` requires `protocolVersion`, `capabilities` and `clientInfo` with `name` and
 * `version`; a real SDK client sends more; 146 bytes), which the agent's `max_json_depth` /
 * `max_json_nodes` bound (request/request-json-bounds.ts: every request but a `tools/call` of a
 * tool with bounds of its own), as its `max_request_bytes` does. Below it, every session fails
 * at its first request, refused 400 `invalid_request` (a hostile new-user trial 23, L2:
 * `max_json_nodes: 8` drew no note) or 413 `request_too_large`. Its depth, 3, is the smallest
 * tool result's, so only its values add a structure note.
 */
const SMALLEST_INITIALIZE: SmallestMessage = {
  what: 'every initialize request',
  text: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}',
  depth: 3,
  nodes: 10,
};

/**
 * The smallest `tools/call` of `tool` (a configured name: `^[A-Za-z0-9_.-]{1,128}$`, nothing
 * to escape), which a tool's own `max_json_depth` / `max_json_nodes` bound too (a tool with
 * none: the agent's; request/request-json-bounds.ts, a hostile trial 22, F2).
 */
function smallestCall(tool: string): SmallestMessage {
  return { what: 'every call of it', text: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${tool}"}}`, depth: 2, nodes: 6 };
}

const bytesOf = (m: SmallestMessage): number => Buffer.byteLength(m.text, 'utf8');

/** Every note of `agent`'s rows: the agent's, then each configured tool's, in file order. */
export function limitNotes(agent: AgentConfig): string[] {
  const out: string[] = [];
  const toolResult = { ...SMALLEST_TOOL_RESULT, what: 'every result of a tool without limits of its own' };
  out.push(...structureNotes(agent.name, agent.limits, [SMALLEST_RESPONSE, toolResult, { ...smallestCall('t'), what: 'every call of a tool without limits of its own' }, SMALLEST_INITIALIZE]));
  out.push(...byteNotes(agent.name, agent, agent.limits, [SMALLEST_RESPONSE, toolResult]));
  const request = [SMALLEST_REQUEST, SMALLEST_INITIALIZE].find((m) => agent.max_request_bytes < bytesOf(m));
  if (request !== undefined) out.push(bytesNote(agent.name, 'max_request_bytes', agent.max_request_bytes, request, ''));
  for (const tool of Object.keys(agent.tools)) {
    const limits = resolveCallLimits(agent, tool, undefined);
    out.push(...structureNotes(`${agent.name}/${tool}`, limits, [SMALLEST_TOOL_RESULT, smallestCall(tool)]));
    out.push(...byteNotes(`${agent.name}/${tool}`, agent, limits, [SMALLEST_TOOL_RESULT]));
  }
  return out;
}

/**
 * Notes for structure bounds that messages of the row can never meet: for each of
 * `max_json_depth` and `max_json_nodes`, the first of `smallest` (smallest first) it is below
 * (an agent's: any answer, then a tool result, then a call of a tool
 * without bounds of its own, then the host's `initialize`; a tool's: its result, then its
 * call), so every such call is
 * refused `json_depth` / `json_nodes` (or the request itself `invalid_request`). A new user's
 * hostile trial 12, L5: `max_json_depth: 1` and `max_json_nodes: 3` passed --check-config with
 * no note and every call failed.
 */
function structureNotes(label: string, limits: Limits, smallest: readonly SmallestMessage[]): string[] {
  const out: string[] = [];
  const depth = smallest.find((m) => limits.max_json_depth < m.depth);
  if (depth !== undefined) out.push(`note: ${label}: max_json_depth ${limits.max_json_depth} refuses ${depth.what}: the smallest, ${depth.text}, has depth ${depth.depth}`);
  const nodes = smallest.find((m) => limits.max_json_nodes < m.nodes);
  if (nodes !== undefined) out.push(`note: ${label}: max_json_nodes ${limits.max_json_nodes} refuses ${nodes.what}: the smallest, ${nodes.text}, has ${nodes.nodes} values`);
  return out;
}

/**
 * Notes for the row's `max_response_bytes` and `max_sse_event_bytes` below the first of
 * `answers` (smallest first) they cannot pass: an answer over `max_response_bytes` is refused
 * `RESPONSE_TOO_LARGE`, an SSE event whose data is over `max_sse_event_bytes` too. The event
 * limit is noted only for an answer the response limit lets through (else that note says it).
 * A response limit a call may raise (`max_call_response_bytes` above it) says so.
 */
function byteNotes(label: string, agent: AgentConfig, limits: Limits, answers: readonly SmallestMessage[]): string[] {
  const out: string[] = [];
  const ceiling = agent.max_call_response_bytes;
  const raise =
    ceiling !== undefined && ceiling > limits.max_response_bytes ? ` (unless a call raises its limit with X-Max-Response-Bytes, up to max_call_response_bytes ${ceiling})` : '';
  const response = answers.find((m) => limits.max_response_bytes < bytesOf(m));
  if (response !== undefined) out.push(bytesNote(label, 'max_response_bytes', limits.max_response_bytes, response, raise));
  const event = answers.find((m) => limits.max_sse_event_bytes < bytesOf(m) && limits.max_response_bytes >= bytesOf(m));
  if (event !== undefined) out.push(bytesNote(label, 'max_sse_event_bytes', limits.max_sse_event_bytes, { ...event, what: `${event.what} sent as an SSE event` }, '', ' of data'));
  return out;
}

function bytesNote(label: string, key: string, value: number, m: SmallestMessage, raise: string, unit = ''): string {
  return `note: ${label}: ${key} ${value} refuses ${m.what}${raise}: the smallest, ${m.text}, is ${bytesOf(m)} bytes${unit}`;
}
